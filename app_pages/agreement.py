"""Agreement: inter-annotator agreement, the items annotators disagree on,
adjudication of final labels, and attribution metrics of model answers.

The figures and the list of disputes are read from what SQL keeps up to date as labels
are written (store.migrations m010): the page costs the same whatever the dataset's size."""

import streamlit as st

from components.agreement.adjudication import (
    ALL,
    item_widget,
    number_widget,
    render_adjudication,
    render_final_answer,
    render_final_dims,
    render_final_note,
    render_next_dispute,
)
from components.agreement.figures import render_attribution, render_disagreements, render_figures
from components.state import current_dataset, get_db, require_annotator, signed_in
from components.suggest.figures import render_suggestion_figures
from components.text import label
from needlework.grounding.agreement import figures
from needlework.grounding.resolve import RULE_TEXT
from store.datasets import get_dataset, get_item
from store.grounding import disputed_count, disputed_items, item_count, key_at

db = get_db()
row = get_dataset(db, current_dataset() or "")
st.title("Agreement")
if row is None or row["kind"] != "grounding":
    st.info("Pick a grounding dataset (GaRAGe) in the sidebar.")
    st.stop()

dataset = row["name"]
fig = figures(db, dataset)
figures_tab, adjudicate_tab, attribution_tab = st.tabs(
    ["Agreement", "Adjudication", "Attribution"])

with figures_tab:
    overlap = render_figures(fig)
    st.subheader("Where annotators disagree")
    render_disagreements(db, dataset, overlap)
    render_suggestion_figures(db, dataset, signed_in())

with adjudicate_tab:
    st.info("Export rule: " + RULE_TEXT, icon=":material/rule:")
    reviewer = require_annotator() or ""
    disputed = disputed_items(db, dataset, limit=200)
    render_next_dispute(dataset, [r["key"] for r in disputed])  # D: the next open dispute
    cols = st.columns([3, 1], vertical_alignment="bottom")
    every = cols[1].toggle("Any question", key=ALL,
                           help="Open any question by its number, not only those in dispute")
    key = None
    if every:
        total = item_count(db, dataset)
        number = cols[0].number_input(f"Question number (1–{total:,})", min_value=1,
                                      max_value=max(total, 1), step=1, key=number_widget(dataset))
        key = key_at(db, dataset, int(number) - 1)
    else:
        titles = {r["key"]: f"{r['position'] + 1}. {' '.join(r['title'].split())[:90]}" for r in disputed}
        if not disputed:
            st.caption("Nothing to adjudicate: no question is in dispute.")
        else:
            many = disputed_count(db, dataset)
            key = cols[0].selectbox(
                "Question in dispute" + (f" (the first 200 of {many:,}: “Any question” opens the others)"
                                         if many > len(disputed) else ""),
                list(titles), key=item_widget(dataset), format_func=titles.__getitem__)
    if key is not None:
        item = get_item(db, dataset, key)
        assert item is not None  # a key of the dataset's items
        render_adjudication(db, dataset, item, reviewer)
        render_final_dims(db, dataset, item, reviewer)
        render_final_answer(db, dataset, item, reviewer)
        render_final_note(db, dataset, item, reviewer)
    elif every:
        st.caption(label("No question has that number.", 80))

with attribution_tab:
    render_attribution(db, dataset)
