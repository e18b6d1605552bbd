"""Judging a dataset in the background: the ``judge`` and ``judge-needles`` kinds of
:mod:`needlework.jobs.runner`.

``judge`` runs :func:`needlework.judges.engine.run_judge` on the job's dataset (or part
of it: some subsets, a few items per subset); progress counts trials, a cancel stops
submitting requests (the answers received are cached, so a new job resumes), and the
connection, which may hold an API key, travels as the job's *input*
(``inputs["connection"]``): the job's row records only
:meth:`~needlework.judges.connection.Connection.describe` (the key's variable name, never
its value). Needle datasets are always judged in both orders (``order="rotations"``), so
position bias cancels in the accuracy and is reported. A run in which no request got an
answer fails the job in one line and stores no run; failed requests of a run that got
answers are counted in its result (``failed``, ``failures``), apart from the figures.

``judge-needles`` writes needles with an LLM (:func:`needlework.judges.needles.write_needles`)
into haystacks and saves the verified ones as a needle dataset.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from needlework.datasets.transfer import import_bytes
from needlework.jobs.kinds import Job, Progress, ShouldStop, register
from needlework.jobs.runner import RUNNER
from needlework.judges.connection import Connection
from needlework.judges.context import POLICIES
from needlework.judges.engine import run_judge
from needlework.judges.errors import JudgeCancelled, JudgeError
from needlework.judges.local import mode_refusal
from needlework.judges.needles import write_needles
from needlework.judges.plan import MODES, ORDERS, DatasetNotFound, load_items, select_items
from needlework.judges.prompts import MODES as PROMPT_MODES
from needlework.judges.templates import Template, TemplateError, from_dict
from needlework.teams.permissions import User
from needlework.words import short_name
from store.scores import list_jobs

KIND = "judge"
WRITE_KIND = "judge-needles"
SUMMARY_KEYS = ("run_key", "mode", "order", "seed", "context_policy", "items", "trials", "accuracy",
                "answered", "invalid", "invalid_rate", "skipped", "failed", "failures",
                "provider_defaults", "cut_off", "requests", "cached", "sent", "errors", "cut",
                "selection")


class JudgeJobError(ValueError):
    """A judge job that cannot run as asked (its message says why)."""


def job_connection(job: Job) -> Connection:
    """The connection a job was handed (``inputs["connection"]``)."""
    connection = job.inputs.get("connection")
    if not isinstance(connection, Connection):
        raise JudgeJobError("this judge job has no connection: start it again from the page "
                            "(the server restarted, and the key is never stored)")
    return connection


def order_for(kind: str, order: str) -> str:
    """The order a dataset is judged in: needle sets always in both orders."""
    return "rotations" if kind == "needle" else order


def judge_job(job: Job, db: Database, progress: Progress, should_stop: ShouldStop) -> dict[str, Any]:
    """The ``judge`` kind: the job's dataset (or the selected part) through the judge.
    Returns the run's headline figures (the whole run is in ``judge_runs``)."""
    options = job.options
    connection = job_connection(job)
    row, items = load_items(db, job.dataset)
    selection = {k: options[k] for k in ("subsets", "per_subset") if options.get(k)}
    if selection:
        items = select_items(items, subsets=selection.get("subsets"),
                             per_subset=selection.get("per_subset"))
        if selection.get("subsets"):
            selection["subsets"] = sorted(selection["subsets"])
    if not items:
        raise JudgeJobError(f"no items of {job.dataset} to judge with this selection")
    run = run_judge(db, connection, items, options.get("mode", "selection"), dataset=job.dataset,
                    format_name=row["format"], order=order_for(row["kind"], options.get("order", "shuffle")),
                    seed=int(options.get("seed") or 0),
                    context_policy=options.get("context_policy", "skip"),
                    progress=progress, should_stop=should_stop, selection=selection or None,
                    template=job_template(options))
    return {k: run.summary.get(k) for k in SUMMARY_KEYS} | {"model": connection.model}


def job_template(options: dict[str, Any]) -> Template | None:
    """The template a judge job's options carry (``None``: the mode's default)."""
    stored = options.get("template")
    if not stored:
        return None
    try:
        return from_dict(PROMPT_MODES, stored)
    except TemplateError as exc:
        raise JudgeJobError(str(exc)) from exc


register(KIND, judge_job, unit="trials", errors=(JudgeError, DatasetNotFound, JudgeJobError),
         cancelled=(JudgeCancelled,))


def judge_options(*, mode: str, order: str = "shuffle", seed: int = 0, context_policy: str = "skip",
                  subsets: Sequence[str] | None = None, per_subset: int | None = None,
                  template: Template | None = None) -> dict[str, Any]:
    """Checked, JSON-ready options of a judge job (``template``: the prompt's, stored whole;
    ``None`` for the mode's default)."""
    if mode not in MODES:
        raise JudgeJobError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if order not in ORDERS:
        raise JudgeJobError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
    if context_policy not in POLICIES:
        raise JudgeJobError(f"context policy must be one of {', '.join(POLICIES)}, not {context_policy!r}")
    if per_subset is not None and per_subset < 1:
        raise JudgeJobError(f"items per subset must be at least 1, got {per_subset}")
    if template is not None and template.mode.name != mode:
        raise JudgeJobError(f"a {template.mode.name} template cannot run in {mode} mode")
    return {"mode": mode, "order": order, "seed": int(seed), "context_policy": context_policy,
            "subsets": sorted(subsets) if subsets else None, "per_subset": per_subset,
            "template": template.as_dict() if template is not None else None}


def start_judge_job(db: Database, db_path: str | Path, connection: Connection, dataset: str,
                    *, by: User | str | None = None, **options: Any) -> int:
    """Queue a judge job of ``dataset`` (options: :func:`judge_options`) and start it in the
    runner's thread with ``connection`` as its input; returns the job's id. Interrupted
    judge jobs of the dataset are recorded as such first (their answers are cached, so
    this job resumes them)."""
    checked = judge_options(**options)
    if (refusal := mode_refusal(connection.model, str(checked.get("mode")))) is not None:
        raise ValueError(refusal)
    checked["connection"] = connection.describe()
    job_id = RUNNER.submit(db, KIND, dataset, short_name(connection.model), checked, by=by)
    RUNNER.start(db_path, job_id, inputs={"connection": connection})
    return job_id


def run_judge_job(db_path: str | Path, job_id: int, connection: Connection) -> dict[str, Any]:
    """Run a queued judge job to its end in the calling thread; the finished row."""
    return RUNNER.run(db_path, job_id, inputs={"connection": connection})


def latest_judge_job(db: Database, dataset: str) -> dict[str, Any] | None:
    """The newest judge job of ``dataset`` (``display_status`` added), or ``None``."""
    return RUNNER.latest(db, KIND, dataset)


# -- needles written by an LLM -------------------------------------------------------------


def write_job(job: Job, db: Database, progress: Progress, should_stop: ShouldStop) -> dict[str, Any]:
    """The ``judge-needles`` kind: write needles into the haystacks handed as
    ``inputs["haystacks"]`` and save the kept ones as the needle dataset ``job.dataset``.
    Returns the writing's summary and every attempt with its reason."""
    options = job.options
    haystacks = job.inputs.get("haystacks") or []
    if not haystacks:
        raise JudgeJobError("no haystacks to write needles into")
    lengths = options.get("lengths") or None
    positions = int(options.get("positions") or 1)
    progress.begin(len(haystacks) * len(lengths or [0]) * positions * int(options.get("per_haystack") or 1))
    written = write_needles(db, job_connection(job), haystacks, aspect=options.get("aspect", "factuality"),
                            per_haystack=int(options.get("per_haystack") or 1),
                            seed=int(options.get("seed") or 0), verifier=job.inputs.get("verifier"),
                            lengths=lengths, positions=positions, even=bool(options.get("even")),
                            template=job.inputs.get("template"), progress=progress,
                            should_stop=should_stop)
    result = {**written.summary(), "cells": written.cells(), "dataset": None,
              "attempts_list": written.attempts[:200]}
    if written.records:
        data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in written.records)
        import_bytes(db, data.encode("utf-8"), f"{job.dataset}.jsonl", format="needle",
                     dataset=job.dataset, replace=bool(options.get("replace")),
                     created_by=options.get("created_by") or "needle lab (LLM-written)")
        result["dataset"] = job.dataset
    return result


register(WRITE_KIND, write_job, unit="needles",
         errors=(JudgeError, JudgeJobError, ValueError, LookupError), cancelled=(JudgeCancelled,))


def start_write_job(db: Database, db_path: str | Path, connection: Connection, dataset: str,
                    haystacks: Sequence[Any], *, aspect: str, per_haystack: int = 1, seed: int = 0,
                    lengths: Sequence[int] | None = None, verifier: Connection | None = None,
                    replace: bool = False, created_by: str = "",
                    by: User | str | None = None, positions: int = 1, even: bool = False,
                    template: Any = None) -> int:
    """Queue and start a ``judge-needles`` job that saves its needles as ``dataset``
    (``verifier``: a second connection that checks the rewrites; default the writer;
    ``positions``, ``even`` and ``template``: see :func:`write_needles`)."""
    options = {"aspect": aspect, "per_haystack": int(per_haystack), "seed": int(seed),
               "positions": int(positions), "even": bool(even),
               "template": template.identity() if template is not None else None,
               "lengths": sorted({int(n) for n in lengths}) if lengths else None,
               "replace": bool(replace), "created_by": created_by,
               "connection": connection.describe(),
               "verifier": verifier.describe() if verifier is not None else None}
    job_id = RUNNER.submit(db, WRITE_KIND, dataset, short_name(connection.model), options,
                           by=by)
    RUNNER.start(db_path, job_id, inputs={"connection": connection, "verifier": verifier,
                                          "haystacks": list(haystacks), "template": template})
    return job_id


def latest_write_job(db: Database, dataset: str | None = None) -> dict[str, Any] | None:
    """The newest needle-writing job (of ``dataset``, or of any dataset)."""
    if dataset is not None:
        return RUNNER.latest(db, WRITE_KIND, dataset)
    for job in list_jobs(db, limit=200):
        if job["kind"] == WRITE_KIND:
            return RUNNER.get(db, int(job["id"]))
    return None
