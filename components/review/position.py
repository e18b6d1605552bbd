"""Where the reviewer is, kept in the session.

Verdicts, reasons and moves come from the key script (``js/review_keys.js``): verdicts
and reasons as actions the outbox delivers (:mod:`components.outbox`), moves as a view
the page follows (:func:`follow`). The difference buttons and the note record an
*intent* (their callbacks run before the script) that the page applies once the queue
is known. The current item is mirrored in ``?item=`` so the URL always opens where you
are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st
from sqlite_utils import Database

from components.state import annotator, get_db, signed_in
from components.text import label
from needlework.review.lengths import ItemFacts
from needlework.review.queue import Comparison, item_comparisons, next_unreviewed, step
from needlework.review.verdicts import VERDICTS, field_name, make_value, parse_field, verdict_of
from needlework.teams.permissions import PermissionDenied
from needlework.teams.writes import write_annotation
from store.annotations import get_value
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


def first_of(facts: ItemFacts, scope: str, mine: Mapping[Ident, str]) -> Comparison:
    """The item's first comparison I have not reviewed (else its first)."""
    pairs = item_comparisons(facts.n_chosen, facts.n_rejected, scope)
    i, j = next(((i, j) for i, j in pairs if (facts.key, i, j) not in mine), pairs[0])
    return Comparison(facts.position, facts.key, i, j)


def resolve(
    dataset: str,
    queue: Sequence[Comparison],
    by_key: Mapping[str, ItemFacts],
    mine: Mapping[Ident, str],
    scope: str,
) -> Comparison | None:
    """The comparison to show: a new ``?item=`` (deep link, edited URL) wins, on the
    comparison ``&i=I&j=J`` names (chosen I vs rejected J, numbered from 1 as on the
    page) when it has one, then where this session was in this dataset, then the first
    unreviewed one."""
    state = st.session_state.get(POS) or {}
    asked = st.query_params.get("item")
    if asked is not None and asked != state.get("written") and asked in by_key:
        return asked_pair(by_key[asked]) or first_of(by_key[asked], scope, mine)
    if state.get("dataset") == dataset and state.get("item") in by_key:
        facts = by_key[state["item"]]
        i, j = state["i"], state["j"]
        if i < facts.n_chosen and j < facts.n_rejected:
            return Comparison(facts.position, facts.key, i, j)
    return next_unreviewed(queue, None, mine) or (queue[0] if queue else None)


def asked_pair(facts: ItemFacts) -> Comparison | None:
    """The comparison ``?i=I&j=J`` names on ``facts``' item (1-based), if it exists there."""
    try:
        i, j = int(st.query_params.get("i", "")) - 1, int(st.query_params.get("j", "")) - 1
    except ValueError:
        return None
    if 0 <= i < facts.n_chosen and 0 <= j < facts.n_rejected:
        return Comparison(facts.position, facts.key, i, j)
    return None


def follow(
    view: Mapping[str, Any] | None,
    current: Comparison | None,
    queue: Sequence[Comparison],
    by_key: Mapping[str, ItemFacts],
    mine: Mapping[Ident, str],
) -> Comparison | None:
    """The comparison a browser view asks for (the key script's J / K / N, a verdict that
    moves on, a click in the comparison grid), from the comparison it was on."""
    if not view or view.get("item") not in by_key:
        return current
    facts = by_key[view["item"]]
    i, j = view.get("i"), view.get("j")
    if not (isinstance(i, int) and isinstance(j, int) and 0 <= i < facts.n_chosen
            and 0 <= j < facts.n_rejected):
        return current
    start = Comparison(facts.position, facts.key, i, j)
    seek = view.get("seek")
    if seek in ("next", "previous"):
        return step(queue, start, 1 if seek == "next" else -1) or start
    if seek == "unreviewed":
        found = next_unreviewed(queue, start, mine)
        if found is None:
            st.toast("Every comparison in this view is reviewed.", icon="🎉")
        return found or start
    return start


def remember(dataset: str, current: Comparison | None) -> None:
    """Keep the position in the session and in ``?item=&i=&j=``."""
    if current is None:
        st.session_state[POS] = {"dataset": dataset, "written": st.query_params.get("item")}
        return
    st.session_state[POS] = {"dataset": dataset, "item": current.item, "i": current.i,
                             "j": current.j, "written": current.item}
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
    note = st.session_state.get(state_key("note", dataset, ident), "")
    if not me:
        return
    db = get_db()
    saved = get_value(db, dataset, ident[0], me, field_name(ident[1], ident[2]))
    verdict = verdict_of(saved)
    if verdict is not None:
        reasons = saved.get("reasons", []) if isinstance(saved, Mapping) else []
        try:
            write_annotation(db, dataset, ident[0], field_name(ident[1], ident[2]),
                             make_value(verdict, reasons, note), annotator=me, actor=signed_in())
        except PermissionDenied as e:
            st.toast(label(str(e), 300), icon=":material/block:")


def apply_intent(dataset: str) -> None:
    """Carry out the pending intent (if any): a move to another difference."""
    action = st.session_state.pop(INTENT, None)
    if action and action[0] == "diff":
        st.session_state[state_key("diff", dataset, action[2])] = action[1]
