"""The review page's filters, search and sort, and the list of comparisons they make.

Nothing here reads every item on a rerun: subsets, the reviewer's state and search are
SQL over the items' slim facts (:mod:`store.pairs`); token lengths are counted once by a
background job (:mod:`needlework.review.counting`) and the length filter waits for it;
the model filters read the chosen run's scores once per run. The list is kept in the
session and brought up to date from the items that changed since.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st
from sqlite_utils import Database

import store
from components.jobs import render_job
from components.state import get_db, signed_in
from needlework.review import instances as rb2_instances
from needlework.review import queue as rq
from needlework.review.counting import describe, latest_lengths_job, start_lengths_job
from needlework.review.filters import REVIEW_STATES, disagreements
from needlework.review.lengths import method
from needlework.review.queue import SCOPES, item_comparisons
from needlework.rewards.registry import newest_token_counter
from needlework.words import plural
from store import pairs as pairs_store
from store.grounding import changed_items, last_change
from store.review import item_scores_map

#: :data:`needlework.review.queue.SCOPES` in words that name no side
BLIND_SCOPES = {"all": "every style against every style", "same-style": "same style only"}


def model_tokenizer() -> tuple[Callable[[str], int] | None, str]:
    """The newest loaded reward model's tokenizer as a counter (the fallback when
    ``o200k_base`` is unavailable), with its name; ``(None, "model")`` when none.
    The registry is light: asking imports no torch."""
    return newest_token_counter()


@st.cache_data(show_spinner=False, max_entries=16)
def _shape(path: str, dataset: str, stamp: str) -> tuple[list[str], list[str], bool]:
    """The dataset's subsets and source subsets, and whether some item is square (RM-Bench:
    the same-style scope applies), read once per dataset version."""
    db = get_db()
    return (*pairs_store.subsets(db, dataset), pairs_store.square(db, dataset))


@st.cache_resource(show_spinner="Reading the model's scores…", max_entries=8)
def run_scores(path: str, dataset: str, fingerprint: str, variant: str, stamp: str) -> dict[str, Any]:
    """A scoring (or judge) run's scores of every item, read once per run version and
    shared, not copied, on every rerun (read it, never change it)."""
    return item_scores_map(get_db(), dataset, fingerprint, variant)


SAVED = "rv_filters_saved"  # filter values; they outlive the widgets (drawn only when open)


def _value(name: str, default: Any) -> Any:
    """A filter's value: the widget's while it is drawn, else the one remembered."""
    saved = st.session_state.setdefault(SAVED, {})
    key = f"rv_f_{name}"
    if key in st.session_state:
        saved[name] = st.session_state[key]
    return saved.get(name, default)


def _seed(name: str, value: Any) -> str:
    """Give the widget its remembered value before it is drawn; returns its key."""
    key = f"rv_f_{name}"
    if st.session_state.get(key) != value:
        st.session_state[key] = value
    return key


def _clamp(value: Any, top: int) -> tuple[int, int]:
    if isinstance(value, (tuple, list)) and len(value) == 2:
        low, high = (min(max(0, int(v)), top) for v in value)
        return (low, high) if low <= high else (0, top)
    return (0, top)


@dataclass
class ReviewView:
    """What the list shows: the SQL part (``query``), the scoring run for the model
    filters, whether only items the model gets wrong are kept, whether they are sorted
    by the model's margin, and how tokens are counted."""

    query: pairs_store.PairQuery
    run: dict[str, Any] | None
    disagrees: bool
    by_margin: bool
    how: str
    active: int  # filters in force (for the expander's title)

    def signature(self) -> tuple:
        run = None if self.run is None else (self.run["fingerprint"], self.run["variant"])
        return (self.query, run, self.disagrees, self.by_margin)


def render_filters(db: Database, row: dict[str, Any], runs: Sequence[dict[str, Any]],
                   me: str, blind: bool = False) -> ReviewView:
    """The search box and the filter widgets (in an expander, drawn only while it is
    open; the values are remembered while it is closed). Returns the view to show.
    ``blind``: an annotator who reads Response A / B (:mod:`needlework.review.sides`) is
    offered no "flipped by me" (it would say which of her A / B verdicts chose the
    rejected response) and no side names."""
    dataset = row["name"]
    stamp = f"{row['created_at']}|{row['items']}"
    subsets, sources, square = _shape(str(store.default_path()), dataset, stamp)
    # RewardBench 2: a Ties row with as many correct as incorrect answers has no styles
    square = square and not rb2_instances.applies(row["format"])
    fallback, name = model_tokenizer()
    how = method(fallback, name)
    done_key = f"rv_counted|{dataset}|{row['created_at']}|{how}"  # once counted, it stays so
    counted = bool(st.session_state.get(done_key)) or pairs_store.counted(db, dataset, how) >= row["items"]
    if counted:
        st.session_state[done_key] = True
    top = max(pairs_store.longest(db, dataset, how), 1) if counted else 1
    values: dict[str, Any] = {
        "subsets": [v for v in _value("subsets", []) if v in subsets],
        "sources": [v for v in _value("sources", []) if v in sources],
        "len": _clamp(_value("len", (0, top)), top) if counted else (0, top),
        "state": _value("state", "all") if not blind or _value("state", "all") != "flipped"
        else "all",
        "scope": _value("scope", "same-style") if square else "all",
        "model": min(int(_value("model", 0) or 0), max(len(runs) - 1, 0)),
        "disagree": bool(_value("disagree", False)) and bool(runs),
        "margin": bool(_value("margin", False)) and bool(runs),
    }
    active = sum(bool(x) for x in (values["subsets"], values["sources"], values["disagree"],
                                   values["len"] != (0, top), values["state"] != "all",
                                   values["margin"]))
    title = f"Filters and sort · {active} active" if active else "Filters and sort"
    box = st.expander(title, icon="🔎", key="rv_filters", on_change="rerun")
    if box.open:
        with box:
            _draw(values, subsets, sources, top, square, runs, blind)
            _lengths(db, dataset, counted, how, fallback, name, row["items"])
    run = runs[values["model"]] if runs else None
    low, high = values["len"]
    text = " ".join((st.session_state.get("rv_search") or "").split()).casefold()
    query = pairs_store.PairQuery(
        annotator=me, scope=values["scope"], subsets=frozenset(values["subsets"]),
        sources=frozenset(values["sources"]), state=values["state"] or "all", text=text,
        min_tokens=low if low > 0 else None, max_tokens=high if high < top else None, method=how)
    return ReviewView(query, run, values["disagree"], values["margin"], how, active)


def render_search() -> str:
    """Search in the prompts and ids (kept in the session as ``rv_search``)."""
    return st.text_input("Search", key="rv_search", placeholder="search prompts or ids",
                         label_visibility="collapsed", width=220)


def _draw(values: dict[str, Any], subsets: list[str], sources: list[str], top: int,
          square: bool, runs: Sequence[dict[str, Any]], blind: bool = False) -> None:
    """The filter widgets, seeded with ``values`` (which they update on change)."""
    cols = st.columns(3)
    if len(subsets) > 1:
        cols[0].multiselect("Subset / domain", subsets, key=_seed("subsets", values["subsets"]),
                            placeholder="all")
    if len(sources) > 1 and sources != subsets:
        cols[0].multiselect("Source subset", sources, key=_seed("sources", values["sources"]),
                            placeholder="all")
    if top > 1:
        cols[1].slider("Longest response (tokens)", 0, top, key=_seed("len", values["len"]),
                       help="Keeps items whose longest response is in this range.")
    cols[1].selectbox("Review state", [s for s in REVIEW_STATES if not blind or s != "flipped"],
                      key=_seed("state", values["state"]), format_func=REVIEW_STATES.__getitem__)
    if square:
        cols[2].radio("Comparisons", list(SCOPES), key=_seed("scope", values["scope"]),
                      format_func=BLIND_SCOPES.__getitem__ if blind
                      else SCOPES.__getitem__)
    if not runs:
        cols[2].caption("“Model disagrees” and the sort by margin appear once a reward model "
                        "or a judge has scored this dataset.")
        return
    if len(runs) > 1:
        cols[2].selectbox(
            "Scores of", list(range(len(runs))), key=_seed("model", values["model"]),
            format_func=lambda k: f"{runs[k]['model']} · {runs[k]['variant']} ({plural(runs[k]['items'], 'item')})")
    cols[2].checkbox("Model disagrees", key=_seed("disagree", values["disagree"]),
                     help="Some rejected response scored at or above the chosen one (a tie "
                     "counts as a disagreement).")
    cols[2].checkbox("Sort by the model's margin", key=_seed("margin", values["margin"]),
                     help="Items the model gets most wrong first: chosen score minus rejected "
                     "score, the smallest over the item's comparisons.")


def _lengths(db: Database, dataset: str, counted: bool, how: str, fallback, name: str,
             items: int) -> None:
    """The length filter's note: counted, being counted, or a button to count."""
    job = latest_lengths_job(db, dataset)
    if job is not None and job["display_status"] in ("queued", "running"):
        render_job(job, lambda _: None, verb="Counting the tokens of", starting="Starting…",
                   note="The length filter and the length charts appear when every response "
                        "is counted.")
        return
    if counted:
        return
    st.caption(f"The length filter needs every response's token count ({items:,} items, "
               f"counted once, in the background, with {describe(how)}).")
    if st.button("Count tokens", key="rv_count_tokens", icon=":material/straighten:"):
        start_lengths_job(get_db(), store.default_path(), dataset, how,
                          fallback if how.startswith("tokenizer:") else None, name,
                          by=signed_in())
        st.rerun()


def margin(entry: dict[str, Any] | None, pairs: list[tuple[int, int]]) -> float:
    """Chosen minus rejected score, the smallest over ``pairs`` (``inf`` when unscored)."""
    if not entry:
        return float("inf")
    chosen = list(entry.get("chosen_scores") or [])
    rejected = list(entry.get("rejected_scores") or [])
    found = [chosen[i] - rejected[j] for i, j in pairs
             if i < len(chosen) and j < len(rejected) and chosen[i] is not None
             and rejected[j] is not None]
    return min(found) if found else float("inf")


def model_filter(view: ReviewView, scores: dict[str, Any]) -> Callable[[list], list] | None:
    """What the model filters do to a list of ``(position, key, n_chosen, n_rejected)``."""
    if not (view.disagrees or view.by_margin):
        return None
    scope = view.query.scope

    def keep(rows: list) -> list:
        if view.disagrees:
            rows = [r for r in rows
                    if disagreements(scores.get(r[1]), item_comparisons(r[2], r[3], scope))]
        if view.by_margin:
            rows = sorted(rows, key=lambda r: (margin(scores.get(r[1]), item_comparisons(r[2], r[3], scope)),
                                               r[0]))
        return rows

    return keep


def review_list(db: Database, row: dict[str, Any], me: str, view: ReviewView,
                scores: dict[str, Any], only: Sequence[str] | None = None) -> rq.PairList:
    """The comparisons to move through, kept in the session per dataset version,
    reviewer and view, brought up to date from the items changed since; of the items
    ``only`` names when given (an annotator's own queue in team mode)."""
    dataset = row["name"]
    key = f"rv_list|{dataset}|{row['created_at']}|{me}"
    head = last_change(db, dataset)
    cached: rq.PairList | None = st.session_state.get(key)
    keep = model_filter(view, scores)
    active = bool(view.active or view.query.text)
    signature = view.signature() + (None if only is None else tuple(sorted(only)),)
    if cached is not None and cached.signature == signature and (
            cached.as_of == head or cached.refresh(
                db, view.query, changed_items(db, dataset, cached.as_of), head, keep)):
        return cached
    made = rq.make_pairs(db, dataset, me, view.query, head, signature, active, keep,
                         ordered=view.by_margin, only=only)
    st.session_state[key] = made
    return made


def scores_of(db: Database, dataset: str, run: Mapping[str, Any] | None, key: str,
              scores: dict[str, Any]) -> dict[str, Any] | None:
    """The chosen run's scores of one item: from ``scores`` when the whole run was read,
    else one row (a judge run is read whole, once per run)."""
    if run is None:
        return None
    if scores:
        return scores.get(key)
    if not run["fingerprint"].startswith("judge:"):
        return pairs_store.item_scores(db, dataset, key, run["fingerprint"], run["variant"])
    return run_scores(str(store.default_path()), dataset, run["fingerprint"], run["variant"],
                      f"{run['updated_at']}|{run['items']}").get(key)
