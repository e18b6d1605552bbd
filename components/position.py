"""Where this tab is on the annotate and review pages, as the pages read and change it.

The server owns it (:mod:`needlework.actions.positions`, whose
:func:`~needlework.actions.positions.resolve` holds the rules both pages follow): the key scripts move it with ``move`` actions through
the action route; a page moves it when one of its widgets does (the question picker, a
filter that leaves the question out), when the tab has no place yet, and when the page
opens (a link, the sidebar, Home, a reload, a new tab): then ``?item=`` counts, else
where this person last worked. This module gathers what a run knows
(:func:`request`) and carries out what the rules decide (:func:`commit`).

What the session keeps: which page it drew last and whether that page has settled its
opening (``nw-page``), and a place chosen before the tab's row could hold it
(``nw-pending``: the browser had not said which tab it is yet, or the write failed).
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
from needlework.actions import positions
from needlework.actions.positions import Place, Position, Request, Resolved, Worked
from store.annotations import now

log = logging.getLogger(__name__)
#: ``?passage=N``: the annotate page opens with its cursor on passage N (1-based): a link
#: about one passage, such as the one a RAG answer's failing sentence cites
PASSAGE_PARAM = "passage"
MAX_PASSAGE = 10_000
#: ``(page, how)``: the page this session drew last, and how it opened while it has not
#: settled its place yet (``load``, ``switch``, ``reconnect``; ``None``: settled)
PAGE = "nw-page"
#: ``{(page, dataset): Worked}``: a place chosen before the tab's row held it
PENDING = "nw-pending"


def arrive(page: str) -> None:
    """Note which page this run draws (``app.py``, every run, after the outbox has read
    the browser's state): a page other than the last one has just opened (``load``: the
    session began with a page load; ``switch``: from another page of the session), except
    when the session began as a restarted server's reconnection (``reconnect``:
    :func:`components.outbox.began`, noted on the session's first view, which a rerun
    cannot stop before this run gets here)."""
    last = st.session_state.get(PAGE)
    if last is None or last[0] != page:
        st.session_state[PAGE] = (page, "switch" if last is not None else began())


def opening(page: str) -> bool:
    """Whether this run draws ``page`` for the first time in a row (a page link, Home's
    Open ›, the menu, a reload): call before :func:`arrive` notes it."""
    last = st.session_state.get(PAGE)
    return last is None or last[0] != page


def _who() -> str:
    user = signed_in()
    return user.name if user is not None else ""


def opens(page: str) -> bool:
    """Whether this run opens ``page``: from a link, the sidebar, Home or a reload (the
    page then goes where ``?item=`` says, else where this person last worked), rather
    than redrawing it where the server has the tab. A restarted server reconnecting to
    an open page does not open it: its address may lag behind the keys. The page keeps
    opening until it has settled its position (:func:`settled`), whatever runs come in
    between (a dataset picked first, say)."""
    last = st.session_state.get(PAGE)
    return last is not None and last[0] == page and last[1] not in (None, "reconnect")


def awaits_name(page: str, who: str) -> bool:
    """Whether ``page`` opens with no name (``who`` empty) while the browser may still
    give the session the one it remembers (local mode's name memory): the page then
    places and settles nothing, since where to resume is that person's."""
    return opens(page) and not who and name_coming()


def linked_passage() -> int:
    """The passage ``?passage=N`` names (1-based), 0 when the link names none."""
    raw = str(st.query_params.get(PASSAGE_PARAM) or "")
    return int(raw) if raw.isdigit() and 0 < int(raw) <= MAX_PASSAGE else 0


def _pending() -> dict[tuple[str, str], Worked]:
    return st.session_state.setdefault(PENDING, {})


def held(page: str, dataset: str) -> Position | None:
    """This tab's row on ``page`` of ``dataset`` (``None``: the browser has not said which
    tab it is yet, the tab has no place there, or a place is pending: :func:`place` then
    puts the tab there)."""
    name = tab()
    if not name or (page, dataset) in _pending():
        return None
    return positions.get(get_db(), _who(), name, page, dataset)


def where(page: str, dataset: str) -> Place | None:
    """Where this tab is now: the place pending in this session, else the tab's row."""
    pending = _pending().get((page, dataset))
    if pending is not None:
        return pending.place
    row = held(page, dataset)
    return row.place if row is not None else None


def place(page: str, dataset: str, item: str, *, i: int = 0, j: int = 0, cursor: int = 0) -> int:
    """Move this tab (a page's own move); returns the position's ``seq`` (0 when the
    browser has not said which tab it is yet, or the write failed: the place is pending,
    and the next run with the tab places it)."""
    name = tab()
    pending = _pending()
    chosen = Worked(Place(item, i, j, cursor), now())
    if not name:
        pending[(page, dataset)] = chosen
        return 0
    try:
        seq = positions.move(get_db(), _who(), name, page, dataset, item, i=i, j=j,
                             cursor=cursor).seq
    except sqlite3.Error as exc:  # busy or full: the page still draws; the next run places
        log.warning("the tab's position was not saved: %s", exc)
        pending[(page, dataset)] = chosen
        return 0
    pending.pop((page, dataset), None)
    return seq


def settled(page: str) -> None:
    """The page has its position for this opening: later runs no longer read the link.
    Call it right after the position was placed, with nothing drawn in between (a run
    stopped before would otherwise leave the link unread)."""
    last = st.session_state.get(PAGE)
    if last is not None and last[0] == page:
        st.session_state[PAGE] = (page, None)


def request(page: str, dataset: str, *, link: Place | None, who: str, saved: Worked | None,
            tab_row: Position | None, view_changed: bool = False) -> Request:
    """What this run knows about where ``page`` of ``dataset`` is, for
    :func:`needlework.actions.positions.resolve`: ``link`` (read here only when the page opens),
    ``tab_row`` (:func:`held`, read once per run), ``saved`` (``who``'s latest saved
    work there). Where this person worked also counts this tab's row and, signed in, the
    place they moved to last in any tab."""
    opening_now = opens(page)
    worked: list[Worked] = [] if saved is None else [saved]
    pending = _pending().get((page, dataset))
    for row in (tab_row, positions.latest(get_db(), _who(), page, dataset)):
        if row is not None:
            worked.append(Worked(row.place, row.at))
    if pending is not None:
        worked.append(pending)
    return Request(opening=opening_now, link=link if opening_now else None, tab=tab_row,
                   pending=pending.place if pending is not None else None,
                   worked=tuple(worked), view_changed=view_changed,
                   naming=awaits_name(page, who))


def commit(page: str, dataset: str, resolved: Resolved, tab_row: Position | None) -> int:
    """Carry out what the rules decided: move the tab when they say so, settle the
    opening; returns the tab's ``seq`` as this run draws it (0: not placed yet)."""
    if not resolved.settles:  # the name may still come: nothing placed or settled
        return tab_row.seq if tab_row is not None else 0
    where_ = resolved.place
    if where_ is not None and resolved.moves:
        seq = place(page, dataset, where_.item, i=where_.i, j=where_.j, cursor=where_.cursor)
    else:
        seq = tab_row.seq if tab_row is not None else 0
    settled(page)  # nothing drawn since the link was read: see settled
    return seq
