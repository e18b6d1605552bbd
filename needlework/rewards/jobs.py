"""Background scoring jobs: queued in the store, run in a thread with its own connection.

The app creates a job with :func:`submit_scoring_job`, starts it with
:func:`start_job_thread` and polls ``store.scores.get_job`` for progress; a cancel
(``store.scores.request_cancel``) stops it before the next batch. Everything scored
before a cancel, a failure or a crash stays in the score cache.
"""

from __future__ import annotations

import threading
import time
import traceback
from pathlib import Path
from typing import Any

from needlework.rewards import errors
from needlework.rewards.loading import RewardModel, load_reward_model
from needlework.rewards.pipeline import DEFAULT_BATCH_TOKENS
from needlework.rewards.runs import score_dataset
from store.db import connect
from store.scores import (
    cancel_requested,
    create_job,
    finish_job,
    get_job,
    start_job,
    update_job_progress,
)

SCORING_OPTIONS = ("dtype", "device", "attn_implementation", "trust_remote_code", "batch_tokens",
                   "max_length", "truncation", "out")


def submit_scoring_job(db: Any, model: str, dataset: str, **options: Any) -> int:
    """Queue a scoring job (options: see :data:`SCORING_OPTIONS`); returns its id."""
    unknown = set(options) - set(SCORING_OPTIONS)
    if unknown:
        raise ValueError(f"unknown scoring options: {', '.join(sorted(unknown))}")
    return create_job(db, "score", dataset, model, options)


class ProgressWriter:
    """A ``progress(done, total)`` callback that writes a job's progress at most every
    ``every`` seconds (and always the last step); ``scale`` converts the caller's units
    (a needle run counts records, its job shows texts: two per record)."""

    def __init__(self, db: Any, job_id: int, every: float = 0.5, scale: int = 1) -> None:
        self.db, self.job_id, self.every, self.scale, self.last = db, job_id, every, scale, 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - self.last >= self.every:
            update_job_progress(self.db, self.job_id, self.scale * done, self.scale * total)
            self.last = now


def run_scoring_job(db_path: str | Path, job_id: int, *,
                    reward_model: RewardModel | None = None) -> dict[str, Any]:
    """Run a queued scoring job to its end; safe to call from a background thread.

    Opens its own connection to ``db_path``. Loads the job's model unless an already
    loaded ``reward_model`` is passed. Returns the job row as finished
    (status ``done``, ``cancelled`` or ``failed``); never raises for scoring errors.
    """
    db = connect(db_path)
    try:
        job = get_job(db, job_id)
        if job is None:
            raise LookupError(f"no job {job_id}")
        if job["cancel_requested"]:
            finish_job(db, job_id, "cancelled", error="cancelled before it started")
            return get_job(db, job_id) or {}
        options = job["options"]
        start_job(db, job_id, 0)
        try:
            rm = reward_model or load_reward_model(
                job["model"], dtype=options.get("dtype", "auto"),
                device=options.get("device", "auto"),
                attn_implementation=options.get("attn_implementation"),
                trust_remote_code=bool(options.get("trust_remote_code", False)))
            summary = score_dataset(
                db, rm, job["dataset"],
                batch_tokens=int(options.get("batch_tokens") or DEFAULT_BATCH_TOKENS),
                max_length=options.get("max_length"),
                truncation=options.get("truncation", "skip"),
                out=options.get("out"),
                progress=ProgressWriter(db, job_id),
                should_stop=lambda: cancel_requested(db, job_id),
            )
            finish_job(db, job_id, "done", result=summary)
        except errors.ScoringCancelled as exc:
            finish_job(db, job_id, "cancelled", error=str(exc))
        except errors.RewardModelError as exc:
            finish_job(db, job_id, "failed", error=str(exc))
        except Exception as exc:  # a background thread must record, not raise
            detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
            finish_job(db, job_id, "failed", error=detail)
        return get_job(db, job_id) or {}
    finally:
        db.conn.close()


def start_job_thread(db_path: str | Path, job_id: int, *,
                     reward_model: RewardModel | None = None) -> threading.Thread:
    """Start :func:`run_scoring_job` in a daemon thread and return the thread."""
    thread = threading.Thread(target=run_scoring_job, args=(db_path, job_id),
                              kwargs={"reward_model": reward_model}, daemon=True,
                              name=f"needlework-job-{job_id}")
    thread.start()
    return thread
