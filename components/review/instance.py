"""A RewardBench 2 instance on the Review page: its shape, a reward model's figures under
the official rules, and a Ties prompt's two rows together (:mod:`needlework.review.instances`;
docs/review.md, "RewardBench 2").

Drawn under the item's header for everyone but a blind annotator: what it says (which
completions are correct, the credit) is what a blind page must not say."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st
from sqlite_utils import Database

from components import position as pos
from components.callbacks import uninterrupted
from components.review.filters import scores_of
from components.review.position import PAGE, first_of
from components.state import get_db
from components.text import label
from needlework.formats import Preference, preference_view
from needlework.review import instances
from needlework.review.queue import Comparison
from needlework.review.sides import Sides
from needlework.teams.access import may_open
from needlework.teams.permissions import User
from store import pairs as pairs_store
from store.datasets import get_item

JUDGE = "judge:"  # a judge run's fingerprint: its scores are shares or ratings, not rewards


@uninterrupted
def _open(dataset: str, key: str, i: int | None, j: int | None, me: str) -> None:
    """The sibling button's callback: this tab to ``key``'s comparison ``(i, j)`` (the
    same pair there), else to its first comparison without my verdict."""
    if i is None or j is None:
        db = get_db()
        row = pairs_store.item(db, dataset, key)
        if row is None:
            return
        found = first_of(db, dataset, row, "all", me)
        i, j = found.i, found.j
    pos.place(PAGE, dataset, key, i=i, j=j)


def model_words(run: Mapping[str, Any] | None) -> str | None:
    """``Model demo-rm`` for a reward model's run; ``None`` for none or a judge's."""
    if run is None or str(run.get("fingerprint", "")).startswith(JUDGE):
        return None
    return f"Model {label(str(run.get('model', '')), 60)}"


def render_instance(db: Database, dataset: str, fmt: str, current: Comparison, subset: str,
                    pref: Preference, run: Mapping[str, Any] | None,
                    entry: Mapping[str, Any] | None, scores: dict[str, Any], sides: Sides,
                    me: str, user: User | None) -> None:
    """The instance's lines (nothing for another format or a blind annotator's page):
    its subset and shape; where a reward model scored it, its credit (best-of-4) or its
    Ties figures; for a Ties row, the prompt's other row with a button that opens it,
    and the same pair there with my verdict on it."""
    if not instances.applies(fmt) or sides.neutral:
        return
    shape = instances.shape(current.item, subset, pref)
    st.caption("RewardBench 2 · " + label(shape.words(), 400), width="stretch")
    model = model_words(run)
    if not shape.ties:
        figure = instances.credit(entry) if model else None
        if model and figure is not None:
            st.caption(f"{model}: {label(figure.words, 300)}")
        return
    other = shape.sibling
    facts = pairs_store.item(db, dataset, other) if other else None
    if other is None or facts is None or (user is not None and not may_open(db, dataset, other, user)):
        if model and (row := instances.ties_row(entry)) is not None:
            st.caption(f"{model}: this row {label(row, 300)}")
        return
    sibling_entry = scores_of(db, dataset, run, other, scores) if model else None
    if model:
        row = instances.ties_row(entry)
        figures = [f"this row {row}"] if row else []
        if shape.part == "ref":
            prompt = instances.ties_prompt(shape.prompt or 0, entry, sibling_entry)
        else:
            prompt = instances.ties_prompt(shape.prompt or 0, sibling_entry, entry)
        if prompt:
            figures.append(prompt)
        if figures:
            st.caption(f"{model}: " + label(" · ".join(figures), 500))
    record = get_item(db, dataset, other)
    twin = (instances.twin(pref, current.i, current.j, preference_view(fmt, record["record"]))
            if record is not None else None)
    mine = pairs_store.my_verdicts_on(db, dataset, other, me) if me else {}
    n_other = facts[2] * facts[3]
    what = (f"reference row {label(other, 40)}" if shape.part == "tied"
            else f"other row {label(other, 40)} (every correct answer)")
    words = (f"The prompt's {what}: {instances.span('correct', facts[2])} against "
             f"{instances.span('incorrect', facts[3])} · {len(mine)} of {n_other} reviewed by you")
    if twin is not None:
        theirs = mine.get(twin)
        words += (f" · this pair is Correct {twin[0] + 1} vs Incorrect {twin[1] + 1} there, "
                  + (f"your verdict: {sides.icon(theirs)} {label(sides.verdict_words(theirs), 30)}"
                     if theirs else "not reviewed by you there"))
    text, button = st.columns([5, 1], vertical_alignment="center", gap="small")
    text.caption(words)
    button.button(f"Open {label(other, 40)}", key="rb2_sibling", icon=":material/swap_horiz:",
                  on_click=_open, args=(dataset, other, *(twin or (None, None)), me),
                  help="The same prompt's other row" + (", on this pair" if twin else ""),
                  width="stretch")
