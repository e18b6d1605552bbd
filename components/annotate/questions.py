"""The question list of the annotate page: filters, the picker, item navigation
(with keys) and the ``?item=`` deep link."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import streamlit as st
from sqlite_utils import Database

import store
from components.summaries import cached_summaries
from needlework.formats.garage import COMPLEXITIES, POPULARITY, YES_NO
from needlework.grounding import item as gitem
from needlework.grounding import keymap as km
from needlework.grounding import progress as gp
from store.grounding import (
    annotator_labels,
    annotator_status,
    changed_items,
    disagreeing_items,
    last_change,
)

ECHO_SECONDS = 5.0
ITEM_KEYS = {"previous": km.PREVIOUS_ITEM.upper(), "next": km.NEXT_ITEM.upper(),
             "unfinished": km.NEXT_UNFINISHED.upper()}


FULL_RECOMPUTE = 400  # more changed items than this: recompute everything


def tracked_progress(db: Database, dataset: str, created_at: str,
                     who: str) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    """This annotator's per-item status and the items in dispute, kept in the session
    and brought up to date from the history rows written since the last rerun (only
    the items that changed are read again)."""
    key = _state(dataset, f"progress|{who}|{created_at}")
    head = last_change(db, dataset)
    cache = st.session_state.get(key)
    if cache is not None and cache["as_of"] != head:
        keys = changed_items(db, dataset, cache["as_of"])
        if len(keys) > FULL_RECOMPUTE:
            cache = None
        else:
            for name, fresh in (("status", annotator_status(db, dataset, who, keys) if who
                                 else {}),
                                ("disagree", disagreeing_items(db, dataset, keys))):
                for k in keys:
                    cache[name].pop(k, None)
                cache[name].update(fresh)
            cache["as_of"] = head
    if cache is None:
        cache = {"as_of": head, "status": annotator_status(db, dataset, who) if who else {},
                 "disagree": disagreeing_items(db, dataset)}
    st.session_state[key] = cache
    return cache["status"], cache["disagree"]


@dataclass
class Nav:
    """The current item and where the navigation keys lead (``None``: nowhere)."""

    dataset: str
    created_at: str
    current: str
    keys: list[str]
    order: list[str]
    position: int
    total: int
    shown: int
    previous: str | None
    next: str | None
    unfinished: str | None
    done: int
    summaries: dict[str, dict[str, Any]]


def _state(dataset: str, name: str) -> str:
    return f"nw-nav-{name}|{dataset}"


def go(dataset: str, key: str | None) -> None:
    """Open item ``key`` (a callback: the page then updates ``?item=``)."""
    if key:
        st.session_state[_state(dataset, "current")] = key


def _picked(dataset: str, picker: str, valid: set[str], shown: str) -> None:
    """The picker's callback (the picker showed item ``shown``). A value the browser
    sends from an older run (the session has moved on, or a label that matches no
    option) is ignored."""
    value = st.session_state.get(picker)
    if value in valid and value != shown and current_item(dataset) == shown:
        go(dataset, value)


def current_item(dataset: str) -> str | None:
    """This session's current item of ``dataset``."""
    return st.session_state.get(_state(dataset, "current"))


def _resolve_current(dataset: str, keys: list[str], all_keys: set[str],
                     asked: str | None = None) -> str:
    """The item to show: the item the browser's keyboard asked for (``asked``), else a
    changed ``?item=`` (deep link), else this session's current item, else the first
    item of the list.

    A rerun request carries the browser's URL, which lags behind when keys are
    pressed faster than the page reruns; an ``item`` this page itself wrote in the
    last few seconds is such an echo, not a link, and is ignored.
    """
    state = st.session_state
    link = st.query_params.get("item")
    seen = state.get(_state(dataset, "seen"))
    written: dict[str, float] = state.setdefault(_state(dataset, "written"), {})
    current = state.get(_state(dataset, "current"))
    now = time.monotonic()
    echo = link in written and now - written[link] < ECHO_SECONDS
    if asked in all_keys:
        current = asked
    elif link and link != seen and link in all_keys and not echo:
        current = link
    if current not in all_keys:
        current = keys[0] if keys else next(iter(all_keys))
    state[_state(dataset, "current")] = current
    state[_state(dataset, "seen")] = current
    if link != current:
        st.query_params["item"] = current
        written[current] = now
    return current


def _followed(view: dict[str, Any] | None, keys: list[str], order: list[str],
              summaries: dict[str, dict[str, Any]], status: dict[str, dict[str, Any]]) -> str | None:
    """The item a browser view asks for: its item, or the question after / before it /
    the next unfinished one when it asks to ``seek`` (``None``: no view)."""
    if not view or view.get("item") not in summaries:
        return None
    start = view["item"]
    seek = view.get("seek")
    if seek in ("next", "previous"):
        found = gp.step(keys, start, 1 if seek == "next" else -1, order)
    elif seek == "unfinished":
        found = gp.next_unfinished(keys, start, summaries, status)
    else:
        return start
    if found is None:
        st.toast({"next": "This is the last question in the list.",
                  "previous": "This is the first question in the list.",
                  "unfinished": "No unfinished question after this one."}[seek], icon="ℹ️")
    return found or start


def _render_filters(dataset: str, categories: list[str]) -> gp.ItemFilter:
    def multi(column, title: str, options: list[str], name: str) -> set[str]:
        return set(column.multiselect(title, options, key=_state(dataset, f"f-{name}"),
                                      format_func=lambda v: v or "(empty)"))

    with st.popover("Filters", icon=":material/filter_list:"):
        cols = st.columns(2)
        states = multi(cols[0], "Label state (yours)", list(gp.STATES), "states")
        deflection = cols[1].selectbox("Deflection", gp.DEFLECTION_FILTERS,
                                       key=_state(dataset, "f-deflection"))
        dims = {
            "question_valid": multi(cols[0], "Valid", list(YES_NO), "valid"),
            "question_false_premise": multi(cols[1], "False premise", list(YES_NO), "premise"),
            "question_seeking": multi(cols[0], "Info-seeking", list(YES_NO), "seeking"),
            gp.TIME: multi(cols[1], "Time sensitivity", list(gitem.TIME_SENSITIVITY), "time"),
            "question_complexity": multi(cols[0], "Complexity", list(COMPLEXITIES), "complexity"),
            "question_popularity": multi(cols[1], "Popularity", list(POPULARITY), "popularity"),
            "question_category": multi(st, "Category", categories, "category"),
        }
    return gp.ItemFilter(dims=dims, states=states, deflection=deflection)


def _option(summary: dict[str, Any], state: str, disagree: bool) -> str:
    title = " ".join(summary["title"].split())
    title = title if len(title) <= 90 else title[:89] + "…"
    flag = " ⚠" if disagree else ""
    return f"{gp.STATE_ICONS[state]} {summary['position'] + 1}. {title}{flag}"


def render_question_nav(db: Database, row: dict[str, Any], who: str,
                        categories: list[str], view: dict[str, Any] | None = None) -> Nav | None:
    """Filters, search and the question picker; returns the navigation state.
    ``view`` is a new position the browser's keyboard asked for (:mod:`components.outbox`)."""
    dataset = row["name"]
    summaries = cached_summaries(str(store.default_path()), dataset, row["created_at"])
    if not summaries:
        st.info("This dataset has no questions.")
        return None
    by_key = {s["key"]: s for s in summaries}
    order = [s["key"] for s in summaries]
    status, disagree = tracked_progress(db, dataset, row["created_at"], who)
    with st.container(horizontal=True, vertical_alignment="bottom", gap="small"):
        flt = _render_filters(dataset, categories)
        flt.text = st.text_input("Search", key=_state(dataset, "f-text"),
                                 placeholder="search questions", label_visibility="collapsed",
                                 width=200)
        own = annotator_labels(db, dataset, who) if who and flt.deflection.startswith(
            "needs") else None
        keys = gp.filter_items(summaries, status, disagree, flt, own)
        asked = _followed(view, keys, order, by_key, status)
        current = _resolve_current(dataset, keys, set(order), asked)
        options = keys if current in keys else sorted(keys + [current], key=order.index)
        labels = {k: _option(by_key[k], gp.item_state(by_key[k]["n_passages"], status.get(k)),
                             k in disagree) for k in options}
        # keyed by the current item and the option labels: never assigned by the server
        picker = _state(dataset, f"pick-{current}-{hash(tuple(labels.values()))}")
        st.selectbox(
            "Question", options, index=options.index(current), key=picker,
            label_visibility="collapsed", width=520, format_func=labels.__getitem__,
            on_change=_picked, args=(dataset, picker, set(order), current),
        )
        shown = f"{len(keys)} of {len(order)} shown" if flt.active() else f"{len(order)} questions"
        st.caption(shown + ("" if current in keys else " · this one is filtered out"))
    done = gp.counts(summaries, status)[gp.DONE]
    return Nav(dataset, row["created_at"], current, keys, order, by_key[current]["position"], len(order), len(keys),
               gp.step(keys, current, -1, order), gp.step(keys, current, 1, order),
               gp.next_unfinished(keys, current, by_key, status), done, by_key)


def render_item_keys(nav: Nav) -> None:
    """Buttons (with shortcut hints): P/N previous/next question, U next unfinished. The
    key script handles the keys and the clicks: it asks the server for that question
    and holds the keys pressed meanwhile for it."""
    st.button("", key="nw-key-item-prev", shortcut=ITEM_KEYS["previous"],
              icon=":material/arrow_back:", disabled=nav.previous is None,
              help="Previous question in the list")
    st.button("", key="nw-key-item-next", shortcut=ITEM_KEYS["next"],
              icon=":material/arrow_forward:", disabled=nav.next is None,
              help="Next question in the list")
    st.button("", key="nw-key-item-unfinished", shortcut=ITEM_KEYS["unfinished"],
              icon=":material/skip_next:", disabled=nav.unfinished is None,
              help="Next question you have not finished (all passages labeled and an answer)")


def dataset_categories(row: dict[str, Any]) -> list[str]:
    """The dataset's category list plus every category its records use."""
    summaries = cached_summaries(str(store.default_path()), row["name"], row["created_at"])
    seen = [str(s["fields"].get("question_category") or "") for s in summaries]
    return gitem.categories(row["meta"], seen)
