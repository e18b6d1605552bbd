"""RAG answer evaluation storage: model answer sets, evaluation runs and their rows.

``rag_answer_sets`` keeps a model's answers to a grounding dataset (the demo's answers
are seeded here; a page can keep an uploaded file here too), one row per (dataset,
model). ``rag_runs`` records one evaluation per ``run_key`` (dataset, the answer sets'
digests, the judge and every option that changes a figure), with its status, progress
and summary; ``rag_results`` holds one row per (run, model, question): the answer, its
BERGEN scores, the judge's verdicts and per-sentence labels, as JSON. The judge's calls
themselves are in the judge engine's cache (``store.judges``). Nothing here sees an
API key.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from sqlite_utils import Database

from store.annotations import now

RUN_STATUSES = ("running", "done", "cancelled", "failed")


# -- answer sets -----------------------------------------------------------------------


def save_answer_set(db: Database, dataset: str, model: str, answers: dict[str, str], *,
                    source: str = "", digest: str = "", created_by: str = "",
                    marks: dict[str, Any] | None = None) -> None:
    """Store (or replace) ``model``'s answers to ``dataset``; commits. ``marks``: what was
    found about the answers when they were made, JSON-ready (``non_answers``: ids of the
    answers that make no claim; ``failed``: ids whose request failed, with the reason)."""
    with db.atomic():
        db.execute("delete from rag_answer_sets where dataset = ? and model = ?", [dataset, model])
        db.table("rag_answer_sets").insert(
            {"dataset": dataset, "model": model, "source": source, "digest": digest,
             "answers": json.dumps(answers, ensure_ascii=False), "created_at": now(),
             "created_by": created_by,
             "marks": json.dumps(marks, ensure_ascii=False) if marks else None})


def answer_sets(db: Database, dataset: str) -> list[dict[str, Any]]:
    """The answer sets stored for ``dataset`` (``answers`` and ``marks`` parsed; ``marks``
    ``{}`` when none were stored), in order of storing."""
    rows = db.execute_returning_dicts(
        "select * from rag_answer_sets where dataset = ? order by id", [dataset])
    for row in rows:
        row["answers"] = json.loads(row["answers"])
        row["marks"] = json.loads(row["marks"]) if row.get("marks") else {}
    return rows


def delete_answer_set(db: Database, dataset: str, model: str) -> int:
    """Remove one stored answer set; returns how many rows went (0 or 1)."""
    with db.atomic():
        cursor = db.execute("delete from rag_answer_sets where dataset = ? and model = ?",
                            [dataset, model])
    return cursor.rowcount


# -- runs ------------------------------------------------------------------------------


def start_run(db: Database, run_key: str, *, dataset: str, models: list[str], endpoint: str,
              judge_model: str, options: dict[str, Any], total: int) -> int:
    """Create (or restart) the run of ``run_key`` as ``running``; returns its id."""
    stamp = now()
    with db.atomic():
        row = db.execute("select id from rag_runs where run_key = ?", [run_key]).fetchone()
        if row:
            db.execute("update rag_runs set status = 'running', done = 0, total = ?, options = ?, "
                       "updated_at = ? where id = ?",
                       [total, json.dumps(options, sort_keys=True), stamp, row[0]])
            return int(row[0])
        table = db.table("rag_runs").insert(
            {"run_key": run_key, "dataset": dataset, "models": json.dumps(models),
             "endpoint": endpoint, "judge_model": judge_model,
             "options": json.dumps(options, sort_keys=True), "status": "running", "done": 0,
             "total": total, "summary": None, "created_at": stamp, "updated_at": stamp})
        assert table.last_pk is not None  # an insert sets it
        return int(table.last_pk)


def update_progress(db: Database, run_key: str, done: int) -> None:
    """Record how many of a run's judge calls have an answer."""
    with db.atomic():
        db.execute("update rag_runs set done = ?, updated_at = ? where run_key = ?",
                   [done, now(), run_key])


def finish_run(db: Database, run_key: str, status: str, summary: dict[str, Any] | None = None) -> None:
    """Mark a run done, cancelled or failed, with its summary."""
    if status not in RUN_STATUSES[1:]:
        raise ValueError(f"a finished RAG run is done, cancelled or failed, not {status!r}")
    with db.atomic():
        db.execute("update rag_runs set status = ?, summary = ?, updated_at = ? where run_key = ?",
                   [status, json.dumps(summary) if summary is not None else None, now(), run_key])


def delete_run(db: Database, run_key: str) -> None:
    """Remove a run and its rows (a run that got no judge answer stores nothing); commits."""
    with db.atomic():
        db.execute("delete from rag_results where run_key = ?", [run_key])
        db.execute("delete from rag_runs where run_key = ?", [run_key])


def _run(row: dict[str, Any]) -> dict[str, Any]:
    row["models"] = json.loads(row["models"] or "[]")
    row["options"] = json.loads(row["options"] or "{}")
    row["summary"] = json.loads(row["summary"]) if row.get("summary") else None
    return row


def get_run(db: Database, run_key: str) -> dict[str, Any] | None:
    """One run (JSON fields parsed), or ``None``."""
    rows = db.execute_returning_dicts("select * from rag_runs where run_key = ?", [run_key])
    return _run(rows[0]) if rows else None


def list_runs(db: Database, dataset: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
    """Runs, newest first, optionally of one dataset."""
    sql, params = "select * from rag_runs", []
    if dataset is not None:
        sql += " where dataset = ?"
        params.append(dataset)
    rows = db.execute_returning_dicts(sql + " order by updated_at desc, id desc limit ?",
                                      [*params, limit])
    return [_run(r) for r in rows]


def save_results(db: Database, run_key: str, rows: Iterable[dict[str, Any]]) -> int:
    """Replace a run's rows (each with ``model``, ``item_key`` and the rest as the entry);
    commits; returns how many."""
    records = [{"run_key": run_key, "model": r["model"], "item_key": r["item_key"],
                "entry": json.dumps(r, ensure_ascii=False)} for r in rows]
    with db.atomic():
        db.execute("delete from rag_results where run_key = ?", [run_key])
        db.table("rag_results").insert_all(records, batch_size=500)
    return len(records)


def run_results(db: Database, run_key: str, *, model: str | None = None,
                item_key: str | None = None) -> list[dict[str, Any]]:
    """A run's rows (parsed entries), in the order saved; optionally one model's or one
    question's (e.g. a failure opened beside the human answer)."""
    sql, params = "select entry from rag_results where run_key = ?", [run_key]
    if model is not None:
        sql += " and model = ?"
        params.append(model)
    if item_key is not None:
        sql += " and item_key = ?"
        params.append(item_key)
    return [json.loads(row[0]) for row in db.execute(sql + " order by rowid", params)]
