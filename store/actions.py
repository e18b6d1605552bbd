"""Which browser actions were already applied, by their client-made id.

The browser gives every key action (a label, a verdict, a deflection) an id and keeps
sending it until the server acknowledges it: after a reconnect, a restart, a reload.
:func:`record` is written in the same transaction as the change the action made, so a
resent action finds itself in :func:`applied` and changes nothing the second time.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlite_utils import Database

from store.annotations import now

_CHUNK = 500  # ids per query (SQLite's variable limit is far above this)


def applied(db: Database, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """``{id: {"outcome", "history_id", "applied_at"}}`` for the ids already applied."""
    wanted = list(dict.fromkeys(ids))
    out: dict[str, dict[str, Any]] = {}
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start:start + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        for row in db.execute_returning_dicts(
            f"select id, outcome, history_id, applied_at from applied_actions where id in ({marks})",
            chunk,
        ):
            out[row.pop("id")] = row
    return out


def record(db: Database, action_id: str, dataset: str, item_key: str, annotator: str,
           kind: str, outcome: str, history_id: int | None = None) -> None:
    """Mark ``action_id`` applied with its outcome (call inside the write's transaction)."""
    db.execute(
        "insert into applied_actions (id, dataset, item_key, annotator, kind, outcome, "
        "history_id, applied_at) values (?, ?, ?, ?, ?, ?, ?, ?)",
        [action_id, dataset, item_key, annotator, kind, outcome, history_id, now()],
    )


def dataset_kind(db: Database, name: str) -> tuple[str, str] | None:
    """``(kind, format)`` of a dataset, or ``None`` when there is none by that name."""
    row = db.execute("select kind, format from datasets where name = ?", [name]).fetchone()
    return (row[0], row[1]) if row else None
