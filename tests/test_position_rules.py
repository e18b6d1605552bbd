"""The position rules both pages follow (needlework.actions.positions.resolve), row by row."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from needlework.actions.positions import Place, Position, Request, Worked, resolve, resume


@dataclass
class Ground:
    """A list of places in order; ``done``: places whose work is finished; ``mine``: the
    items this person may open (``None``: all); ``view``: the items a changed view keeps."""

    order: list[Place]
    done: set[Place] = field(default_factory=set)
    mine: set[str] | None = None
    view: set[str] | None = None

    def allows(self, item: str) -> bool:
        return self.mine is None or item in self.mine

    def exists(self, place: Place) -> bool:
        return any(p.item == place.item and (p.i, p.j) == (place.i, place.j) for p in self.order)

    def finished(self, place: Place) -> bool:
        return Place(place.item, place.i, place.j) in self.done

    def next_open(self, after: Place | None) -> Place | None:
        k = next((n for n, p in enumerate(self.order) if after is not None and p.item == after.item
                  and (p.i, p.j) == (after.i, after.j)), -1)
        ring = self.order[k + 1:] + self.order[:max(k, 0)]
        return next((p for p in ring if p not in self.done), None)

    def keeps(self, place: Place) -> bool:
        return self.view is None or place.item in self.view

    def first(self) -> Place | None:
        return self.order[0] if self.order else None


A, B, C, D = (Place(k) for k in "abcd")
GROUND = Ground([A, B, C, D], done={A})


def row(place: Place, seq: int = 5, at: str = "2026-01-01T00:00:00.000+00:00") -> Position:
    return Position(place.item, seq, place.i, place.j, place.cursor, at)


def saved(place: Place, at: str) -> Worked:
    return Worked(place, f"2026-01-01T00:00:0{at}.000+00:00", saved=True)


def moved(place: Place, at: str) -> Worked:
    return Worked(place, f"2026-01-01T00:00:0{at}.000+00:00")


@pytest.mark.parametrize(("request_", "ground", "place", "why", "moves"), [
    # the page opens: the link counts, whatever the tab's row says
    (Request(opening=True, link=C, tab=row(B)), GROUND, C, "link", True),
    (Request(opening=True, link=Place("c", cursor=3), tab=row(C)), GROUND, Place("c", cursor=3),
     "link", True),  # the link's passage is a move of the cursor
    (Request(opening=True, link=C, tab=row(C)), GROUND, C, "link", False),
    # a link naming nothing there: resume
    (Request(opening=True, link=Place("gone"), worked=(moved(C, "1"),)), GROUND, C, "resume",
     True),
    # no link: where the person last worked, not the list's first open place
    (Request(opening=True, worked=(saved(B, "1"), moved(C, "2"))), GROUND, C, "resume", True),
    (Request(opening=True, worked=(moved(C, "1"), saved(B, "2"))), GROUND, B, "resume", True),
    # a save that finished its item: the next one not done after it
    (Request(opening=True, worked=(saved(A, "2"), moved(D, "1"))), GROUND, B, "resume", True),
    (Request(opening=True, worked=(saved(C, "1"),)), Ground([A, B, C, D], done={A, C}), D,
     "resume", True),
    # a move to a finished item stays there (the person went back to it)
    (Request(opening=True, worked=(moved(A, "1"),)), GROUND, A, "resume", True),
    # everything done: where they stopped
    (Request(opening=True, worked=(saved(B, "1"),)), Ground([A, B], done={A, B}), B, "resume",
     True),
    # nobody worked here: the first not done, else the first
    (Request(opening=True), GROUND, B, "start", True),
    (Request(opening=True), Ground([A, B], done={A, B}), A, "start", True),
    # the runs that follow: the tab's row, the link unread
    (Request(tab=row(D), link=C, worked=(saved(B, "9"),)), GROUND, D, "tab", False),
    # a place pending in the session comes before the row
    (Request(pending=C, tab=None), GROUND, C, "pending", True),
    # no row yet (a new tab's first run): resume
    (Request(worked=(moved(C, "1"),)), GROUND, C, "resume", True),
    # a changed view that leaves the place out: its first
    (Request(tab=row(D), view_changed=True), Ground([A, B, C, D], view={"a"}), A, "view", True),
    (Request(tab=row(D), view_changed=True), Ground([A, B, C, D], view={"d"}), D, "tab", False),
    # an empty list: nowhere
    (Request(opening=True), Ground([]), None, "start", False),
])
def test_the_rule_table(request_, ground, place, why, moves):
    got = resolve(request_, ground)
    assert (got.place, got.why, got.moves, got.settles, got.refused) == (
        place, why, moves, True, False)


def test_what_this_person_may_not_open_counts_as_nothing():
    ground = Ground([A, B, C, D], mine={"b", "d"})
    got = resolve(Request(opening=True, link=C, worked=(moved(D, "1"),)), ground)
    assert (got.place, got.refused) == (D, True)  # the refused link is said
    got = resolve(Request(tab=row(C), worked=(saved(A, "3"), moved(B, "1"))), ground)
    assert (got.place, got.why) == (B, "resume")
    assert resume((), Ground([A, B], mine={"b"}, done={B}))[0] == A  # the list decides


def test_a_comparison_and_a_cursor_are_part_of_the_place():
    pairs = Ground([Place("x", 0, 0), Place("x", 0, 1), Place("y", 0, 0)], done={Place("x", 0, 0)})
    got = resolve(Request(opening=True, worked=(saved(Place("x", 0, 0), "1"),)), pairs)
    assert got.place == Place("x", 0, 1)
    held = row(Place("x", 0, 1, cursor=4))
    assert not resolve(Request(tab=held), pairs).moves  # the row's cursor is kept
    assert not Place("x", 0, 1).same(row(Place("x", 1, 1)))
    assert Place("x", 0, 1).same(held) and not Place("x", 0, 1, cursor=2).same(held)


def test_while_the_name_may_still_come_nothing_moves_or_settles():
    got = resolve(Request(opening=True, naming=True), GROUND)
    assert (got.place, got.moves, got.settles) == (B, False, False)
