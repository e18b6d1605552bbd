"""The review page's data loading (cached item facts) and its filter widgets."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

import store
from components.state import get_db
from needlework.formats import preference_view
from needlework.review.filters import REVIEW_STATES, Filters
from needlework.review.lengths import ItemFacts, item_facts, method
from needlework.review.queue import SCOPES
from needlework.rewards.registry import newest_token_counter
from store.datasets import get_dataset, iter_items


def model_tokenizer() -> tuple[Callable[[str], int] | None, str]:
    """The newest loaded reward model's tokenizer as a counter (the fallback when
    ``o200k_base`` is unavailable), with its name; ``(None, "model")`` when none.
    The registry is light: asking imports no torch."""
    return newest_token_counter()


@st.cache_data(show_spinner="Counting tokens…", max_entries=16)
def _facts(path: str, dataset: str, stamp: str, how: str, _fallback: Any = None) -> list[ItemFacts]:
    """Facts of every item (read with the calling run's connection to ``path``, the app's
    database), cached per dataset version (``stamp``) and counting method."""
    db = get_db()
    fmt = get_dataset(db, dataset)["format"]
    name = how.split(":", 1)[1] if how.startswith("tokenizer:") else "model"
    return [
        item_facts(it["key"], it["position"], it["subset"],
                   preference_view(fmt, it["record"]), _fallback, name)
        for it in iter_items(db, dataset)
    ]


def load_facts(row: dict[str, Any]) -> tuple[list[ItemFacts], str]:
    """Facts (token lengths, subsets) of every item of dataset ``row``, cached until
    the dataset is replaced or the counting method changes; and that method."""
    fallback, name = model_tokenizer()
    how = method(fallback, name)
    stamp = f"{row['created_at']}|{row['items']}"
    return _facts(str(store.default_path()), row["name"], stamp, how, fallback), how


def _distinct(values: Sequence[str]) -> list[str]:
    return sorted({v for v in values if v})


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


def render_filters(
    facts: Sequence[ItemFacts], runs: Sequence[dict[str, Any]]
) -> tuple[Filters, str, dict[str, Any] | None]:
    """Filter widgets in an expander (drawn only while it is open, so the first
    screen stays light; the values are remembered while it is closed). Returns
    the filters, the comparison scope and the scoring run for "model disagrees"."""
    square = any(f.n_chosen == f.n_rejected > 1 for f in facts)
    subsets = _distinct([f.subset for f in facts])
    sources = _distinct([f.source_subset for f in facts])
    top = max(max((f.longest for f in facts), default=0), 1)
    values = {
        "subsets": [v for v in _value("subsets", []) if v in subsets],
        "sources": [v for v in _value("sources", []) if v in sources],
        "len": _clamp(_value("len", (0, top)), top),
        "state": _value("state", "all"),
        "scope": _value("scope", "same-style") if square else "all",
        "model": min(int(_value("model", 0) or 0), max(len(runs) - 1, 0)),
        "disagree": bool(_value("disagree", False)) and bool(runs),
    }
    active = sum(bool(x) for x in (values["subsets"], values["sources"], values["disagree"],
                                   values["len"] != (0, top), values["state"] != "all"))
    title = f"Filters · {active} active" if active else "Filters"
    box = st.expander(title, icon="🔎", key="rv_filters", on_change="rerun")
    if box.open:
        with box:
            _draw(values, subsets, sources, top, square, runs)
    run = runs[values["model"]] if runs else None
    low, high = values["len"]
    filters = Filters(
        subsets=frozenset(values["subsets"]), source_subsets=frozenset(values["sources"]),
        min_tokens=low if low > 0 else None, max_tokens=high if high < top else None,
        state=values["state"] or "all", model_disagrees=values["disagree"],
    )
    return filters, values["scope"], run


def _draw(values: dict[str, Any], subsets: list[str], sources: list[str], top: int,
          square: bool, runs: Sequence[dict[str, Any]]) -> None:
    """The filter widgets, seeded with ``values`` (which they update on change)."""
    cols = st.columns(3)
    if len(subsets) > 1:
        cols[0].multiselect("Subset / domain", subsets, key=_seed("subsets", values["subsets"]),
                            placeholder="all")
    if len(sources) > 1 and sources != subsets:
        cols[0].multiselect("Source subset", sources, key=_seed("sources", values["sources"]),
                            placeholder="all")
    cols[1].slider("Longest response (tokens)", 0, top, key=_seed("len", values["len"]),
                   help="Keeps items whose longest response is in this range.")
    cols[1].selectbox("Review state", list(REVIEW_STATES), key=_seed("state", values["state"]),
                      format_func=REVIEW_STATES.get)
    if square:
        cols[2].radio("Comparisons", list(SCOPES), key=_seed("scope", values["scope"]),
                      format_func=SCOPES.get)
    if not runs:
        cols[2].caption("“Model disagrees” appears once a reward model has scored this dataset.")
        return
    if len(runs) > 1:
        cols[2].selectbox(
            "Scores of", list(range(len(runs))), key=_seed("model", values["model"]),
            format_func=lambda k: f"{runs[k]['model']} · {runs[k]['variant']} ({runs[k]['items']} items)")
    cols[2].checkbox("Model disagrees", key=_seed("disagree", values["disagree"]),
                     help="Some rejected response scored at or above the chosen one (a tie "
                     "counts as a disagreement).")
