"""An annotator's own pace today: how many items they saved work on, and the median
time per item.

The rule (:data:`RULE`, said on screen with the figure): a person's saves today (UTC)
are put in time order, and consecutive saves on one item are one visit; the time of a
visit is from the last save of the visit before it to its own last save. A gap longer
than :data:`BREAK_SECONDS` is a break, not work: that visit's time is left out (its
item still counts). The day's first visit has no time. The median is of the times left.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from sqlite_utils import Database

from store.own_work import saves_between

BREAK_SECONDS = 600
RULE = (f"Median of the times between your saves on one item and your saves on the next "
        f"(today, UTC); a gap over {BREAK_SECONDS // 60} minutes counts as a break and is "
        "left out.")


@dataclass(frozen=True)
class Pace:
    """``items``: distinct items saved today; ``median``: seconds per item (``None``
    without two visits under the break); ``timed``: how many visit times the median is of."""

    items: int
    median: float | None
    timed: int


def pace_of(saves: Sequence[tuple[str, str, datetime]], break_seconds: int = BREAK_SECONDS) -> Pace:
    """The pace of ``saves`` ``(dataset, item_key, time)``, oldest first (see the module
    docstring for the rule)."""
    visits: list[tuple[tuple[str, str], datetime]] = []
    for dataset, item, at in saves:
        if visits and visits[-1][0] == (dataset, item):
            visits[-1] = ((dataset, item), at)
        else:
            visits.append(((dataset, item), at))
    gaps = [(b - a).total_seconds() for (_, a), (_, b) in zip(visits, visits[1:], strict=False)]
    kept = [g for g in gaps if 0 <= g <= break_seconds]
    return Pace(len({item for item, _ in visits}), statistics.median(kept) if kept else None,
                len(kept))


def today_pace(db: Database, annotator: str, today: date) -> Pace:
    """``annotator``'s pace on the UTC day ``today``."""
    start = datetime(today.year, today.month, today.day, tzinfo=UTC)
    rows = saves_between(db, annotator, start.isoformat(), (start + timedelta(days=1)).isoformat())
    return pace_of([(d, k, datetime.fromisoformat(at)) for d, k, at in rows])


def duration_words(seconds: float) -> str:
    """``45 s``, ``1 min 05 s``, ``12 min``."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    minutes, rest = divmod(s, 60)
    return f"{minutes} min" if minutes >= 10 or rest == 0 else f"{minutes} min {rest:02d} s"


def pace_text(pace: Pace) -> str:
    """``Today: 14 items · median 1 min 05 s per item`` (``Today: nothing saved yet``)."""
    if not pace.items:
        return "Today: nothing saved yet"
    words = f"Today: {pace.items:,} item{'s' if pace.items != 1 else ''}"
    if pace.median is None:
        return words + " · no time per item yet"
    return words + f" · median {duration_words(pace.median)} per item"
