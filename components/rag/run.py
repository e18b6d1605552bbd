"""Run an evaluation in the background: what it will send and cost, the Run button, live
progress with Cancel, the outcome with what it spent. The job runs in the server's job
runner (``rag`` kind, :mod:`needlework.rag.job`); the page only submits and polls."""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

import store
from components.jobs import render_job
from components.rag.inputs import Answers
from components.rag.judge import JudgeChoice
from components.state import get_db, signed_in
from components.text import label, render_text
from needlework.jobs.runner import ACTIVE, INTERRUPTED
from needlework.judges import cost
from needlework.rag.job import latest_rag_job, start_rag_job
from needlework.rag.questions import DatasetError
from needlework.rag.run import RagEvalSpec
from store import judges as store_judges
from store.datasets import dataset_version

NOTE = ("Runs on the server: you can use other pages and come back. Every judge answer is "
        "cached as it arrives: Cancel keeps them, and running again resumes without asking "
        "the judge twice.")
STARTING = "Starting: waiting for the judge and reading the cache …"


def _outcome(job: dict[str, Any]) -> None:
    status = job["display_status"]
    result = job.get("result") or {}
    if status == "done" and result:
        calls = result.get("calls") or {}
        questions = result.get("questions") or {}
        judge = result.get("judge")
        st.success(
            f"Evaluated {len(result.get('models') or [])} model(s) on "
            f"{questions.get('evaluated', 0)} of {questions.get('total', 0)} questions"
            + (f"; judge calls: {calls.get('sent', 0)} sent, {calls.get('cached', 0)} from the "
               f"cache, {calls.get('errors', 0)} refused, {calls.get('too_long', 0)} too long"
               if judge else "; no judge: BERGEN metrics and attribution only") + ".", icon="✅")
        if judge:
            spent = cost.actual_of_calls(calls, cost.price_described(judge))
            st.caption(f"💰 {label(spent.words(), 400)}")
    elif status == "cancelled":
        st.warning(f"Cancelled after {job['done']} of {job['total']} judge calls. The answers "
                   "received are cached: run again to resume.", icon="⏹️")
    elif status == INTERRUPTED:
        st.warning(f"Job {job['id']} was interrupted: the server stopped while it ran. The judge "
                   "answers received are cached; run again to resume.", icon="⚠️")
    elif status == "failed":
        st.error("The evaluation failed (judge answers received so far are cached):", icon="🚫")
        render_text(job.get("error") or "unknown error", mono=True, key="rag-job-error")


@st.cache_data(max_entries=32, show_spinner="Counting the evaluation's tokens …")
def _estimate(db_path: str, dataset: str, version: str, answers: tuple[tuple[str, str], ...],
              judge: str, templates: tuple[str, ...], with_related: bool, cached: int,
              _spec: RagEvalSpec) -> cost.Estimate:
    """The estimate of evaluating ``_spec`` (cached by the database, the dataset's version,
    the answer sets' digests, the judge's description, the templates and the number of
    cached answers: what any server process may change)."""
    connection = _spec.connection
    assert connection is not None  # render_estimate asks only with a judge
    return cost.estimate(get_db(), connection, cost.rag_requests(get_db(), _spec))


def render_estimate(db: Any, spec: RagEvalSpec) -> None:
    """Before a run with a judge: its requests, tokens and (with a price) cost."""
    conn = spec.connection
    if conn is None:
        return
    try:
        estimate = _estimate(str(store.default_path()), spec.dataset,
                             dataset_version(db, spec.dataset),
                             tuple((s.model, s.digest()) for s in spec.answer_sets),
                             json.dumps(conn.describe(), sort_keys=True),
                             tuple(t.digest for t in spec.templates), spec.with_related,
                             store_judges.count_calls(db), spec)
    except DatasetError as exc:  # the run itself says so, in one line
        st.caption(f"No estimate: {label(str(exc), 200)}")
        return
    st.caption(f"💰 Before evaluating: {label(estimate.words(), 600)}")


def render_run(dataset: str, answers: Answers, judge: JudgeChoice, with_related: bool
               ) -> dict[str, Any] | None:
    """The Run button and the job panel; returns the latest job of ``dataset``."""
    db = get_db()
    job = latest_rag_job(db, dataset)
    active = job is not None and job["display_status"] in ACTIVE
    blocked = (answers.problems and "fix or remove the files above") \
        or (not answers.sets and "pick or upload answers") or judge.problem
    models = len(answers.sets)
    spec = RagEvalSpec(dataset, tuple(answers.sets), judge.connection, with_related,
                       judge.templates)
    if not (active or blocked):
        render_estimate(db, spec)
    if st.button(f"Evaluate {models} model(s)" if models else "Evaluate", type="primary",
                 key="rag_run_button", icon="▶️", disabled=bool(active or blocked),
                 help="Runs in the background; judge answers already cached are not asked again."):
        start_rag_job(db, store.default_path(), spec, by=signed_in())
        st.rerun()
    if blocked and not active:
        st.caption(f"To evaluate: {label(str(blocked), 200)}.")
    render_job(job, _outcome, verb="Evaluating", starting=STARTING, note=NOTE)
    return job
