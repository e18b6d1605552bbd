"""Saved needle reports on the lab: save what is shown under a name, list the saved ones,
reopen one exactly (its dataset, result sets, slide title and finding), rename or delete it.

The logic (what a report holds, how its sets are found again) is
:mod:`needlework.needle.reports`; the rows are :mod:`store.needle_reports`.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import Any

import streamlit as st

from components.callbacks import uninterrupted
from components.needle.charts import NONE
from components.needle.data import COMPARE, PRIMARY, UPLOADS, ResultSet, all_sets
from components.state import DATASET_KEY, annotator, get_db
from components.text import label
from needlework.needle.analysis import read_results_csv, results_csv
from needlework.needle.reports import Report, ReportError, SetRef, clean_name, resolve, set_key
from needlework.needle.slide_meta import (
    slide_finding_of,
    slide_title_of,
    with_slide_finding,
    with_slide_title,
)
from store import needle_reports
from store.datasets import set_dataset_meta

PENDING = "nw_report_open"  # the id of the report to open on this run
OPENED = "nw_report_opened"  # what the last opened report showed, and what it missed
MESSAGE = "nw_report_msg"  # (kind, text) after a rename or delete (shown in the list)
SAVED = "nw_report_saved"  # (kind, text) after a save (shown under the save form)
NAME = "nw_report_name"


def set_ref(s: ResultSet) -> SetRef:
    """The reference a report keeps for a result set on the page."""
    if s.kind == "judge":
        return SetRef("judge", s.name, run_key=s.run_key)
    if s.fingerprint:
        return SetRef("model", s.name, fingerprint=s.fingerprint, variant=s.variant)
    return SetRef("uploaded", s.name, results_csv=results_csv(s.frame))


def _key(s: ResultSet) -> str:
    ref = set_ref(s) if s.kind == "judge" or s.fingerprint else SetRef("uploaded", s.name)
    return set_key(ref.kind, name=ref.name, fingerprint=ref.fingerprint, variant=ref.variant,
                   run_key=ref.run_key)


def _say(kind: str, text: str, key: str = MESSAGE) -> None:
    st.session_state[key] = (kind, text)


@uninterrupted
def _save(dataset: str, chosen: list[ResultSet], title: str,
          finding: tuple[str, bool] = ("", False)) -> None:
    """Button callback: save the sets shown, the title and the slide's finding (the
    presenter's words or empty, and whether hidden) as a report named in the field."""
    by = annotator()
    try:
        name = clean_name(st.session_state.get(NAME) or "")
        spec = Report(dataset, tuple(set_ref(s) for s in chosen), title, finding[0],
                      finding[1]).to_json()
        needle_reports.save_report(get_db(), dataset, name, spec, by)
    except (ReportError, needle_reports.ReportExists) as exc:
        _say("error", f"Not saved: {exc}.", SAVED)
        return
    st.session_state[NAME] = ""
    _say("success", f"Saved report '{name}' by {by}: it reopens with these result sets, "
         "title and finding from Saved reports at the top of the page.", SAVED)


def render_save_report(row: dict[str, Any] | None, chosen: list[ResultSet], title: str,
                       finding: tuple[str, bool] = ("", False)) -> None:
    """Step 4's *Save as a report*: a name and a button (the annotator's name is needed);
    the report keeps the sets shown, the slide's ``title`` and its ``finding`` (words, hidden)."""
    if row is None or not chosen:
        return
    cols = st.columns([3, 2], vertical_alignment="bottom")
    cols[0].text_input("Report name", key=NAME, max_chars=100, placeholder="e.g. demo model vs judge",
                       help="Saves the needle dataset, the result sets shown (Results of, Compare "
                            "with), the slide title and the slide's finding under this name, with "
                            "your name and the time.")
    who = annotator()
    cols[1].button("Save as a report", key="nw_report_save", icon="💾", width="stretch",
                   disabled=not who, on_click=_save, args=(row["name"], chosen, title, finding),
                   help=None if who else "Enter your name in the sidebar to save.")
    if not who:
        st.caption("✍️ Enter your name in the sidebar to save a report.")
    _render_message(SAVED)


def _render_message(key: str = MESSAGE) -> None:
    said = st.session_state.pop(key, None)
    if said:
        kind, text = said
        (st.success if kind == "success" else st.error)(label(text, 400),
                                                        icon="✅" if kind == "success" else "🚫")


@uninterrupted
def _open(report_id: int) -> None:
    """Button callback: select the report's dataset; the page applies the rest."""
    row = needle_reports.get_report(get_db(), report_id)
    if row is None:
        _say("error", "That report was deleted.")
        return
    st.session_state[DATASET_KEY] = row["dataset"]
    st.session_state[PENDING] = report_id


@uninterrupted
def _rename(report_id: int, key: str) -> None:
    try:
        name = clean_name(st.session_state.get(key) or "")
        needle_reports.rename_report(get_db(), report_id, name, annotator() or "unknown")
    except (ReportError, needle_reports.ReportExists, KeyError) as exc:
        _say("error", f"Not renamed: {exc}.")
        return
    _say("success", f"Renamed to '{name}'.")


@uninterrupted
def _delete(report_id: int, name: str) -> None:
    needle_reports.delete_report(get_db(), report_id)
    _say("success", f"Deleted report '{name}' (the scores it showed are kept).")


def render_report_list(db: Any) -> None:
    """Every saved report (newest change first): open, rename, delete. A report of a deleted
    needle dataset says so and cannot open."""
    rows = needle_reports.list_reports(db)
    if not rows:
        _render_message()  # e.g. the last one was deleted
        return
    with st.expander(f"Saved reports ({len(rows)})", icon="📑",
                     expanded=PENDING in st.session_state or MESSAGE in st.session_state):
        _render_message()
        for r in rows:
            cols = st.columns([5, 1.3, 1.3, 1.3], vertical_alignment="center")
            when = str(r["updated_at"])[:16].replace("T", " ")
            cols[0].markdown(f"**{label(r['name'], 100)}** · {label(r['dataset'], 60)}")
            cols[0].caption(f"saved by {label(r['created_by'], 40)}"
                            + (f", last changed by {label(r['updated_by'], 40)}"
                               if r["updated_by"] != r["created_by"] else "") + f" · {when} UTC"
                            + ("" if r["dataset_exists"] else
                               " · its needle dataset was deleted: nothing to open"))
            cols[1].button("Open", key=f"nw_report_open_{r['id']}", icon="📂", width="stretch",
                           disabled=not r["dataset_exists"], on_click=_open, args=(r["id"],))
            with cols[2].popover("Rename", width="stretch"):
                key = f"nw_report_rename_{r['id']}"
                st.text_input("New name", key=key, value=r["name"], max_chars=100)
                st.button("Rename", key=f"{key}_go", on_click=_rename, args=(r["id"], key))
            with cols[3].popover("Delete", width="stretch"):
                st.caption(f"Delete the report {label(r['name'], 80)}? Its result sets stay.")
                st.button("Delete report", key=f"nw_report_del_{r['id']}", type="primary",
                          on_click=_delete, args=(r["id"], r["name"]))


def _add_uploads(report: Report) -> None:
    """Put the report's uploaded result sets back into this session's uploads."""
    uploads = dict(st.session_state.get(UPLOADS) or {})
    for ref in report.sets:
        if ref.kind == "uploaded" and ref.name not in uploads:
            # read_results_csv's annotation says str | Path; pd.read_csv reads a buffer too
            frame = read_results_csv(io.StringIO(ref.results_csv or ""))  # type: ignore[arg-type]
            frame["model"] = ref.name
            uploads[ref.name] = ResultSet(ref.name, frame, "kept in a saved report")
    st.session_state[UPLOADS] = uploads


def open_pending_report(db: Any, row: dict[str, Any] | None, records: list[dict[str, Any]],
                        sets: list[ResultSet]) -> list[ResultSet]:
    """Apply a report opened on the previous click (before the pickers are drawn): its
    uploaded sets, the pickers, the slide title and finding (saved as the needle dataset's). Returns the page's result sets (with the
    report's uploads). Says which of its sets are gone, if any."""
    report_id = st.session_state.pop(PENDING, None)
    if report_id is not None:
        stored = needle_reports.get_report(db, report_id)
        if stored is None or row is None or stored["dataset"] != row["name"]:
            _say("error", "That report could not be opened: it or its needle dataset is gone.")
            return sets
        try:
            report = Report.from_json(stored["spec"])
        except ReportError as exc:
            _say("error", f"That report could not be read: {exc}.")
            return sets
        _add_uploads(report)
        sets = all_sets(db, row, records)
        found = resolve(report, {_key(s): s for s in sets})
        if found.found:
            st.session_state[PRIMARY] = found.found[0].name
            st.session_state[COMPARE] = found.found[1].name if len(found.found) > 1 else NONE
            if report.title.strip() != slide_title_of(row.get("meta")):
                # the report's slide title becomes the dataset's (who and when kept);
                # ``row`` is this run's copy: it shows the saved title from here on
                now = datetime.now(UTC).isoformat(timespec="seconds")
                row["meta"] = with_slide_title(row.get("meta"), report.title,
                                               annotator() or "unknown", now)
                set_dataset_meta(db, row["name"], row["meta"])
            if (report.finding.strip(), report.finding_hidden) != slide_finding_of(row.get("meta")):
                now = datetime.now(UTC).isoformat(timespec="seconds")
                row["meta"] = with_slide_finding(row.get("meta"), report.finding,
                                                 report.finding_hidden, annotator() or "unknown",
                                                 now)
                set_dataset_meta(db, row["name"], row["meta"])
        st.session_state[OPENED] = {"name": stored["name"], "by": stored["created_by"],
                                    "dataset": row["name"], "missing": found.missing_line(),
                                    "shows": [s.name for s in found.found]}
    return sets


def render_opened_note(row: dict[str, Any] | None) -> None:
    """Under the pickers: which report is shown (while its sets are), and what of it is gone."""
    opened = st.session_state.get(OPENED)
    if not opened or row is None or opened["dataset"] != row["name"]:
        return
    shown = [st.session_state.get(PRIMARY), st.session_state.get(COMPARE)]
    shown = [n for n in shown if n and n != NONE]
    if opened["shows"] and shown != opened["shows"]:
        return  # the pickers were changed since: no longer the report
    if opened["shows"]:
        st.caption(f"📑 Report {label(opened['name'], 100)} (saved by {label(opened['by'], 40)}).")
    if opened["missing"]:
        st.warning(f"Report {label(opened['name'], 100)}: {label(opened['missing'], 600)}", icon="🗑️")
    if not opened["shows"]:
        st.session_state.pop(OPENED, None)  # said once: nothing of it is on the page

