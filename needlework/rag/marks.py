"""A judged answer as marked text: each sentence shaded by its verdict, citations marked.

:func:`answer_segments` turns an answer and its sentence rows (text spans and labels,
from :func:`needlework.rag.verdicts.answer_row`) into ``(text, css_class, style)``
segments, the shape ``components.text.render_marked_text`` draws (every piece escaped
there). The styles are fixed strings chosen here by label, never built from data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from needlework.formats.garage import CITE_RE
from needlework.rag.failures import sentence_label

Segment = tuple[str, "str | None", "str | None"]

#: The shade of each sentence label; ``None`` is a sentence the judge gave no label.
LABEL_STYLES: dict[str | None, str] = {
    "supported": "background:#b7f0c0",
    "unsupported": "background:#ffe08a",
    "contradictory": "background:#ffc9c9",
    "no_rad": "background:#e4e4e7",
    None: "background:none;border-bottom:2px dashed #d00",
}
CURRENT = "nw-current"
CITE = "nw-cite"
BAD_CITE = "nw-bad"
CITE_STYLE = "background:#d6e4ff"  # the nw-cite and nw-bad colours, for a marker outlined
BAD_CITE_STYLE = "background:#ffc9c9"


def citation_segments(text: str, n_passages: int | None, style: str | None = None,
                      css_class: str | None = None) -> list[Segment]:
    """``text`` with its ``[cite_N]`` markers as their own segments (``nw-cite``, or
    ``nw-bad`` for a number that is no passage when ``n_passages`` is known; outlined
    with the same shade when ``css_class`` is the outline); the rest keeps ``css_class``
    and ``style``."""
    out: list[Segment] = []
    position = 0
    for match in CITE_RE.finditer(text):
        if match.start() > position:
            out.append((text[position:match.start()], css_class, style))
        number = int(match.group(1))
        bad = n_passages is not None and not 1 <= number <= n_passages
        if css_class == CURRENT:  # inside the outlined sentence: outlined too, shaded as a marker
            out.append((match.group(0), CURRENT, BAD_CITE_STYLE if bad else CITE_STYLE))
        else:
            out.append((match.group(0), BAD_CITE if bad else CITE, None))
        position = match.end()
    if position < len(text):
        out.append((text[position:], css_class, style))
    return out


def answer_segments(answer: str, sentences: Sequence[Mapping[str, Any]], side: str, *,
                    n_passages: int | None = None, current: int | None = None,
                    judged: bool = True) -> list[Segment]:
    """The answer with each sentence shaded by its label against ``side`` (``all`` or
    ``relevant``); the sentence ``current`` (0-based) outlined; text between sentences
    plain. Unjudged (``judged=False``): sentences are not shaded, only citations marked."""
    out: list[Segment] = []
    position = 0
    for k, sentence in enumerate(sentences):
        start, end = int(sentence["start"]), int(sentence["end"])
        if start < position or end > len(answer):
            continue  # spans out of order: never expected; keep the text whole
        if start > position:
            out += citation_segments(answer[position:start], n_passages)
        style = LABEL_STYLES.get(sentence_label(sentence, side), LABEL_STYLES[None]) \
            if judged else None
        out += citation_segments(answer[start:end], n_passages, style,
                                 CURRENT if k == current else None)
        position = end
    if position < len(answer):
        out += citation_segments(answer[position:], n_passages)
    return out
