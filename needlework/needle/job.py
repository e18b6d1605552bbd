"""Scoring a needle dataset in the background: the ``needle`` kind of :mod:`needlework.jobs.runner`.

A needle run scores with :func:`needlework.needle.run.run_needles` rather than the plain
dataset scorer: shared-prefix reuse and its measured statistics. The runner runs it in
a thread with its own connection; a cancel stops it between records and keeps what was
scored (the partial summary is the cancelled job's result, its scores are cached).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlite_utils import Database

from needlework.jobs.kinds import Cancelled, Job, Progress, ShouldStop, register
from needlework.jobs.runner import RUNNER
from needlework.needle.run import REUSE_MODES, NeedleRun, run_needles
from needlework.rewards import errors
from needlework.rewards.job import job_model
from needlework.rewards.loading import RewardModel
from needlework.rewards.pipeline import RewardPipeline
from needlework.rewards.registry import ModelKey
from needlework.teams.permissions import User
from store.datasets import iter_items

KIND = "needle"
TOO_LONG_KEPT = 50  # too-long records listed in the job's result


def summary(result: NeedleRun, pipe: RewardPipeline, records: int) -> dict[str, Any]:
    """What the page shows after a run (JSON-ready)."""
    return {"records": records, "scored_records": len(result.frame), "cancelled": result.cancelled,
            "stats": result.stats.as_dict(), "lines": result.stats.lines(),
            "too_long": result.too_long[:TOO_LONG_KEPT], "too_long_count": len(result.too_long),
            "fingerprint": pipe.fingerprint, "variant": pipe.run_variant(),
            "model": pipe.rm.facts.name}


def needle_job(job: Job, db: Database, progress: Progress, should_stop: ShouldStop) -> dict[str, Any]:
    """The ``needle`` kind: every record of the job's needle dataset, two texts each
    (progress counts texts). Raises :class:`~needlework.jobs.kinds.Cancelled` with the partial
    summary when stopped."""
    records = [item["record"] for item in iter_items(db, job.dataset)]
    progress.begin(2 * len(records))
    pipe = RewardPipeline(job_model(job), db=db, truncation=job.options.get("truncation", "skip"))
    result = run_needles(pipe, records, reuse_prefix=job.options.get("reuse", "auto"),
                         progress=progress.scaled(2), should_stop=should_stop, dataset=job.dataset)
    done = summary(result, pipe, len(records))
    if result.cancelled:
        raise Cancelled("cancelled", partial=done)
    return done


register(KIND, needle_job, unit="texts", errors=(errors.RewardModelError,))


def start_needle_job(db: Database, db_path: str | Path, key: ModelKey, rm: RewardModel, dataset: str,
                     reuse: str = "auto", *, by: User | str | None = None) -> int:
    """Queue a needle run of ``dataset`` with the loaded ``rm`` (loaded as ``key``) and start
    it; returns its id. Interrupted needle jobs of the dataset are recorded as such first
    (their scores are cached, so this run resumes them)."""
    if reuse not in REUSE_MODES:
        raise ValueError(f"reuse must be one of {', '.join(REUSE_MODES)}")
    job_id = RUNNER.submit(db, KIND, dataset, rm.facts.name,
                           {"reuse": reuse, "dtype": key.dtype, "device": key.device,
                            "attn_implementation": key.attn_implementation,
                            "trust_remote_code": key.trust_remote_code, "truncation": "skip"},
                           by=by)
    RUNNER.start(db_path, job_id, inputs={"reward_model": rm})
    return job_id


def latest_needle_job(db: Database, dataset: str) -> dict[str, Any] | None:
    """The newest needle job of ``dataset`` (``display_status`` added), or ``None``."""
    return RUNNER.latest(db, KIND, dataset)
