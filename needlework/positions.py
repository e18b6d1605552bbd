"""Where each browser tab is on the annotate and review pages: owned by the server.

A tab's position on a page and dataset is one :class:`Position` kept here, in the
server's memory. The key scripts move it with ``move`` actions (the action route,
:mod:`needlework.actions`); the pages move it when a widget does (the question picker,
a filter that leaves the question out) and when a page opens from a link (``?item=``).
A page's rerun draws the position it reads here and sends its ``seq`` with its data, so
the key script knows whether the page shows its latest move yet.

``seq`` grows with every move of the server (microseconds since the epoch, at least
one more than the last), so it keeps growing across a restart of the server. A
restart forgets every position: the pages then open where the link says (the key
scripts keep ``?item=`` on the tab's latest move).

Tabs are named by the browser (a random id kept in the tab's session storage) and, in
team mode, by the signed-in user too: one user cannot move another's tab.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

MAX_TABS = 20_000  # positions kept; the least recently moved are forgotten first
PAGES = ("annotate", "review")


@dataclass(frozen=True)
class Position:
    """A tab's place: the item, on review the comparison chosen[i] vs rejected[j], on
    annotate the passage cursor; ``seq`` orders the moves."""

    item: str
    seq: int
    i: int = 0
    j: int = 0
    cursor: int = 0


Key = tuple[str, str, str, str]  # (who, tab, page, dataset)

_lock = threading.Lock()
_positions: OrderedDict[Key, Position] = OrderedDict()
_last = 0


def _next_seq() -> int:
    global _last
    _last = max(_last + 1, time.time_ns() // 1000)
    return _last


def get(who: str, tab: str, page: str, dataset: str) -> Position | None:
    """The tab's position on ``page`` of ``dataset`` (``None``: never moved there since
    the server started)."""
    with _lock:
        return _positions.get((who, tab, page, dataset))


def move(who: str, tab: str, page: str, dataset: str, item: str, *, i: int = 0, j: int = 0,
         cursor: int = 0) -> Position:
    """Put the tab at ``item`` (``i``, ``j``, ``cursor``); returns the new position."""
    with _lock:
        key = (who, tab, page, dataset)
        found = Position(item, _next_seq(), i, j, cursor)
        _positions[key] = found
        _positions.move_to_end(key)
        while len(_positions) > MAX_TABS:
            _positions.popitem(last=False)
        return found


def clear() -> None:
    """Forget every position (tests; a server restart does the same)."""
    with _lock:
        _positions.clear()
