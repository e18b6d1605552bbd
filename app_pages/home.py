"""Home: the datasets (search, progress in words, open where you left off, manage),
progress of assigned work in team mode, recent activity, and deep links."""

import streamlit as st

from components.hints import IMPORT_PAGE
from components.home.activity import render_activity
from components.home.tables import (
    open_pages,
    render_datasets,
    render_flash,
    render_link_placeholders,
)
from components.pace import render_pace
from components.state import annotator, current_dataset, get_db, signed_in
from components.teams.progress import render_team_progress
from components.teams.session import may_open
from needlework.teams.assignment import visible_datasets
from needlework.teams.blind import visibility
from needlework.teams.permissions import visible_annotator
from needlework.view.progress import counted
from store.annotations import history
from store.datasets import get_dataset, list_datasets
from store.facts import progress_by_dataset, scored_by

db = get_db()
user = signed_in()
pages = open_pages(user)  # kind -> the page this role may open it on
# Deep link ?dataset=NAME&item=ID: the sidebar picker (bound to ?dataset=) already
# holds NAME, so only the item travels; the picker puts dataset back in the URL.
if "item" in st.query_params and (linked := current_dataset()):
    row = get_dataset(db, linked)
    if row is not None and row["kind"] in pages:
        st.switch_page(pages[row["kind"]], query_params={  # the item, and review's i and j
            k: v for k, v in st.query_params.to_dict().items() if k != "dataset"})

render_flash()
render_link_placeholders()  # the Open › links' words while their code loads
st.title("🪡 Needlework")
st.caption(
    "Label the grounding passages of RAG questions and write cited answers; review "
    "chosen/rejected pairs; score them with a reward model and see where it fails; "
    "run needle-in-a-haystack tests."
)
render_pace(db, user.name if user is not None else annotator(), rule_shown=True)
every = list_datasets(db, archived=True)
# An annotator sees the datasets assigned to them and their own work only.
mine, theirs = visible_annotator(user), visible_datasets(db, user)
if theirs is not None:
    every = [r for r in every if r["name"] in set(theirs)]
progress = progress_by_dataset(db)
kinds = {r["name"]: r["kind"] for r in every}
progress = {name: counted(db, name, kinds.get(name, ""), people, team=user is not None)
            for name, people in progress.items()}  # only skipped: not started
reader = user.name if user is not None else annotator()
others = {name: sum(p["annotator"] != reader for p in people) for name, people in progress.items()}
if mine is not None:
    progress = {name: [p for p in people if p["annotator"] == mine]
                for name, people in progress.items()}
else:
    others = {}  # every person who started is in the list
if mine is None and annotator():  # the person at this screen first: Home names only a few per dataset
    progress = {name: sorted(people, key=lambda p: p["annotator"] != annotator())
                for name, people in progress.items()}
with st.container(horizontal=True, vertical_alignment="center", gap="medium"):
    st.subheader("Datasets", width="stretch")
    query = st.text_input("Search datasets", placeholder="search datasets by name",
                          label_visibility="collapsed", key="nw-home-search", width=240)
    show_archived = st.toggle("Archived", key="nw-home-archived", width="content",
                              help="Show archived datasets (hidden from the pickers)")
if not every:
    st.info("No datasets yet: " + ("import one on the **Import & export** page, or run "
            "`python -m needlework seed-demo`." if may_open(user, IMPORT_PAGE)
            else "your lead imports and assigns them."), icon=":material/upload_file:")
else:
    wanted = " ".join(query.split()).casefold()
    rows = [r for r in every if bool(r["archived_at"]) == show_archived
            and wanted in r["name"].casefold()]
    render_datasets(rows, progress, {r["name"]: scored_by(db, r["name"]) for r in rows},
                    pages, archived=show_archived, reader=reader, others=others)
render_team_progress(db, user)  # assigned work, per dataset and annotator (teams)
st.subheader("Recent activity" if mine is None else "Your recent activity")
render_activity(history(db, annotator=mine, limit=15), {r["name"]: r["kind"] for r in every},
                pages, {r["name"] for r in every
                        if not visibility(db, r["name"], user).file_labels})
