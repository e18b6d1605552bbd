"""A dataset's settings (``dataset_settings``): named values a lead sets per dataset, with
who set them and when. A setting never set reads as its default (the logic's)."""

from __future__ import annotations

import json
from typing import Any

from sqlite_utils import Database


def get_settings(db: Database, dataset: str) -> dict[str, Any]:
    """``{name: value}`` of the settings set on ``dataset``."""
    return {row[0]: json.loads(row[1]) for row in db.execute(
        "select name, value from dataset_settings where dataset = ?", [dataset])}


def set_setting(db: Database, dataset: str, name: str, value: Any, *, by: str, at: str) -> Any:
    """Set one setting; returns the value it had before (``None``: never set)."""
    with db.atomic():
        row = db.execute("select value from dataset_settings where dataset = ? and name = ?",
                         [dataset, name]).fetchone()
        db.execute("insert into dataset_settings (dataset, name, value, updated_by, updated_at) "
                   "values (?, ?, ?, ?, ?) on conflict (dataset, name) do update set "
                   "value = excluded.value, updated_by = excluded.updated_by, "
                   "updated_at = excluded.updated_at",
                   [dataset, name, json.dumps(value), by, at])
    return json.loads(row[0]) if row else None
