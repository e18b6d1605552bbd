"""Where this tab is on the annotate and review pages, as the pages read and change it.

The server owns it (:mod:`needlework.positions`): the key scripts move it with ``move``
actions through the action route; a page moves it when one of its widgets does (the
question picker, a filter that leaves the question out), when the tab has no place
yet, and when the page opens (a link, the sidebar, Home, a reload): then ``?item=``
counts, else where this session was on that page, else where the annotator left off.
The link is never read on the reruns that follow (their address lags behind the keys),
nor when a restarted server reconnects to an open page; it is written on every run so
that the address can be shared (the key scripts keep the browser's address on their
latest move between runs, so a reload opens there).
"""

from __future__ import annotations

import logging
import sqlite3

import streamlit as st

from components.outbox import began, name_coming, tab
from components.state import get_db, signed_in
from needlework import positions
from needlework.positions import Position

log = logging.getLogger(__name__)
#: ``?passage=N``: the annotate page opens with its cursor on passage N (1-based): a link
#: about one passage, such as the one a RAG answer's failing sentence cites
PASSAGE_PARAM = "passage"
MAX_PASSAGE = 10_000
PAGE = "nw-page"  # the page this session ran last
ARRIVED = "nw-arrived"  # the page that has just opened and not settled its position yet
UNPLACED = "nw-unplaced"  # (page, dataset) placed before the browser said which tab it is


def arrive(page: str) -> None:
    """Note which page this run draws (``app.py``, every run, after the outbox has read
    the browser's state): a page other than the last one has just opened (``load``: the
    session began with a page load; ``switch``: from another page of the session), except
    when the session began as a restarted server's reconnection (``reconnect``:
    :func:`components.outbox.began`, noted on the session's first view, which a rerun
    cannot stop before this run gets here)."""
    if st.session_state.get(PAGE) != page:
        how = "switch" if PAGE in st.session_state else began()
        st.session_state[ARRIVED] = (page, how)
        st.session_state[PAGE] = page


def opening(page: str) -> bool:
    """Whether this run draws ``page`` for the first time in a row (a page link, Home's
    Open ›, the menu, a reload): call before :func:`arrive` notes it."""
    return st.session_state.get(PAGE) != page


def _who() -> str:
    user = signed_in()
    return user.name if user is not None else ""


def opens(page: str) -> bool:
    """Whether this run opens ``page``: from a link, the sidebar, Home or a reload (the
    page then goes where ``?item=`` says, else where this session was, else where the
    annotator left off), rather than redrawing it where the server has the tab. A
    restarted server reconnecting to an open page does not open it: its address may lag
    behind the keys. The page keeps opening until it has settled its position
    (:func:`settled`), whatever runs come in between (a dataset picked first, say)."""
    arrived = st.session_state.get(ARRIVED)
    return bool(arrived) and arrived[0] == page and arrived[1] != "reconnect"


def awaits_name(page: str, who: str) -> bool:
    """Whether ``page`` opens with no name (``who`` empty) while the browser may still
    give the session the one it remembers (local mode's name memory): the page then
    places and settles nothing, since where to resume is that person's."""
    return opens(page) and not who and name_coming()


def linked_passage() -> int:
    """The passage ``?passage=N`` names (1-based), 0 when the link names none."""
    raw = str(st.query_params.get(PASSAGE_PARAM) or "")
    return int(raw) if raw.isdigit() and 0 < int(raw) <= MAX_PASSAGE else 0


def held(page: str, dataset: str) -> Position | None:
    """This tab's position on ``page`` of ``dataset`` (``None``: the browser has not said
    which tab it is yet, the tab has no place there, or the page placed this session
    before it knew the tab: :func:`place` then puts the tab there)."""
    name = tab()
    if not name or (page, dataset) in st.session_state.get(UNPLACED, set()):
        return None
    return positions.get(get_db(), _who(), name, page, dataset)


def place(page: str, dataset: str, item: str, *, i: int = 0, j: int = 0, cursor: int = 0) -> int:
    """Move this tab (a page's own move); returns the position's ``seq`` (0 when the
    browser has not said which tab it is yet: the next run with the tab places it)."""
    name = tab()
    unplaced: set[tuple[str, str]] = st.session_state.setdefault(UNPLACED, set())
    if not name:
        unplaced.add((page, dataset))
        return 0
    try:
        seq = positions.move(get_db(), _who(), name, page, dataset, item, i=i, j=j,
                             cursor=cursor).seq
    except sqlite3.Error as exc:  # busy or full: the page still draws; the next run places
        log.warning("the tab's position was not saved: %s", exc)
        unplaced.add((page, dataset))
        return 0
    unplaced.discard((page, dataset))
    return seq


def settled(page: str) -> None:
    """The page has its position for this opening: later runs no longer read the link.
    Call it right after the position was placed, with nothing drawn in between (a run
    stopped before would otherwise leave the link unread)."""
    arrived = st.session_state.get(ARRIVED)
    if arrived and arrived[0] == page:
        del st.session_state[ARRIVED]
