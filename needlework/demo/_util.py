"""Small helpers shared by the demo data builders (ids, dates, text edits)."""

from __future__ import annotations

import calendar
import uuid
from datetime import date

from needlework.words import plural

#: Namespace for the deterministic, UUID-looking sample ids of the demo set.
DEMO_NAMESPACE = uuid.UUID("6f1c1f0e-8d0a-4c55-9a51-2f4b6b1d7e10")


def stable_uuid(key: str) -> str:
    """Return a UUID-looking id that depends only on ``key``."""
    return str(uuid.uuid5(DEMO_NAMESPACE, f"needlework-demo/{key}"))


def _add_months(day: date, months: int) -> date:
    total = day.year * 12 + (day.month - 1) + months
    year, month0 = divmod(total, 12)
    last = calendar.monthrange(year, month0 + 1)[1]
    return date(year, month0 + 1, min(day.day, last))


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
        parts.append(plural(years, "year"))
    if months:
        parts.append(plural(months, "month"))
    if days or not parts:
        parts.append(plural(days, "day"))
    return ", ".join(parts)


def apply_edits(text: str, edits: list[list[str]], where: str) -> str:
    """Replace each ``[old, new]`` pair's ``old`` in ``text``; ``old`` must occur exactly once.

    Used for the near-copy rejected responses (one or two sentences changed), so
    that a diff view shows only the flaw. ``where`` names the record in the error.
    """
    for old, new in edits:
        if text.count(old) != 1:
            raise ValueError(f"{where}: edit target not found exactly once: {old[:50]!r}")
        text = text.replace(old, new)
    return text


def near_copy_record(subset: str, prompt: str, chosen: str, edit_lists: list[list[list[str]]],
                     last: str, where: str) -> dict:
    """A long record whose rejected responses are one near-copy of ``chosen`` per
    list of edits (see :func:`apply_edits`), then ``last``."""
    rejected = [apply_edits(chosen, edits, where) for edits in edit_lists]
    return {"subset": subset, "prompt": prompt, "chosen": chosen, "rejected": [*rejected, last]}
