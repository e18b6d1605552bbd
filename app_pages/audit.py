"""Audit (team mode, admins): the audit events (accounts, sign-ins, assignments, settings)
filtered by action, person, dataset and dates, a page at a time, and a dataset's change
history, with who made each change, as CSV or JSONL files. See docs/teams.md."""

import streamlit as st

from components.state import current_dataset, get_db
from components.teams.audit import (
    current_page,
    render_audit,
    render_deleted,
    render_event_filters,
    render_events,
)
from components.teams.session import require_page
from needlework.teams.audit import event_choices, event_page
from store.audit import authors, changes, deleted_datasets
from store.datasets import get_dataset

db = get_db()
st.title("🧾 Audit")
me = require_page("audit")
st.subheader("Accounts, sign-ins, assignments and settings")
st.caption("Everything that is not an annotation: who did it, when, and the values before and "
           "after (never a password). Newest first, 50 a page; the file holds every event the "
           "filters admit, oldest first.")
filters = render_event_filters(event_choices(db, actor=me))
render_events(event_page(db, filters, current_page(), actor=me), filters)
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
