"""Scoring a dataset as a background job: the length check, start, progress, cancel.

The job runs in a server-side thread with its own database connection
(:mod:`needlework.jobs`, kind ``score`` of :mod:`needlework.rewards.job`), so the page stays usable and the user can leave
and come back: the page shows the newest job of the dataset by polling its row in
the ``jobs`` table from a fragment that reruns every second while it is active.
Every batch is written to the score cache as it finishes, so a cancelled or
interrupted run keeps its scores and a new run resumes where it stopped.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pandas as pd
import streamlit as st

import store
from components.state import get_db
from components.text import label
from needlework.jobs import ACTIVE, INTERRUPTED, RUNNER
from needlework.rewards.job import latest_scoring_job, start_scoring
from needlework.rewards.lengths import LengthReport, cached_length_report
from needlework.rewards.loading import RewardModel
from needlework.rewards.registry import ModelKey
from needlework.rewards.runs import load_preferences

TRUNCATION = "rw_truncation"
POLICIES = {
    "skip": "skip them (no score: the item counts as wrong in best-of-n, its pairs are left out of pairwise)",
    "keep-end": "keep the end (cut the start of the text: prompt and template go first)",
    "keep-start": "keep the start (cut the end of the response)",
}
POLL_SECONDS = 1.0


def truncation_policy() -> str:
    """The policy chosen for inputs longer than the window (``skip`` by default)."""
    return st.session_state.get(TRUNCATION) or "skip"


def _length_table(report: LengthReport) -> None:
    rows = [{"item": t.item, "response": t.response, "tokens": t.n_tokens,
             "over the window by": t.n_tokens - (report.window or 0)} for t in report.too_long]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 height=min(36 * (len(rows) + 1) + 4, 260), key="rw_long_table")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def render_length_check(rm: RewardModel, row: dict[str, Any]) -> str:
    """Report the inputs longer than the model's window and ask what to do; returns the policy."""
    db = get_db()
    with st.spinner("Counting tokens …"):
        report = cached_length_report(rm, row, lambda: load_preferences(db, row["name"])[1])
    window = f"{report.window:,}" if report.window else "unknown"
    if not report.too_long:
        st.caption(f"All {report.texts:,} responses fit in the model's window of {window} tokens "
                   f"(longest: {report.longest:,} tokens with prompt and template).")
        return truncation_policy()
    st.warning(
        f"{len(report.too_long)} of {report.texts:,} responses, in {_plural(report.items, 'item')}, "
        "are longer "
        f"than the model's window of {window} tokens (longest: {report.longest:,}). Nothing is "
        "cut silently: choose what to do with them. Cutting a text can remove the part that "
        "decides its reward.", icon="📏")
    _length_table(report)
    st.radio("Inputs longer than the window", list(POLICIES), key=TRUNCATION, horizontal=True,
             format_func=lambda p: f"{p}: {POLICIES[p]}")
    return truncation_policy()


def _summary(result: dict[str, Any]) -> str:
    cut = result.get("too_long", 0)
    return (f"Scored {result['items']} items in {result['seconds']} s: {result['unique_texts']} "
            f"texts, {result['scored']} scored now, {result['cache_hits']} from the cache"
            + (f", {cut} longer than the window ({result['truncation']})" if cut else "") + ".")


def _finished(job: dict[str, Any]) -> None:
    status = job["display_status"]
    model = label(job["model"], 100)
    if status == "done" and job.get("result"):
        st.success(f"{_summary(job['result'])} Model: {model}.", icon="✅")
    elif status == "cancelled":
        st.warning(f"Cancelled after {job['done']} of {job['total']} texts. The scores computed so "
                   "far are cached: scoring again skips them.", icon="⏹️")
    elif status == INTERRUPTED:
        st.warning(f"Job {job['id']} ({job['done']} of {job['total']} texts) was interrupted: "
                   "the server stopped while it ran. Its scores so far are cached; score again "
                   "to resume.", icon="⚠️")
    elif status == "failed":
        st.error(f"Scoring failed: {label(job.get('error') or 'unknown error', 1500)}", icon="🚫")


def _elapsed(started_at: str | None) -> str:
    """``running for 1 min 5 s`` since an ISO time (empty when unknown)."""
    if not started_at:
        return "queued"
    seconds = int((datetime.now(UTC) - datetime.fromisoformat(started_at)).total_seconds())
    minutes, seconds = divmod(max(seconds, 0), 60)
    return f"running for {minutes} min {seconds} s" if minutes else f"running for {seconds} s"


def _cancel(job_id: int) -> None:
    """The Cancel button's callback (the connection of the run that calls it)."""
    RUNNER.cancel(get_db(), job_id)


def _live(job_id: int) -> None:
    """Progress of a running job; reruns the whole page once it has finished."""
    job = RUNNER.get(get_db(), job_id)
    if job is None or job["display_status"] not in ACTIVE:
        st.rerun()
    total, done = int(job["total"] or 0), int(job["done"] or 0)
    text = (f"Scoring {label(job['dataset'], 60)} with {label(job['model'], 60)}: "
            f"{done:,} of {total:,} {job['unit']}" if total
            else "Starting: tokenizing and reading the cache …")
    text += f" · {_elapsed(job.get('started_at'))}"
    cols = st.columns([5, 1], vertical_alignment="center")
    cols[0].progress(done / total if total else 0.0, text=text)
    if job["cancel_requested"]:
        cols[1].caption("Cancelling after this batch …")
    else:
        cols[1].button("Cancel", key=f"rw_cancel_{job_id}", icon="⏹️",
                       on_click=_cancel, args=(job_id,))
    st.caption("Runs on the server: you can use other pages and come back. The longest texts "
               "go first, so the count moves slowly at the start. Scores are cached as each "
               "batch finishes.")


def render_job(job: dict[str, Any] | None) -> None:
    """The newest job of the dataset: live progress while active, else its outcome."""
    if job is None:
        return
    if job["display_status"] in ACTIVE:
        st.fragment(run_every=POLL_SECONDS)(_live)(int(job["id"]))
    else:
        _finished(job)


def render_scoring(current: tuple[ModelKey, RewardModel] | None, row: dict[str, Any]) -> bool:
    """Length check, Score button and the job panel; True while a job is active."""
    db = get_db()
    job = latest_scoring_job(db, row["name"])
    active = job is not None and job["display_status"] in ACTIVE
    if current is None:
        st.caption("Load a model above to score this dataset.")
    else:
        key, rm = current
        policy = render_length_check(rm, row)
        if st.button(f"Score {row['name']} ({row['items']} items)", type="primary",
                     key="rw_score", disabled=active, icon="▶️",
                     help="Runs in the background; texts already in the score cache are not "
                          "scored again."):
            start_scoring(db, store.default_path(), key, rm, row["name"], policy)
            st.rerun()
    render_job(job)
    return active
