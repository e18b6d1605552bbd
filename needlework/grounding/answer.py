"""Checks on a long-form answer with ``[cite_N]`` markers (benchmarks.md §1)."""

from __future__ import annotations

from dataclasses import dataclass, field

from needlework.formats.garage import CITE_RE, DEFLECTION
from needlework.grounding.labels import ANSWER, IRRELEVANT

Segment = tuple[str, str | None, str | None]


def cited_numbers(text: str) -> list[int]:
    """The passage numbers the markers of ``text`` cite, unique, in order of first use."""
    return list(dict.fromkeys(int(m) for m in CITE_RE.findall(text or "")))


def is_deflection(text: str) -> bool:
    """Whether ``text`` is the standard deflection (case and spacing aside)."""
    return " ".join((text or "").split()).casefold() == DEFLECTION.casefold()


def evidence_cited(text: str, n_passages: int) -> list[str]:
    """``evidence_cited`` for an answer: ``YES`` for each passage it cites, else ``NO``."""
    cited = set(cited_numbers(text))
    return ["YES" if n in cited else "NO" for n in range(1, n_passages + 1)]


def _numbers(values: list[int] | tuple[int, ...]) -> str:
    """``passage 2`` or ``passages 1, 2 and 6``."""
    if len(values) == 1:
        return f"passage {values[0]}"
    return "passages " + ", ".join(str(v) for v in values[:-1]) + f" and {values[-1]}"


@dataclass(frozen=True)
class AnswerCheck:
    """What the live checks found. ``errors`` must be fixed; ``warnings`` are advice."""

    cited: tuple[int, ...]
    missing: tuple[int, ...]
    irrelevant_cited: tuple[int, ...]
    uncited_answers: tuple[int, ...]
    deflection: bool
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def check_answer(text: str, n_passages: int, labels: dict[int, str | None]) -> AnswerCheck:
    """Check ``text`` against an item with ``n_passages`` passages labeled ``labels``
    (passage number → the annotator's label, ``None`` when unlabeled).

    Errors: a marker that points to no passage. Warnings: a marker on a passage
    labeled irrelevant; ANSWER-THE-QUESTION passages not cited; a deflection although
    a passage answers; an answer (not a deflection) although no passage answers.
    """
    text = text or ""
    cited = cited_numbers(text)
    missing = tuple(n for n in cited if not 1 <= n <= n_passages)
    irrelevant = tuple(n for n in cited if labels.get(n) == IRRELEVANT)
    answers = [n for n in range(1, n_passages + 1) if labels.get(n) == ANSWER]
    deflection = is_deflection(text)
    uncited = tuple(n for n in answers if n not in cited) if text.strip() else tuple(answers)
    errors, warnings = [], []
    if missing:
        errors.append(
            f"{_markers(missing)} point{'s' if len(missing) == 1 else ''} to no passage "
            f"(this item has {n_passages})."
        )
    if irrelevant:
        warnings.append(f"{_markers(irrelevant)} cite{'s' if len(irrelevant) == 1 else ''} "
                        "a passage you labeled irrelevant.")
    if deflection and answers:
        warnings.append(f"Deflected, but {_numbers(answers)} "
                        f"{'is' if len(answers) == 1 else 'are'} labeled ANSWER-THE-QUESTION.")
    elif uncited and text.strip():
        warnings.append(f"ANSWER-THE-QUESTION {_numbers(uncited)} not cited yet.")
    unlabeled = sum(1 for n in range(1, n_passages + 1) if labels.get(n) is None)
    if text.strip() and not deflection and not answers:
        note = f" ({unlabeled} passage(s) not labeled yet)" if unlabeled else ""
        warnings.append("No passage is ANSWER-THE-QUESTION, so this question needs the "
                        f"deflection{note}.")
    return AnswerCheck(tuple(n for n in cited if n not in missing), missing, irrelevant,
                       uncited, deflection, errors, warnings)


def _markers(numbers: tuple[int, ...]) -> str:
    return ", ".join(f"[cite_{n}]" for n in numbers)


def preview_segments(text: str, n_passages: int) -> list[Segment]:
    """``text`` split into segments for ``render_marked_text``: markers of existing
    passages marked ``nw-cite``, markers that point nowhere ``nw-bad``."""
    segments: list[Segment] = []
    last = 0
    for match in CITE_RE.finditer(text or ""):
        if match.start() > last:
            segments.append((text[last:match.start()], None, None))
        ok = 1 <= int(match.group(1)) <= n_passages
        segments.append((match.group(0), "nw-cite" if ok else "nw-bad", None))
        last = match.end()
    if last < len(text or ""):
        segments.append((text[last:], None, None))
    return segments


def insert_marker(text: str, number: int) -> str:
    """``text`` with ``[cite_N]`` added at the end, before a final full stop if there
    is one (GaRAGe style: ``claim [cite_1].``)."""
    marker = f"[cite_{number}]"
    body = (text or "").rstrip()
    if not body:
        return marker
    if body.endswith(".") and not body.endswith("..."):
        return f"{body[:-1].rstrip()} {marker}."
    return f"{body} {marker}"
