"""Gold items: items whose right answers a reviewer recorded (``gold_items``).

``answers`` is ``{field: value}`` in the annotation field names (``label:N``,
``dim:FIELD``, ``verdict:I:J``); annotators' values are compared with it.
"""

from __future__ import annotations

import json
from typing import Any

from sqlite_utils import Database


def mark(db: Database, dataset: str, item_key: str, answers: dict[str, Any], *, by: str,
         at: str) -> None:
    """Record (or replace) the known answers of one item."""
    with db.atomic():
        db.execute(
            "insert into gold_items (dataset, item_key, answers, marked_by, marked_at) "
            "values (?, ?, ?, ?, ?) on conflict (dataset, item_key) do update set "
            "answers = excluded.answers, marked_by = excluded.marked_by, "
            "marked_at = excluded.marked_at",
            [dataset, item_key, json.dumps(answers, ensure_ascii=False, sort_keys=True), by, at])


def unmark(db: Database, dataset: str, item_key: str) -> bool:
    """Forget one gold item; True when it was one."""
    with db.atomic():
        return db.execute("delete from gold_items where dataset = ? and item_key = ?",
                          [dataset, item_key]).rowcount > 0


def gold_items(db: Database, dataset: str) -> dict[str, dict[str, Any]]:
    """``{item_key: answers}`` of a dataset's gold items."""
    return {key: json.loads(answers) for key, answers in db.execute(
        "select item_key, answers from gold_items where dataset = ? order by item_key",
        [dataset])}


def is_gold(db: Database, dataset: str, item_key: str) -> bool:
    """Whether one item of ``dataset`` is a gold item."""
    return db.execute("select 1 from gold_items where dataset = ? and item_key = ?",
                      [dataset, item_key]).fetchone() is not None


def gold_rows(db: Database, dataset: str) -> list[dict[str, Any]]:
    """Gold items with who marked them and when (``answers`` parsed)."""
    rows = db.execute_returning_dicts(
        "select item_key, answers, marked_by, marked_at from gold_items where dataset = ? "
        "order by item_key", [dataset])
    for row in rows:
        row["answers"] = json.loads(row["answers"])
    return rows


def gold_count(db: Database, dataset: str) -> int:
    """How many gold items ``dataset`` has."""
    return db.execute("select count(*) from gold_items where dataset = ?",
                      [dataset]).fetchone()[0]
