"""Audit (team mode, admins): a dataset's change history, with who made each change, as a
CSV or JSONL file. See docs/teams.md."""

import streamlit as st

from components.state import current_dataset, get_db
from components.teams.audit import render_audit
from components.teams.session import require_page
from store.audit import authors, changes
from store.datasets import get_dataset

db = get_db()
st.title("🧾 Audit")
require_page("audit")
row = get_dataset(db, current_dataset() or "")
if row is None:
    st.info("Pick a dataset in the sidebar.")
    st.stop()
st.caption("Every change is in the history with who made it (the signed-in account) and when; "
           "undos are changes too.")
render_audit(row["name"], changes(db, row["name"]), authors(db, row["name"]))
