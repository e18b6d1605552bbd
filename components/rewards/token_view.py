"""Picking the item and the chosen/rejected responses for the per-token view.

``?dataset=NAME&item=KEY`` on the reward page opens that item here; picking an
item (in the list or by clicking a failure) writes ``?item=`` back, so the URL
always opens what is on screen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from components.models.per_token import render_token_pair
from components.rewards.results import review_link
from components.text import label
from needlework.figures.stats_text import signed
from needlework.formats import Preference, preference_view
from needlework.rewards.errors import RewardModelError
from needlework.rewards.loading import RewardModel
from needlework.rewards.per_token import DEFAULT_MAX_PASSES
from needlework.rewards.pooling import HEAD
from needlework.rewards.results import Failure, worst_pair
from needlework.rewards.token_pairs import TokenPair, cached_token_pair, prefix_plans, token_pair
from store.datasets import get_item

ITEM = "rw_item"
ANCHOR = "nw-per-token"
# A failure clicked in the table above: bring its per-token view into sight (our own script,
# no data in it; retried while the page settles).
SCROLL = """<script>(() => {
  const go = () => { const a = document.getElementById("{id}");
                     if (a) a.scrollIntoView({block: "start", behavior: "instant"}); };
  [60, 400, 1200].forEach((ms) => setTimeout(go, ms));
})();</script>"""
SEEN = "rw_item_seen"  # the last ?item= / failure click applied, so it is applied once
DEFAULTED = "rw_item_default"  # (dataset, item) the view picked by itself: the worst failure
VIEW = "rw_view_shown"  # (dataset, item) the view's header and scores were last drawn for
PAIR_VIEW = "rw_pair_shown"  # (dataset, item, chosen, rejected) of the last per-token pair


def _apply_requests(dataset: str, keys: list[str], picked: str | None) -> None:
    """A new ``?item=`` (deep link) or a new failure click selects that item."""
    seen = st.session_state.get(SEEN) or {}
    asked = st.query_params.get("item")
    if asked in keys and asked != seen.get("url"):
        st.session_state[ITEM] = asked
    if picked in keys and picked != seen.get("click"):
        st.session_state[ITEM] = picked
    if st.session_state.get(ITEM) not in keys:
        st.session_state.pop(ITEM, None)
    st.session_state[SEEN] = {"dataset": dataset, "url": seen.get("url"), "click": picked}


def _remember(item: str) -> None:
    seen = st.session_state.get(SEEN) or {}
    st.session_state[SEEN] = {**seen, "url": item}
    if st.query_params.get("item") != item:
        st.query_params["item"] = item


def _pick_item(dataset: str, keys: list[str], fails: dict[str, Failure], picked: str | None) -> str:
    """The item select box. Its default is the worst failure (else the first item); while
    the view shows a default it picked itself (no link, click or choice of the user since),
    a new default, e.g. the failures of a run that has just finished, replaces it."""
    _apply_requests(dataset, keys, picked)
    default = next(iter(fails), keys[0])
    own = st.session_state.get(DEFAULTED)
    if ITEM not in st.session_state or (own is not None and own == (dataset, st.session_state[ITEM])):
        st.session_state[ITEM] = default
        st.session_state[DEFAULTED] = (dataset, default)
    elif own is not None:
        st.session_state.pop(DEFAULTED, None)  # the user's (or a link's) item from now on
    item = st.selectbox(
        "Item", keys, key=ITEM,
        format_func=lambda k: _item_words(k, fails.get(k)),
        help="Failures say so, with their margin. Clicking a failure in the table above picks "
             "it too.")
    _remember(item)
    return item


def _item_words(key: str, fail: Failure | None) -> str:
    """An item in the select box: failures say so, with their margin."""
    if fail is None:
        return key
    if fail.margin is None:
        return f"{key} · wrong, a score is missing"
    return f"{key} · fails, margin {signed(fail.margin, 3)}"


def _pick_responses(pref: Preference, item: str, scores: dict[str, Any] | None) -> tuple[int, int]:
    """Which chosen and rejected to compare (default: the worst pair by score). The pickers
    belong to the item and its worst pair, so scores that move the worst pair (a run that
    has just finished, another run picked) open the new worst pair."""
    i0, j0 = worst_pair(scores["chosen_scores"], scores["rejected_scores"]) if scores else (0, 0)
    basis = f"{item}|{i0}|{j0}"
    cols = st.columns(2)

    def fmt(side: str, values: list[Any] | None) -> Callable[[int], str]:
        return lambda k: f"{side} {k + 1}" + (
            f" · score {values[k]:.4f}" if values and k < len(values) and values[k] is not None
            else "")

    i = cols[0].selectbox("Chosen response", range(len(pref.chosen)), index=min(i0, len(pref.chosen) - 1),
                          key=f"rw_ci|{basis}", format_func=fmt("chosen", scores["chosen_scores"] if scores else None))
    j = cols[1].selectbox("Rejected response", range(len(pref.rejected)),
                          index=min(j0, len(pref.rejected) - 1), key=f"rw_rj|{basis}",
                          format_func=fmt("rejected", scores["rejected_scores"] if scores else None))
    return int(i), int(j)


def render_per_token_section(db: Any, row: dict[str, Any], rm: RewardModel | None, keys: list[str],
                             fails: list[Failure], scores: dict[str, dict[str, Any]],
                             picked: str | None, truncation: str) -> str | None:
    """Item and response pickers, then the per-token view; returns the item shown."""
    if not keys:
        st.caption("This dataset has no items.")
        return None
    dataset = row["name"]
    by_key = {f.item: f for f in fails}
    clicked = picked in keys and picked != (st.session_state.get(SEEN) or {}).get("click")
    st.html(f'<div id="{ANCHOR}"></div>' + (SCROLL.replace("{id}", ANCHOR) if clicked else ""),
            unsafe_allow_javascript=clicked)
    item = _pick_item(dataset, keys, by_key, picked)
    record = get_item(db, dataset, item)
    assert record is not None  # picked from the dataset's keys
    pref = preference_view(row["format"], record["record"])
    with _view(VIEW, (dataset, item)):  # the header and all below it: one item's record
        head = st.columns([3, 1], vertical_alignment="center")
        head[0].caption(f"Item {label(item, 80)} · subset {label(pref.subset, 60)} · "
                        f"{len(pref.chosen)} chosen, {len(pref.rejected)} rejected")
        i, j = _pick_responses(pref, item, scores.get(item))
        with head[1]:
            review_link(dataset, item, pair=(i, j))
        if rm is None:
            st.info("Load a model above to see its reward token by token.", icon="🔬")
            return item
        with _view(PAIR_VIEW, (dataset, item, i, j)):
            pair = compute_pair(rm, pref.prompt, pref.chosen[i], pref.rejected[j], truncation,
                                key=f"{item}|{i}|{j}")
            if pair is not None:
                render_token_pair(pair, (f"chosen {i + 1}", f"rejected {j + 1}"),
                                  key=f"rw-tok-{i}-{j}")
    return item


def _view(name: str, shown: tuple[Any, ...]) -> Any:
    """A container for what is drawn from one record (``shown``: the dataset and item, or
    the item and pair). When ``shown`` differs from what this session's last run drew
    there, the container starts empty: the browser drops the previous record's header,
    scores and text at once instead of keeping them on screen, under the new header, while
    the new scores are computed."""
    last = st.session_state.get(name)
    st.session_state[name] = shown
    return st.empty().container() if last != shown else st.container()


STRIDES = (1, 2, 4, 8, 16, 32, 64)


def compute_pair(rm: RewardModel, prompt: str, chosen: str, rejected: str, truncation: str,
                 key: str) -> TokenPair | None:
    """The per-token pair of two responses, or ``None`` (a message says why).

    A head-method model runs at once (one pass per response). Any other model needs one
    pass per prefix: the plan (passes, tokens, estimated time) shows first, with a stride
    and a cap the user can raise, and the passes run on a click, with a progress bar.
    """
    try:
        if rm.pooling.per_token == HEAD:
            with st.spinner("One forward pass per response …"):
                return token_pair(rm, prompt, chosen, rejected, truncation)
        st.info(f"Per-token rewards of {label(rm.facts.name, 80)} need one forward pass per "
                f"prefix: {label(rm.pooling.reason, 300)}. The value at token t is the model's "
                "score of the text cut after t.", icon="🧮")
        cols = st.columns(2)
        stride = cols[0].select_slider(
            "Stride (score every k-th prefix)", STRIDES, value=1, key=f"rw_stride|{key}",
            help="Larger strides cost less; the tokens in between show the value at the end of "
                 "their stride. The last token (the whole text) is always scored.")
        cap = int(cols[1].number_input(
            "Cap (prefix passes)", min_value=1, value=DEFAULT_MAX_PASSES, step=256, key=f"rw_cap|{key}",
            help="Runs with more passes than this are refused; raise it to allow them."))
        done = cached_token_pair(rm, prompt, chosen, rejected, truncation, stride)
        if done is not None:
            return done
        with st.spinner("Measuring one pass of each response …"):
            plans = prefix_plans(rm, prompt, chosen, rejected, truncation, stride)
        passes = sum(p.passes for p in plans)
        seconds = sum(p.seconds or 0.0 for p in plans)
        st.caption(f"chosen: {plans[0].describe()} · rejected: {plans[1].describe()}.")
        too_many = max(p.passes for p in plans) > cap
        if too_many:
            st.warning(f"More than the cap of {cap:,} passes for one response: raise the cap or "
                       "take a larger stride.", icon="✋")
        if not st.button(f"Compute per-token rewards ({passes:,} passes, about {seconds:.0f} s)",
                         key=f"rw_prefix_go|{key}|{stride}", disabled=too_many, type="primary"):
            return None
        bar = st.progress(0.0, text="Prefix passes …")

        def progress(d: int, t: int) -> None:
            bar.progress(min(1.0, d / max(passes, t, 1)), text=f"Prefix passes: {d:,} of {passes:,}")

        pair = token_pair(rm, prompt, chosen, rejected, truncation, stride=stride, max_passes=cap,
                          progress=progress)
        bar.empty()
        return pair
    except RewardModelError as exc:
        st.error(label(str(exc), 1500), icon="🚫")
        return None
