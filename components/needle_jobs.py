"""Scoring a needle dataset as a background job: an adapter over the reward engine's jobs.

The reward page's jobs (:mod:`needlework.rewards.jobs`) run ``score_dataset``; a
needle run needs :func:`needlework.needle.run.run_needles` instead (shared-prefix
reuse and its measured statistics). This module runs that in a daemon thread with
its own database connection, in the same ``jobs`` table (kind ``needle``), and
registers the thread in :data:`needlework.rewards.session.JOBS`, so the reward
page's progress component (:func:`components.jobs.render_job`) shows it and its
Cancel button stops it between records.

No streamlit import: this is logic. It lives beside the needle page because the
engine has no public way to start a thread of another kind (``JobThreads.start``
always runs ``score_dataset``); see :func:`register_thread`.
"""

from __future__ import annotations

import threading
import traceback
from pathlib import Path
from typing import Any

from needlework.needle.run import REUSE_MODES, run_needles
from needlework.rewards import errors
from needlework.rewards.jobs import ProgressWriter
from needlework.rewards.loading import RewardModel
from needlework.rewards.pipeline import RewardPipeline
from needlework.rewards.session import INTERRUPTED, JOBS, ModelKey, job_status
from store.datasets import iter_items
from store.db import connect
from store.scores import (
    cancel_requested,
    create_job,
    finish_job,
    get_job,
    list_jobs,
    start_job,
)

NEEDLE_JOB = "needle"
TOO_LONG_KEPT = 50  # too-long records listed in the job's result


def register_thread(job_id: int, thread: threading.Thread) -> None:
    """Put a thread into the engine's registry so ``job_status`` sees it alive.

    Adapter: ``JobThreads`` has no public ``register``; this writes its table under its lock.
    """
    with JOBS._lock:  # private: see the docstring
        JOBS._threads[job_id] = thread


def latest_needle_job(db: Any, dataset: str) -> dict[str, Any] | None:
    """The newest needle job of ``dataset`` with ``display_status`` added, or ``None``."""
    for job in list_jobs(db, limit=200):
        if job["dataset"] == dataset and job["kind"] == NEEDLE_JOB:
            job["display_status"] = job_status(job)
            return job
    return None


def _summary(result: Any, pipe: RewardPipeline, records: int) -> dict[str, Any]:
    """What the page shows after the run (JSON-ready)."""
    return {"records": records, "scored_records": len(result.frame), "cancelled": result.cancelled,
            "stats": result.stats.as_dict(), "lines": result.stats.lines(),
            "too_long": result.too_long[:TOO_LONG_KEPT], "too_long_count": len(result.too_long),
            "fingerprint": pipe.fingerprint, "variant": pipe.run_variant(),
            "model": pipe.rm.facts.name}


def run_needle_job(db_path: str | Path, job_id: int, rm: RewardModel) -> dict[str, Any]:
    """Run a queued needle job to its end (safe in a thread); returns the finished job row."""
    db = connect(db_path)
    try:
        job = get_job(db, job_id)
        if job is None:
            raise LookupError(f"no job {job_id}")
        if job["cancel_requested"]:
            finish_job(db, job_id, "cancelled", error="cancelled before it started")
            return get_job(db, job_id) or {}
        try:
            records = [item["record"] for item in iter_items(db, job["dataset"])]
            start_job(db, job_id, 2 * len(records))
            options = job["options"]
            pipe = RewardPipeline(rm, db=db, truncation=options.get("truncation", "skip"))
            result = run_needles(pipe, records, reuse_prefix=options.get("reuse", "auto"),
                                 progress=ProgressWriter(db, job_id, scale=2),
                                 should_stop=lambda: cancel_requested(db, job_id),
                                 dataset=job["dataset"])
            summary = _summary(result, pipe, len(records))
            if result.cancelled:
                finish_job(db, job_id, "cancelled", error="cancelled", result=summary)
            else:
                finish_job(db, job_id, "done", result=summary)
        except errors.RewardModelError as exc:
            finish_job(db, job_id, "failed", error=str(exc))
        except Exception as exc:  # a background thread must record, not raise
            finish_job(db, job_id, "failed",
                       error=traceback.format_exception_only(type(exc), exc)[-1].strip())
        return get_job(db, job_id) or {}
    finally:
        db.conn.close()


def start_needle_job(db: Any, db_path: str | Path, key: ModelKey, rm: RewardModel, dataset: str,
                     reuse: str = "auto") -> int:
    """Queue a needle run of ``dataset`` with the loaded ``rm`` and start its thread.

    Interrupted needle jobs of the dataset are closed first (their scores are cached,
    so this run resumes them).
    """
    if reuse not in REUSE_MODES:
        raise ValueError(f"reuse must be one of {', '.join(REUSE_MODES)}")
    for job in list_jobs(db, limit=200):
        if job["dataset"] == dataset and job["kind"] == NEEDLE_JOB and job_status(job) == INTERRUPTED:
            finish_job(db, int(job["id"]), "failed",
                       error="interrupted: the server stopped while it ran (scores so far are cached)")
    job_id = create_job(db, NEEDLE_JOB, dataset, rm.facts.name,
                        {"reuse": reuse, "dtype": key.dtype, "device": key.device, "truncation": "skip"})
    thread = threading.Thread(target=run_needle_job, args=(db_path, job_id, rm), daemon=True,
                              name=f"needlework-needle-{job_id}")
    register_thread(job_id, thread)
    thread.start()
    return job_id
