"""Saved needle-lab reports (table ``needle_reports``, migration m012).

One row per report: the needle ``dataset`` it belongs to, its ``name`` (unique per dataset
up to case), the ``spec`` (JSON written by :meth:`needlework.needle.reports.Report.to_json`:
result sets and slide title), and who saved and last changed it, when. A report follows its
dataset when the dataset is renamed (every table with a ``dataset`` column does) and is kept
when the dataset or its scores are deleted: the lab then says what is gone.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from sqlite_utils import Database

from store.annotations import now


class ReportExists(ValueError):
    """A report of that name already exists for the dataset (names are compared up to case)."""


def _taken(db: Database, dataset: str, name: str, but: int | None = None) -> bool:
    sql = "select id from needle_reports where dataset = ? and name = ? collate nocase"
    return any(row[0] != but for row in db.execute(sql, [dataset, name]))


def save_report(db: Database, dataset: str, name: str, spec: str, by: str) -> int:
    """Store a new report; returns its id. Raises :class:`ReportExists` when ``name`` is taken
    for ``dataset``."""
    if _taken(db, dataset, name):
        raise ReportExists(f"a report named {name!r} already exists for {dataset!r}")
    at = now()
    try:
        with db.atomic():
            cursor = db.execute(
                "insert into needle_reports (dataset, name, spec, created_by, created_at, "
                "updated_by, updated_at) values (?, ?, ?, ?, ?, ?, ?)",
                [dataset, name, spec, by, at, by, at])
    except sqlite3.IntegrityError:  # saved by someone else in between
        raise ReportExists(f"a report named {name!r} already exists for {dataset!r}") from None
    assert cursor.lastrowid is not None  # an insert sets it
    return cursor.lastrowid


def list_reports(db: Database, dataset: str | None = None) -> list[dict[str, Any]]:
    """Reports, newest change first (all, or one dataset's); each row has ``dataset_exists``."""
    sql = ("select r.*, exists(select 1 from datasets d where d.name = r.dataset) as dataset_exists "
           "from needle_reports r")
    params: list[Any] = []
    if dataset is not None:
        sql += " where r.dataset = ?"
        params.append(dataset)
    rows = db.execute_returning_dicts(sql + " order by r.updated_at desc, r.id desc", params)
    for row in rows:
        row["dataset_exists"] = bool(row["dataset_exists"])
    return rows


def get_report(db: Database, report_id: int) -> dict[str, Any] | None:
    """One report row, or ``None``."""
    rows = db.execute_returning_dicts("select * from needle_reports where id = ?", [report_id])
    return rows[0] if rows else None


def rename_report(db: Database, report_id: int, name: str, by: str) -> None:
    """Rename a report. Raises ``KeyError`` when it is gone, :class:`ReportExists` when
    ``name`` is taken by another report of its dataset."""
    row = get_report(db, report_id)
    if row is None:
        raise KeyError(f"no report {report_id}")
    if _taken(db, row["dataset"], name, but=report_id):
        raise ReportExists(f"a report named {name!r} already exists for {row['dataset']!r}")
    with db.atomic():
        db.execute("update needle_reports set name = ?, updated_by = ?, updated_at = ? where id = ?",
                   [name, by, now(), report_id])


def delete_report(db: Database, report_id: int) -> bool:
    """Delete a report; ``False`` when there was none."""
    with db.atomic():
        cursor = db.execute("delete from needle_reports where id = ?", [report_id])
    return cursor.rowcount > 0
