"""Quality (team mode, reviewers): gold items, each annotator's accuracy on gold,
agreement with the others and active time, and the items that need a look.
See docs/teams.md."""

from datetime import UTC, datetime

import streamlit as st

from components.state import current_dataset, get_db
from components.suggest.figures import render_suggestion_figures
from components.teams.quality import (
    render_alpha,
    render_annotators,
    render_gold,
    render_items,
    render_throughput,
)
from components.teams.session import require_page
from components.text import label
from needlework.teams.quality import gold_items, quality_report
from needlework.teams.throughput import throughput
from store.datasets import get_dataset, item_index

db = get_db()
st.title("🎯 Quality")
me = require_page("quality")
row = get_dataset(db, current_dataset() or "")
if row is None:
    st.info("Pick a dataset in the sidebar.")
    st.stop()
dataset = row["name"]
st.caption(f"{label(dataset, 80)} · {row['kind']} · active time counts the gaps of at most two "
           "minutes between one person's changes; longer gaps are pauses.")
report = quality_report(db, dataset, actor=me)
render_alpha(report)
st.subheader("Throughput")
render_throughput(throughput(db, dataset, datetime.now(UTC).date(), actor=me))
st.subheader("Annotators")
render_annotators(report)
st.subheader("Items")
render_items(report)
render_suggestion_figures(db, dataset, me)
st.subheader("Gold items")
st.caption("Items whose right answers a reviewer recorded: one at a time, from a file, or a "
           "share of every queue. They join every annotator's queue unannounced; accuracy on "
           "gold compares each annotator's answers with them.")
render_gold(dataset, item_index(db, dataset), gold_items(db, dataset, actor=me))
