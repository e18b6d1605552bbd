"""The home page's recent activity, in words: ``ana labeled passage 3 Answer`` on which
question, when, and a visible link that opens it."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import streamlit as st

from components.home.tables import OPEN
from components.text import render_text
from needlework.view.changes import sentence

# A needle set's verdicts are made on Review pairs, whoever may open the Needle lab.
ITEM_PAGE = {"needle": "app_pages/review.py"}


def render_activity(entries: Sequence[Mapping[str, Any]], kinds: Mapping[str, str],
                    pages: Mapping[str, str], blind: Collection[str] = ()) -> None:
    """The latest changes, newest first, one line each with an **Open ›** link to the item
    on its page (``kinds``: dataset → kind; ``pages``: kind → the page this role may open;
    a dataset gone since, or one whose page the role lacks, has no link; ``blind``: the
    datasets whose file labels the reader may not see, where a verdict names no side)."""
    if not entries:
        st.caption("Nothing yet: labels, answers and verdicts appear here as they are saved.")
        return
    with st.container(key="nw-activity"):  # its links' placeholders: render_link_placeholders
        for n, entry in enumerate(entries):
            text, link = st.columns([6, 1], vertical_alignment="center", gap="small")
            with text:
                render_text(sentence(entry, entry["dataset"] in blind),
                            key=f"nw-activity-text-{n}")
            kind = kinds.get(entry["dataset"])
            page = ITEM_PAGE.get(kind or "") or pages.get(kind or "")
            if page is not None and page in pages.values():
                link.page_link(page, label=OPEN, query_params={"dataset": entry["dataset"],
                                                               "item": entry["item_key"]})
