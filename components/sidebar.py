"""The sidebar shared by every page: annotator name and dataset picker."""

from __future__ import annotations

import streamlit as st

from components.outbox import deliver
from components.state import ANNOTATOR_KEY, DATASET_KEY
from store.datasets import list_datasets


def render_sidebar(db) -> dict[str, str | None]:
    """Deliver the browser's pending key actions, then draw the annotator field and the
    dataset picker; return both values.

    The annotator name is kept for the browser session (across pages). The
    dataset is bound to the ``?dataset=`` query parameter, so links to a dataset
    (and ``?dataset=NAME&item=ID`` deep links) open it.
    """
    with st.sidebar:
        deliver(db)
    rows = list_datasets(db)
    names = [r["name"] for r in rows]
    kinds = {r["name"]: r["kind"] for r in rows}
    with st.sidebar:
        name = st.text_input(
            "Annotator",
            key=ANNOTATOR_KEY,
            placeholder="your name (required to save work)",
            persist_state="session",
            help="Every label, answer and verdict is saved under this name, with the time.",
        )
        if not (name or "").strip():
            st.caption("✍️ Enter your name to save work.")
        dataset = st.selectbox(
            "Dataset",
            names,
            index=0 if names else None,
            key=DATASET_KEY,
            bind="query-params",
            placeholder="no datasets yet: import one",
            help="Links open a dataset with ?dataset=NAME (and an item with &item=ID).",
        )
        if dataset:
            st.caption(f"{kinds.get(dataset, '')} dataset")
    return {"annotator": (name or "").strip(), "dataset": dataset}
