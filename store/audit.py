"""Reading the change log (``history``) for audit exports and active-time figures."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlite_utils import Database

COLUMNS = ("id", "dataset", "item_key", "annotator", "field", "old_value", "new_value", "at",
           "by", "action", "undoes")


def iter_history(db: Database, dataset: str, batch: int = 1000) -> Iterator[dict[str, Any]]:
    """Every history row of ``dataset`` in the order written (values as stored: JSON
    text), read ``batch`` rows at a time."""
    last = 0
    while True:
        rows = db.execute_returning_dicts(
            f"select {', '.join(COLUMNS)} from history where dataset = ? and id > ? "
            "order by id limit ?", [dataset, last, batch])
        if not rows:
            return
        yield from rows
        last = rows[-1]["id"]


def events_by(db: Database, who: str) -> list[tuple[str, str, str]]:
    """``(at, dataset, item_key)`` of every change ``who`` made, oldest first (all
    datasets: a gap spent in another dataset is not time on this one)."""
    return [tuple(r) for r in db.execute(
        "select at, dataset, item_key from history where by = ? order by at, id", [who])]


def authors(db: Database, dataset: str) -> list[str]:
    """Everyone who made a change in ``dataset``."""
    return [r[0] for r in db.execute(
        "select distinct by from history where dataset = ? order by by", [dataset])]


def changes(db: Database, dataset: str) -> int:
    """How many history rows ``dataset`` has."""
    return db.execute("select count(*) from history where dataset = ?", [dataset]).fetchone()[0]
