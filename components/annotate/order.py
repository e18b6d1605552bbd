"""The question list's order by suggestion confidence (:mod:`needlework.suggest.order`):
a select beside the filters, drawn only where the dataset's suggestions carry a
confidence and this person may be shown suggestions."""

from __future__ import annotations

import streamlit as st
from sqlite_utils import Database

from components.state import signed_in
from needlework.grounding.progress import ItemList
from needlework.suggest.order import LIST, ORDERS, by_confidence
from needlework.teams.blind import NEVER, suggestion_timing
from store.suggestions import has_confidence


def ordered(db: Database, items: ItemList, who: str) -> ItemList:
    """Draw the order select (where it applies) and return ``items`` in its order."""
    dataset = items.dataset
    if not has_confidence(db, dataset) or suggestion_timing(
            db, dataset, "", signed_in(), who) == NEVER:
        return items
    key = f"nw-nav-order|{dataset}"
    chosen = st.session_state.get(key, LIST)
    with st.popover("" if chosen == LIST else "by confidence", icon=":material/sort:",
                    help="Order the questions by the confidence of their suggestions (a "
                         "question counts by its least sure suggestion)"):
        order = st.radio("Order of the questions", list(ORDERS), key=key,
                         format_func=ORDERS.__getitem__)
    return by_confidence(db, items, order or LIST)
