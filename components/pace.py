"""The annotator's own pace today (items and median time per item), drawn for them on
Home and in the sidebar, with the rule it follows (:mod:`needlework.view.pace`)."""

from __future__ import annotations

from datetime import UTC, datetime

import streamlit as st
from sqlite_utils import Database

from needlework.view.pace import RULE, pace_text, today_pace


def render_pace(db: Database, annotator: str, *, rule_shown: bool = False) -> None:
    """One line for ``annotator`` (nothing without a name); ``rule_shown``: the rule as a
    second line, else on hover."""
    if not annotator:
        return
    words = pace_text(today_pace(db, annotator, datetime.now(UTC).date()))
    if rule_shown:
        st.caption(f"{words}. {RULE}")
    else:
        st.caption(words, help=RULE)
