"""The Audit page's widgets (admins): the audit events filtered by action, person, dataset
and dates, a page at a time, newest first; who changed what in a dataset; and either as a
file (:func:`needlework.teams.audit.export_events`, :func:`~needlework.teams.audit.
export_history`, written when the button is clicked, in the thread that serves the
download, with that thread's connection; the events file holds what the filters admit)."""

from __future__ import annotations

import tempfile
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from components.callbacks import uninterrupted
from components.state import get_db, signed_in
from components.text import label, option
from needlework.teams.audit import (
    PER_PAGE,
    SIGN_INS,
    AuditError,
    EventPage,
    event_filter,
    export_events,
    export_history,
)
from needlework.teams.permissions import PermissionDenied
from needlework.words import plural
from store.audit import EventFilter

PAGE = "nw-audit-page"  # the events page shown (1-based); back to 1 when a filter changes
EVERYONE, EVERY_DATASET = "(everyone)", "(every dataset)"
DATE_HELP = ("A day, YYYY-MM-DD (or a moment, YYYY-MM-DDTHH:MM), in UTC; Enter or Tab "
             "applies it. Empty: no bound.")


def history_file(dataset: str, fmt: str, deleted: bool = False) -> bytes:
    """The history of ``dataset`` (``deleted``: the one its deleted namesakes left) as CSV
    or JSONL bytes (the signed-in user must be an admin: a refusal becomes the file's one
    line, nothing else can be shown then)."""
    with tempfile.TemporaryDirectory(prefix="nw-audit-") as folder:
        path = Path(folder) / f"history.{fmt}"
        try:
            export_history(get_db(), dataset, path, format=fmt, deleted=deleted,
                           actor=signed_in())
        except (AuditError, PermissionDenied) as e:
            return f"export failed: {e}\n".encode()
        return path.read_bytes()


def render_audit(dataset: str, changes: int, authors: list[str]) -> None:
    """What the history holds and a download of it."""
    st.markdown(f"**{changes:,}** {'change' if changes == 1 else 'changes'} in "
                f"{label(dataset, 80)}, by "
                + (label(", ".join(authors), 400) if authors else "nobody yet"))
    fmt = st.radio("Format", ("csv", "jsonl"), key="nw-audit-format", horizontal=True,
                   help="Columns: id, dataset, item_key, annotator, field, old_value, "
                   "new_value, at, by, action, undoes; oldest first. In CSV the values are "
                   "their JSON text.")
    st.download_button(f"Download the history of {label(dataset, 60)}",
                       data=lambda: history_file(dataset, fmt),
                       file_name=f"{dataset}-history.{fmt}",
                       mime="text/csv" if fmt == "csv" else "application/jsonl",
                       key="nw-audit-go", icon=":material/download:", type="primary")
    st.caption("Values are data: open a CSV export in a spreadsheet with care (a value that "
               "starts with = may be read as a formula).")


def render_deleted(deleted: list[dict[str, Any]]) -> None:
    """The deleted (or replaced) datasets whose change history is kept, and a download of
    one's."""
    if not deleted:
        st.caption("No dataset with annotations has been deleted or replaced.")
        return
    names = [d["name"] for d in deleted]
    about = {d["name"]: d for d in deleted}
    name = st.selectbox("Deleted or replaced dataset", names, key="nw-audit-deleted",
                        # an option is plain text: the name as it is (no Markdown escaping)
                        format_func=lambda n: f"{n} · {plural(about[n]['changes'], 'change')}"
                        f" · deleted {about[n]['deleted_at'][:16].replace('T', ' ')} UTC")
    fmt = st.radio("Format", ("csv", "jsonl"), key="nw-audit-deleted-format", horizontal=True)
    st.download_button(f"Download the kept history of {label(name, 60)}",
                       data=lambda: history_file(name, fmt, deleted=True),
                       file_name=f"{name}-deleted-history.{fmt}",
                       mime="text/csv" if fmt == "csv" else "application/jsonl",
                       key="nw-audit-deleted-go", icon=":material/download:")


def events_file(fmt: str, filters: EventFilter | None = None) -> bytes:
    """The audit events ``filters`` admits (all without) as CSV or JSONL bytes, oldest
    first (admins; a refusal is the file's one line)."""
    with tempfile.TemporaryDirectory(prefix="nw-audit-") as folder:
        path = Path(folder) / f"events.{fmt}"
        try:
            export_events(get_db(), path, filters=filters, format=fmt, actor=signed_in())
        except (AuditError, PermissionDenied) as e:
            return f"export failed: {e}\n".encode()
        return path.read_bytes()


@uninterrupted
def _first_page() -> None:
    st.session_state[PAGE] = 1


@uninterrupted
def _turn(step: int) -> None:
    st.session_state[PAGE] = max(1, int(st.session_state.get(PAGE, 1)) + step)


def current_page() -> int:
    """The events page asked for (1-based; the logic clamps it to the pages there are)."""
    return int(st.session_state.get(PAGE, 1))


def _typed_date(text: str | None, what: str) -> str | None:
    """A date typed in a filter box (``None``: empty); one that is not a date is said so
    and left out."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        event_filter(since=text)
    except AuditError:
        st.warning(label(f"{what}: {text!r} is not a date: write YYYY-MM-DD (or "
                         "YYYY-MM-DDTHH:MM), in UTC. It is not applied.", 300),
                   icon=":material/date_range:")
        return None
    return text


def render_event_filters(choices: dict[str, list[str]]) -> EventFilter:
    """The filters: actions (none chosen: every one), hide sign-ins, person, dataset, and
    the first and last day (UTC). Each change goes back to the first page.

    The days are text boxes, not date pickers: Streamlit's date field applies a typed
    date only when the focus leaves the whole field (Enter does not), so the events of
    the old dates stayed under the new one; a text box applies it on Enter or Tab, and
    says so while it is being typed."""
    with st.container(key="nw-audit-filters", border=True):
        top = st.columns([3, 1], vertical_alignment="bottom")
        actions = top[0].multiselect("Actions", choices["actions"], key="nw-audit-actions",
                                     format_func=lambda a: option(a, 60),
                                     on_change=_first_page,
                                     placeholder="every action",
                                     help="Only these actions; none chosen: every action.")
        hide = top[1].checkbox("Hide sign-ins", key="nw-audit-hide-sign-ins",
                               on_change=_first_page,
                               help="Leave out sign_in and sign_in.refused.")
        cols = st.columns(4)
        by = cols[0].selectbox("Person", [EVERYONE, *choices["by"]], key="nw-audit-by",
                               format_func=lambda n: option(n, 60), on_change=_first_page,
                               help="Who did it (the signed-in account, or the account a "
                               "command-line verb acted as). Refused sign-ins are by nobody: "
                               "pick them with the actions.")
        dataset = cols[1].selectbox("Dataset", [EVERY_DATASET, *choices["datasets"]],
                                    key="nw-audit-dataset", format_func=lambda n: option(n, 60),
                                    on_change=_first_page)
        since_text = cols[2].text_input("From (UTC)", key="nw-audit-since",
                                        placeholder="YYYY-MM-DD", on_change=_first_page,
                                        help=DATE_HELP)
        until_text = cols[3].text_input("To (UTC, included)", key="nw-audit-until",
                                        placeholder="YYYY-MM-DD", on_change=_first_page,
                                        help=DATE_HELP)
    since = _typed_date(since_text, "From")
    until = _typed_date(until_text, "To")
    try:
        return event_filter(actions=actions, skip=SIGN_INS if hide else (),
                            by=None if by == EVERYONE else by,
                            dataset=None if dataset == EVERY_DATASET else dataset,
                            since=since, until=until)
    except AuditError:
        st.warning("The last day is before the first: every date is shown.",
                   icon=":material/date_range:")
        return event_filter(actions=actions, skip=SIGN_INS if hide else (),
                            by=None if by == EVERYONE else by,
                            dataset=None if dataset == EVERY_DATASET else dataset)


def _span(filters: EventFilter) -> str:
    """The dates the filters hold, as typed: ``from 2026-11-30 to 2026-12-02 (UTC)``."""
    parts = []
    if filters.since:
        parts.append(f"from {filters.since[:16].replace('T', ' ')}")
    if filters.before:
        if len(filters.before) == 10:  # the day after an included last day
            last = date.fromisoformat(filters.before) - timedelta(days=1)
            parts.append(f"to {last.isoformat()}")
        else:
            parts.append(f"before {filters.before[:16].replace('T', ' ')}")
    return " ".join(parts) + " (UTC)" if parts else ""


def render_events(page: EventPage, filters: EventFilter) -> None:
    """One page of the events the filters admit (newest first) as a table of text, the
    page controls with the total, and a download of every event the filters admit."""
    st.session_state[PAGE] = page.page  # clamped by the logic
    first = (page.page - 1) * PER_PAGE + 1
    days = _span(filters)
    st.markdown(f"**{page.total:,}** {'event matches' if page.total == 1 else 'events match'}"
                + (f" {days}" if days else "")
                + (f" · {first:,}–{first + len(page.rows) - 1:,} shown" if page.rows else ""))
    if not page.rows:
        st.caption("No events match.")
    else:
        st.dataframe(pd.DataFrame([{
            "when": e["at"][:19].replace("T", " "), "who": e["by"], "what": e["action"],
            "target": e["target"], "dataset": e["about_dataset"] or "",
            "before": e["before"] or "", "after": e["after"] or ""} for e in page.rows]),
            hide_index=True, width="stretch", key="nw-audit-events")
    with st.container(horizontal=True, vertical_alignment="center", key="nw-audit-pager"):
        st.button("Newer", key="nw-audit-newer", on_click=_turn, args=(-1,),
                  disabled=page.page <= 1, icon=":material/chevron_left:")
        st.button("Older", key="nw-audit-older", on_click=_turn, args=(1,),
                  disabled=page.page >= page.pages, icon=":material/chevron_right:")
        st.caption(f"Page {page.page} of {page.pages} · newest first")
    fmt = st.radio("Format of the events file", ("csv", "jsonl"), key="nw-audit-events-format",
                   horizontal=True, help="Columns: id, at, by, action, target, about_dataset, "
                   "before, after (JSON); oldest first.")
    st.download_button(f"Download the {plural(page.total, 'event')} that match"
                       if page.total != 1 else "Download the 1 event that matches",
                       data=lambda: events_file(fmt, filters),
                       file_name=f"needlework-audit-events.{fmt}",
                       mime="text/csv" if fmt == "csv" else "application/jsonl",
                       key="nw-audit-events-go", icon=":material/download:")
