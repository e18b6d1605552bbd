"""Audit (team mode, admins): the audit events (accounts, sign-ins, assignments, settings)
and a dataset's change history, with who made each change, as CSV or JSONL files. See
docs/teams.md."""

import streamlit as st

from components.state import current_dataset, get_db
from components.teams.audit import render_audit, render_deleted, render_events
from components.teams.session import require_page
from store.audit import authors, changes, deleted_datasets, recent_events
from store.datasets import get_dataset

db = get_db()
st.title("🧾 Audit")
require_page("audit")
st.subheader("Accounts, sign-ins, assignments and settings")
st.caption("Everything that is not an annotation: who did it, when, and the values before and "
           "after (never a password). Newest first; the file holds every event.")
render_events(recent_events(db, limit=200))
st.subheader("Deleted datasets")
st.caption("A deleted or replaced dataset's change history is kept: who changed what, when, "
           "and when the dataset went.")
render_deleted(deleted_datasets(db))
st.subheader("Annotations")
row = get_dataset(db, current_dataset() or "")
if row is None:
    st.info("Pick a dataset in the sidebar for its change history.")
    st.stop()
st.caption("Every change is in the history with who made it (the signed-in account) and when; "
           "undos are changes too.")
render_audit(row["name"], changes(db, row["name"]), authors(db, row["name"]))
