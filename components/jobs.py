"""A background job on the page: live progress with Cancel while it runs, then its outcome.

Pages only submit, poll and render: the job itself runs in the server's job runner
(:mod:`needlework.jobs.runner`), in a thread with its own database connection, so the page
stays usable and the user can leave and come back. :func:`render_job` polls the job's
row from a fragment that reruns every second while it is active, and reruns the page
once it has finished so that its results appear.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import streamlit as st

from components.callbacks import uninterrupted
from components.state import get_db
from components.text import label
from needlework.jobs.runner import ACTIVE, RUNNER

POLL_SECONDS = 1.0
NOTE = ("Runs on the server: you can use other pages and come back. The longest texts "
        "go first, so the count moves slowly at the start. Scores are cached as each "
        "batch finishes.")
STARTING = "Starting: tokenizing and reading the cache …"


def _elapsed(started_at: str | None) -> str:
    """``running for 1 min 5 s`` since an ISO time (empty when unknown)."""
    if not started_at:
        return "queued"
    seconds = int((datetime.now(UTC) - datetime.fromisoformat(started_at)).total_seconds())
    minutes, seconds = divmod(max(seconds, 0), 60)
    return f"running for {minutes} min {seconds} s" if minutes else f"running for {seconds} s"


@uninterrupted
def _cancel(job_id: int) -> None:
    """The Cancel button's callback (the connection of the run that calls it)."""
    RUNNER.cancel(get_db(), job_id)


def _live(job_id: int, verb: str = "Scoring", starting: str = STARTING, note: str = NOTE) -> None:
    """Progress of a running job; reruns the whole page once it has finished."""
    job = RUNNER.get(get_db(), job_id)
    if job is None or job["display_status"] not in ACTIVE:
        st.rerun()
    total, done = int(job["total"] or 0), int(job["done"] or 0)
    text = (f"{verb} {label(job['dataset'], 60)} with {label(job['model'], 60)}: "
            f"{done:,} of {total:,} {job['unit']}" if total else starting)
    text += f" · {_elapsed(job.get('started_at'))}"
    cols = st.columns([5, 1], vertical_alignment="center")
    cols[0].progress(done / total if total else 0.0, text=text)
    if job["cancel_requested"]:
        cols[1].caption("Cancelling after this batch …")
    else:
        cols[1].button("Cancel", key=f"rw_cancel_{job_id}", icon="⏹️",
                       on_click=_cancel, args=(job_id,))
    st.caption(note)


def render_job(job: dict[str, Any] | None, outcome: Callable[[dict[str, Any]], None], *,
               verb: str = "Scoring", starting: str = STARTING, note: str = NOTE) -> None:
    """A job row from :meth:`needlework.jobs.runner.JobRunner.latest`: live progress while it is
    active, else ``outcome(job)`` (the page's own words for done, cancelled, failed,
    interrupted). ``verb``, ``starting`` and ``note`` are the progress line's words (the
    defaults are the reward model's)."""
    if job is None:
        return
    if job["display_status"] in ACTIVE:
        st.fragment(run_every=POLL_SECONDS)(_live)(int(job["id"]), verb, starting, note)
    else:
        outcome(job)


def watch(job_id: int, seen_key: str) -> None:
    """Remember that this session started (or saw running) job ``job_id``, so that
    :func:`finished_here` puts its result in front once it finishes."""
    st.session_state[seen_key] = int(job_id)


def finished_here(job: dict[str, Any] | None, seen_key: str) -> bool:
    """True once, on the first render after a job this session watched (started, or saw
    running) has finished. A job that finished before this session opened the page is
    not news: a new visitor sees the default result, not whatever ran last."""
    if job is None:
        return False
    if job["display_status"] in ACTIVE:
        watch(job["id"], seen_key)
        return False
    if st.session_state.get(seen_key) == job["id"] and job["display_status"] == "done":
        st.session_state[seen_key] = None
        return True
    return False


def render_judge_job(job: dict[str, Any] | None, outcome: Callable[[dict[str, Any]], None],
                     seen_key: str) -> str | None:
    """A judge job's panel (:func:`render_job`, in the judge's words); returns the run key of
    a judge job this session watched that has just finished, once (:func:`finished_here`),
    so the page can put its run in front."""
    render_job(job, outcome, verb="Judging",
               starting="Starting: planning the prompts and reading the judge cache …",
               note="Runs on the server: you can use other pages and come back. Every answer is "
                    "cached as it arrives; Cancel stops sending requests.")
    if job is not None and finished_here(job, seen_key):
        return (job.get("result") or {}).get("run_key")
    return None
