"""Where each browser tab is on the annotate and review pages: owned by the server, and
the rules that say where a page's run is (:func:`resolve`), written once for both pages.

A tab's position on a page and dataset is one :class:`Position`, kept in the database
(``store.positions``) so that a restarted server still knows it. The key scripts move
it with ``move`` actions (the action route, :mod:`needlework.actions.service`), in the same
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
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

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
    at: str = field(default="", compare=False)  # when it moved (ISO 8601, UTC)

    @property
    def place(self) -> Place:
        return Place(self.item, self.i, self.j, self.cursor)


def get(db: Database, who: str, tab: str, page: str, dataset: str) -> Position | None:
    """The tab's position on ``page`` of ``dataset`` (``None``: it never had one)."""
    row = store_positions.get(db, who, tab, page, dataset)
    if row is None:
        return None
    return Position(row["item_key"], row["seq"], row["i"], row["j"], row["cursor"],
                    row["updated_at"])


def latest(db: Database, who: str, page: str, dataset: str) -> Position | None:
    """Where signed-in user ``who`` moved last on ``page`` of ``dataset``, in any tab
    (``None``: nowhere; locally, ``who`` is ``""`` for everyone: ``None``)."""
    row = store_positions.latest(db, who, page, dataset) if who else None
    if row is None:
        return None
    return Position(row["item_key"], row["seq"], row["i"], row["j"], row["cursor"],
                    row["updated_at"])


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


# --- where a page's run is: the rules ------------------------------------------------


@dataclass(frozen=True)
class Place:
    """Where a page is: the item, on Review the comparison chosen[i] vs rejected[j], on
    Annotate the passage cursor (0: not said: the page's first unlabeled passage)."""

    item: str
    i: int = 0
    j: int = 0
    cursor: int = 0

    def same(self, other: Place | Position | None) -> bool:
        """Whether ``other`` is this place (a cursor not said matches any)."""
        return (other is not None and (other.item, other.i, other.j) == (self.item, self.i, self.j)
                and (not self.cursor or other.cursor == self.cursor))


@dataclass(frozen=True)
class Worked:
    """A place this person worked at, and when (ISO 8601, UTC). ``saved``: they saved
    work there (an annotation, a verdict); else they moved there."""

    place: Place
    at: str
    saved: bool = False


@dataclass(frozen=True)
class Request:
    """What a page's run knows about where it is (:func:`resolve`)."""

    #: the page has just opened (a link, the sidebar, Home's Open, a reload, a new tab),
    #: not a restarted server's reconnection, and has not settled its place yet
    opening: bool = False
    #: the place ``?item=`` names (with ``&i=&j=`` or ``&passage=``), read only when the
    #: page opens; ``None``: no link, or one naming no item of the dataset
    link: Place | None = None
    #: the tab's row in ``tab_positions`` (``None``: the browser has not said which tab it
    #: is yet, the tab has no place there, or a place is pending)
    tab: Position | None = None
    #: a place this session chose that the tab's row does not hold yet (the browser had
    #: not said which tab it is, or the write failed)
    pending: Place | None = None
    #: where this person worked: their latest saved annotation or verdict, their tab rows
    worked: tuple[Worked, ...] = ()
    #: the page's view (filters, search, sort) changed since its last run
    view_changed: bool = False
    #: the page opens with no name while the browser may still bring one: where to
    #: resume is that person's, so nothing is placed or settled on this run
    naming: bool = False


class Ground(Protocol):
    """What the rules ask of the page's data."""

    def allows(self, item: str) -> bool:
        """Whether this person may open ``item`` (team mode: an annotator's own items)."""

    def exists(self, place: Place) -> bool:
        """Whether the item (and on Review the comparison) exists."""

    def finished(self, place: Place) -> bool:
        """Whether this person's work there is done (every label, or the verdict)."""

    def next_open(self, after: Place | None) -> Place | None:
        """The first place of the list after ``after`` (from the start when ``None``,
        wrapping around) whose work is not done; ``None``: every one is done."""

    def keeps(self, place: Place) -> bool:
        """Whether a view that has just changed keeps ``place`` (else: its first)."""

    def first(self) -> Place | None:
        """The list's first place (``None``: the list is empty)."""


@dataclass(frozen=True)
class Resolved:
    """Where the run is and what it does about it. ``place`` ``None``: nowhere (an empty
    list). ``why``: which rule chose it (``link``, ``pending``, ``tab``, ``resume``,
    ``start``, ``view``). ``moves``: the tab's row must be put there (the page's own
    move). ``settles``: the opening is over (later runs no longer read the link)."""

    place: Place | None
    why: str
    refused: bool = False
    moves: bool = False
    settles: bool = True


def last_worked(worked: Iterable[Worked], ground: Ground) -> Worked | None:
    """The newest of ``worked`` this person may open and that still exists (a save and a
    move at the same instant: the save)."""
    usable = [w for w in worked if ground.allows(w.place.item) and ground.exists(w.place)]
    return max(usable, key=lambda w: (w.at, w.saved), default=None)


def resume(worked: Iterable[Worked], ground: Ground) -> tuple[Place | None, str]:
    """Where a page opened with no link goes: where this person worked last; when that
    was a save that left the item done, the next one not done after it (the same place
    when every one is done). Nobody worked here yet: the list's first place not done,
    else its first."""
    last = last_worked(worked, ground)
    if last is None:
        return ground.next_open(None) or ground.first(), "start"
    if last.saved and ground.finished(last.place):
        return ground.next_open(last.place) or last.place, "resume"
    return last.place, "resume"


def resolve(request: Request, ground: Ground) -> Resolved:
    """Where a page's run is, the same rules on Annotate and Review:

    ====================  ==========================================================
    the page opens        ``?item=`` when it names an item this person may open, else
                          :func:`resume` (a refused link is said: ``refused``)
    the runs that follow  the place pending in this session, else the tab's row, else
                          :func:`resume` (a place this person may not open counts as
                          none)
    the view changed      its first place, when it does not keep the one chosen
    ====================  ==========================================================

    The tab moves when the place is not its row's; while ``naming``, nothing moves or
    settles."""
    place: Place | None = None
    why = ""
    refused = False
    if request.opening:
        link = request.link
        if link is not None and not ground.allows(link.item):
            refused = True
        elif link is not None and ground.exists(link):
            place, why = link, "link"
    else:
        for candidate, name in ((request.pending, "pending"),
                                (request.tab.place if request.tab else None, "tab")):
            if candidate is not None and ground.allows(candidate.item) and ground.exists(candidate):
                place, why = candidate, name
                break
    if place is None:
        place, why = resume(request.worked, ground)
    if request.view_changed and (place is None or not ground.keeps(place)):
        first = ground.first()
        if first is not None:
            place, why = first, "view"
    if request.naming:
        return Resolved(place, why, refused, moves=False, settles=False)
    moves = place is not None and not place.same(request.tab)
    return Resolved(place, why, refused, moves=moves)
