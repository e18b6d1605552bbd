"""Where the reviewer is: the server's record of this tab (:mod:`components.position`).

Verdicts, reasons and moves come from the key script (``js/review_keys.js``) as actions
the outbox delivers (:mod:`components.outbox`); the page's data names where J, K and N
lead (:func:`move_targets`). Where the page is follows the rules both pages share
(:func:`needlework.actions.positions.resolve`): the page moves the tab itself when it has no
place yet, when a filter leaves the comparison out, and when it opens (from a link,
``?item=&i=&j=``, read only then and written on every run for sharing; else where the
reviewer last worked). The difference buttons and the
note record an *intent* (their callbacks run before the script) that the page applies
once the queue is known.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st
from sqlite_utils import Database

from components import position as pos
from components.callbacks import uninterrupted
from components.state import annotator, get_db, signed_in
from components.text import label
from needlework.actions import positions
from needlework.actions.positions import Place, Position, Resolved, Worked
from needlework.actions.writes import save_note as save_verdict_note
from needlework.review.queue import Comparison, PairList, item_comparisons
from needlework.teams.permissions import PermissionDenied
from needlework.verdicts import VERDICTS, field_name, parse_field, verdict_of
from store import pairs as pairs_store
from store.annotations import get_value
from store.pairs import ItemRow
from store.review import last_verdict_change

PAGE = "review"
INTENT = "rv_intent"
ADVANCE = "rv_advance"
Ident = tuple[str, int, int]


@uninterrupted
def intent(*args: Any) -> None:
    """Button callback: remember what was asked, for :func:`apply_intent`."""
    st.session_state[INTENT] = args


def state_key(kind: str, dataset: str, ident: Ident) -> str:
    """Session key of per-comparison state (``reasons``, ``note``, ``diff``)."""
    return f"rv_{kind}|{dataset}|{ident[0]}|{ident[1]}|{ident[2]}"


def first_of(db: Database, dataset: str, row: ItemRow, scope: str, me: str) -> Comparison:
    """The item's first comparison I have not reviewed (else its first)."""
    pairs = item_comparisons(row[2], row[3], scope)
    mine = pairs_store.my_verdicts_on(db, dataset, row[1], me) if me else {}
    i, j = next(((i, j) for i, j in pairs if (i, j) not in mine), pairs[0])
    return Comparison(row[0], row[1], i, j)


def tab_place(dataset: str) -> Position | None:
    """Where the server has this tab (``None``: the browser has not said which tab it is
    yet, or the tab has no place): read once per run and handed to both :func:`resolve`
    and :func:`remember`, so that a key move committed during the run is never taken for
    the page's own."""
    return pos.held(PAGE, dataset)


class _Ground:
    """The review page's answers to the position rules (:class:`needlework.actions.positions.
    Ground`): the list of comparisons, the reviewer's verdicts, who may open what."""

    def __init__(self, db: Database, dataset: str, items: PairList, me: str,
                 allows: Callable[[str], bool] | None) -> None:
        self.db, self.dataset, self.items, self.me = db, dataset, items, me
        self._allows = allows or (lambda key: True)

    def allows(self, item: str) -> bool:
        return self._allows(item)

    def _comparison(self, place: Place) -> tuple[Comparison, int, int] | None:
        row = pairs_store.item(self.db, self.dataset, place.item)
        if row is None or not (0 <= place.i < row[2] and 0 <= place.j < row[3]):
            return None
        return Comparison(row[0], row[1], place.i, place.j), row[2], row[3]

    def exists(self, place: Place) -> bool:
        return self._comparison(place) is not None

    def finished(self, place: Place) -> bool:
        return bool(self.me) and (place.i, place.j) in pairs_store.my_verdicts_on(
            self.db, self.dataset, place.item, self.me)

    def next_open(self, after: Place | None) -> Place | None:
        if not self.me:
            return None
        found = self.items.next_unreviewed(self.db, None)
        if after is not None:
            known = self._comparison(after)
            if known is not None:
                found = self.items.next_unreviewed(self.db, *known)
        return None if found is None else Place(found.item, found.i, found.j)

    def keeps(self, place: Place) -> bool:
        return self.items.contains(place.item) and not self.items.ordered

    def first(self) -> Place | None:
        found = self.items.first(self.db)
        return None if found is None else Place(found.item, found.i, found.j)


def resolve(db: Database, dataset: str, items: PairList, me: str, scope: str,
            held: Position | None, allows: Callable[[str], bool] | None = None,
            view_changed: bool = False) -> tuple[Comparison | None, Resolved]:
    """The comparison to show, by the rules both pages share (:func:`needlework.
    positions.resolve`): when the page opens, the ``?item=`` link, on the comparison
    ``&i=I&j=J`` names (chosen I vs rejected J, numbered from 1 as on the page) when it
    has one, else the item's first comparison without my verdict; else where the
    reviewer last worked (their latest verdict, or where they moved: on to the next
    comparison without their verdict after a verdict); on the runs that follow, where
    the server has this tab. In local mode the name may be the browser's remembered one,
    which comes a run or two after the page opens: nothing is settled until then.
    ``allows``: whether this person may open an item (an annotator's own items in team
    mode, :mod:`needlework.teams.access`); a refused link is noted (:data:`REFUSED`)."""
    link: Place | None = None
    if pos.opens(PAGE):
        st.session_state.pop(REFUSED, None)
        asked = st.query_params.get("item")
        row = pairs_store.item(db, dataset, asked) if asked else None
        if row is not None:
            found = asked_pair(row) or first_of(db, dataset, row, scope, me)
            link = Place(found.item, found.i, found.j)
    saved = last_verdict_change(db, dataset, me) if me else None
    ident = parse_field(saved["field"]) if saved else None
    worked = (Worked(Place(saved["item_key"], ident[0], ident[1]), saved["at"], saved=True)
              if saved and ident else None)
    request = pos.request(PAGE, dataset, link=link, who=me, saved=worked, tab_row=held,
                          view_changed=view_changed)
    resolved = positions.resolve(request, _Ground(db, dataset, items, me, allows))
    if resolved.refused:
        st.session_state[REFUSED] = True  # the page notes what it shows instead
    place = resolved.place
    if place is None:
        return None, resolved
    row = pairs_store.item(db, dataset, place.item)
    return (Comparison(row[0], row[1], place.i, place.j) if row is not None else None), resolved


#: set when a link named an item this person may not open; the page then keeps the
#: comparison it showed instead, and says so while that one is shown
REFUSED = "rv_refused"


def asked_pair(row: ItemRow) -> Comparison | None:
    """The comparison ``?i=I&j=J`` names on ``row``'s item (1-based), if it exists there."""
    try:
        i, j = int(st.query_params.get("i", "")) - 1, int(st.query_params.get("j", "")) - 1
    except ValueError:
        return None
    if 0 <= i < row[2] and 0 <= j < row[3]:
        return Comparison(row[0], row[1], i, j)
    return None


SEEN = "rv_seen_view"


def into_view(dataset: str, signature: tuple) -> bool:
    """Whether the view (filters, search, sort) has just changed: the page then goes to
    its first comparison unless it keeps the one on screen (:func:`resolve`). A first
    run and a view that did not change keep the place."""
    seen = st.session_state.get(SEEN)
    st.session_state[SEEN] = (dataset, signature)
    return seen is not None and seen != (dataset, signature) and seen[0] == dataset


def remember(dataset: str, current: Comparison | None, resolved: Resolved,
             held: Position | None) -> int:
    """Carry out what :func:`resolve` decided: put this tab at ``current`` when it is not
    at ``held`` there (:func:`tab_place`: a page's own move), settle the opening, and
    keep the place in ``?item=&i=&j=`` (for sharing); returns the tab's ``seq``. While
    the page opens without a name and the browser may still give it the one it
    remembers, nothing is placed or settled."""
    seq = pos.commit(PAGE, dataset, resolved, held)
    if current is None or not resolved.settles:
        return seq
    if st.query_params.get("item") != current.item:
        st.query_params["item"] = current.item
    for name, value in (("i", current.i), ("j", current.j)):  # the comparison, from 1
        if st.query_params.get(name) != str(value + 1):
            st.query_params[name] = str(value + 1)
    return seq


def drawn(dataset: str) -> Comparison | None:
    """Where this tab is now (:func:`components.position.where`), as a comparison (the
    bulk verdict starts there); ``None``: nowhere yet."""
    place = pos.where(PAGE, dataset)
    if place is None:
        return None
    row = pairs_store.item(get_db(), dataset, place.item)
    return None if row is None else Comparison(row[0], row[1], place.i, place.j)


def move_targets(db: Database, current: Comparison, items: PairList, n_chosen: int,
                 n_rejected: int, me: str) -> dict[str, dict[str, Any]]:
    """Where J, K and N lead from ``current`` (whose item has ``n_chosen`` ×
    ``n_rejected`` responses), each with ``me``'s saved verdict and reasons there: the
    key script moves there at once and aims the next keys at it. ``unreviewed`` is the
    next comparison without the reviewer's verdict other than this one (a verdict with
    "next unreviewed after a verdict" goes there too)."""
    found = {"next": items.step(db, current, 1, n_chosen, n_rejected),
             "previous": items.step(db, current, -1, n_chosen, n_rejected),
             "unreviewed": items.next_unreviewed(db, current, n_chosen, n_rejected)}
    return {seek: {"item": c.item, "i": c.i, "j": c.j, **saved_verdict(db, items.dataset, c, me)}
            for seek, c in found.items() if c is not None and c != current}


#: comparisons each way the key script knows ahead of the page (:func:`line_around`):
#: more than a reviewer types before a redraw arrives, even at full speed
LINE = 64


def line_around(db: Database, current: Comparison, items: PairList, n_chosen: int,
                n_rejected: int, me: str, limit: int = LINE) -> dict[str, list[dict[str, Any]]]:
    """The ``limit`` comparisons after ``current`` in the list (``ahead``, nearest first)
    and before it (``behind``), each with ``me``'s saved verdict and reasons (one query per
    item): keys pressed faster than the page draws move along them without waiting for it."""
    saved: dict[str, dict[tuple[int, int], dict[str, Any]]] = {}

    def mine(c: Comparison) -> dict[str, Any]:
        if c.item not in saved:
            saved[c.item] = (pairs_store.my_verdict_values(db, items.dataset, c.item, me)
                             if me else {})
        value = saved[c.item].get((c.i, c.j))
        reasons = value.get("reasons") if value is not None else None
        return {"verdict": verdict_of(value), "reasons": reasons if isinstance(reasons, list) else []}

    return {name: [{"item": c.item, "i": c.i, "j": c.j, **mine(c)}
                   for c in items.walk(db, current, delta, n_chosen, n_rejected, limit)]
            for name, delta in (("ahead", 1), ("behind", -1))}


def saved_verdict(db: Database, dataset: str, c: Comparison, me: str) -> dict[str, Any]:
    """``{"verdict", "reasons"}`` of ``me`` on comparison ``c`` (``None`` and ``[]``: none)."""
    saved = get_value(db, dataset, c.item, me, field_name(c.i, c.j)) if me else None
    reasons = saved.get("reasons") if isinstance(saved, dict) else None
    return {"verdict": verdict_of(saved), "reasons": reasons if isinstance(reasons, list) else []}


def last_saved(db: Database, dataset: str, me: str) -> str:
    """``“tie” on item X, chosen 1 vs rejected 3 · 14:02:11 UTC``: my latest verdict
    change in this dataset (``""`` when none)."""
    row = last_verdict_change(db, dataset, me)
    if row is None:
        return ""
    ident = parse_field(row["field"])
    verdict = verdict_of(row["new_value"])
    what = VERDICTS[verdict][0].lower() if verdict else "cleared"
    return (f"“{what}” on item {label(row['item_key'], 40)}, chosen {ident[0] + 1} vs rejected "
            f"{ident[1] + 1} · {row['at'][11:19]} UTC") if ident else ""


@uninterrupted
def save_note(dataset: str, ident: Ident) -> None:
    """The note's callback: saved into my verdict on that comparison, if there is one
    (otherwise the key script sends it with the verdict)."""
    me = annotator()
    if not me:
        return
    note = st.session_state.get(state_key("note", dataset, ident), "")
    try:
        save_verdict_note(get_db(), dataset, ident[0], ident[1], ident[2], note, annotator=me,
                          actor=signed_in())
    except PermissionDenied as e:
        st.toast(label(str(e), 300), icon=":material/block:")


def apply_intent(dataset: str) -> None:
    """Carry out the pending intent (if any): a move to another difference."""
    action = st.session_state.pop(INTENT, None)
    if action and action[0] == "diff":
        st.session_state[state_key("diff", dataset, action[2])] = action[1]
