"""One verdict for several comparisons of the view (issue 18, point 22): the next N
comparisons without your verdict, from the one on screen, in the view's order (filters,
search and the sort by margin apply)."""

from __future__ import annotations

import streamlit as st
from sqlite_utils import Database

from components.callbacks import uninterrupted
from components.review.position import drawn
from components.state import get_db, signed_in
from components.text import label
from needlework.actions.writes import judge_all
from needlework.review.queue import Comparison, PairList
from needlework.teams.permissions import PermissionDenied
from needlework.verdicts import REASONS, VERDICTS
from store import pairs as pairs_store

MAX = 500


def upcoming(db: Database, items: PairList, start: Comparison | None, n: int) -> list[Comparison]:
    """The next ``n`` comparisons of ``items`` without the reviewer's verdict, from
    ``start`` (itself included when it has none)."""
    found: list[Comparison] = []
    if start is not None:
        row = pairs_store.item(db, items.dataset, start.item)
        mine = pairs_store.my_verdicts_on(db, items.dataset, start.item, items.annotator)
        if row is not None and (start.i, start.j) not in mine and items.contains(start.item):
            found.append(start)
    at = start
    while len(found) < n:
        row = pairs_store.item(db, items.dataset, at.item) if at is not None else None
        nxt = items.next_unreviewed(db, at, row[2] if row else 0, row[3] if row else 0)
        if nxt is None or nxt in found:
            break
        found.append(nxt)
        at = nxt
    return found


@uninterrupted
def _apply(dataset: str, picks: list[Comparison], verdict: str, reasons: list[str], me: str) -> None:
    try:
        changed = judge_all(get_db(), dataset, picks, verdict, me, reasons=reasons, actor=signed_in())
    except (PermissionDenied, ValueError) as e:
        st.session_state["rv-bulk-flash"] = (f"Nothing saved: {e}", ":material/block:")
        return
    st.session_state["rv-bulk-flash"] = (
        f"“{VERDICTS[verdict][0]}” saved on {changed} comparison(s); each can be undone.",
        ":material/done_all:")


def render_bulk_verdict(db: Database, dataset: str, items: PairList, me: str) -> None:
    """An expander: how many, which verdict (and reasons), then apply."""
    flash = st.session_state.pop("rv-bulk-flash", None)
    if flash:
        st.toast(label(flash[0], 300), icon=flash[1])
    box = st.expander("One verdict for several comparisons", icon=":material/done_all:",
                      key="rv-bulk", on_change="rerun")
    if not box.open:
        return
    with box:
        if not me:
            st.caption("Enter your name to save verdicts.")
            return
        n = int(st.number_input("How many", min_value=1, max_value=MAX, value=10, step=1,
                                key="rv-bulk-n",
                                help="The next comparisons without your verdict, from this one, "
                                     "in this view's order"))
        verdict = st.selectbox("Verdict", list(VERDICTS), key="rv-bulk-verdict",
                               format_func=lambda v: VERDICTS[v][0])
        reasons = st.multiselect("Reasons", list(REASONS), key="rv-bulk-reasons")
        start = drawn(dataset)
        picks = upcoming(db, items, start, n)
        if not picks:
            st.caption("Every comparison of this view has your verdict.")
            return
        shown = ", ".join(f"{c.item} ({c.i + 1} vs {c.j + 1})" for c in picks[:6])
        st.caption(label(f"{len(picks)} comparison(s): {shown}" + (" …" if len(picks) > 6 else ""), 400))
        st.button(f"Save “{VERDICTS[verdict][0]}” on these {len(picks)}", key="rv-bulk-go",
                  type="primary", on_click=_apply, args=(dataset, picks, verdict, reasons, me))
