"""Annotation writes, reads, history and undo.

One row per (dataset, item, annotator, field) holds the current value; every
change also appends a row to ``history``. Each write is its own transaction and
is committed before the function returns, so nothing set is ever lost.

Field names are namespaced strings chosen by the feature that writes them,
e.g. ``label:cite_3``, ``dim:question_type``, ``answer``, ``verdict:0:1``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlite_utils import Database


class AnnotatorRequired(ValueError):
    """Raised when a write has no annotator name."""


def now() -> str:
    """The current UTC time as ISO 8601 with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def set_annotation(
    db: Database,
    dataset: str,
    item_key: str,
    annotator: str,
    field: str,
    value: Any,
    by: str | None = None,
    via: Mapping[str, Any] | None = None,
) -> int | None:
    """Set (or, with ``value=None``, clear) one annotation and commit at once.

    ``by`` is who makes the change when it is not ``annotator`` (a reviewer
    undoing someone's change); it is recorded in the history. ``via`` is where the
    value came from (``None``: typed; see migration m020), kept on the annotation and
    its history row.
    Returns the id of the history row written, or ``None`` when the value was
    already equal (nothing changes, nothing is logged).
    """
    annotator = (annotator or "").strip()
    if not annotator:
        raise AnnotatorRequired("Enter your annotator name before making changes.")
    new = _dump(value)
    source = None if via is None else json.dumps(dict(via), ensure_ascii=False, sort_keys=True)
    with db.atomic():
        row = db.execute(
            "select value from annotations where dataset = ? and item_key = ? "
            "and annotator = ? and field = ?",
            [dataset, item_key, annotator, field],
        ).fetchone()
        old = row[0] if row else None
        if old == new:
            return None
        at = now()
        if new is None:
            db.execute(
                "delete from annotations where dataset = ? and item_key = ? "
                "and annotator = ? and field = ?",
                [dataset, item_key, annotator, field],
            )
        else:
            db.execute(
                "insert into annotations (dataset, item_key, annotator, field, value, updated_at, via) "
                "values (?, ?, ?, ?, ?, ?, ?) "
                "on conflict (dataset, item_key, annotator, field) "
                "do update set value = excluded.value, updated_at = excluded.updated_at, "
                "via = excluded.via",
                [dataset, item_key, annotator, field, new, at, source],
            )
        cursor = db.execute(
            "insert into history (dataset, item_key, annotator, field, old_value, new_value, at, by, "
            "action, via) values (?, ?, ?, ?, ?, ?, ?, ?, 'set', ?)",
            [dataset, item_key, annotator, field, old, new, at, (by or annotator).strip(),
             None if new is None else source],
        )
        return cursor.lastrowid


def get_value(
    db: Database, dataset: str, item_key: str, annotator: str, field: str
) -> Any:
    """The current value of one annotation, or ``None`` when unset."""
    row = db.execute(
        "select value from annotations where dataset = ? and item_key = ? "
        "and annotator = ? and field = ?",
        [dataset, item_key, annotator, field],
    ).fetchone()
    return _load(row[0]) if row else None


def get_via(db: Database, dataset: str, item_key: str, annotator: str, field: str
            ) -> dict[str, Any] | None:
    """Where one annotation's current value came from (its ``via``), or ``None`` (typed,
    or unset)."""
    row = db.execute(
        "select via from annotations where dataset = ? and item_key = ? "
        "and annotator = ? and field = ?",
        [dataset, item_key, annotator, field],
    ).fetchone()
    return json.loads(row[0]) if row and row[0] else None


def item_annotations(
    db: Database,
    dataset: str,
    item_key: str,
    annotator: str | None = None,
    prefix: str = "",
) -> dict[str, Any]:
    """``{field: value}`` of one annotator (or ``{annotator: {field: value}}`` when
    ``annotator`` is None) for one item, restricted to fields starting with ``prefix``."""
    sql = (
        "select annotator, field, value from annotations where dataset = ? and item_key = ? "
        "and field >= ? and field < ?"
    )
    params: list[Any] = [dataset, item_key, prefix, prefix + "\U0010ffff"]
    if annotator is not None:
        sql += " and annotator = ?"
        params.append(annotator)
    rows = db.execute(sql, params).fetchall()
    if annotator is not None:
        return {field: _load(value) for _, field, value in rows}
    out: dict[str, dict[str, Any]] = {}
    for who, field, value in rows:
        out.setdefault(who, {})[field] = _load(value)
    return out


def dataset_annotations(
    db: Database, dataset: str, prefix: str = "", annotator: str | None = None
) -> list[dict[str, Any]]:
    """All current annotations of a dataset as dicts (item_key, annotator, field,
    value, updated_at), optionally for one annotator / field prefix."""
    sql = (
        "select item_key, annotator, field, value, updated_at from annotations "
        "where dataset = ? and field >= ? and field < ?"
    )
    params: list[Any] = [dataset, prefix, prefix + "\U0010ffff"]
    if annotator is not None:
        sql += " and annotator = ?"
        params.append(annotator)
    sql += " order by item_key, annotator, field"
    return [
        {
            "item_key": k,
            "annotator": a,
            "field": f,
            "value": _load(v),
            "updated_at": u,
        }
        for k, a, f, v, u in db.execute(sql, params).fetchall()
    ]


def annotators(db: Database, dataset: str) -> list[str]:
    """Names of everyone who has a current annotation in ``dataset``."""
    rows = db.execute(
        "select distinct annotator from annotations where dataset = ? order by annotator",
        [dataset],
    ).fetchall()
    return [r[0] for r in rows]


def history(
    db: Database,
    dataset: str | None = None,
    item_key: str | None = None,
    annotator: str | None = None,
    limit: int = 200,
) -> list[dict[str, Any]]:
    """The change log, newest first, filtered by any of dataset / item / annotator; each
    row also has ``item_title`` (the question or prompt; ``None`` once the item is gone)."""
    where: list[str] = []
    params: list[Any] = []
    for column, value in (("dataset", dataset), ("item_key", item_key), ("annotator", annotator)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    sql = ("select history.*, items.title as item_title from history left join items "
           "on items.dataset = history.dataset and items.key = history.item_key")
    if where:
        sql += " where " + " and ".join(f"history.{w}" for w in where)
    sql += " order by history.id desc limit ?"
    params.append(limit)
    rows = db.execute_returning_dicts(sql, params)
    for row in rows:
        row["old_value"] = _load(row["old_value"])
        row["new_value"] = _load(row["new_value"])
    return rows


def undo(db: Database, history_id: int, annotator: str, *, action: str = "undo") -> int | None:
    """Revert the change logged as ``history_id``: its field gets back the value it
    had before. The revert is itself logged (``action``: ``undo``, or ``redo`` when it
    reverts an undo), so it can be undone too. ``annotator`` is who performs the undo;
    the value is restored for the annotator of the original change."""
    annotator = (annotator or "").strip()
    if not annotator:
        raise AnnotatorRequired("Enter your annotator name before making changes.")
    rows = db.execute_returning_dicts("select * from history where id = ?", [history_id])
    if not rows:
        raise KeyError(f"no history entry {history_id}")
    entry = rows[0]
    with db.atomic():
        # the value comes back with where it came from: the via of the change that wrote it
        before = db.execute(
            "select via from history where dataset = ? and item_key = ? and annotator = ? "
            "and field = ? and id < ? order by id desc limit 1",
            [entry["dataset"], entry["item_key"], entry["annotator"], entry["field"],
             history_id]).fetchone()
        via = json.loads(before[0]) if before and before[0] else None
        hid = set_annotation(
            db,
            entry["dataset"],
            entry["item_key"],
            entry["annotator"],
            entry["field"],
            _load(entry["old_value"]),
            by=annotator,
            via=via,
        )
        if hid is not None:
            db.execute(
                "update history set action = ?, undoes = ? where id = ?",
                [action, history_id, hid],
            )
    return hid


def group(db: Database, history_ids: list[int]) -> None:
    """Mark the history rows ``history_ids`` (two or more, of one action) as one change:
    :func:`last_undoable` and :func:`last_redoable` then return them together. A single
    row stays ungrouped."""
    ids = sorted(set(history_ids))
    if len(ids) < 2:
        return
    marks = ", ".join("?" * len(ids))
    db.execute(f"update history set grp = ? where id in ({marks})", [ids[0], *ids])


def _fields(prefixes: tuple[str, ...]) -> tuple[str, list[str]]:
    clause = " or ".join("(field >= ? and field < ?)" for _ in prefixes)
    params = [x for p in prefixes for x in (p, p + "\U0010ffff")]
    return f"({clause})", params


def last_undoable(db: Database, dataset: str, who: str,
                  prefixes: tuple[str, ...]) -> list[dict[str, Any]]:
    """What an undo key reverts: ``who``'s newest own change in ``dataset`` (a field
    starting with one of ``prefixes``) that is not undone yet, with the rest of its group
    (:func:`group`: an accept of several fields) not undone yet, newest first; ``[]``:
    nothing."""
    where, params = _fields(prefixes)
    head = ("select * from history h where dataset = ? and annotator = ? and by = ? and "
            f"{where} and action in ('set', 'redo') and not exists "
            "(select 1 from history u where u.undoes = h.id)")
    rows = db.execute_returning_dicts(f"{head} order by id desc limit 1",
                                      [dataset, who, who, *params])
    if not rows or rows[0]["grp"] is None:
        return rows
    return db.execute_returning_dicts(f"{head} and h.grp = ? order by id desc",
                                      [dataset, who, who, *params, rows[0]["grp"]])


def last_redoable(db: Database, dataset: str, who: str,
                  prefixes: tuple[str, ...]) -> list[dict[str, Any]]:
    """What a redo key reverts: ``who``'s newest undo in ``dataset`` not redone yet, when
    no new change of theirs came after it (a new change ends what can be redone, as in
    any editor), with the rest of its group not redone yet, newest first; ``[]``:
    nothing."""
    where, params = _fields(prefixes)
    head = (f"select * from history h where dataset = ? and annotator = ? and by = ? and {where} "
            "and action = 'undo' and not exists (select 1 from history r where r.undoes = h.id) "
            "and not exists (select 1 from history n where n.dataset = h.dataset and n.id > h.id "
            "and n.annotator = h.annotator and n.by = h.by and n.action = 'set' and "
            f"{where.replace('field', 'n.field')})")
    args = [dataset, who, who, *params, *params]
    rows = db.execute_returning_dicts(f"{head} order by id desc limit 1", args)
    if not rows or rows[0]["grp"] is None:
        return rows
    return db.execute_returning_dicts(f"{head} and h.grp = ? order by id desc",
                                      [*args, rows[0]["grp"]])
