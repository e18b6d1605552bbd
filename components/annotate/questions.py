"""The question list of the annotate page: filters and search, the picker, item navigation
(with keys), resuming where the annotator left off, and the ``?item=`` link.

Where the tab is comes from the server's record (:mod:`components.position`): the key
scripts move it with actions, the picker and a filter that leaves the question out move
it here, and ``?item=`` counts only when the page has just opened.

Nothing here walks the dataset on a rerun: the picker shows a window of about 50
questions around the current one (search, the filters or N / P reach the others), its
states and the counts come from SQL kept up to date as labels are written
(:mod:`needlework.grounding.progress`), and a filtered list is made once per filter and
then brought up to date from the items that changed since.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st
from sqlite_utils import Database

import store
from components import position as pos
from components.annotate.line import keys_around
from components.annotate.order import ordered as order_by_confidence
from components.state import get_db, signed_in
from needlework.formats.garage import COMPLEXITIES, POPULARITY, YES_NO
from needlework.grounding import item as gitem
from needlework.grounding import keymap as km
from needlework.grounding import progress as gp
from needlework.teams.access import own_queue, restricted
from needlework.teams.assignment import next_item
from needlework.teams.blind import visibility
from needlework.teams.permissions import can
from store.grounding import (
    changed_items,
    disagreeing_items,
    item_position,
    last_change,
    list_rows,
    used_categories,
)

WINDOW = 50  # questions in the picker
ITEM_KEYS = {"previous": km.PREVIOUS_ITEM.upper(), "next": km.NEXT_ITEM.upper(),
             "unfinished": km.NEXT_UNFINISHED.upper()}


@dataclass(frozen=True)
class Queue:
    """A person's own queue (team mode): its items in order, the first item not done
    after a given one (``needlework.teams.assignment.queue`` / ``next_item``), and
    whether they may open only these (``only``: an annotator, unless the lead lets
    annotators open any item; :mod:`needlework.teams.access`)."""

    keys: list[str]
    next_after: Callable[[str], str | None]
    only: bool = False

    def allows(self, key: str | None) -> bool:
        """Whether the page may show item ``key`` to this person."""
        return key is not None and (not self.only or key in self.keys)


def team_queue(db: Database, dataset: str, user: Any) -> Queue | None:
    """The signed-in user's own queue of ``dataset`` in team mode (``None``: local mode,
    or a reviewer or an admin with nothing assigned: the whole list). An annotator with
    nothing assigned gets an empty queue."""
    keys = own_queue(db, dataset, user)
    if keys is None:
        return None
    return Queue(keys, lambda key: next_item(get_db(), dataset, user.name, after=key, actor=user),
                 only=restricted(db, dataset, user))


@dataclass
class Nav:
    """The current item and where the navigation keys lead (``None``: nowhere)."""

    dataset: str
    created_at: str
    current: str
    position: int  # 0-based place in the dataset
    total: int  # items in the dataset
    shown: int  # items in the list (filters, queue)
    index: int | None  # 0-based place in the list (None: filtered out)
    previous: str | None
    next: str | None
    unfinished: str | None
    done: int
    started: int
    seq: int = 0  # the tab's position as drawn (the key script compares it with its moves)
    cursor: int = 0  # the passage the tab's last move outlined (0: the first unlabeled)
    # the keys of the questions after and before this one in the list (nearest first):
    # the key script's line (components.annotate.line)
    around: tuple[list[str], list[str]] = ([], [])


PAGE = "annotate"


def _state(dataset: str, name: str) -> str:
    return f"nw-nav-{name}|{dataset}"


def go(dataset: str, key: str | None) -> None:
    """Open item ``key`` (a callback): this tab moves there."""
    if key:
        st.session_state[_state(dataset, "current")] = key
        pos.place(PAGE, dataset, key)


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


def _item_list(db: Database, dataset: str, created_at: str, who: str, flt: gp.ItemFilter,
               queue: Queue | None) -> tuple[gp.ItemList, bool]:
    """The list to move through, kept in the session per dataset version, annotator and
    filter, and brought up to date from the items changed since (history ids); and
    whether it was made again for a new filter (the page then jumps to its first item)."""
    key = _state(dataset, f"list|{who}|{created_at}")
    head = last_change(db, dataset)
    cached: gp.ItemList | None = st.session_state.get(key)
    signature = flt.signature() + (None if queue is None else tuple(queue.keys),)
    if cached is not None and cached.signature == signature:
        if cached.as_of == head or cached.refresh(
                db, flt, changed_items(db, dataset, cached.as_of), head):
            return cached, False
    fresh = gp.make_list(db, dataset, who, flt, head, None if queue is None else queue.keys)
    st.session_state[key] = fresh
    return fresh, cached is not None and cached.signature[:-1] != signature[:-1]


def _resolve_current(db: Database, dataset: str, items: gp.ItemList, jump: bool,
                     queue: Queue | None = None) -> tuple[str, int, int, int]:
    """The item to show, its dataset position, the tab's ``seq`` and cursor. When the
    page opens (a link, the sidebar, Home, a reload): the ``?item=`` it names, else this
    session's item; on the runs that follow: where the server has this tab, else this
    session's item (the browser has not said which tab it is yet). Then, when there is
    none: where the annotator left off (their first unfinished item of the list), else
    the list's first item. A filter or search just changed moves to its first match when
    the item is not one. A place other than the tab's is placed there (a page's own
    move); a link's ``&passage=N`` puts the cursor on passage N. Where ``queue`` allows
    only its own items, no other is ever shown: a link, a move or a session's item
    elsewhere counts as none (a link's refusal is noted for the caption)."""
    state = st.session_state
    held = pos.held(PAGE, dataset)
    if held is not None and queue is not None and not queue.allows(held.item):
        held = None  # a move to an item this person may not open: the page places the tab
    current = state.get(_state(dataset, "current"))
    if queue is not None and not queue.allows(current):
        current = None
    # a page opening before the browser's remembered name has reached the session: where
    # to resume is the named annotator's, so nothing is settled or kept on this run
    waiting = pos.awaits_name(PAGE, items.annotator)
    asked: tuple[str, int] | None = None  # the link's item and the passage it names
    if pos.opens(PAGE):
        link = st.query_params.get("item")
        state.pop(_state(dataset, "refused"), None)
        if link and queue is not None and not queue.allows(link):
            state[_state(dataset, "refused")] = True  # said in the caption; the link is spent
        elif link and item_position(db, dataset, link) is not None:
            current = link
            asked = (link, pos.linked_passage())
    elif held is not None:
        current = held.item
    if jump and current is not None and not items.contains(current) and items.shown():
        current = items.first(db)
    position = item_position(db, dataset, current) if current is not None else None
    if position is None:  # nothing yet in this session, or an item that is gone: resume
        current = items.next_unfinished(db, "", -1) or items.first(db) or ""
        position = item_position(db, dataset, current) if current else None
    if position is None:  # a filter that keeps nothing: the first item of the queue or dataset
        current = (queue.keys[0] if queue is not None and queue.keys
                   else gp.ItemList(dataset, items.annotator).first(db) or "")
        position = item_position(db, dataset, current) or 0
    if state.get(_state(dataset, "refused")) is True:  # said while this item is shown
        state[_state(dataset, "refused")] = current
    if waiting:
        return current, position, 0, 0
    state[_state(dataset, "current")] = current
    passage = _asked_passage(dataset, current, asked)
    if held is not None and held.item == current and not passage:
        seq, cursor = held.seq, held.cursor
    else:  # ?passage=N puts the cursor on that passage
        seq, cursor = pos.place(PAGE, dataset, current, cursor=passage), passage
        if seq:  # the tab holds it now
            state.pop(_state(dataset, "passage"), None)
    pos.settled(PAGE)  # nothing drawn since the link was read: see position.settled
    if st.query_params.get("item") != current:
        st.query_params["item"] = current  # for sharing; read only when a page opens
    if pos.PASSAGE_PARAM in st.query_params:  # read once: the tab keeps the cursor now
        del st.query_params[pos.PASSAGE_PARAM]
    return current, position, seq, cursor


def _asked_passage(dataset: str, current: str, asked: tuple[str, int] | None) -> int:
    """The passage a link (``?item=&passage=``) asked for on ``current``, kept until the
    tab is placed there (the browser may not have said which tab it is yet); 0: none."""
    key = _state(dataset, "passage")
    if asked is not None and asked[1]:
        st.session_state[key] = asked
    pending = st.session_state.get(key)
    if pending is not None and pending[0] != current:  # moved on: the link is spent
        del st.session_state[key]
        return 0
    return pending[1] if pending is not None else 0


def _unfinished(db: Database, key: str, position: int, items: gp.ItemList,
                queue: Queue | None) -> str | None:
    """The next item not done: in team mode the queue's own rule (when no filter narrows
    the list), else the list's."""
    if queue is not None and len(items.keys or []) == len(queue.keys):
        found = queue.next_after(key)
        return None if found == key else found
    return items.next_unfinished(db, key, position)


def _sees_others(user: Any) -> bool:
    """Whether the person may see where annotators disagree (the ⚠ mark and its filter):
    locally and for reviewers and admins; an annotator in team mode labels blind (others'
    labels, and gold items, which everyone labels, cannot be read off the list)."""
    return user is None or can(user, "view_all")


def _render_filters(dataset: str, categories: list[str], others: bool = True) -> gp.ItemFilter:
    def multi(column, title: str, options: list[str], name: str) -> set[str]:
        return set(column.multiselect(title, options, key=_state(dataset, f"f-{name}"),
                                      format_func=lambda v: v or "(empty)"))

    with st.popover("Filters", icon=":material/filter_list:"):
        cols = st.columns(2)
        states = multi(cols[0], "Label state (yours)",
                       [x for x in gp.STATES if others or x != gp.DISAGREE], "states")
        deflection = cols[1].selectbox("Deflection", gp.DEFLECTION_FILTERS,
                                       key=_state(dataset, "f-deflection"))
        marks = set(cols[0].multiselect(
            "Marked by you", list(gp.MARKS), key=_state(dataset, "f-marks"),
            format_func=lambda m: f"{gp.MARKS[m][1]} {gp.MARKS[m][0]}",
            help="Questions you flagged (F), skipped (S) or commented on (M): any of them"))
        dims = {
            "question_valid": multi(cols[0], "Valid", list(YES_NO), "valid"),
            "question_false_premise": multi(cols[1], "False premise", list(YES_NO), "premise"),
            "question_seeking": multi(cols[0], "Info-seeking", list(YES_NO), "seeking"),
            gp.TIME: multi(cols[1], "Time sensitivity", list(gitem.TIME_SENSITIVITY), "time"),
            "question_complexity": multi(cols[0], "Complexity", list(COMPLEXITIES), "complexity"),
            "question_popularity": multi(cols[1], "Popularity", list(POPULARITY), "popularity"),
            "question_category": multi(st, "Category", categories, "category"),
        }
    return gp.ItemFilter(dims=dims, states=states, deflection=deflection, marks=marks)


def _option(row: dict[str, Any], disagree: bool) -> str:
    title = " ".join(str(row["title"]).split())
    title = title if len(title) <= 90 else title[:89] + "…"
    flag = " ⚠" if disagree else ""
    state = gp.item_state(row["fields"], bool(row["done"]), row.get("marks"))
    marked = set((row.get("marks") or "").split(","))
    marks = "".join(" " + icon for mark, (_, icon) in gp.MARKS.items() if mark in marked)
    return f"{gp.STATE_ICONS[state]} {row['position'] + 1}. {title}{flag}{marks}"


def render_question_nav(db: Database, row: dict[str, Any], who: str, categories: list[str],
                        queue: Queue | None = None) -> Nav | None:
    """Filters, search and the question picker; returns the navigation state.
    ``queue``: the annotator's own queue in team mode (the list is then that queue)."""
    dataset = row["name"]
    with st.container(horizontal=True, vertical_alignment="bottom", gap="small"):
        user = signed_in()
        flt = _render_filters(dataset, categories, _sees_others(user))
        # the dimension filters never read the file's values for a person kept from them
        flt.file_values = visibility(db, dataset, user).file_labels
        flt.text = st.text_input("Search", key=_state(dataset, "f-text"),
                                 placeholder="search questions or #number",
                                 label_visibility="collapsed", width=200)
        items, jump = _item_list(db, dataset, row["created_at"], who, flt, queue)
        items = order_by_confidence(db, items, who)  # where suggestions carry a confidence
        if not items.total:
            st.info("This dataset has no questions.")
            return None
        if queue is not None and not queue.keys:
            st.info("Nothing in this dataset is assigned to you: your lead assigns the items "
                    "on the Assignment page.", icon=":material/assignment:")
            return None
        current, position, seq, cursor = _resolve_current(db, dataset, items, jump, queue)
        rows = items.window(db, current, position, WINDOW)
        if not any(r["key"] == current for r in rows):  # filtered out: shown in its place
            rows = list_rows(db, dataset, who, [position]) + rows
            if not items.ordered:
                rows.sort(key=lambda r: r["position"])
        disputed = (disagreeing_items(db, dataset, [r["key"] for r in rows])
                    if _sees_others(user) else {})
        labels = {r["key"]: _option(r, r["key"] in disputed) for r in rows}
        options = list(labels)
        # keyed by the current item and the option labels: never assigned by the server
        picker = _state(dataset, f"pick-{current}-{hash(tuple(labels.values()))}")
        st.selectbox(
            "Question", options, index=options.index(current), key=picker,
            label_visibility="collapsed", width=520, format_func=labels.__getitem__,
            on_change=_picked, args=(dataset, picker, set(options), current),
        )
        index = items.index_of(current, position)
        st.caption(_caption(items, index, flt.active(), queue)
                   + (" · the item the link named is not assigned to you"
                      if st.session_state.get(_state(dataset, "refused")) == current else ""))
    done, started, _ = gp.progress(db, dataset, who)
    return Nav(dataset, row["created_at"], current, position, items.total, items.shown(), index,
               items.step(db, current, position, -1), items.step(db, current, position, 1),
               _unfinished(db, current, position, items, queue), done, started, seq, cursor,
               keys_around(db, items, current, position))


def _caption(items: gp.ItemList, index: int | None, active: bool, queue: Queue | None) -> str:
    """What the list holds and where this question is in it, in words."""
    if queue is not None:
        text = (f"{items.shown():,} of the {len(queue.keys):,} questions in your queue match"
                if active else f"{items.shown():,} questions in your queue")
    elif active:
        text = f"{items.shown():,} of {items.total:,} questions match"
    else:
        text = f"{items.total:,} questions"
    if index is None:
        text += " · this one is filtered out" if active or queue is None else \
            " · this one is not in your queue"
    elif items.shown() > WINDOW:
        text += f" · the list shows {WINDOW} around this one: search, or N / P"
    return text


def render_item_keys(nav: Nav) -> None:
    """Buttons (with shortcut hints): P/N previous/next question, U next unfinished. The
    key script handles the keys and the clicks: it moves to the question the page's
    data names (:func:`components.annotate.keyboard.move_targets`)."""
    st.button("", key="nw-key-item-prev", shortcut=ITEM_KEYS["previous"],
              icon=":material/arrow_back:", disabled=nav.previous is None,
              help="Previous question in the list")
    st.button("", key="nw-key-item-next", shortcut=ITEM_KEYS["next"],
              icon=":material/arrow_forward:", disabled=nav.next is None,
              help="Next question in the list")
    st.button("", key="nw-key-item-unfinished", shortcut=ITEM_KEYS["unfinished"],
              icon=":material/skip_next:", disabled=nav.unfinished is None,
              help="Next question you have not finished (all passages labeled and an answer)")


@st.cache_data(show_spinner=False, max_entries=32)
def _used_categories(path: str, dataset: str, created_at: str) -> list[str]:
    """The categories a dataset's records use, read with the calling run's connection
    (records never change after import: cached per database, dataset and import time)."""
    return used_categories(get_db(), dataset)


def dataset_categories(row: dict[str, Any]) -> list[str]:
    """The dataset's category list plus every category its records use."""
    return gitem.categories(row["meta"], _used_categories(str(store.default_path()), row["name"],
                                                          row["created_at"]))
