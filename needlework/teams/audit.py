"""Exporting a dataset's change log for audit (admins).

Every change is in ``history`` with ``by``, the person who made it: in team mode the
signed-in user, never a typed name (:mod:`needlework.teams.writes`). The export holds
every row of a dataset in the order written: ``id, dataset, item_key, annotator, field,
old_value, new_value, at, by, action, undoes``. In CSV the values are their JSON text,
as stored; in JSONL they are the JSON values themselves. The file is written whole or
not at all (:func:`needlework.files.atomic_writer`).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from needlework.files import atomic_writer
from needlework.teams.permissions import User, check
from store import audit as store_audit
from store.datasets import get_dataset

FORMATS = ("csv", "jsonl")


class AuditError(ValueError):
    """The history cannot be exported as asked (the message says why)."""


def format_for(path: str | Path, format: str | None = None) -> str:
    """``format`` if given, else the file's extension (``.csv`` or ``.jsonl``)."""
    if format is None:
        format = Path(path).suffix.lower().lstrip(".")
        if format == "json":
            format = "jsonl"
    if format not in FORMATS:
        raise AuditError(f"{Path(path).name}: export the history as csv or jsonl (give the file "
                         "one of those extensions, or a format)")
    return format


def history_records(db: Database, dataset: str) -> Iterator[dict[str, Any]]:
    """The history rows of ``dataset``, oldest first, values parsed from JSON."""
    for row in store_audit.iter_history(db, dataset):
        row = dict(row)
        for name in ("old_value", "new_value"):
            row[name] = None if row[name] is None else json.loads(row[name])
        yield row


def deleted_history_records(db: Database, dataset: str) -> Iterator[dict[str, Any]]:
    """The history rows of the deleted (or replaced) datasets named ``dataset``, oldest
    first, values parsed from JSON."""
    for row in store_audit.iter_deleted_history(db, dataset):
        for name in ("old_value", "new_value"):
            row[name] = None if row[name] is None else json.loads(row[name])
        yield row


def export_history(db: Database, dataset: str, out: str | Path, *, format: str | None = None,
                   deleted: bool = False, actor: User | None = None) -> int:
    """Write ``dataset``'s history to ``out`` (``deleted``: the history that the deleted or
    replaced datasets of that name left, with when each went); returns the rows
    written. Admins only."""
    check(db, actor, "audit", dataset)
    format = format_for(out, format)
    if deleted:
        return _write(out, format, store_audit.DELETED_COLUMNS,
                      store_audit.iter_deleted_history(db, dataset),
                      deleted_history_records(db, dataset))
    if get_dataset(db, dataset) is None:
        gone = any(d["name"] == dataset for d in store_audit.deleted_datasets(db))
        raise AuditError(f"no dataset named {dataset!r}" + (
            " (the history it had when it was deleted is exported with --deleted)"
            if gone else ""))
    return _write(out, format, store_audit.COLUMNS, store_audit.iter_history(db, dataset),
                  history_records(db, dataset))


def event_records(db: Database, dataset: str | None = None) -> Iterator[dict[str, Any]]:
    """The audit events (of ``dataset``), oldest first, ``before``/``after`` parsed."""
    for row in store_audit.iter_events(db, dataset):
        row = dict(row)
        for name in ("before", "after"):
            row[name] = None if row[name] is None else json.loads(row[name])
        yield row


def export_events(db: Database, out: str | Path, *, dataset: str | None = None,
                  format: str | None = None, actor: User | None = None) -> int:
    """Write the audit events (every one, or those about ``dataset``, which may have been
    deleted since) to ``out``; returns the rows written. Admins only."""
    check(db, actor, "audit", dataset)
    format = format_for(out, format)
    return _write(out, format, store_audit.EVENT_COLUMNS, store_audit.iter_events(db, dataset),
                  event_records(db, dataset))


def _write(out: str | Path, format: str, columns: tuple[str, ...],
           stored: Iterator[dict[str, Any]], parsed: Iterator[dict[str, Any]]) -> int:
    """Write rows whole or not at all: CSV from the ``stored`` rows (values as their JSON
    text), JSONL from the ``parsed`` ones (JSON values). Only the one the format needs is
    read. Returns the rows written."""
    count = 0
    with atomic_writer(out, "w") as f:
        if format == "csv":
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(columns)
            for row in stored:
                writer.writerow(["" if row[c] is None else row[c] for c in columns])
                count += 1
        else:
            for row in parsed:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
                count += 1
    return count
