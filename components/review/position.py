"""Where the reviewer is, kept in the session.

Verdicts, reasons and moves come from the key script (``js/review_keys.js``): verdicts
and reasons as actions the outbox delivers (:mod:`components.outbox`), moves as a view
the page follows (:func:`follow`). The difference buttons and the note record an
*intent* (their callbacks run before the script) that the page applies once the queue
is known. The current item is mirrored in ``?item=`` so the URL always opens where you
are.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import streamlit as st
from sqlite_utils import Database

from components.outbox import ECHO_SECONDS, followed
from components.state import annotator, get_db, signed_in
from components.text import label
from needlework.review.queue import Comparison, PairList, item_comparisons
from needlework.review.verdicts import VERDICTS, parse_field, verdict_of
from needlework.teams.permissions import PermissionDenied
from needlework.teams.writes import save_note as save_verdict_note
from store import pairs as pairs_store
from store.pairs import ItemRow
from store.review import last_verdict_change

POS = "rv_pos"
INTENT = "rv_intent"
ADVANCE = "rv_advance"
Ident = tuple[str, int, int]


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


def resolve(db: Database, dataset: str, items: PairList, me: str, scope: str) -> Comparison | None:
    """The comparison to show: a new ``?item=`` (deep link, edited URL) wins, on the
    comparison ``&i=I&j=J`` names (chosen I vs rejected J, numbered from 1 as on the
    page) when it has one, then where this session was in this dataset, then where the
    reviewer left off: the first comparison of the list without their verdict.

    The URL is new when it is not the one this session wrote and not one it moved away
    from in the last few seconds to follow the key script: requests sent before the
    browser had the new URL still carry the old one (after a server restart, the one
    the old server wrote), and jumping back to it sent the next keys to the comparison
    the reviewer had left."""
    state = st.session_state.get(POS) or {}
    asked = st.query_params.get("item")
    left = state.get("left") or {}
    if (asked is not None and asked != state.get("written")
            and time.monotonic() - left.get(asked, -ECHO_SECONDS) >= ECHO_SECONDS):
        row = pairs_store.item(db, dataset, asked)
        if row is not None:
            return asked_pair(row) or first_of(db, dataset, row, scope, me)
    if state.get("dataset") == dataset and state.get("item"):
        row = pairs_store.item(db, dataset, state["item"])
        i, j = state["i"], state["j"]
        if row is not None and i < row[2] and j < row[3]:
            return Comparison(row[0], row[1], i, j)
    if me:
        found = items.next_unreviewed(db, None)
        if found is not None:
            return found
    return items.first(db)


def asked_pair(row: ItemRow) -> Comparison | None:
    """The comparison ``?i=I&j=J`` names on ``row``'s item (1-based), if it exists there."""
    try:
        i, j = int(st.query_params.get("i", "")) - 1, int(st.query_params.get("j", "")) - 1
    except ValueError:
        return None
    if 0 <= i < row[2] and 0 <= j < row[3]:
        return Comparison(row[0], row[1], i, j)
    return None


def follow(db: Database, dataset: str, view: Mapping[str, Any] | None,
           current: Comparison | None, items: PairList) -> Comparison | None:
    """The comparison a browser view asks for (the key script's J / K / N, a verdict that
    moves on, a click in the comparison grid), from the comparison it was on."""
    if not view or not isinstance(view.get("item"), str):
        return current
    row = pairs_store.item(db, dataset, view["item"])
    i, j = view.get("i"), view.get("j")
    if row is None or not (isinstance(i, int) and isinstance(j, int) and 0 <= i < row[2]
                           and 0 <= j < row[3]):
        return current
    start = Comparison(row[0], row[1], i, j)
    seek = view.get("seek")
    if seek in ("next", "previous"):
        return items.step(db, start, 1 if seek == "next" else -1, row[2], row[3]) or start
    if seek == "unreviewed":
        found = items.next_unreviewed(db, start, row[2], row[3])
        if found is None:
            st.toast("Every comparison in this view is reviewed.", icon="🎉")
        return found or start
    return start


SEEN = "rv_seen_view"


def into_view(db: Database, dataset: str, current: Comparison | None, items: PairList,
              signature: tuple) -> Comparison | None:
    """When the view has just changed (filters, search, sort) and leaves the comparison on
    screen out, or now sorts by margin: its first comparison (a search lands on its first
    match). A first run, a deep link and a view that did not change keep ``current``."""
    seen = st.session_state.get(SEEN)
    st.session_state[SEEN] = (dataset, signature)
    if seen is None or seen == (dataset, signature) or seen[0] != dataset:
        return current
    if current is not None and items.contains(current.item) and not items.ordered:
        return current
    return items.first(db) or current


def remember(dataset: str, current: Comparison | None,
             view: Mapping[str, Any] | None = None) -> None:
    """Keep the position in the session and in ``?item=&i=&j=``; ``view``, the browser
    view :func:`follow` just followed, is then marked followed (before anything is
    drawn: see ``components.outbox.followed``)."""
    link = st.query_params.get("item")
    if current is None:
        st.session_state[POS] = {"dataset": dataset, "written": link}
        followed(view)
        return
    now = time.monotonic()
    left = {k: t for k, t in (st.session_state.get(POS) or {}).get("left", {}).items()
            if now - t < ECHO_SECONDS}
    if view is not None and link and link != current.item:
        left[link] = now  # requests still carrying the URL it left are echoes, not links
    st.session_state[POS] = {"dataset": dataset, "item": current.item, "i": current.i,
                             "j": current.j, "written": current.item, "left": left}
    followed(view)
    if st.query_params.get("item") != current.item:
        st.query_params["item"] = current.item
    for name, value in (("i", current.i), ("j", current.j)):  # the comparison, from 1
        if st.query_params.get(name) != str(value + 1):
            st.query_params[name] = str(value + 1)


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
