"""Datasets and their items."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from store.annotations import now


class DatasetExists(ValueError):
    """Raised when importing under a name that is already taken (without replace)."""


@dataclass(frozen=True)
class NewItem:
    """One item to insert: its key, optional subset and title, and the record."""

    key: str
    record: dict[str, Any]
    subset: str = ""
    title: str = ""


def create_dataset(
    db: Database,
    name: str,
    kind: str,
    format: str,
    items: Iterable[NewItem],
    *,
    source: str = "",
    created_by: str = "",
    meta: dict[str, Any] | None = None,
    replace: bool = False,
) -> int:
    """Create dataset ``name`` with ``items`` in one transaction; returns the count.

    All-or-nothing: on any error nothing is written. With ``replace=True`` an
    existing dataset of that name (items and annotations too) is replaced.
    """
    with db.atomic():
        exists = db.execute("select 1 from datasets where name = ?", [name]).fetchone()
        if exists and not replace:
            raise DatasetExists(
                f"dataset {name!r} already exists (choose another name, or replace it)"
            )
        if exists:
            _delete(db, name)
        db["datasets"].insert(
            {
                "name": name,
                "kind": kind,
                "format": format,
                "source": source,
                "created_at": now(),
                "created_by": created_by,
                "meta": json.dumps(meta or {}),
            }
        )
        rows = (
            {
                "dataset": name,
                "key": item.key,
                "position": position,
                "subset": item.subset,
                "title": item.title,
                "record": json.dumps(item.record, ensure_ascii=False),
            }
            for position, item in enumerate(items)
        )
        db["items"].insert_all(rows, batch_size=500)
        count = db.execute("select count(*) from items where dataset = ?", [name]).fetchone()[0]
    return count


def _delete(db: Database, name: str) -> None:
    for table in ("annotations", "history", "items"):
        db.execute(f"delete from {table} where dataset = ?", [name])
    db.execute("delete from datasets where name = ?", [name])


def delete_dataset(db: Database, name: str) -> None:
    """Delete a dataset with its items, annotations and history."""
    with db.atomic():
        _delete(db, name)


def list_datasets(db: Database) -> list[dict[str, Any]]:
    """All datasets with ``name, kind, format, source, created_at, items``."""
    rows = db.execute_returning_dicts(
        "select d.name, d.kind, d.format, d.source, d.created_at, "
        "(select count(*) from items i where i.dataset = d.name) as items "
        "from datasets d order by d.created_at, d.name"
    )
    return rows


def get_dataset(db: Database, name: str) -> dict[str, Any] | None:
    """One dataset row (``meta`` parsed) with its item count, or ``None``."""
    rows = db.execute_returning_dicts("select * from datasets where name = ?", [name])
    if not rows:
        return None
    row = rows[0]
    row["meta"] = json.loads(row["meta"] or "{}")
    row["items"] = db.execute(
        "select count(*) from items where dataset = ?", [name]
    ).fetchone()[0]
    return row


def set_dataset_meta(db: Database, name: str, meta: dict[str, Any]) -> None:
    """Replace a dataset's ``meta`` object (e.g. its editable category list)."""
    with db.atomic():
        db.execute("update datasets set meta = ? where name = ?", [json.dumps(meta), name])


def _item(row: dict[str, Any]) -> dict[str, Any]:
    row["record"] = json.loads(row["record"])
    return row


def iter_items(db: Database, name: str) -> Iterator[dict[str, Any]]:
    """Items of a dataset in import order: dicts with ``key, position, subset,
    title, record`` (``record`` parsed)."""
    cursor = db.execute(
        "select key, position, subset, title, record from items "
        "where dataset = ? order by position",
        [name],
    )
    for key, position, subset, title, record in cursor:
        yield {
            "key": key,
            "position": position,
            "subset": subset,
            "title": title,
            "record": json.loads(record),
        }


def item_index(db: Database, name: str) -> list[dict[str, Any]]:
    """Light list of a dataset's items (``key, position, subset, title``), no records."""
    return db.execute_returning_dicts(
        "select key, position, subset, title from items where dataset = ? order by position",
        [name],
    )


def get_item(db: Database, name: str, key: str) -> dict[str, Any] | None:
    """One item by key (``record`` parsed), or ``None``."""
    rows = db.execute_returning_dicts(
        "select key, position, subset, title, record from items where dataset = ? and key = ?",
        [name, key],
    )
    return _item(rows[0]) if rows else None


def annotated_items_by_annotator(db: Database, name: str) -> dict[str, int]:
    """``{annotator: number of items they have annotated}`` for a dataset."""
    rows = db.execute(
        "select annotator, count(distinct item_key) from annotations "
        "where dataset = ? group by annotator order by annotator",
        [name],
    ).fetchall()
    return {a: n for a, n in rows}
