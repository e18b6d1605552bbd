"""Reward-model scores: the score cache, per-item scores of a run, background jobs.

The cache is keyed by (model fingerprint, template id, variant, text hash), where
``variant`` names the dtype and the input view (``fp32|full``, ``bf16|keep-end:4096``).
Every write is committed before the function returns, so a killed run keeps all
rows written so far.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from sqlite_utils import Database

from store.annotations import now

JOB_STATUSES = ("queued", "running", "done", "cancelled", "failed", "interrupted")
_CHUNK = 500


def cached_scores(
    db: Database, fingerprint: str, template_id: str, variant: str, text_hashes: Iterable[str]
) -> dict[str, tuple[float, int]]:
    """``{text_hash: (score, n_tokens)}`` for the hashes already in the cache."""
    hashes = list(dict.fromkeys(text_hashes))
    found: dict[str, tuple[float, int]] = {}
    for start in range(0, len(hashes), _CHUNK):
        chunk = hashes[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        rows = db.execute(
            "select text_hash, score, n_tokens from score_cache where fingerprint = ? and template_id = ? "
            f"and variant = ? and text_hash in ({marks})",
            [fingerprint, template_id, variant, *chunk],
        ).fetchall()
        found.update({h: (s, n) for h, s, n in rows})
    return found


def save_scores(
    db: Database,
    fingerprint: str,
    template_id: str,
    variant: str,
    rows: Iterable[tuple[str, float, int]],
) -> int:
    """Store ``(text_hash, score, n_tokens)`` rows and commit; returns how many."""
    stamp = now()
    records = [
        {"fingerprint": fingerprint, "template_id": template_id, "variant": variant,
         "text_hash": h, "score": float(s), "n_tokens": int(n), "created_at": stamp}
        for h, s, n in rows
    ]
    with db.atomic():
        db.table("score_cache").upsert_all(
            records, pk=("fingerprint", "template_id", "variant", "text_hash")
        )
    return len(records)


def count_cached(db: Database, fingerprint: str | None = None) -> int:
    """Rows in the score cache, for one model or all."""
    if fingerprint is None:
        return db.execute("select count(*) from score_cache").fetchone()[0]
    return db.execute(
        "select count(*) from score_cache where fingerprint = ?", [fingerprint]
    ).fetchone()[0]


def clear_cache(db: Database, fingerprint: str | None = None) -> int:
    """Delete cached scores (of one model, or all); returns how many were deleted."""
    with db.atomic():
        if fingerprint is None:
            cursor = db.execute("delete from score_cache")
        else:
            cursor = db.execute("delete from score_cache where fingerprint = ?", [fingerprint])
    return cursor.rowcount


def save_item_scores(
    db: Database,
    dataset: str,
    fingerprint: str,
    variant: str,
    model: str,
    rows: Iterable[dict[str, Any]],
) -> int:
    """Store per-item results (``item_key, subset, chosen_scores, rejected_scores``); commit."""
    stamp = now()
    records = [
        {"dataset": dataset, "item_key": r["item_key"], "fingerprint": fingerprint,
         "variant": variant, "model": model, "subset": r.get("subset", ""),
         "chosen_scores": json.dumps(r["chosen_scores"]),
         "rejected_scores": json.dumps(r["rejected_scores"]), "updated_at": stamp}
        for r in rows
    ]
    with db.atomic():
        db.table("item_scores").upsert_all(
            records, pk=("dataset", "item_key", "fingerprint", "variant")
        )
    return len(records)


def item_scores(
    db: Database, dataset: str, fingerprint: str, variant: str | None = None
) -> list[dict[str, Any]]:
    """Per-item scores of one model on a dataset (score lists parsed)."""
    sql = "select * from item_scores where dataset = ? and fingerprint = ?"
    params: list[Any] = [dataset, fingerprint]
    if variant is not None:
        sql += " and variant = ?"
        params.append(variant)
    rows = db.execute_returning_dicts(sql + " order by item_key", params)
    for row in rows:
        row["chosen_scores"] = json.loads(row["chosen_scores"])
        row["rejected_scores"] = json.loads(row["rejected_scores"])
    return rows


def scored_models(db: Database, dataset: str) -> list[dict[str, Any]]:
    """Which models scored a dataset: ``model, fingerprint, variant, items, updated_at``."""
    return db.execute_returning_dicts(
        "select model, fingerprint, variant, count(*) as items, max(updated_at) as updated_at "
        "from item_scores where dataset = ? group by fingerprint, variant, model "
        "order by updated_at desc",
        [dataset],
    )


def _job(row: dict[str, Any]) -> dict[str, Any]:
    row["options"] = json.loads(row["options"]) if row.get("options") else {}
    row["result"] = json.loads(row["result"]) if row.get("result") else None
    row["cancel_requested"] = bool(row.get("cancel_requested"))
    return row


def create_job(
    db: Database, kind: str, dataset: str, model: str, options: dict[str, Any] | None = None,
    *, owner: str | None = None, heartbeat: float | None = None,
) -> int:
    """Queue a job; returns its id. ``owner`` names the runner (process) that will run it,
    ``heartbeat`` (Unix seconds) when it last said so."""
    stamp = now()
    with db.atomic():
        table = db.table("jobs").insert(
            {"kind": kind, "dataset": dataset, "model": model, "status": "queued", "done": 0,
             "total": 0, "options": json.dumps(options or {}), "updated_at": stamp,
             "cancel_requested": 0, "owner": owner, "heartbeat": heartbeat}
        )
        job_id = table.last_pk
    assert job_id is not None  # an insert sets it
    return int(job_id)


def get_job(db: Database, job_id: int) -> dict[str, Any] | None:
    """One job (options and result parsed), or ``None``."""
    rows = db.execute_returning_dicts("select * from jobs where id = ?", [job_id])
    return _job(rows[0]) if rows else None


def list_jobs(db: Database, *, status: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
    """Jobs, newest first, optionally of one status."""
    sql, params = "select * from jobs", []
    if status is not None:
        sql += " where status = ?"
        params.append(status)
    rows = db.execute_returning_dicts(sql + " order by id desc limit ?", [*params, limit])
    return [_job(r) for r in rows]


def _update(db: Database, job_id: int, **values: Any) -> None:
    values["updated_at"] = now()
    sets = ", ".join(f"{k} = ?" for k in values)
    with db.atomic():
        db.execute(f"update jobs set {sets} where id = ?", [*values.values(), job_id])


def start_job(db: Database, job_id: int, total: int) -> None:
    """Mark a job running with ``total`` units of work."""
    _update(db, job_id, status="running", total=total, started_at=now())


def active_jobs(db: Database, kind: str, dataset: str) -> list[dict[str, Any]]:
    """The queued and running jobs of ``kind`` on ``dataset``, newest first."""
    rows = db.execute_returning_dicts(
        "select * from jobs where kind = ? and dataset = ? and status in ('queued', 'running') "
        "order by id desc", [kind, dataset])
    return [_job(r) for r in rows]


def claim_job(db: Database, job_id: int, owner: str, heartbeat: float) -> bool:
    """Mark a queued job, not asked to stop, running for ``owner`` (``total`` 0); False when
    it is not queued any more (another runner took it, or it ended), another runner queued
    it, or a cancel came first. One statement: of two runners claiming the same job,
    exactly one gets it."""
    stamp = now()
    with db.atomic():
        cursor = db.execute(
            "update jobs set status = 'running', total = 0, started_at = ?, updated_at = ?, "
            "owner = ?, heartbeat = ? where id = ? and status = 'queued' and cancel_requested = 0 "
            "and (owner is null or owner = ?)",
            [stamp, stamp, owner, heartbeat, job_id, owner])
    return cursor.rowcount > 0


def beat_job(db: Database, job_id: int, owner: str, heartbeat: float) -> bool:
    """``owner`` still runs the job: note when (Unix seconds). False when the job has
    ended or is not ``owner``'s (another process recorded it interrupted)."""
    with db.atomic():
        cursor = db.execute(
            "update jobs set heartbeat = ? where id = ? and owner = ? "
            "and status in ('queued', 'running')", [heartbeat, job_id, owner])
    return cursor.rowcount > 0


def interrupt_job(db: Database, job_id: int, error: str) -> bool:
    """Record a queued or running job as ``interrupted`` (its process is gone) with its
    cancel flag set, so that a process that only seemed gone stops it at its next check;
    False when it had already ended."""
    with db.atomic():
        cursor = db.execute(
            "update jobs set status = 'interrupted', error = ?, result = null, "
            "cancel_requested = 1, updated_at = ? where id = ? and status in ('queued', 'running')",
            [error, now(), job_id])
    return cursor.rowcount > 0


def update_job_progress(db: Database, job_id: int, done: int, total: int | None = None) -> None:
    """Record progress (``done`` of ``total``)."""
    if total is None:
        _update(db, job_id, done=done)
    else:
        _update(db, job_id, done=done, total=total)


def finish_job(
    db: Database,
    job_id: int,
    status: str,
    *,
    error: str | None = None,
    result: dict[str, Any] | None = None,
    owner: str | None = None,
) -> bool:
    """Mark a job done, cancelled, failed or interrupted (its server stopped while it ran),
    with an error message or a result summary. With ``owner``, only while the job runs
    as that runner's (not once another process recorded it interrupted); False when
    nothing was written."""
    if status not in ("done", "cancelled", "failed", "interrupted"):
        raise ValueError(f"a finished job is done, cancelled, failed or interrupted, not {status!r}")
    values = [status, error, json.dumps(result) if result is not None else None, now(), job_id]
    sql = "update jobs set status = ?, error = ?, result = ?, updated_at = ? where id = ?"
    if owner is not None:
        sql += " and owner = ? and status = 'running'"
        values.append(owner)
    with db.atomic():
        return db.execute(sql, values).rowcount > 0


def request_cancel(db: Database, job_id: int) -> bool:
    """Ask a queued or running job to stop; False when it has already finished."""
    with db.atomic():
        cursor = db.execute(
            "update jobs set cancel_requested = 1, updated_at = ? "
            "where id = ? and status in ('queued', 'running')",
            [now(), job_id],
        )
    return cursor.rowcount > 0


def cancel_requested(db: Database, job_id: int) -> bool:
    """True once :func:`request_cancel` was called for the job."""
    row = db.execute("select cancel_requested from jobs where id = ?", [job_id]).fetchone()
    return bool(row and row[0])
