"""The Audit page's widgets (admins): who changed what in a dataset, and the history as a
file (:func:`needlework.teams.audit.export_history`, written when the button is clicked,
in the thread that serves the download, with that thread's connection)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from components.state import get_db, signed_in
from components.text import label
from needlework.teams.audit import AuditError, export_events, export_history
from needlework.teams.permissions import PermissionDenied


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
    st.markdown(f"**{changes:,}** change(s) in {label(dataset, 80)}, by "
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
                        format_func=lambda n: f"{n} · {about[n]['changes']:,} "
                        f"change(s) · deleted {about[n]['deleted_at'][:16].replace('T', ' ')} UTC")
    fmt = st.radio("Format", ("csv", "jsonl"), key="nw-audit-deleted-format", horizontal=True)
    st.download_button(f"Download the kept history of {label(name, 60)}",
                       data=lambda: history_file(name, fmt, deleted=True),
                       file_name=f"{name}-deleted-history.{fmt}",
                       mime="text/csv" if fmt == "csv" else "application/jsonl",
                       key="nw-audit-deleted-go", icon=":material/download:")


def events_file(fmt: str) -> bytes:
    """Every audit event as CSV or JSONL bytes (admins; a refusal is the file's one line)."""
    with tempfile.TemporaryDirectory(prefix="nw-audit-") as folder:
        path = Path(folder) / f"events.{fmt}"
        try:
            export_events(get_db(), path, format=fmt, actor=signed_in())
        except (AuditError, PermissionDenied) as e:
            return f"export failed: {e}\n".encode()
        return path.read_bytes()


def render_events(events: list[dict[str, Any]]) -> None:
    """The latest audit events (accounts, sign-ins, assignments, settings) as a table of
    text, and a download of all of them."""
    if not events:
        st.caption("No events yet.")
    else:
        st.dataframe(pd.DataFrame([{
            "when": e["at"][:19].replace("T", " "), "who": e["by"], "what": e["action"],
            "target": e["target"], "dataset": e["about_dataset"] or "",
            "before": e["before"] or "", "after": e["after"] or ""} for e in events]),
            hide_index=True, width="stretch", key="nw-audit-events")
    fmt = st.radio("Format of the events file", ("csv", "jsonl"), key="nw-audit-events-format",
                   horizontal=True, help="Columns: id, at, by, action, target, about_dataset, "
                   "before, after (JSON); oldest first.")
    st.download_button("Download every audit event", data=lambda: events_file(fmt),
                       file_name=f"needlework-audit-events.{fmt}",
                       mime="text/csv" if fmt == "csv" else "application/jsonl",
                       key="nw-audit-events-go", icon=":material/download:")
