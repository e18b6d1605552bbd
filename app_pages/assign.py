"""Assignment (team mode, admins): distribute a dataset's items among annotators with an
overlap, reassign the unfinished items of someone who left, and follow the progress.
See docs/teams.md."""

import streamlit as st

from components.state import current_dataset, get_db
from components.teams.assign import (
    render_assign,
    render_flash,
    render_open_any,
    render_plan,
    render_reassign,
    render_suggestion_timing,
    render_visibility,
)
from components.teams.progress import render_team_progress
from components.teams.session import require_page
from components.text import label
from needlework.teams.access import open_any
from needlework.teams.accounts import list_users
from needlework.teams.blind import settings, suggestion_setting
from needlework.words import plural
from store.assignments import get_plan, loads
from store.datasets import get_dataset

db = get_db()
st.title("📋 Assignment")
me = require_page("assign")
row = get_dataset(db, current_dataset() or "")
if row is None:
    st.info("Pick a dataset in the sidebar.")
    st.stop()
dataset = row["name"]
st.caption(f"{label(dataset, 80)} · {row['kind']} · {plural(row['items'], 'item')}")
render_flash()
plan = get_plan(db, dataset)
render_plan(plan)
people = [u for u in list_users(db, actor=me) if not u.disabled]

st.subheader("Distribute the items")
render_assign(dataset, people, plan)
render_open_any(dataset, open_any(db, dataset))

st.subheader("What annotators see")
render_visibility(dataset, settings(db, dataset))
render_suggestion_timing(dataset, suggestion_setting(db, dataset, team=me is not None), [u.name for u in people])

st.subheader("Someone left")
render_reassign(dataset, sorted(loads(db, dataset)), people, plan)

st.subheader("Progress")
if not render_team_progress(db, me, dataset, title=None):
    st.caption("Nothing assigned yet.")
