"""Home: the datasets, progress per annotator, recent activity, and deep links."""

import streamlit as st

from components.home.tables import PAGE_FOR_KIND, render_activity, render_dataset_table
from components.state import current_dataset, get_db, signed_in
from components.teams.progress import render_team_progress
from store.annotations import history
from store.datasets import annotated_items_by_annotator, get_dataset, list_datasets

db = get_db()
# Deep link ?dataset=NAME&item=ID: the sidebar picker (bound to ?dataset=) already
# holds NAME, so only the item travels; the picker puts dataset back in the URL.
if "item" in st.query_params and current_dataset():
    row = get_dataset(db, current_dataset())
    if row is not None:
        st.switch_page(PAGE_FOR_KIND[row["kind"]], query_params={"item": st.query_params["item"]})

st.title("🪡 Needlework")
st.caption(
    "Label the grounding passages of RAG questions and write cited answers; review "
    "chosen/rejected pairs; score them with a reward model and see where it fails; "
    "run needle-in-a-haystack tests."
)
rows = list_datasets(db)
progress = {r["name"]: annotated_items_by_annotator(db, r["name"]) for r in rows}
st.subheader("Datasets")
render_dataset_table(rows, progress)
render_team_progress(db, signed_in())  # assigned work, per dataset and annotator (teams)
st.subheader("Recent activity")
render_activity(history(db, limit=15))
