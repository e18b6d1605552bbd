"""Review pairs: chosen vs rejected, side by side or as a word diff, with verdicts
saved per keystroke; and the dataset view (lengths, subsets, verdicts, TRL export).
See docs/review.md."""

import streamlit as st

from components.outbox import view_for
from components.review.filters import load_facts, model_tokenizer, render_filters
from components.review.keys import render_review_keyboard, render_review_keys
from components.review.overview import render_overview
from components.review.pair import (
    REVIEWABLE,
    render_item_header,
    render_pick_dataset,
    render_picker,
    render_queue_nav,
    render_responses,
    render_verdict_panel,
    side_names,
)
from components.review.position import ADVANCE, apply_intent, follow, last_saved, remember, resolve
from components.state import annotator, current_dataset, get_db
from needlework.formats import preference_view
from needlework.review.filters import apply_filters, disagreements
from needlework.review.queue import build_queue, index_of, item_comparisons, unreviewed_count
from store.datasets import get_dataset, get_item, list_datasets
from store.review import item_scores_map, item_verdicts, my_verdicts, scored_runs, verdict_rows

db = get_db()
dataset = current_dataset()
row = get_dataset(db, dataset) if dataset else None
head = st.columns([3, 2], vertical_alignment="bottom")
head[0].title("⚖️ Review pairs")
keys_slot = head[1].empty()  # the Esc / scroll-to-difference script, drawn last
if row is None or row["kind"] not in REVIEWABLE:
    render_review_keys("none", keys_slot)
    render_pick_dataset(list_datasets(db))
    st.stop()
mode = head[1].segmented_control("Mode", ["Review", "Dataset overview"], default="Review",
                                 key="rv_mode", label_visibility="collapsed") or "Review"

me = annotator()
facts, how = load_facts(row)
by_key = {f.key: f for f in facts}
filters, scope, run = render_filters(facts, scored_runs(db, dataset))
scores = item_scores_map(db, dataset, run["fingerprint"], run["variant"]) if run else {}
mine = my_verdicts(db, dataset, me)
shown = apply_filters(facts, filters, mine, scores, scope)
queue = build_queue(((f.position, f.key, f.n_chosen, f.n_rejected) for f in shown), scope)

if mode == "Dataset overview":
    keys = {f.key for f in shown}
    verdicts = [v for v in verdict_rows(db, dataset) if v["item_key"] in keys]
    st.caption(f"{len(shown)} of {len(facts)} items (the filters apply here too).")
    render_overview(shown, verdicts, scope, how, dataset)
    render_review_keys("overview", keys_slot)
    st.stop()

current = resolve(dataset, queue, by_key, mine, scope)
current = follow(view_for("review", dataset), current, queue, by_key, mine)
apply_intent(dataset)
remember(dataset, current)
place = index_of(queue, current)
left = unreviewed_count(queue, mine)
st.caption(f"{len(shown)} of {len(facts)} items · comparison {'–' if place is None else place + 1} of "
           f"{len(queue)} in this view · {left} not reviewed by you · token counts: {how}")
if current is None:
    render_review_keys("empty", keys_slot)
    st.info("No comparisons match the filters.", icon="🔎")
    st.stop()

pref = preference_view(row["format"], get_item(db, dataset, current.item)["record"])
names = side_names(pref, row["format"])
verdicts = item_verdicts(db, dataset, current.item)
mine_now = next((v for v in verdicts if v["annotator"] == me and (v["i"], v["j"]) == (current.i, current.j)), None)
others = [v for v in verdicts if v["annotator"] != me and (v["i"], v["j"]) == (current.i, current.j)]
facts_now = by_key[current.item]
disagree = disagreements(scores.get(current.item),
                         item_comparisons(facts_now.n_chosen, facts_now.n_rejected, "all"))
render_item_header(current.item, facts_now.subset, pref, place is not None, disagree)
render_picker(pref, names, current, mine,
              item_comparisons(facts_now.n_chosen, facts_now.n_rejected, scope))
with st.container(key="rv-responses"):
    marker = render_responses(dataset, pref, names, current, scores.get(current.item),
                              model_tokenizer())
with st.sidebar:  # drawn after the responses so the first screen arrives first
    st.divider()
    render_verdict_panel(dataset, current.ident, mine_now, others, me, names,
                         last_saved(db, dataset, me) if me else "")
    render_review_keyboard(dataset, me, current.ident, mine_now,
                           bool(st.session_state.get(ADVANCE, True)))
    st.divider()
    render_queue_nav(queue, place, left)
render_review_keys(marker, keys_slot)
