"""Review pairs: chosen vs rejected, side by side or as a word diff, with verdicts
saved per keystroke; and the dataset view (lengths, subsets, verdicts, TRL export).
See docs/review.md.

Nothing here reads every item on a rerun: the list of comparisons is SQL over the
items' slim facts and the reviewer's progress (components/review/filters.py)."""

from functools import partial

import streamlit as st

import store
from components.review.filters import (
    model_tokenizer,
    render_filters,
    render_search,
    review_list,
    run_scores,
    scores_of,
)
from components.review.instance import render_instance
from components.review.keys import blind_view, render_review_keyboard, render_review_keys
from components.review.overview import render_overview
from components.review.pair import (
    REVIEWABLE,
    render_item_header,
    render_pick_dataset,
    render_picker,
    render_queue_nav,
    render_responses,
    render_verdict_bar,
    render_verdict_panel,
    side_names,
    suggestion_note,
)
from components.review.position import (
    ADVANCE,
    REFUSED,
    apply_intent,
    into_view,
    last_saved,
    line_around,
    move_targets,
    remember,
    resolve,
    tab_place,
)
from components.review.selection import render_bulk_verdict
from components.state import annotator, current_dataset, get_db, signed_in
from needlework.formats import preference_view
from needlework.review.filters import disagreements
from needlework.review.instances import named
from needlework.review.queue import item_comparisons
from needlework.review.sides import sides_for
from needlework.teams.access import may_open, own_queue
from needlework.teams.assignment import visible_datasets
from needlework.teams.blind import AFTER, NEVER, shows_suggestion, suggestion_timing, visibility
from needlework.teams.permissions import can, visible_annotator
from needlework.verdicts import field_name as verdict_field
from needlework.verdicts import verdict_of
from needlework.words import plural
from store import pairs as pairs_store
from store.datasets import get_dataset, get_item, list_datasets
from store.review import item_verdicts, scored_runs
from store.suggestions import item_suggestions

db = get_db()
dataset = current_dataset()
row = get_dataset(db, dataset) if dataset else None
head = st.columns([3, 2], vertical_alignment="bottom")
head[0].title("⚖️ Review pairs")
keys_slot = head[1].empty()  # the Esc / scroll-to-difference script, drawn last
if dataset is None or row is None or row["kind"] not in REVIEWABLE:
    render_review_keys("none", keys_slot)
    theirs = visible_datasets(db, signed_in())  # an annotator: the datasets assigned to them
    render_pick_dataset([r for r in list_datasets(db) if theirs is None or r["name"] in theirs],
                        row, signed_in())
    st.stop()
me = annotator()
user = signed_in()
# The overview counts everyone's verdicts: not for annotators in team mode.
mode = (head[1].segmented_control("Mode", ["Review", "Dataset overview"], default="Review",
                                  key="rv_mode", label_visibility="collapsed") or "Review"
        if can(user, "view_all") else "Review")
# Blind by default for annotators in team mode: no model scores, judge verdicts or other
# people's verdicts unless the lead shows the model's (needlework.teams.blind).
runs = scored_runs(db, dataset) if visibility(db, dataset, user).model_outputs else []
with st.container(horizontal=True, vertical_alignment="top", gap="small"):
    render_search()
    with st.container(width="stretch"):
        view = render_filters(db, row, runs, me, not visibility(db, dataset, user).file_labels)
scores = {}
if view.run is not None and (view.disagrees or view.by_margin):
    scores = run_scores(str(store.default_path()), dataset, view.run["fingerprint"],
                        view.run["variant"], f"{view.run['updated_at']}|{view.run['items']}")
# team mode: an annotator's list, counts and moves go along her own queue only
only = own_queue(db, dataset, user, reviewers=False)
items = review_list(db, row, me, view, scores, only)

if mode == "Dataset overview":
    render_overview(db, row, items, view)
    render_review_keys("overview", keys_slot)
    st.stop()

scope = view.query.scope
held = tab_place(dataset)
current, resolved = resolve(db, dataset, items, me, scope, held,
                            None if user is None else partial(may_open, db, dataset, actor=user),
                            into_view(dataset, view.signature()))
apply_intent(dataset)
seq = remember(dataset, current, resolved, held)
if current is None or items.total() == 0:
    render_review_keys("empty", keys_slot)
    if only is not None and not only:
        st.info("Nothing in this dataset is assigned to you: your lead assigns the items on "
                "the Assignment page.", icon=":material/assignment:")
    else:
        st.info("No comparisons match the filters and the search.", icon="🔎")
    st.stop()

facts = pairs_store.item(db, dataset, current.item)
assert facts is not None  # the list shows only the dataset's items
_, key, n_chosen, n_rejected = facts
total = items.total()
place = items.index_of(current, n_chosen, n_rejected)
left = items.unreviewed(db)
if only is not None:  # her own queue: what the filters keep of it
    count = (f"{items.items():,} of the {len(only):,} items in your queue"
             if view.active or view.query.text else f"{plural(len(only), 'item')} in your queue")
else:
    count = (f"{items.items():,} of {row['items']:,} items" if items.filtered
             else f"{row['items']:,} item{'' if row['items'] == 1 else 's'}")
if st.session_state.get(REFUSED) is True:  # said while the comparison shown instead stays
    st.session_state[REFUSED] = current.ident
refused = (" · the item the link named is not assigned to you"
           if st.session_state.get(REFUSED) == current.ident else "")

record = get_item(db, dataset, current.item)
assert record is not None  # as above
pref = preference_view(row["format"], record["record"])
names = side_names(pref, row["format"])
# an annotator who does not see the file's labels reads Response A / B, in an order fixed
# per item and annotator: chosen / rejected would give every preference gold answer away
sides = named(sides_for(not visibility(db, dataset, user).file_labels, user.name if user else me,
                        current.item), row["format"])  # RewardBench 2: correct / incorrect
verdicts = item_verdicts(db, dataset, current.item)
mine_now = next((v for v in verdicts if v["annotator"] == me and (v["i"], v["j"]) == (current.i, current.j)), None)
others = [v for v in verdicts if v["annotator"] != me and (v["i"], v["j"]) == (current.i, current.j)
          and visible_annotator(user) is None]
entry = scores_of(db, dataset, view.run, current.item, scores)
# model suggestions for this comparison's verdict, where and when this person may see them
# (with the lead's "after" timing: once the comparison has their verdict, Y accepting none)
timing = suggestion_timing(db, dataset, current.item, user, me)
waiting = ([r for r in item_suggestions(db, dataset, current.item)
            if r["field"] == verdict_field(current.i, current.j)] if timing != NEVER else [])
offered = waiting if shows_suggestion(timing, verdict_of(mine_now) is not None) else []
disagree = disagreements(entry, item_comparisons(n_chosen, n_rejected, "all"))
st.caption(f"{count} · comparison {'–' if place is None else f'{place + 1:,}'} of {total:,} in this "
           f"view · {left:,} not reviewed by you" + refused
           + suggestion_note(offered, verdict_of(mine_now), after=timing == AFTER,
                             held=bool(waiting) and not offered, sides=sides))
mine = {(v["item_key"], v["i"], v["j"]): v["verdict"] for v in verdicts if v["annotator"] == me}
# what differs from item to item (a note, the picker, the responses) in one box: the verdict
# bar after it stays in its place on the page, so the key script always finds it
with st.container(key="rv-item"):
    render_item_header(current.item, record["subset"], pref, place is not None, disagree, sides)
    render_instance(db, dataset, row["format"], current, record["subset"], pref, view.run, entry,
                    scores, sides, me, user)
    render_picker(pref, names, current, mine, item_comparisons(n_chosen, n_rejected, scope),
                  sides)
    with st.container(key="rv-responses"):
        marker = render_responses(dataset, pref, names, current, entry, model_tokenizer(), sides)
render_verdict_bar(mine_now, left, offered, accept=timing != AFTER, sides=sides)
with st.sidebar:  # drawn after the responses so the first screen arrives first
    st.divider()
    render_verdict_panel(dataset, current.ident, mine_now, others, me, names,
                         last_saved(db, dataset, me) if me and not sides.neutral else "", sides)
    moves = move_targets(db, current, items, n_chosen, n_rejected, me)
    line = line_around(db, current, items, n_chosen, n_rejected, me)
    render_review_keyboard(dataset, me, current.ident, mine_now,
                           bool(st.session_state.get(ADVANCE, True)), seq, moves,
                           [v for v in verdicts if v["annotator"] == me],
                           offered[0]["value"] if offered and timing != AFTER else None,
                           line, sides.keys(), blind_view(sides, user))
    st.divider()
    render_queue_nav(total, place, left)
    if not sides.neutral:  # one verdict for many: A and B differ from item to item
        render_bulk_verdict(db, dataset, items, me)
render_review_keys(marker, keys_slot)
