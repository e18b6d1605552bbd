"""Annotate: label a question's grounding passages, set its dimensions and write a
cited answer (the GaRAGe protocol). Every change is saved the moment it is made."""

import streamlit as st

from components.annotate.answer import render_answer
from components.annotate.decision import render_decision
from components.annotate.dimensions import render_dimensions
from components.annotate.extras import render_item_extras
from components.annotate.item import (
    hide_other_items,
    item_marker,
    load_context,
    render_progress,
    render_question,
)
from components.annotate.keyboard import (
    first_unlabeled,
    line_data,
    move_targets,
    render_keyboard,
    render_view_switches,
)
from components.annotate.passages import render_definitions, render_passage_keys, render_passages
from components.annotate.questions import (
    dataset_categories,
    render_item_keys,
    render_question_nav,
    team_queue,
)
from components.rag.answer_panel import render_linked_answer
from components.state import current_dataset, get_db, require_annotator, signed_in
from needlework.teams.assignment import queue_progress
from store.datasets import get_dataset, get_item

db = get_db()
row = get_dataset(db, current_dataset() or "")
if row is None or row["kind"] != "grounding":
    st.title("Annotate")
    st.info("Pick a grounding dataset (GaRAGe) in the sidebar to annotate it.")
    st.stop()

categories = dataset_categories(row)
top = st.container(key="nw-top", gap="small")
with top:  # the name warning inside the sticky bar: never hidden under it
    with st.empty():  # its own slot, drawn or not: the toolbar below never changes places
        who = require_annotator() or ""
    queue = team_queue(db, row["name"], signed_in())
    nav = render_question_nav(db, row, who, categories, queue)
if nav is None:
    st.stop()
item = get_item(db, row["name"], nav.current)
assert item is not None  # the navigation names one of the dataset's items
ctx = load_context(db, row["name"], item, who)
cursor = nav.cursor or first_unlabeled(ctx)  # the tab's last move may have set it
with top:
    with st.container(key="nw-toolbar", horizontal=True, gap="xsmall",
                      vertical_alignment="center"):
        render_keyboard(ctx, cursor, move_targets(db, ctx, {
            "next": nav.next, "previous": nav.previous, "unfinished": nav.unfinished,
            "later": nav.later}), nav.seq,
            line_data(db, ctx, nav.around))
        render_passage_keys(ctx)
        render_item_keys(nav)
        render_definitions(blind=not ctx.file_labels)

hide_other_items(ctx)  # before the question: another question's cards never show under it
# in team mode the header counts the person's own queue, as the list's caption does
render_question(ctx, nav.position, nav.total, None if queue is None else (
    nav.index, nav.shown, "in your queue" if nav.shown == len(queue.keys) else "shown"))
# in team mode, progress counts the person's own queue (done, started, assigned)
render_progress(ctx, *(queue_progress(db, row["name"], signed_in().name) if queue is not None
                       else (nav.done, nav.started, nav.total)), switches=render_view_switches)
render_linked_answer(db, row["name"], nav.current)  # ?rag_run=: a RAG run's model answer
passages_col, side_col = st.columns([3, 2], gap="medium")
# each ends with the item's marker: until a rerun has drawn it, the last question's
# cards and answer are hidden (hide_other_items), never shown under the new question
with passages_col, st.container(key="nw-item-cards", gap="small"):
    render_passages(ctx)
    item_marker(ctx)
with side_col, st.container(key="nw-item-side", gap="small"):
    render_decision(ctx)  # a reviewer's final values and note, when there are any
    if ctx.compact:  # the dimensions first: on the first screen with five passages
        st.markdown("**Question dimensions**")
        render_dimensions(ctx, categories)
    render_answer(ctx)
    render_item_extras(ctx)
    if not ctx.compact:
        st.markdown("**Question dimensions**")
        render_dimensions(ctx, categories)
    item_marker(ctx)
