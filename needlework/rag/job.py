"""The ``rag`` job kind: an answer evaluation run by the job runner (:mod:`needlework.jobs.runner`).

The kind's function is :func:`needlework.rag.run.run_rag_eval`; progress counts judge
calls (none without a judge), cancel stops sending (answers received are cached, a new
run resumes), a judge that fails as a whole fails the job in one line.

:func:`start_rag_job` is what the page calls. The :class:`~needlework.rag.run.RagEvalSpec`
travels as the job's ``inputs`` (live objects, never stored): its connection may hold
an API key in memory and its answer sets may come from uploads. The job's ``options``
(stored on the ``jobs`` row) describe the run without the answers and without a key:
the dataset, the models and where their answers came from, the judge's description
(endpoint, model, the key's *source*), and the options.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlite_utils import Database

from needlework.jobs.kinds import register
from needlework.jobs.runner import RUNNER
from needlework.judges.errors import JudgeCancelled, JudgeError
from needlework.rag.questions import DatasetError
from needlework.rag.run import RagEvalSpec, run_rag_eval
from needlework.teams.permissions import User

KIND = "rag"

register(KIND, run_rag_eval, unit="judge calls", errors=(JudgeError, DatasetError),
         cancelled=(JudgeCancelled,))


def job_options(spec: RagEvalSpec) -> dict[str, Any]:
    """The JSON-ready description of a run stored on its job row: no answer text, no key."""
    conn = spec.connection
    return {"dataset": spec.dataset, "models": [s.model for s in spec.answer_sets],
            "sources": {s.model: s.source for s in spec.answer_sets},
            "judge": conn.describe() if conn is not None else None,
            "with_related": spec.with_related}


def start_rag_job(db: Database, db_path: str | Path, spec: RagEvalSpec, *,
                  by: User | str | None = None) -> int:
    """Queue the evaluation of ``spec`` and start it in the runner's thread (its own
    connection to ``db_path``); returns the job id."""
    if not spec.answer_sets:
        raise ValueError("no answer sets to evaluate")
    job_id = RUNNER.submit(db, KIND, spec.dataset, ", ".join(s.model for s in spec.answer_sets),
                           job_options(spec), by=by)
    RUNNER.start(db_path, job_id, inputs={"spec": spec})
    return job_id


def latest_rag_job(db: Database, dataset: str) -> dict[str, Any] | None:
    """The newest ``rag`` job of ``dataset`` (``display_status`` and ``unit`` added), or ``None``."""
    return RUNNER.latest(db, KIND, dataset)
