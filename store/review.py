"""SQL for the review page: verdict rows and the scores its filters read."""

from __future__ import annotations

import json
from typing import Any

from sqlite_utils import Database

from store.judges import JUDGE_PREFIX, finished_runs, review_scores

VERDICT_PREFIX = "verdict:"


def _parse_field(field: str) -> tuple[int, int] | None:
    parts = field[len(VERDICT_PREFIX):].split(":")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1])


def _row(item_key: str, who: str, field: str, value: str | None, updated_at: str) -> dict[str, Any] | None:
    pair = _parse_field(field)
    parsed = json.loads(value) if value else None
    if pair is None or not isinstance(parsed, dict):
        return None
    return {"item_key": item_key, "i": pair[0], "j": pair[1], "annotator": who,
            "verdict": parsed.get("verdict"), "reasons": parsed.get("reasons") or [],
            "note": parsed.get("note") or "", "updated_at": updated_at}


def verdict_rows(db: Database, dataset: str, annotator: str | None = None) -> list[dict[str, Any]]:
    """Current verdicts of a dataset (of one annotator, or everyone): dicts with
    ``item_key, i, j, annotator, verdict, reasons, note, updated_at``."""
    sql = (
        "select item_key, annotator, field, value, updated_at from annotations "
        "where dataset = ? and field >= ? and field < ?"
    )
    params: list[Any] = [dataset, VERDICT_PREFIX, VERDICT_PREFIX + "\U0010ffff"]
    if annotator is not None:
        sql += " and annotator = ?"
        params.append(annotator)
    rows = (_row(*r) for r in db.execute(sql, params).fetchall())
    return [r for r in rows if r is not None]


def my_verdicts(db: Database, dataset: str, annotator: str) -> dict[tuple[str, int, int], str]:
    """``{(item_key, i, j): verdict}`` of one annotator ({} without a name)."""
    if not annotator:
        return {}
    return {(r["item_key"], r["i"], r["j"]): r["verdict"] for r in verdict_rows(db, dataset, annotator)}


def _has_table(db: Database, name: str) -> bool:
    row = db.execute("select 1 from sqlite_master where type = 'table' and name = ?", [name]).fetchone()
    return row is not None


def scored_runs(db: Database, dataset: str) -> list[dict[str, Any]]:
    """Models that scored the dataset, newest first: ``model, fingerprint, variant,
    items, updated_at`` ([] when there is no scores table); then the finished LLM-judge
    runs of the dataset in the same shape, their ``fingerprint`` ``judge:RUN_KEY``
    (:func:`item_scores_map` reads them like a scoring run)."""
    runs: list[dict[str, Any]] = []
    if _has_table(db, "item_scores"):
        runs = db.execute_returning_dicts(
            "select model, fingerprint, variant, count(*) as items, max(updated_at) as updated_at "
            "from item_scores where dataset = ? group by fingerprint, variant, model "
            "order by updated_at desc",
            [dataset],
        )
    if _has_table(db, "judge_runs"):
        for run in finished_runs(db, dataset):
            summary = run.get("summary") or {}
            order = summary.get("order") or run["options"].get("order") or ""
            name = run["model"].rstrip("/").rsplit("/", 1)[-1] if run["model"].startswith("/") \
                else run["model"]
            runs.append({"model": f"judge {name}", "fingerprint": JUDGE_PREFIX + run["run_key"],
                         "variant": f"{run['mode']}, {order}" if run["mode"] == "selection"
                         else run["mode"],
                         "items": run["judged_items"], "updated_at": run["updated_at"]})
    return runs


def item_scores_map(
    db: Database, dataset: str, fingerprint: str | None = None, variant: str | None = None
) -> dict[str, dict[str, list[float | None]]]:
    """``{item_key: {"chosen_scores": [...], "rejected_scores": [...]}}`` of one
    scoring run (default: the most recent one); {} when nothing is scored or there
    is no scores table. A judge run (``fingerprint`` ``judge:RUN_KEY``) gives
    :func:`store.judges.review_scores`: per-response shares or ratings, and the
    comparisons it got wrong as ``disagree``."""
    runs = scored_runs(db, dataset)
    if not runs:
        return {}
    if fingerprint is None:
        fingerprint, variant = runs[0]["fingerprint"], runs[0]["variant"]
    if fingerprint.startswith(JUDGE_PREFIX):
        return review_scores(db, fingerprint[len(JUDGE_PREFIX):])
    sql = ("select item_key, chosen_scores, rejected_scores from item_scores "
           "where dataset = ? and fingerprint = ?")
    params: list[Any] = [dataset, fingerprint]
    if variant is not None:
        sql += " and variant = ?"
        params.append(variant)
    return {
        key: {"chosen_scores": json.loads(c or "[]"), "rejected_scores": json.loads(r or "[]")}
        for key, c, r in db.execute(sql, params).fetchall()
    }


def item_verdicts(db: Database, dataset: str, item_key: str) -> list[dict[str, Any]]:
    """Everyone's current verdicts on one item (same dicts as :func:`verdict_rows`)."""
    rows = db.execute(
        "select annotator, field, value, updated_at from annotations "
        "where dataset = ? and item_key = ? and field >= ? and field < ? order by annotator",
        [dataset, item_key, VERDICT_PREFIX, VERDICT_PREFIX + "\U0010ffff"],
    ).fetchall()
    parsed = (_row(item_key, *r) for r in rows)
    return [r for r in parsed if r is not None]


def last_verdict_change(db: Database, dataset: str, annotator: str) -> dict[str, Any] | None:
    """The newest history row of ``annotator``'s verdicts in ``dataset`` (values parsed)."""
    rows = db.execute_returning_dicts(
        "select item_key, field, new_value, at from history where dataset = ? and annotator = ? "
        "and field >= ? and field < ? order by id desc limit 1",
        [dataset, annotator, VERDICT_PREFIX, VERDICT_PREFIX + "\U0010ffff"])
    if not rows:
        return None
    row = rows[0]
    row["new_value"] = json.loads(row["new_value"]) if row["new_value"] else None
    return row
