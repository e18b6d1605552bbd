"""Passage labels of the GaRAGe protocol (benchmarks.md §1) and their field names.

A passage is ``irrelevant`` or one of the four relevant labels of
:data:`needlework.formats.garage.CORRECT_LABELS`. An annotator's own label is the
annotation ``label:N`` (N = the 1-based passage number); a reviewer's adjudicated
label is ``final:label:N``. The record's ``evidence_relevant`` /
``evidence_correct`` lists hold the imported labels.
"""

from __future__ import annotations

from typing import Any

from needlework.formats.garage import CORRECT_LABELS

IRRELEVANT = "irrelevant"
ANSWER = "ANSWER-THE-QUESTION"
RELATED = "RELATED-INFORMATION"
OUTDATED = "OUTDATED"
UNKNOWN = "UNKNOWN"

#: Every passage label, in the order of the keyboard keys 1..5.
LABELS: tuple[str, ...] = (IRRELEVANT,) + CORRECT_LABELS

#: Short names for buttons and tables.
SHORT: dict[str, str] = {
    IRRELEVANT: "Irrelevant",
    ANSWER: "Answer",
    RELATED: "Related",
    OUTDATED: "Outdated",
    UNKNOWN: "Unknown",
}

#: Definitions (GaRAGe appendix A.2, short form), shown next to the label buttons.
DEFINITIONS: dict[str, str] = {
    IRRELEVANT: "holds nothing that helps answer the question.",
    ANSWER: "relevant, current, and answers the question (compare the question date "
    "with the passage date).",
    RELATED: "relevant; does not answer by itself but adds useful detail or context.",
    OUTDATED: "relevant, but superseded by newer information.",
    UNKNOWN: "relevant, but its age cannot be known or inferred.",
}

#: Keyboard key of each label (Streamlit button shortcuts; blocked while typing).
LABEL_KEYS: dict[str, str] = {label: str(i) for i, label in enumerate(LABELS, start=1)}

#: Background colours of the label badges (constants, never data).
COLOURS: dict[str, str] = {
    IRRELEVANT: "#e4e4e7",
    ANSWER: "#b7f0c0",
    RELATED: "#d6e4ff",
    OUTDATED: "#ffe08a",
    UNKNOWN: "#f1d6ff",
}

LABEL_PREFIX = "label:"
FINAL_PREFIX = "final:label:"


def label_field(number: int) -> str:
    """The annotation field of passage ``number``'s label (``label:N``)."""
    return f"{LABEL_PREFIX}{number}"


def final_field(number: int) -> str:
    """The annotation field of passage ``number``'s adjudicated label (``final:label:N``)."""
    return f"{FINAL_PREFIX}{number}"


def passage_number(field: str, prefix: str = LABEL_PREFIX) -> int | None:
    """N for a field ``<prefix>N``; ``None`` for any other field."""
    if not field.startswith(prefix):
        return None
    rest = field[len(prefix):]
    return int(rest) if rest.isdigit() else None


def _entry(record: dict[str, Any], field: str, index: int) -> str:
    values = record.get(field)
    if isinstance(values, list) and 0 <= index < len(values) and isinstance(values[index], str):
        return values[index]
    return ""


def imported_label(record: dict[str, Any], number: int) -> str | None:
    """The label the record itself gives passage ``number``, or ``None`` when it has
    none (not judged, or judged relevant without a type)."""
    relevant = _entry(record, "evidence_relevant", number - 1)
    correct = _entry(record, "evidence_correct", number - 1)
    if relevant == "NO":
        return IRRELEVANT
    if correct in CORRECT_LABELS:
        return correct
    return None


def imported_text(record: dict[str, Any], number: int) -> str:
    """A short description of the imported label for display."""
    label = imported_label(record, number)
    if label is not None:
        return SHORT[label]
    if _entry(record, "evidence_relevant", number - 1) == "YES":
        return "relevant (type not judged)"
    return "not judged"


def evidence_for(label: str) -> tuple[str, str]:
    """``(evidence_relevant, evidence_correct)`` entries that encode ``label``."""
    if label == IRRELEVANT:
        return "NO", ""
    if label not in CORRECT_LABELS:
        raise ValueError(f"unknown passage label {label!r}")
    return "YES", label


def needs_deflection(labels: dict[int, str | None]) -> bool:
    """Our rule (benchmarks.md §1): a question needs a deflection when none of its
    passages is ANSWER-THE-QUESTION."""
    return ANSWER not in labels.values()
