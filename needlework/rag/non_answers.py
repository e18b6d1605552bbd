"""Non-answers: model answers that make no claim, so nothing in them can be grounded.

The rule (:func:`is_non_answer`, **our rule**, docs/rag.md "Non-answers"): take the answer,
remove its citation markers (``[cite_N]``, ``cite_N``, ``[N]``, ``%[N]%``), then look at the
words left (runs of letters and digits). The answer is a **non-answer** when no word is
left, or every word left is a single Latin letter. So these are non-answers: ``""``,
white space, ``"B"``, ``"[A]"``, ``"[B]."``, ``"A) [cite_2]"``, ``"[cite_1][cite_3]"``,
``"..."``; these are answers: ``"Yes."``, ``"42"``, ``"8 minutes [cite_1]"``, and every
deflection ("I don't know", the dataset's deflection sentence), which GaRAGe grades as a
deflection (B.4) and which stays graded that way.

What a non-answer counts as, everywhere a RAG figure is taken (:mod:`.verdicts`,
:mod:`.metrics`): it is not sent to the judge; it is not eligible, not factual (against
all passages and the relevant ones), not a deflection, LLMeval 0; BERGEN's metrics score it
as the empty answer and its markers cite nothing (attribution 0). It stays in every
denominator, and the figures say how many there were. :func:`rag-generate
<needlework.rag.generate.generate>` flags them when the answers come back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_MARKERS = re.compile(r"%\[\s*\d+\s*\]%|\[\s*cite_\d+\s*\]|\bcite_\d+\b|\[\s*\d+\s*\]",
                      re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+")


def is_non_answer(text: str | None) -> bool:
    """Whether ``text`` makes no claim (see the module docstring): empty, white space,
    only citation markers or punctuation, or only single Latin letters such as ``[B]``."""
    words = _WORD.findall(_MARKERS.sub(" ", text or ""))
    return all(len(w) == 1 and w.isascii() and w.isalpha() for w in words)


def non_answer_ids(answers: Mapping[str, str | None], keys: Iterable[str] | None = None
                   ) -> list[str]:
    """The ids of ``answers`` (in ``keys`` order when given) whose text is a non-answer;
    a missing answer is not listed (it is no answer at all)."""
    order = list(answers) if keys is None else [k for k in keys if k in answers]
    return [k for k in order if answers[k] is not None and is_non_answer(answers[k])]


def examples(texts: Iterable[str], shown: int = 3) -> str:
    """Up to ``shown`` distinct texts, quoted, for a one-line message (``"[B]", "[A]"``;
    a blank one as ``""``)."""
    seen: list[str] = []
    for text in texts:
        one = " ".join((text or "").split())
        if one not in seen:
            seen.append(one)
    quoted = [f'"{t[:40]}"' for t in seen[:shown]]
    return ", ".join(quoted) + (", ..." if len(seen) > shown else "")
