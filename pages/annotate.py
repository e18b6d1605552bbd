"""Annotate: label a question's grounding passages, set its dimensions and write a
cited answer (the GaRAGe protocol). Every change is saved the moment it is made."""

import streamlit as st

from components.answer import render_answer
from components.grounding import (
    load_context,
    render_dimensions,
    render_progress,
    render_question,
)
from components.keyboard import KeyActions, render_keyboard
from components.passages import (
    current_passage,
    render_definitions,
    render_passage_keys,
    render_passages,
)
from components.question_list import dataset_categories, render_item_keys, render_question_nav
from components.state import current_dataset, get_db, require_annotator
from store.datasets import get_dataset, get_item

db = get_db()
row = get_dataset(db, current_dataset() or "")
if row is None or row["kind"] != "grounding":
    st.title("Annotate")
    st.info("Pick a grounding dataset (GaRAGe) in the sidebar to annotate it.")
    st.stop()

who = require_annotator() or ""
categories = dataset_categories(row)
top = st.container(key="nw-top", gap="small")
with top:
    nav = render_question_nav(db, row, who, categories)
if nav is None:
    st.stop()
ctx = load_context(db, row["name"], get_item(db, row["name"], nav.current), who)
with top:
    render_keyboard(KeyActions(db, row["name"], who, nav), current_passage(ctx))
    with st.container(key="nw-toolbar", horizontal=True, gap="xsmall",
                      vertical_alignment="center"):
        render_passage_keys(ctx)
        render_item_keys(nav)
        render_definitions()

render_question(ctx, nav.position, nav.total)
render_progress(ctx, nav.done, nav.total)
passages_col, side_col = st.columns([3, 2], gap="medium")
with passages_col:
    render_passages(ctx)
with side_col:
    render_answer(ctx)
    st.markdown("**Question dimensions**")
    render_dimensions(ctx, categories)
