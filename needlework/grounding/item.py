"""A GaRAGe record as the annotate page shows it: passages with their age, and the
question dimensions (benchmarks.md §1, appendix A.1)."""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date
from typing import Any

from needlework.formats import garage
from needlework.words import plural

#: Time sensitivity as one choice: (question_sensitive, question_type).
TIME_SENSITIVITY: dict[str, tuple[str, str]] = {
    "static": ("NO", ""),
    "slow-changing": ("YES", "SLOW-CHANGING"),
    "fast-changing": ("YES", "FAST-CHANGING"),
}
TIME_HELP = (
    "static: the answer does not change; slow-changing: information older than a week "
    "is fine; fast-changing: needs information from the last 7 days."
)

#: Yes/no dimensions: (field, short title, help).
YES_NO_DIMS: tuple[tuple[str, str, str], ...] = (
    ("question_valid", "Valid", "Is this a valid, answerable question?"),
    ("question_false_premise", "False premise", "Does the question assume something false?"),
    ("question_seeking", "Info-seeking", "Does the question seek information?"),
)

#: Each stored dimension's name in sentences (figures, adjudication, decisions).
DIM_TITLES = {
    "question_valid": "valid", "question_false_premise": "false premise",
    "question_seeking": "info-seeking", "question_sensitive": "time-sensitive",
    "question_type": "question type (slow/fast)", "question_complexity": "complexity",
    "question_popularity": "popularity", "question_category": "category",
}

#: Every dimension stored as ``dim:FIELD`` (time sensitivity writes two of them).
DIM_FIELDS: tuple[str, ...] = (
    "question_valid",
    "question_false_premise",
    "question_seeking",
    "question_sensitive",
    "question_type",
    "question_complexity",
    "question_popularity",
    "question_category",
)

#: Default category list (GaRAGe's ~25 domains); editable per dataset in ``meta``.
DEFAULT_CATEGORIES: tuple[str, ...] = (
    "Arts & Entertainment", "Automotive", "Business", "Education", "Environment",
    "Finance", "Food & Drink", "Games", "Geography", "Health", "History", "Home & Garden",
    "Law & Government", "Literature", "Music", "News", "People & Society", "Pets & Animals",
    "Politics", "Real Estate", "Science", "Shopping", "Sports", "Technology", "Travel",
)
CATEGORIES_META = "categories"


@dataclass(frozen=True)
class Passage:
    """One grounding passage: number (1-based), text, provider, date and age.

    ``age_note`` says where the shown age comes from: ``""`` (the record),
    ``"derived"`` (computed from the question date and the passage date because the
    record has none), ``"after question"`` (dated after the question) or
    ``"unknown"`` (no age and no date).
    """

    number: int
    text: str
    provider: str
    date: str
    age: str
    age_note: str


def _add_months(day: date, months: int) -> date:
    total = day.year * 12 + day.month - 1 + months
    year, month0 = divmod(total, 12)
    return date(year, month0 + 1, min(day.day, calendar.monthrange(year, month0 + 1)[1]))


def _parse_day(text: str) -> date | None:
    try:
        return date.fromisoformat(text[:10])
    except (TypeError, ValueError):
        return None


def derive_age(passage_date: str, question_date: str) -> str | None:
    """The calendar distance from the passage date to the question date in GaRAGe's
    style (``"11 months, 8 days"``); ``None`` when a date is missing, unreadable or
    the passage is dated after the question."""
    start, end = _parse_day(passage_date), _parse_day(question_date)
    if start is None or end is None or end < start:
        return None
    months = (end.year - start.year) * 12 + end.month - start.month
    if end.day < start.day:
        months -= 1
    days = (end - _add_months(start, months)).days
    years, months = divmod(months, 12)
    parts = [plural(years, "year")] if years else []
    if months:
        parts.append(plural(months, "month"))
    if days or not parts:
        parts.append(plural(days, "day"))
    return ", ".join(parts)


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def passages(record: dict[str, Any]) -> list[Passage]:
    """The record's passages, each with an age (from the record, else derived)."""
    question_date = _str(record.get("question_date"))
    out = []
    for number, raw in enumerate(record.get("grounding") or [], start=1):
        raw = raw if isinstance(raw, dict) else {}
        day, age, note = _str(raw.get("date")), _str(raw.get("age")), ""
        if not age:
            derived = derive_age(day, question_date)
            if derived is not None:
                age, note = derived, "derived"
            elif day and _parse_day(day) and _parse_day(question_date):
                note = "after question"
            else:
                note = "unknown"
        out.append(Passage(number, garage.passage_text(raw, number), _str(raw.get("provider")),
                           day, age, note))
    return out


def time_sensitivity(sensitive: str | None, qtype: str | None) -> str | None:
    """The single time-sensitivity choice for a (question_sensitive, question_type) pair."""
    if sensitive == "NO":
        return "static"
    if sensitive == "YES":
        return {"SLOW-CHANGING": "slow-changing", "FAST-CHANGING": "fast-changing"}.get(qtype or "")
    return None


def imported_dims(record: dict[str, Any]) -> dict[str, str]:
    """The record's own dimension values (``""`` where unset)."""
    return {field: _str(record.get(field)) for field in DIM_FIELDS}


def categories(meta: dict[str, Any], seen: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The dataset's category list (``meta["categories"]`` or the defaults), plus any
    category already used by a record, in order, without duplicates."""
    base = meta.get(CATEGORIES_META)
    if not isinstance(base, list) or not base:
        base = list(DEFAULT_CATEGORIES)
    return list(dict.fromkeys([c for c in base if isinstance(c, str) and c] + [s for s in seen if s]))


def parse_categories(text: str) -> list[str]:
    """A category list from text: one per line, trimmed, without duplicates."""
    return list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))
