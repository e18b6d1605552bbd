"""Where the reviewer is and what they just did, kept in the session.

Buttons only record an *intent* (their callbacks run before the script); the
page applies it once the queue is known, so every action costs one rerun. The
current item is mirrored in ``?item=`` so the URL always opens where you are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st
from sqlite_utils import Database

from components.state import annotator, require_annotator
from components.text import label
from needlework.review.lengths import ItemFacts
from needlework.review.queue import Comparison, item_comparisons, next_unreviewed, step
from needlework.review.verdicts import VERDICTS, field_name, make_value
from store.annotations import now, set_annotation

POS = "rv_pos"
INTENT = "rv_intent"
FLASH = "rv_flash"
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
    """The comparison to show: a new ``?item=`` (deep link, edited URL) wins, then
    where this session was in this dataset, then the first unreviewed one."""
    state = st.session_state.get(POS) or {}
    asked = st.query_params.get("item")
    if asked is not None and asked != state.get("written") and asked in by_key:
        return first_of(by_key[asked], scope, mine)
    if state.get("dataset") == dataset and state.get("item") in by_key:
        facts = by_key[state["item"]]
        i, j = state["i"], state["j"]
        if i < facts.n_chosen and j < facts.n_rejected:
            return Comparison(facts.position, facts.key, i, j)
    return next_unreviewed(queue, None, mine) or (queue[0] if queue else None)


def remember(dataset: str, current: Comparison | None) -> None:
    """Keep the position in the session and in ``?item=``."""
    if current is None:
        st.session_state[POS] = {"dataset": dataset, "written": st.query_params.get("item")}
        return
    st.session_state[POS] = {"dataset": dataset, "item": current.item, "i": current.i,
                             "j": current.j, "written": current.item}
    if st.query_params.get("item") != current.item:
        st.query_params["item"] = current.item


def _save(db: Database, dataset: str, me: str, ident: Ident, verdict: str) -> str:
    reasons = st.session_state.get(state_key("reasons", dataset, ident), [])
    note = st.session_state.get(state_key("note", dataset, ident), "")
    value = make_value(verdict, reasons, note)
    set_annotation(db, dataset, ident[0], me, field_name(ident[1], ident[2]), value)
    what = VERDICTS[verdict][0].lower()
    return (f"“{what}” on item {label(ident[0], 40)}, chosen {ident[1] + 1} vs rejected "
            f"{ident[2] + 1} · {now()[11:19]} UTC")


def _toggle_reason(dataset: str, ident: Ident, tag: str) -> None:
    key = state_key("reasons", dataset, ident)
    reasons = list(st.session_state.get(key, []))
    st.session_state[key] = [r for r in reasons if r != tag] if tag in reasons else reasons + [tag]


def apply_intent(
    db: Database,
    dataset: str,
    current: Comparison | None,
    queue: Sequence[Comparison],
    mine: dict[Ident, str],
    by_key: Mapping[str, ItemFacts],
) -> Comparison | None:
    """Carry out the pending intent (if any); returns the comparison to show next.
    Verdicts, reasons and notes are written at once; ``mine`` is updated in place."""
    action = st.session_state.pop(INTENT, None)
    if not action:
        return current
    kind = action[0]
    if kind == "move":
        return step(queue, current, action[1]) or current
    if kind == "next":
        found = next_unreviewed(queue, current, mine)
        if found is None:
            st.toast("Every comparison in this view is reviewed.", icon="🎉")
        return found or current
    if kind == "goto":
        facts = by_key.get(action[1])
        return Comparison(facts.position, facts.key, action[2], action[3]) if facts else current
    if kind == "diff":
        st.session_state[state_key("diff", dataset, action[2])] = action[1]
        return current
    ident: Ident = action[-1]
    if kind == "reason":
        _toggle_reason(dataset, ident, action[1])
    if kind == "verdict":
        me = require_annotator()
        verdict = action[1]
    else:  # reasons and a note are saved at once only when there is a verdict to save
        me, verdict = annotator(), mine.get(ident)
    if not me or verdict is None:
        return current
    message = _save(db, dataset, me, ident, verdict)
    mine[ident] = verdict
    st.session_state[FLASH] = message
    st.toast(f"Saved {message}", icon="💾")
    if kind == "verdict" and st.session_state.get(ADVANCE, True):
        return next_unreviewed(queue, current, mine) or current
    return current
