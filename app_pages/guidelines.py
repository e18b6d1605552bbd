"""Guidelines (team mode, admins): each dataset's annotation guidelines in Markdown, shown
beside the task on the annotate and review pages. See docs/teams.md."""

import streamlit as st

from components.state import current_dataset, get_db
from components.teams.guidelines import render_guidelines_editor
from components.teams.session import require_page
from components.text import label
from store.datasets import get_dataset

db = get_db()
st.title("📘 Guidelines")
require_page("guidelines")
row = get_dataset(db, current_dataset() or "")
if row is None:
    st.info("Pick a dataset in the sidebar.")
    st.stop()
st.caption(f"For {label(row['name'], 80)}. Written in Markdown and shown as such: they are your "
           "text. The data itself is always shown literally.")
render_guidelines_editor(db, row["name"])
