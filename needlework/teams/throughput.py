"""Throughput for the lead: work finished per annotator per day, the team's recent rate
and the day the dataset would be finished at that rate.

The unit is the dataset's: items done (grounding: every passage labeled and an answer)
or comparisons reviewed (preference). The rate is the work finished over the last
``window`` calendar days (today included) divided by those days; the estimated end is
today plus what is left over that rate, rounded up. No rate (nothing finished lately):
no estimate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from sqlite_utils import Database

from needlework.teams.permissions import User, check
from store import throughput as store_throughput
from store.datasets import get_dataset

WINDOW_DAYS = 7


@dataclass(frozen=True)
class Throughput:
    """``daily``: (annotator, day ``YYYY-MM-DD``, units finished); ``unit``: ``items`` or
    ``comparisons``; ``left``: units still to do; ``rate``: units a day lately;
    ``end``: the estimated day the work is finished (``None``: no rate)."""

    unit: str
    daily: list[tuple[str, str, int]]
    left: int
    rate: float
    end: date | None
    window: int = WINDOW_DAYS


def forecast(daily: Sequence[tuple[str, str, int]], left: int, today: date,
             window: int = WINDOW_DAYS) -> tuple[float, date | None]:
    """The rate over the last ``window`` days up to ``today`` and the estimated end day
    (``today`` when nothing is left; ``None`` when the rate is zero)."""
    first = today - timedelta(days=window - 1)
    recent = sum(n for _, day, n in daily if first.isoformat() <= day <= today.isoformat())
    rate = recent / window
    if left <= 0:
        return rate, today
    if rate <= 0:
        return rate, None
    return rate, today + timedelta(days=math.ceil(left / rate))


def throughput(db: Database, dataset: str, today: date, *, actor: User | None = None,
               window: int = WINDOW_DAYS) -> Throughput:
    """The throughput of ``dataset`` as of ``today`` (reviewers and admins)."""
    check(db, actor, "quality", dataset)
    row = get_dataset(db, dataset)
    if row is None:
        raise ValueError(f"no dataset named {dataset!r}")
    if row["kind"] == "grounding":
        unit, daily = "items", store_throughput.done_items_by_day(db, dataset)
        left = store_throughput.items_left(db, dataset)
    else:
        unit, daily = "comparisons", store_throughput.reviewed_comparisons_by_day(db, dataset)
        left = store_throughput.comparisons_left(db, dataset)
    rate, end = forecast(daily, left, today, window)
    return Throughput(unit, daily, left, rate, end, window)
