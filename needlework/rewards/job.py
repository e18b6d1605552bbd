"""Scoring a dataset in the background: the ``score`` kind of :mod:`needlework.jobs.runner`.

The page submits a job (:func:`start_scoring`) and polls its row
(:meth:`needlework.jobs.runner.JobRunner.latest`); the runner runs :func:`score_job` in a
thread with its own connection. A cancel stops it before the next batch; everything
scored before a cancel, a failure or a crash stays in the score cache, so a new run
resumes where the last one stopped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlite_utils import Database

from needlework.jobs.kinds import Job, Progress, ShouldStop, register
from needlework.jobs.runner import RUNNER, JobHandle
from needlework.rewards import errors
from needlework.rewards.loading import RewardModel, load_reward_model
from needlework.rewards.pipeline import DEFAULT_BATCH_TOKENS
from needlework.rewards.registry import ModelKey
from needlework.rewards.runs import score_dataset
from needlework.teams.permissions import User

KIND = "score"
SCORING_OPTIONS = ("dtype", "device", "attn_implementation", "trust_remote_code", "batch_tokens",
                   "max_length", "truncation", "out")


def job_model(job: Job) -> RewardModel:
    """The model a job runs: the loaded one handed to it (``inputs["reward_model"]``), else
    the job's model loaded with its options (the job keeps it to itself)."""
    given = job.inputs.get("reward_model")
    if given is not None:
        return given
    options = job.options
    return load_reward_model(job.model, dtype=options.get("dtype", "auto"),
                             device=options.get("device", "auto"),
                             attn_implementation=options.get("attn_implementation"),
                             trust_remote_code=bool(options.get("trust_remote_code", False)))


def score_job(job: Job, db: Database, progress: Progress, should_stop: ShouldStop) -> dict[str, Any]:
    """The ``score`` kind: :func:`needlework.rewards.runs.score_dataset` on the job's
    dataset; progress counts texts. Returns the run's summary."""
    options = job.options
    return score_dataset(
        db, job_model(job), job.dataset,
        batch_tokens=int(options.get("batch_tokens") or DEFAULT_BATCH_TOKENS),
        max_length=options.get("max_length"),
        truncation=options.get("truncation", "skip"),
        out=options.get("out"),
        progress=progress,
        should_stop=should_stop,
    )


register(KIND, score_job, unit="texts", errors=(errors.RewardModelError,),
         cancelled=(errors.ScoringCancelled,))


def submit_scoring_job(db: Database, model: str, dataset: str, *,
                       by: User | str | None = None, **options: Any) -> int:
    """Queue a scoring job (options: see :data:`SCORING_OPTIONS`); returns its id."""
    unknown = set(options) - set(SCORING_OPTIONS)
    if unknown:
        raise ValueError(f"unknown scoring options: {', '.join(sorted(unknown))}")
    return RUNNER.submit(db, KIND, dataset, model, options, by=by)


def run_scoring_job(db_path: str | Path, job_id: int, *,
                    reward_model: RewardModel | None = None) -> dict[str, Any]:
    """Run a queued scoring job to its end in the calling thread (its own connection to
    ``db_path``); loads the job's model unless a loaded ``reward_model`` is given.
    Returns the finished row (``done``, ``cancelled`` or ``failed``); never raises for
    scoring errors."""
    return RUNNER.run(db_path, job_id, inputs={"reward_model": reward_model})


def start_job_thread(db_path: str | Path, job_id: int, *,
                     reward_model: RewardModel | None = None) -> JobHandle:
    """Start :func:`run_scoring_job` in the runner's background thread."""
    return RUNNER.start(db_path, job_id, inputs={"reward_model": reward_model})


def start_scoring(db: Database, db_path: str | Path, key: ModelKey, rm: RewardModel, dataset: str,
                  truncation: str, *, by: User | str | None = None) -> int:
    """Queue a scoring job for ``dataset`` with the loaded ``rm`` (loaded as ``key``) and
    start it; returns its id. Interrupted scoring jobs of the dataset are recorded as
    such first (their scores stay cached, so this run resumes them)."""
    job_id = submit_scoring_job(db, rm.facts.name, dataset, dtype=key.dtype, device=key.device,
                                attn_implementation=key.attn_implementation,
                                trust_remote_code=key.trust_remote_code, truncation=truncation,
                                by=by)
    RUNNER.start(db_path, job_id, inputs={"reward_model": rm})
    return job_id


def latest_scoring_job(db: Database, dataset: str) -> dict[str, Any] | None:
    """The newest scoring job of ``dataset`` (``display_status`` added), or ``None``."""
    return RUNNER.latest(db, KIND, dataset)
