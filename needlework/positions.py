"""Where each browser tab is on the annotate and review pages: owned by the server.

A tab's position on a page and dataset is one :class:`Position`, kept in the database
(``store.positions``) so that a restarted server still knows it. The key scripts move
it with ``move`` actions (the action route, :mod:`needlework.actions`), in the same
transaction and order as the labels pressed around them; the pages move it when a
widget does (the question picker, a filter that leaves the question out), when the tab
has no place yet, and when a page opens from a link (``components/position.py``). A
page's run draws the position it reads here and sends its ``seq`` with its data, so
the key script knows whether the page shows its latest move yet.

``seq`` grows with every move of a tab (microseconds since the epoch, at least one
more than the tab's last). Tabs are named by the browser (a random id kept in the
tab's session storage) and, in team mode, by the signed-in user too: one user cannot
move another's tab. Tabs that have not moved for :data:`KEEP_DAYS` days are forgotten.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sqlite_utils import Database

from store import positions as store_positions

KEEP_DAYS = 30


@dataclass(frozen=True)
class Position:
    """A tab's place: the item, on review the comparison chosen[i] vs rejected[j], on
    annotate the passage cursor (0: not said); ``seq`` orders the moves."""

    item: str
    seq: int
    i: int = 0
    j: int = 0
    cursor: int = 0


def get(db: Database, who: str, tab: str, page: str, dataset: str) -> Position | None:
    """The tab's position on ``page`` of ``dataset`` (``None``: it never had one)."""
    row = store_positions.get(db, who, tab, page, dataset)
    if row is None:
        return None
    return Position(row["item_key"], row["seq"], row["i"], row["j"], row["cursor"])


def move(db: Database, who: str, tab: str, page: str, dataset: str, item: str, *, i: int = 0,
         j: int = 0, cursor: int = 0) -> Position:
    """Put the tab at ``item`` (``i``, ``j``, ``cursor``); returns the new position.
    Commits unless called inside a transaction (then it is part of it)."""
    with db.atomic():
        before = store_positions.get(db, who, tab, page, dataset)
        if before is None:  # a new tab: forget the tabs long gone
            store_positions.forget_older_than(db, KEEP_DAYS)
        seq = max(time.time_ns() // 1000, (before["seq"] + 1) if before else 0)
        store_positions.put(db, who, tab, page, dataset, item, i=i, j=j, cursor=cursor, seq=seq)
    return Position(item, seq, i, j, cursor)
