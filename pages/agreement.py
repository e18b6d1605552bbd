"""Agreement: inter-annotator agreement, the items annotators disagree on,
adjudication of final labels, and attribution metrics of model answers."""

import streamlit as st

from components.agreement.adjudication import (
    render_adjudication,
    render_final_answer,
    render_final_dims,
)
from components.agreement.figures import render_attribution, render_disagreements, render_figures
from components.state import current_dataset, get_db, require_annotator
from components.summaries import cached_summaries
from needlework.grounding.agreement import report as agreement_report
from needlework.grounding.resolve import RULE_TEXT
from store import default_path
from store.annotations import dataset_annotations
from store.datasets import get_dataset, get_item

db = get_db()
row = get_dataset(db, current_dataset() or "")
st.title("Agreement")
if row is None or row["kind"] != "grounding":
    st.info("Pick a grounding dataset (GaRAGe) in the sidebar.")
    st.stop()

dataset = row["name"]
report = agreement_report(dataset_annotations(db, dataset))
summaries = cached_summaries(str(default_path()), dataset, row["created_at"])
titles = {s["key"]: (s["position"], s["title"]) for s in summaries}
figures_tab, adjudicate_tab, attribution_tab = st.tabs(
    ["Agreement", "Adjudication", "Attribution"])

with figures_tab:
    render_figures(report)
    st.subheader("Where annotators disagree")
    render_disagreements(report, dataset, titles)

with adjudicate_tab:
    st.info("Export rule: " + RULE_TEXT, icon=":material/rule:")
    reviewer = require_annotator() or ""
    disputed = [d.item_key for d in report.disagreements]
    every = st.toggle("All items, not only those with disagreements", key="nw-adj-all")
    keys = [s["key"] for s in summaries] if every else disputed
    if not keys:
        st.caption("Nothing to adjudicate.")
    else:
        key = st.selectbox("Item", keys, key=f"nw-adj-item|{dataset}",
                           format_func=lambda k: f"{titles[k][0] + 1}. {titles[k][1][:90]}")
        item = get_item(db, dataset, key)
        render_adjudication(db, dataset, item, reviewer)
        render_final_dims(db, dataset, item, reviewer)
        render_final_answer(db, dataset, item, reviewer)

with attribution_tab:
    render_attribution(db, dataset)
