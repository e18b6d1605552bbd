"""The question list of the annotate page: filters and search, the picker, item navigation
(with keys), resuming where the annotator left off, and the ``?item=`` link.

Where the tab is comes from the server's record (:mod:`components.position`), by the rules
both pages share (:func:`needlework.actions.positions.resolve`): the key scripts move it with
actions, the picker and a filter that leaves the question out move it here, ``?item=``
counts only when the page has just opened, and a page opened without one resumes where
the annotator last worked.

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
from components.annotate.order import ordered as order_by_confidence
from components.callbacks import uninterrupted
from components.state import get_db, signed_in
from needlework.actions import positions
from needlework.actions.positions import Place, Worked
from needlework.formats.garage import COMPLEXITIES, POPULARITY, YES_NO
from needlework.grounding import item as gitem
from needlework.grounding import keymap as km
from needlework.grounding import progress as gp
from needlework.grounding.line import keys_around
from needlework.teams.access import own_queue, restricted
from needlework.teams.assignment import next_item
from needlework.teams.blind import visibility
from needlework.teams.permissions import can
from needlework.words import plural
from store import positions as store_positions
from store.grounding import (
    changed_items,
    disagreeing_items,
    item_position,
    item_progress_row,
    last_change,
    list_rows,
    used_categories,
)

WINDOW = 50  # questions in the picker
ITEM_KEYS = {"previous": km.PREVIOUS_ITEM.upper(), "next": km.NEXT_ITEM.upper(),
             "unfinished": km.NEXT_UNFINISHED.upper(), "later": km.NEXT_LATER.upper()}


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
    # the key script's line (needlework.grounding.line)
    around: tuple[list[str], list[str]] = ([], [])
    # the next question left for later (L): flagged, or skipped and not finished since
    later: str | None = None


PAGE = "annotate"


def _state(dataset: str, name: str) -> str:
    return f"nw-nav-{name}|{dataset}"


def go(dataset: str, key: str | None) -> None:
    """Open item ``key`` (a callback): this tab moves there."""
    if key:
        pos.place(PAGE, dataset, key)


@uninterrupted
def _picked(dataset: str, picker: str, valid: set[str], shown: str) -> None:
    """The picker's callback (the picker showed item ``shown``). A value the browser
    sends from an older run (the tab has moved on since, or a label that matches no
    option) is ignored."""
    value = st.session_state.get(picker)
    if value in valid and value != shown and current_item(dataset) == shown:
        go(dataset, value)


def current_item(dataset: str) -> str | None:
    """Where this tab is on ``dataset`` (:func:`components.position.where`)."""
    place = pos.where(PAGE, dataset)
    return place.item if place is not None else None


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


@dataclass(frozen=True)
class _Ground:
    """The annotate page's answers to the position rules (:class:`needlework.actions.positions.
    Ground`): the list, the annotator's progress, their queue."""

    db: Database
    dataset: str
    items: gp.ItemList
    queue: Queue | None

    def allows(self, item: str) -> bool:
        return self.queue is None or self.queue.allows(item)

    def exists(self, place: Place) -> bool:
        return item_position(self.db, self.dataset, place.item) is not None

    def finished(self, place: Place) -> bool:
        row = item_progress_row(self.db, self.dataset, place.item, self.items.annotator)
        return bool(row and row.get("done"))

    def next_open(self, after: Place | None) -> Place | None:
        key, position = "", -1
        if after is not None:
            key, position = after.item, item_position(self.db, self.dataset, after.item) or 0
        found = self.items.next_unfinished(self.db, key, position)
        return Place(found) if found else None

    def keeps(self, place: Place) -> bool:
        return self.items.contains(place.item) or not self.items.shown()

    def first(self) -> Place | None:
        found = self.items.first(self.db)
        return Place(found) if found else None


def _resolve_current(db: Database, dataset: str, items: gp.ItemList, jump: bool,
                     queue: Queue | None = None) -> tuple[str, int, int, int]:
    """The item to show, its dataset position, the tab's ``seq`` and cursor, by the rules
    both pages share (:func:`needlework.actions.positions.resolve`): when the page opens, the
    ``?item=`` it names (``&passage=N`` puts the cursor on passage N), else where the
    annotator last worked; on the runs that follow, where the server has this tab. A
    filter or search just changed moves to its first match when the item is not one.
    Where ``queue`` allows only its own items, no other is ever shown (a link's refusal
    is noted for the caption). A filter that keeps nothing: the queue's or the dataset's
    first item."""
    state = st.session_state
    who = items.annotator
    held = pos.held(PAGE, dataset)
    link: Place | None = None
    if pos.opens(PAGE):
        asked = st.query_params.get("item")
        state.pop(_state(dataset, "refused"), None)
        if asked:
            link = Place(asked, cursor=pos.linked_passage())
    saved = store_positions.last_saved(db, dataset, who) if who else None
    request = pos.request(PAGE, dataset, link=link, who=who, tab_row=held, view_changed=jump,
                          saved=Worked(Place(saved["item_key"]), saved["at"], saved=True)
                          if saved else None)
    resolved = positions.resolve(request, _Ground(db, dataset, items, queue))
    if resolved.refused:
        state[_state(dataset, "refused")] = True  # said in the caption; the link is spent
    where = resolved.place
    position = item_position(db, dataset, where.item) if where is not None else None
    if where is None or position is None:  # a filter that keeps nothing
        first = (queue.keys[0] if queue is not None and queue.keys
                 else gp.ItemList(dataset, who).first(db) or "")
        where, position = Place(first), item_position(db, dataset, first) or 0
        resolved = positions.Resolved(where, "start", resolved.refused,
                                      moves=not where.same(held), settles=resolved.settles)
    if state.get(_state(dataset, "refused")) is True:  # said while this item is shown
        state[_state(dataset, "refused")] = where.item
    seq = pos.commit(PAGE, dataset, resolved, held)
    if not resolved.settles:
        return where.item, position, 0, 0
    cursor = where.cursor if resolved.moves or held is None else held.cursor
    if st.query_params.get("item") != where.item:
        st.query_params["item"] = where.item  # for sharing; read only when a page opens
    if pos.PASSAGE_PARAM in st.query_params:  # read once: the tab keeps the cursor now
        del st.query_params[pos.PASSAGE_PARAM]
    return where.item, position, seq, cursor


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
               keys_around(db, items, current, position),
               items.next_for_later(db, current, position) if who else None)


def _caption(items: gp.ItemList, index: int | None, active: bool, queue: Queue | None) -> str:
    """What the list holds and where this question is in it, in words."""
    if queue is not None:
        text = (f"{items.shown():,} of the {plural(len(queue.keys), 'question')} in your queue "
                f"match" if active else f"{plural(items.shown(), 'question')} in your queue")
    elif active:
        text = f"{items.shown():,} of {plural(items.total, 'question')} match"
    else:
        text = plural(items.total, "question")
    if index is None:
        text += " · this one is filtered out" if active or queue is None else \
            " · this one is not in your queue"
    elif items.shown() > WINDOW:
        text += f" · the list shows {WINDOW} around this one: search, or N / P"
    return text


def render_item_keys(nav: Nav) -> None:
    """Buttons (with shortcut hints): P/N previous/next question, U next unfinished, L next
    left for later. The key script handles the keys and the clicks: it moves to the
    question the page's data names (:func:`components.annotate.keyboard.move_targets`)."""
    st.button("", key="nw-key-item-prev", shortcut=ITEM_KEYS["previous"],
              icon=":material/arrow_back:", disabled=nav.previous is None,
              help="Previous question in the list")
    st.button("", key="nw-key-item-next", shortcut=ITEM_KEYS["next"],
              icon=":material/arrow_forward:", disabled=nav.next is None,
              help="Next question in the list")
    st.button("", key="nw-key-item-unfinished", shortcut=ITEM_KEYS["unfinished"],
              icon=":material/skip_next:", disabled=nav.unfinished is None,
              help="Next question you have not finished (all passages labeled and an answer)")
    # its key's name is the key itself: the key script takes a click on it as that key
    st.button("", key=f"nw-key-{km.NEXT_LATER}", shortcut=ITEM_KEYS["later"],
              icon=":material/flag:", disabled=nav.later is None,
              help="Next question you left for later: flagged (F), or skipped (S) and not "
                   "finished since")


@st.cache_data(show_spinner=False, max_entries=32)
def _used_categories(path: str, dataset: str, created_at: str) -> list[str]:
    """The categories a dataset's records use, read with the calling run's connection
    (records never change after import: cached per database, dataset and import time)."""
    return used_categories(get_db(), dataset)


def dataset_categories(row: dict[str, Any]) -> list[str]:
    """The dataset's category list plus every category its records use."""
    return gitem.categories(row["meta"], _used_categories(str(store.default_path()), row["name"],
                                                          row["created_at"]))
