"""The Assignment page's widgets (admins): a dataset's plan, distributing its items with
an overlap, and giving the unfinished items of someone who left to the others.

The work is :mod:`needlework.teams.assignment`'s, called with the signed-in admin as
``actor``; these widgets collect the choices and show the outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from components.callbacks import uninterrupted
from components.state import get_db, signed_in
from components.text import label, option
from needlework.figures.stats_text import percent
from needlework.teams.access import set_open_any
from needlework.teams.assignment import (
    AssignmentError,
    assign_dataset,
    drop_unfinished,
    reassign_unfinished,
    unfinished_items,
)
from needlework.teams.blind import (
    GOLD_KEEPS_FILE_LABELS,
    SETTINGS,
    TIMINGS,
    SuggestionSetting,
    file_labels_blocked,
    groups_in_words,
    set_suggestion_timing,
    set_visibility,
)
from needlework.teams.item_names import item_names
from needlework.teams.permissions import PermissionDenied, User
from needlework.words import plural

FLASH = "nw-assign-flash"
EACH, SHARE = "Every item by k annotators", "One annotator per item, a share by two"
ERRORS = (AssignmentError, PermissionDenied)


def render_flash() -> None:
    """The outcome of the last distribution or reassignment, in a box drawn on every run
    (the widgets below keep their place)."""
    box = st.container()
    flash = st.session_state.pop(FLASH, None)
    if flash:
        (box.success if flash[0] else box.error)(label(flash[1], 600))


def render_plan(plan: dict[str, Any] | None) -> None:
    """How the dataset is assigned now (or that it is not)."""
    if plan is None:
        st.info("This dataset is not assigned yet: every reviewer and admin may annotate it, "
                "annotators may not until it is.", icon=":material/assignment:")
        return
    overlap = (f"each item by {plan['overlap']}" if plan["overlap"] > 1 or not plan["double_share"]
               else f"one per item, {percent(plan['double_share'], digits=0, space=False)} of the items by two")
    people = ", ".join(plan["annotators"])
    st.markdown(f"**Assigned** {(plan.get('created_at') or '')[:16].replace('T', ' ')} UTC "
                f"by {label(plan.get('created_by') or 'the command line', 40)}: {overlap}, among "
                f"{label(people, 300)}")


@uninterrupted
def _distribute(dataset: str, replace: bool) -> None:
    state = st.session_state
    names = list(state.get("nw-assign-who") or [])
    each = state.get("nw-assign-mode", EACH) == EACH
    try:
        summary = assign_dataset(
            get_db(), dataset, names, per_item=int(state.get("nw-assign-k") or 1) if each else 1,
            double_share=0.0 if each else float(state.get("nw-assign-share") or 0) / 100,
            seed=int(state.get("nw-assign-seed") or 0), replace=replace, actor=signed_in())
    except ERRORS as e:
        st.session_state[FLASH] = (False, str(e))
        return
    loads = ", ".join(f"{who} {n}" for who, n in sorted(summary.per_annotator.items()))
    gold = (f" and {plural(summary.gold_items, 'gold item')} in every queue"
            if summary.gold_items else "")
    st.session_state[FLASH] = (True, f"{plural(summary.items, 'item')} distributed as "
                               f"{summary.assignments} assignments{gold}: {loads}.")


def render_assign(dataset: str, people: Sequence[User], plan: dict[str, Any] | None) -> None:
    """Choose annotators and the overlap, then distribute (again, with replace)."""
    names = [u.name for u in people]
    default = [n for n in (plan or {}).get("annotators", []) if n in names] or \
        [u.name for u in people if u.role == "annotator"]
    st.multiselect("Annotators", names, default=default, key="nw-assign-who",
                   format_func=lambda n: option(n, 60),
                   help="Accounts that are not disabled. Items go to the least loaded, so loads "
                   "differ by at most one item.")
    mode = st.radio("Overlap", (EACH, SHARE), key="nw-assign-mode", horizontal=True)
    cols = st.columns(3)
    if mode == EACH:
        cols[0].number_input("k: annotators per item", min_value=1, max_value=max(1, len(names)),
                             value=min(2, max(1, len(names))), step=1, key="nw-assign-k",
                             help="2 or more gives agreement figures on every item.")
    else:
        cols[0].slider("Share double-annotated (%)", 0, 100, 20, step=5, key="nw-assign-share",
                       help="Drawn at random with the seed; agreement is computed on these.")
    cols[1].number_input("Seed", min_value=0, value=0, step=1, key="nw-assign-seed",
                         help="Decides which items are double-annotated and where gold items "
                         "sit in the queues.")
    replace = False
    if plan is not None:
        replace = cols[2].checkbox("Distribute again from scratch", key="nw-assign-replace",
                                   help="Every assignment of this dataset is replaced; the "
                                   "annotations stay.")
    st.button("Distribute the items", type="primary", key="nw-assign-go",
              disabled=plan is not None and not replace, on_click=_distribute,
              args=(dataset, replace), icon=":material/call_split:")


@uninterrupted
def _set_open_any(dataset: str, widget: str) -> None:
    on = bool(st.session_state.get(widget))
    try:
        set_open_any(get_db(), dataset, on, actor=signed_in())
    except PermissionDenied as e:
        st.session_state[FLASH] = (False, str(e))
        return
    st.session_state[FLASH] = (True, f"Annotators {'may now open any item' if on else 'now open only their own items'} of {dataset}.")


def render_open_any(dataset: str, on: bool) -> None:
    """The lead's choice whether annotators may open items not assigned to them (read
    only: they still write on their own); saved when it is ticked."""
    widget = f"nw-open-any|{dataset}|{on}"  # keyed by the saved value
    st.checkbox("Annotators may open any item of this dataset (not only their own)",
                value=on, key=widget, on_change=_set_open_any, args=(dataset, widget),
                help="Off: an annotator opens only the items assigned to them; a link to "
                "another's item shows their own queue instead. On: they may read any item, "
                "and still label only their own. Their lists and counts go along their own "
                "queue either way.")


REASSIGNED = "nw-reassign-result"  # (dataset, ok, sentence): the last reassign's outcome


@uninterrupted
def _reassign(dataset: str) -> None:
    leaver = st.session_state.get("nw-reassign-from") or ""
    to = list(st.session_state.get("nw-reassign-to") or []) or None
    try:
        summary = reassign_unfinished(get_db(), dataset, leaver, to=to, actor=signed_in())
    except ERRORS as e:
        st.session_state[REASSIGNED] = (dataset, False, str(e))
        return
    st.session_state[REASSIGNED] = (dataset, True, summary.sentence(leaver))


@uninterrupted
def _drop(dataset: str, leaver: str, keys: list[str]) -> None:
    try:
        gone = drop_unfinished(get_db(), dataset, leaver, keys, actor=signed_in())
    except ERRORS as e:
        st.session_state[REASSIGNED] = (dataset, False, str(e))
        return
    st.session_state[REASSIGNED] = (
        dataset, True, f"{plural(len(gone), 'item')} taken out of {leaver}'s queue; every "
        f"annotation on {'it' if len(gone) == 1 else 'them'} stays.")


def _kept(dataset: str, who: str, plan: dict[str, Any] | None) -> list[str]:
    """The unfinished items left in the queue of ``who`` once out of the plan (a
    reassignment kept them: everyone else already has them); none while in it."""
    if not who or who in (plan or {}).get("annotators", [who]):
        return []
    return unfinished_items(get_db(), dataset, who, actor=signed_in())


def render_reassign(dataset: str, holders: Sequence[str], people: Sequence[User],
                    plan: dict[str, Any] | None = None) -> None:
    """Give every unfinished item of one annotator to the others, in one action; then say
    what moved, list the items kept (everyone else already has them) and offer to take
    them out of the leaver's queue (someone no longer in the plan). The picker starts on
    a leaver with kept items, so a reload shows them again: they are the database's, not
    the session's."""
    if not holders:
        st.caption("Nobody has items in this dataset yet.")
        return
    cols = st.columns(2)
    waiting = next((i for i, who in enumerate(holders) if _kept(dataset, who, plan)), 0)
    leaver = cols[0].selectbox("Whose unfinished items", holders, index=waiting,
                               key="nw-reassign-from", format_func=lambda n: option(n, 60))
    cols[1].multiselect("To (default: the plan's other annotators)",
                        [u.name for u in people if u.name != leaver], key="nw-reassign-to",
                        format_func=lambda n: option(n, 60))
    st.button("Reassign the unfinished items", key="nw-reassign-go", on_click=_reassign,
              args=(dataset,), icon=":material/move_up:",
              help="Their finished items and every annotation stay; nobody gets an item twice.")
    outcome = st.session_state.get(REASSIGNED)
    if outcome and outcome[0] == dataset:
        (st.success if outcome[1] else st.error)(label(outcome[2], 600),
                                                 icon=":material/move_up:")
    kept = _kept(dataset, leaver, plan)
    if not kept:
        return
    one = len(kept) == 1
    st.markdown(f"**Kept in {label(leaver, 60)}'s queue** ({len(kept)}): "
                + label(f"{leaver} is no longer in the plan, and everyone else already has "
                        f"{'this unfinished item' if one else 'these unfinished items'}.", 300))
    names = item_names(get_db(), dataset, kept[:50])
    st.caption(label("; ".join(names[k] for k in kept[:50])
                     + (f"; and {len(kept) - 50} more" if len(kept) > 50 else ""), 6000))
    st.button(f"Take {'this item' if one else f'these {len(kept)} items'} out of {leaver}'s "
              "queue", key="nw-reassign-drop", on_click=_drop, args=(dataset, leaver, kept),
              icon=":material/playlist_remove:",
              help=f"{'It leaves' if one else 'They leave'} the queue; the annotations on "
              f"{'it' if one else 'them'} stay, and everyone else keeps "
              f"{'it' if one else 'them'}.")


@uninterrupted
def _set_visible(dataset: str, name: str, widget: str) -> None:
    on = bool(st.session_state.get(widget))
    try:
        set_visibility(get_db(), dataset, name, on, actor=signed_in())
    except PermissionDenied as e:
        st.session_state[FLASH] = (False, str(e))
        return
    st.session_state[FLASH] = (True, f"Annotators {'now see' if on else 'no longer see'} "
                                     f"{SETTINGS[name][1]} in {dataset}.")


def render_visibility(dataset: str, chosen: dict[str, bool]) -> None:
    """The lead's blind settings for ``dataset``: what annotators see besides the text
    (reviewers and admins see everything). Each toggle saves when it is switched. On a
    dataset with gold items, one sentence says the file-labels switch has no effect."""
    st.caption("Blind by default: annotators label without seeing these, so their labels are "
               "their own. Model suggestions are a separate choice (below): a group may see "
               "suggestions without the file's labels.")
    if file_labels_blocked(get_db(), dataset):
        st.info(GOLD_KEEPS_FILE_LABELS, icon=":material/lock:")
    for name, (_, words) in SETTINGS.items():
        widget = f"nw-visible|{dataset}|{name}|{chosen[name]}"  # keyed by the saved value
        st.toggle(f"Annotators see {words}", value=chosen[name], key=widget,
                  on_change=_set_visible, args=(dataset, name, widget))


TIMING_CHOICES = {"always": "Always", "after": "After they label", "never": "Never"}


def _timing_keys(dataset: str, saved: SuggestionSetting) -> tuple[str, str]:
    """The two widgets' keys, keyed by the saved setting (a save redraws them with it)."""
    tag = f"{dataset}|{saved.when}|{'|'.join(saved.names)}"
    return f"nw-suggest-when|{tag}", f"nw-suggest-for|{tag}"


@uninterrupted
def _set_timing(dataset: str, saved: SuggestionSetting) -> None:
    when_key, for_key = _timing_keys(dataset, saved)
    when = st.session_state.get(when_key) or saved.when
    names = list(st.session_state.get(for_key) or [])
    try:
        set_suggestion_timing(get_db(), dataset, when, names, actor=signed_in())
    except (PermissionDenied, ValueError) as e:
        st.session_state[FLASH] = (False, str(e))
        return
    who = (f"for {', '.join(names)} (the others see none: the control group)"
           if names else "for every annotator")
    st.session_state[FLASH] = (True, f"{dataset}: {TIMINGS[when]}, {who}.")


def render_suggestion_timing(dataset: str, saved: SuggestionSetting, names: Sequence[str]) -> None:
    """The lead's choice of when annotators see model suggestions in ``dataset`` (always,
    only after their own label, never) and for whom (a test group; the others are the
    control group and see none), apart from the file's labels; saved by its button, then
    what each group sees now in words. Reviewers and admins always see them."""
    when_key, for_key = _timing_keys(dataset, saved)
    st.radio("When annotators see suggestions", list(TIMING_CHOICES), key=when_key,
             index=list(TIMING_CHOICES).index(saved.when), horizontal=True,
             format_func=TIMING_CHOICES.__getitem__,
             help="Against anchoring. After they label: a suggestion shows on a field only "
             "once the annotator has saved their own value, with whether it differs from "
             "theirs, and Y accepts none. This does not depend on the file's labels: "
             "annotators may see suggestions without them. Gold items show them like any "
             "other item.")
    options = list(dict.fromkeys([*names, *saved.names]))
    st.multiselect("For these annotators, the test group (empty: everyone)",
                   options, default=list(saved.names), key=for_key,
                   format_func=lambda n: option(n, 60),
                   help="Leave empty for everyone. With names, the choice above applies to them "
                   "only (the test group) and the others see no suggestions at all (the "
                   "control group). Neither group sees the file's labels unless their switch "
                   "is on, for everyone. Compare the groups on the Quality page (accuracy on "
                   "the gold items, agreement).")
    st.button("Save when suggestions show", key=f"nw-suggest-save|{dataset}",
              on_click=_set_timing, args=(dataset, saved), icon=":material/save:")
    st.caption(label("Now: " + groups_in_words(get_db(), dataset, team=signed_in() is not None),
                     600))
