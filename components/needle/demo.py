"""The needle lab's seeded demo result (needlework/needle/seed.py): which needle set the
lab shows when the sidebar's dataset is not one, and the note that says what the demo result
is (which model scored it and its stated limitation)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from components.callbacks import uninterrupted
from components.needle.data import needle_row
from components.state import DATASET_KEY
from components.text import label
from needlework.needle.findings import grid_words
from needlework.needle.seed import DEMO_NEEDLES, demo_note


def lab_row(db: Any, dataset: str | None) -> tuple[dict[str, Any] | None, bool]:
    """``(row, shown_instead)``: the sidebar's needle dataset, or, when the sidebar's dataset is
    not a needle set, the seeded demo needle set (``shown_instead`` true) when it was scored."""
    row = needle_row(db, dataset)
    if row is not None:
        return row, False
    demo = needle_row(db, DEMO_NEEDLES)
    if demo is not None and demo_note(demo["meta"]):
        return demo, True
    return None, False


@uninterrupted
def _select(name: str) -> None:
    st.session_state[DATASET_KEY] = name


def render_demo_note(row: dict[str, Any] | None, shown_instead: bool, sidebar: str | None,
                     records: list[dict[str, Any]] | None = None) -> None:
    """Say that the heatmap is the demo's (the model, its limitation, how it was computed, the
    grid as it is: ``records``' cells), and when the lab shows it in place of the sidebar's
    dataset, offer to select it."""
    if row is None:
        return
    note = demo_note(row["meta"])
    if shown_instead:
        cols = st.columns([4, 1], vertical_alignment="center")
        cols[0].info(f"The sidebar's dataset ({label(sidebar or 'none', 60)}) is not a needle set: "
                     f"the lab shows the demo needle set {label(row['name'], 60)}.", icon="🧵")
        cols[1].button("Select it", key="nw_demo_select", on_click=_select, args=(row["name"],),
                       width="stretch", help="Select the demo needle set in the sidebar.")
    if note:
        st.info(f"**Demo result.** {label(str(note.get('model')), 60)} scored these "
                f"{note.get('pairs', row['items'])} pairs: a demo model "
                f"{label(str(note.get('limitation') or 'with a stated limitation'), 300)}. Its real "
                "scores from the lab's own needle run "
                f"({note.get('run_seconds', '?')} s when seeded), on a small grid: "
                f"{', '.join(str(n) for n in note.get('lengths', []))} tokens × 10 positions × "
                f"{note.get('haystacks', '?')} haystacks"
                + (f", which holds {grid_words(records)} (a short haystack has fewer places "
                   "for a needle)" if records else "") + ".", icon="🎓")
