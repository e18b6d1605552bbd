"""Annotation guidelines per dataset: Markdown an admin writes (``guidelines``)."""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database


def get(db: Database, dataset: str) -> dict[str, Any] | None:
    """``{dataset, text, updated_at, updated_by}`` or ``None`` when there are none."""
    rows = db.execute_returning_dicts("select * from guidelines where dataset = ?", [dataset])
    return rows[0] if rows else None


def put(db: Database, dataset: str, text: str, *, by: str, at: str) -> None:
    """Set a dataset's guidelines (empty text removes them)."""
    with db.atomic():
        if not text.strip():
            db.execute("delete from guidelines where dataset = ?", [dataset])
            return
        db.execute(
            "insert into guidelines (dataset, text, updated_at, updated_by) values (?, ?, ?, ?) "
            "on conflict (dataset) do update set text = excluded.text, "
            "updated_at = excluded.updated_at, updated_by = excluded.updated_by",
            [dataset, text, at, by])


def forget(db: Database, dataset: str) -> None:
    """Drop a deleted dataset's guidelines."""
    with db.atomic():
        db.execute("delete from guidelines where dataset = ?", [dataset])
