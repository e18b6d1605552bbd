"""Small helpers shared by the demo data builders (ids, dates, word counts)."""

from __future__ import annotations

import calendar
import re
import uuid
from datetime import date

#: Namespace for the deterministic, UUID-looking sample ids of the demo set.
DEMO_NAMESPACE = uuid.UUID("6f1c1f0e-8d0a-4c55-9a51-2f4b6b1d7e10")

#: The citation marker syntax of GaRAGe answers.
CITE_RE = re.compile(r"\[cite_(\d+)\]")

#: Rough words-per-token ratio used to estimate lengths without a tokenizer.
WORDS_PER_TOKEN = 0.75


def stable_uuid(key: str) -> str:
    """Return a UUID-looking id that depends only on ``key``."""
    return str(uuid.uuid5(DEMO_NAMESPACE, f"needlework-demo/{key}"))


def word_count(text: str) -> int:
    """Count whitespace-separated words."""
    return len(text.split())


def estimated_tokens(text: str) -> int:
    """Estimate the token count of ``text`` at ~0.75 words per token."""
    return round(word_count(text) / WORDS_PER_TOKEN)


def _add_months(day: date, months: int) -> date:
    total = day.year * 12 + (day.month - 1) + months
    year, month0 = divmod(total, 12)
    last = calendar.monthrange(year, month0 + 1)[1]
    return date(year, month0 + 1, min(day.day, last))


def _plural(n: int, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def age_between(earlier: str, later: str) -> str:
    """Format the calendar distance between two ISO dates like GaRAGe's ``age``.

    >>> age_between("2023-12-12", "2024-11-20T10:00:00")
    '11 months, 8 days'
    """
    start = date.fromisoformat(earlier[:10])
    end = date.fromisoformat(later[:10])
    if end < start:
        raise ValueError(f"passage date {earlier} is after question date {later}")
    months = (end.year - start.year) * 12 + end.month - start.month
    if end.day < start.day:
        months -= 1
    days = (end - _add_months(start, months)).days
    years, months = divmod(months, 12)
    parts = []
    if years:
        parts.append(_plural(years, "year"))
    if months:
        parts.append(_plural(months, "month"))
    if days or not parts:
        parts.append(_plural(days, "day"))
    return ", ".join(parts)


def passage(label: str, provider: str, day: str, text: str, age: str | None = None) -> dict:
    """Describe one grounding passage for the bank modules.

    ``label`` is a short code: ``A`` (ANSWER-THE-QUESTION), ``R``
    (RELATED-INFORMATION), ``O`` (OUTDATED), ``U`` (UNKNOWN), ``N``
    (irrelevant) or ``""`` (not judged yet). ``age`` is computed from ``day``
    and the question date unless given explicitly (``""`` keeps it empty).
    """
    return {"label": label, "provider": provider, "date": day, "text": text, "age": age}
