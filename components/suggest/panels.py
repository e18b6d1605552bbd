"""The Suggestions page's panels. Each draws one thing and calls one write service of
:mod:`needlework.suggest` or :mod:`needlework.suggest.data`; the job itself runs in the
server's job runner (:mod:`components.jobs` shows its progress and Cancel)."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import streamlit as st
from sqlite_utils import Database

import store
from components.jobs import render_job
from components.state import get_db
from components.text import label, option, render_text
from needlework.formats import FormatError
from needlework.jobs.runner import ACTIVE, INTERRUPTED
from needlework.judges import cost
from needlework.judges.connection import Connection
from needlework.suggest.data import delete_suggestions, import_suggestions
from needlework.suggest.job import (
    DIMS,
    LABELS,
    SuggestError,
    SuggestSpec,
    latest_suggest_job,
    start_suggest_job,
)
from needlework.suggest.verdicts import suggest_verdicts
from needlework.teams.permissions import PermissionDenied, User
from needlework.words import plural
from store.datasets import dataset_version
from store.judges import count_calls
from store.review import scored_runs
from store.suggestions import suggestion_sources

NOTE = ("Runs on the server: you can use other pages and come back. Each page of 64 questions "
        "is stored as it is done and every judge answer is cached: Cancel keeps them, and "
        "running again resumes without asking twice.")


def render_sources(db: Database, dataset: str, actor: User | None) -> None:
    """The dataset's suggestion sources, with Delete for one of them."""
    rows = suggestion_sources(db, dataset)
    if not rows:
        st.caption("No suggestions for this dataset yet.")
        return
    st.dataframe(pd.DataFrame([{"source": r["source"], "suggestions": r["suggestions"],
                                "items": r["items"], "last (UTC)": r["last"][:19].replace("T", " ")}
                               for r in rows]), hide_index=True, width="stretch")
    cols = st.columns([3, 1], vertical_alignment="bottom")
    source = cols[0].selectbox("Source", [r["source"] for r in rows], key="sg_delete_source",
                               format_func=lambda s: option(s, 80))
    if cols[1].button("Delete its suggestions", key="sg_delete", icon=":material/delete:"):
        try:
            gone = delete_suggestions(db, dataset, source, actor=actor)
        except PermissionDenied as exc:
            st.error(label(str(exc), 300))
        else:
            st.toast(f"Deleted {gone} suggestion(s) of {label(source, 60)}")
            st.rerun()


def _outcome(job: dict[str, Any]) -> None:
    status, result = job["display_status"], job.get("result") or {}
    if status == "done":
        st.success(f"{result.get('suggestions', 0):,} suggestion(s) from "
                   f"{label(str(result.get('source', '')), 60)} for {result.get('questions', 0):,} "
                   f"question(s); {result.get('skipped', 0):,} skipped (suggested before); "
                   f"judge calls: {result.get('sent', 0):,} sent, {result.get('cached', 0):,} from "
                   f"the cache; {result.get('invalid', 0):,} answer(s) unreadable.", icon="✅")
        price = cost.price_described((job.get("options") or {}).get("judge"))
        st.caption(f"💰 {label(cost.actual_of_calls(result, price).words(), 400)}")
        if result.get("failures"):
            st.warning("Failed requests, not answers (nothing stored for them; a new run asks "
                       "again):", icon="⚠️")
            render_text(str(result["failures"]), mono=True, key="sg-failures")
        if result.get("example_invalid"):
            st.caption("An unreadable answer, for example:")
            render_text(str(result["example_invalid"]), mono=True, key="sg-invalid")
    elif status == "cancelled":
        st.warning(f"Cancelled after {job['done']:,} of {job['total']:,} questions. What was "
                   "stored stays; run again to resume.", icon="⏹️")
    elif status == INTERRUPTED:
        st.warning(f"Job {job['id']} was interrupted: the server stopped while it ran. What was "
                   "stored stays; run again to resume.", icon="⚠️")
    elif status == "failed":
        st.error("Asking the judge failed (what was stored stays):", icon="🚫")
        render_text(job.get("error") or "unknown error", mono=True, key="sg-job-error")


@st.cache_data(max_entries=32, show_spinner="Counting the job's tokens …")
def _estimate(db_path: str, dataset: str, version: str, fields: tuple[str, ...], replace: bool,
              judge: str, cached: int, suggested: int, _connection: Connection) -> cost.Estimate:
    """The estimate of a suggestion job (cached by what changes it, in any server process:
    the database, the dataset and its version, the fields, the judge's description, the
    number of cached answers and of the dataset's suggestions)."""
    db = get_db()
    return cost.estimate(db, _connection, cost.suggest_requests(
        db, SuggestSpec(dataset, _connection, fields, replace=replace)))


def render_ask(db: Database, dataset: str, connection: Connection | None, actor: User | None
               ) -> None:
    """Ask a judge for the passage labels and dimensions of a grounding dataset."""
    job = latest_suggest_job(db, dataset)
    active = job is not None and job["display_status"] in ACTIVE
    cols = st.columns(3)
    labels = cols[0].checkbox("Passage labels", value=True, key="sg_labels",
                              help="One prompt per passage: the question, its date, the passage "
                                   "and its date, and GaRAGe's five label definitions.")
    dims = cols[1].checkbox("Question dimensions", value=False, key="sg_dims",
                            help="One prompt per question for the six dimensions with fixed values.")
    replace = cols[2].checkbox("Ask again where suggested", value=False, key="sg_replace",
                               help="Otherwise questions this source has suggested for are skipped.")
    fields = tuple(f for f, on in ((LABELS, labels), (DIMS, dims)) if on)
    blocked = (connection is None and "complete the judge connection above") or (
        not fields and "tick labels, dimensions or both")
    if connection is not None and fields and not active:
        estimate = _estimate(str(store.default_path()), dataset, dataset_version(db, dataset),
                             fields, replace,
                             json.dumps(connection.describe(), sort_keys=True), count_calls(db),
                             sum(r["suggestions"] for r in suggestion_sources(db, dataset)),
                             connection)
        st.caption(f"💰 Before asking: {label(estimate.words(), 600)}")
    if st.button("Ask the judge", type="primary", key="sg_ask", icon="▶️",
                 disabled=bool(active or blocked)) and connection is not None:  # else disabled
        try:
            start_suggest_job(db, store.default_path(), SuggestSpec(dataset, connection, fields,
                                                                    replace=replace), by=actor)
        except (SuggestError, PermissionDenied) as exc:
            st.error(label(str(exc), 300))
        else:
            st.rerun()
    if blocked and not active:
        st.caption(f"To ask: {label(str(blocked), 200)}.")
    render_job(job, _outcome, verb="Asking for suggestions on",
               starting="Starting: reading the dataset and the judge cache …", note=NOTE)


def render_from_scores(db: Database, dataset: str, actor: User | None) -> None:
    """Suggested verdicts from a reward model's margins or a judge run of this dataset."""
    runs = scored_runs(db, dataset)
    if not runs:
        st.caption("Nothing has scored this dataset yet: score it on the Reward model page (or "
                   "run a judge on it), then come back.")
        return
    names = {r["fingerprint"] + "\x00" + r["variant"]: r for r in runs}
    picked = st.selectbox("Scoring run", list(names), key="sg_run",
                          format_func=lambda k: option(f"{names[k]['model']} ({names[k]['variant']}),"
                                                      f" {plural(names[k]['items'], 'item')}", 120))
    if st.button("Suggest verdicts from its margins", key="sg_from_scores", icon="⚖️"):
        run = names[picked]
        try:
            done = suggest_verdicts(db, dataset, run["fingerprint"], run["variant"], by=actor)
        except (ValueError, PermissionDenied) as exc:
            st.error(label(str(exc), 300))
        else:
            st.toast(f"{done['suggestions']} verdict suggestion(s) from {label(done['source'], 60)}")
            st.rerun()


def render_import(db: Database, dataset: str, actor: User | None) -> None:
    """Import a suggestions file (ours, Label Studio's predictions, Argilla's suggestions)."""
    up = st.file_uploader("Suggestions file (JSON lines)", type=["jsonl", "json", "ndjson"],
                          key="sg_file")
    if up is not None and st.button("Import", key="sg_import", icon=":material/upload:"):
        try:
            done = import_suggestions(db, up.getvalue(), up.name, dataset,
                                      actor.name if actor else "local", actor=actor)
        except FormatError as exc:
            st.error(f"Nothing imported: {exc.total} problem(s).")
            render_text("\n".join(str(p) for p in exc.problems), mono=True, key="sg-problems")
        except (ValueError, PermissionDenied) as exc:
            st.error(label(str(exc), 300))
        else:
            st.toast(f"Imported {done.suggestions} suggestion(s) for {done.items} item(s)")
            st.rerun()
