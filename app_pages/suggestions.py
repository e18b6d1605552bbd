"""Suggestions: what models propose for a dataset's passage labels, dimensions and
verdicts, where they came from, and asking for more. See docs/suggestions.md."""

import streamlit as st

from components.state import current_dataset, engine, get_db
from components.suggest.panels import render_ask, render_from_scores, render_import, render_sources
from components.teams.assign import render_flash, render_suggestion_timing
from components.teams.session import require_page
from components.text import label
from needlework.teams.accounts import list_users
from needlework.teams.blind import suggestion_setting
from needlework.words import plural
from store.datasets import annotated_items_by_annotator, get_dataset

db = get_db()
st.title("🪄 Suggestions")
me = require_page("suggest")
row = get_dataset(db, current_dataset() or "")
if row is None or row["kind"] not in ("grounding", "preference"):
    st.info("Pick a grounding or preference dataset in the sidebar.")
    st.stop()
dataset = row["name"]
st.caption(f"{label(dataset, 80)} · {row['kind']} · {plural(row['items'], 'item')}. Suggestions are shown "
           "to annotators beside their own labels and never count as annotations.")

st.subheader("Sources")
render_sources(db, dataset, me)

st.subheader("When annotators see them")
render_flash()
# team mode: the accounts; local mode: the names that have worked on this dataset
people = ([u.name for u in list_users(db, actor=me) if not u.disabled] if me is not None
          else sorted(annotated_items_by_annotator(db, dataset)))
render_suggestion_timing(dataset, suggestion_setting(db, dataset, team=me is not None), people)

if row["kind"] == "grounding":
    st.subheader("Ask a judge")
    with st.spinner("Loading the judge form …"):
        engine()
        from components.models.judge import render_connection
    render_ask(db, dataset, render_connection(expanded=False, rules=True), me)
else:
    st.subheader("From a reward model or a judge run")
    render_from_scores(db, dataset, me)

st.subheader("Import a file")
st.caption("One JSON object per line: ours, Label Studio's predictions or Argilla's suggestions "
           "(docs/suggestions.md). All or nothing: any problem and nothing is stored.")
render_import(db, dataset, me)
