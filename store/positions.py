"""Where each browser tab is on the annotate and review pages (table ``tab_positions``,
migration m018). The rules live in :mod:`needlework.actions.positions`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlite_utils import Database

from store.annotations import now


def get(db: Database, who: str, tab: str, page: str, dataset: str) -> dict[str, Any] | None:
    """The tab's row (``item_key``, ``i``, ``j``, ``cursor``, ``seq``, ``updated_at``), or
    ``None``."""
    rows = db.execute_returning_dicts(
        "select item_key, i, j, cursor, seq, updated_at from tab_positions where who = ? and tab = ? "
        "and page = ? and dataset = ?", [who, tab, page, dataset])
    return rows[0] if rows else None


def latest(db: Database, who: str, page: str, dataset: str) -> dict[str, Any] | None:
    """The row of ``who``'s tab that moved last on ``page`` of ``dataset`` (the columns of
    :func:`get`), or ``None``."""
    rows = db.execute_returning_dicts(
        "select item_key, i, j, cursor, seq, updated_at from tab_positions where who = ? "
        "and page = ? and dataset = ? order by updated_at desc, seq desc limit 1",
        [who, page, dataset])
    return rows[0] if rows else None


def last_saved(db: Database, dataset: str, annotator: str,
               prefix: str = "") -> dict[str, Any] | None:
    """``annotator``'s newest change in ``dataset`` (``item_key``, ``field``, ``at``) of a
    field starting with ``prefix`` (any field when empty), undos and redos included;
    ``None``: none."""
    rows = db.execute_returning_dicts(
        "select item_key, field, at from history where dataset = ? and annotator = ? "
        "and field >= ? and field < ? order by id desc limit 1",
        [dataset, annotator, prefix, prefix + "\U0010ffff"])
    return rows[0] if rows else None


def put(db: Database, who: str, tab: str, page: str, dataset: str, item_key: str, *,
        i: int, j: int, cursor: int, seq: int) -> None:
    """Write the tab's row (in the caller's transaction, if any)."""
    db.execute(
        "insert into tab_positions (who, tab, page, dataset, item_key, i, j, cursor, seq, "
        "updated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (who, tab, page, dataset) "
        "do update set item_key = excluded.item_key, i = excluded.i, j = excluded.j, "
        "cursor = excluded.cursor, seq = excluded.seq, updated_at = excluded.updated_at",
        [who, tab, page, dataset, item_key, i, j, cursor, seq, now()])


def forget_older_than(db: Database, days: int) -> int:
    """Delete the rows of tabs that have not moved for ``days`` days; returns how many."""
    cutoff = (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="milliseconds")
    return db.execute("delete from tab_positions where updated_at < ?", [cutoff]).rowcount
