"""Model suggestions (table ``suggestions``, migration m019; issue 30).

One row per (dataset, item, field, source): the proposed ``value`` (JSON), an optional
``score``, an optional ``confidence`` (a probability in [0, 1], migration m030), the ``source`` (``judge:NAME``, ``reward:MODEL``, ``file:NAME``, ...) and its
``detail`` (JSON: model, prompt version, file). Several sources may suggest for the same
field. Suggestions never count as annotations: no view or figure of annotations reads
this table. The table has a ``dataset`` column, so it follows a renamed dataset and goes
with a deleted one (store/datasets.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from sqlite_utils import Database

from store.annotations import now

COLUMNS = ("dataset", "item_key", "field", "source", "value", "score", "detail", "created_by",
           "created_at", "confidence")


def item_bounds(db: Database, dataset: str, kind: str) -> dict[str, tuple[int, int]]:
    """Each item's passage count (``grounding``: ``(n, 0)``) or comparison grid
    (``preference``: ``(n_chosen, n_rejected)``), by item key."""
    if kind == "grounding":
        sql = "select key, n_passages, 0 from grounding_items where dataset = ?"
    else:
        sql = "select key, n_chosen, n_rejected from preference_items where dataset = ?"
    return {key: (a, b) for key, a, b in db.execute(sql, [dataset])}


def put_suggestions(db: Database, rows: Iterable[Mapping[str, Any]], by: str) -> int:
    """Store suggestions (each with ``dataset``, ``item_key``, ``field``, ``source``,
    ``value``; optional ``score``, ``confidence`` and ``detail``) in one transaction, replacing what the
    same source suggested for the same field; returns how many were written."""
    at = now()
    count = 0
    with db.atomic():
        for row in rows:
            db.execute(
                "insert or replace into suggestions (dataset, item_key, field, source, value, "
                "score, detail, created_by, created_at, confidence) "
                "values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [row["dataset"], row["item_key"], row["field"], row["source"],
                 json.dumps(row["value"], ensure_ascii=False), row.get("score"),
                 json.dumps(row.get("detail") or {}, ensure_ascii=False, sort_keys=True), by, at,
                 row.get("confidence")])
            count += 1
    return count


def _row(values: tuple) -> dict[str, Any]:
    out = dict(zip(COLUMNS, values, strict=True))
    out["value"] = json.loads(out["value"])
    out["detail"] = json.loads(out["detail"] or "{}")
    return out


def item_suggestions(db: Database, dataset: str, item_key: str) -> list[dict[str, Any]]:
    """Every suggestion for one item, by field then source."""
    return [_row(tuple(r)) for r in db.execute(
        f"select {', '.join(COLUMNS)} from suggestions where dataset = ? and item_key = ? "
        "order by field, source", [dataset, item_key])]


def has_suggestions(db: Database, dataset: str) -> bool:
    """Whether ``dataset`` has any suggestion."""
    return db.execute("select 1 from suggestions where dataset = ? limit 1",
                      [dataset]).fetchone() is not None


def dataset_suggestions(db: Database, dataset: str, source: str | None = None
                        ) -> Iterable[dict[str, Any]]:
    """A dataset's suggestions (of one ``source``), by item, field and source, streamed."""
    sql = (f"select {', '.join(COLUMNS)} from suggestions where dataset = ?"
           + (" and source = ?" if source is not None else "")
           + " order by item_key, field, source")
    for r in db.execute(sql, [dataset] + ([source] if source is not None else [])):
        yield _row(tuple(r))


def sourced_fields(db: Database, dataset: str, source: str, keys: Iterable[str]
                   ) -> dict[str, set[str]]:
    """The fields ``source`` has suggested, for each of ``keys`` that has any."""
    out: dict[str, set[str]] = {}
    keys = list(keys)
    for start in range(0, len(keys), 500):
        part = keys[start:start + 500]
        for key, name in db.execute(
                "select item_key, field from suggestions where dataset = ? and source = ? "
                f"and item_key in ({', '.join('?' * len(part))})", [dataset, source, *part]):
            out.setdefault(key, set()).add(name)
    return out


def suggestion_sources(db: Database, dataset: str) -> list[dict[str, Any]]:
    """``source, suggestions, items, last`` per source of a dataset's suggestions."""
    return db.execute_returning_dicts(
        "select source, count(*) as suggestions, count(distinct item_key) as items, "
        "max(created_at) as last from suggestions where dataset = ? group by source "
        "order by source", [dataset])


def delete_source(db: Database, dataset: str, source: str) -> int:
    """Delete every suggestion of ``source`` in ``dataset``; returns how many."""
    with db.atomic():
        return db.execute("delete from suggestions where dataset = ? and source = ?",
                          [dataset, source]).rowcount


def item_confidences(db: Database, dataset: str) -> dict[str, float]:
    """Each item's lowest suggestion confidence (the least sure of its suggestions), for
    the items of ``dataset`` that have a suggestion with a confidence."""
    return {key: low for key, low in db.execute(
        "select item_key, min(confidence) from suggestions where dataset = ? and confidence "
        "is not null group by item_key", [dataset])}


def has_confidence(db: Database, dataset: str) -> bool:
    """Whether any suggestion of ``dataset`` carries a confidence."""
    return db.execute("select 1 from suggestions where dataset = ? and confidence is not null "
                      "limit 1", [dataset]).fetchone() is not None


def confidence_ranked(db: Database, dataset: str, *, most_sure: bool = False
                      ) -> list[tuple[str, int]]:
    """``(item key, position)`` of the items with a suggestion confidence, by their
    lowest one in whole percent, as the page shows it: the least sure first
    (``most_sure``: the most sure first), ties in dataset order. (A reward model's
    confidence differs by processor in its sixth decimal; the percent does not.)"""
    direction = "desc" if most_sure else "asc"
    return [(k, p) for k, p in db.execute(
        "select s.item_key, i.position from (select item_key, min(confidence) as low from "
        "suggestions where dataset = ? and confidence is not null group by item_key) s "
        "join items i on i.dataset = ? and i.key = s.item_key "
        f"order by round(s.low * 100) {direction}, i.position", [dataset, dataset])]


def all_positions(db: Database, dataset: str) -> list[tuple[str, int]]:
    """``(item key, position)`` of every item of ``dataset``, in dataset order."""
    return [(k, p) for k, p in db.execute(
        "select key, position from items where dataset = ? order by position", [dataset])]
