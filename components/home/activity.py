"""The home page's recent activity, in words: ``ana labeled passage 3 Answer`` on which
question, when, and a visible link that opens it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from components.text import render_text
from needlework.changes import sentence

PAGE_FOR_KIND = {"grounding": "pages/annotate.py", "preference": "pages/review.py",
                 "needle": "pages/review.py"}


def render_activity(entries: Sequence[Mapping[str, Any]], kinds: Mapping[str, str]) -> None:
    """The latest changes, newest first, one line each with an **Open ›** link to the item
    on its page (``kinds``: dataset → kind; a dataset gone since has no link)."""
    if not entries:
        st.caption("Nothing yet: labels, answers and verdicts appear here as they are saved.")
        return
    for n, entry in enumerate(entries):
        text, link = st.columns([6, 1], vertical_alignment="center", gap="small")
        with text:
            render_text(sentence(entry), key=f"nw-activity-text-{n}")
        kind = kinds.get(entry["dataset"])
        if kind in PAGE_FOR_KIND:
            link.page_link(PAGE_FOR_KIND[kind], label="Open ›",
                           query_params={"dataset": entry["dataset"], "item": entry["item_key"]})
