"""Reading the change log (``history``) for audit exports and active-time figures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

COLUMNS = ("id", "dataset", "item_key", "annotator", "field", "old_value", "new_value", "at",
           "by", "action", "undoes", "via")


#: The columns of a deleted dataset's history (``deleted_history``), in export order.
DELETED_COLUMNS = ("history_id", "about_dataset", "deleted_at", "item_key", "annotator",
                   "field", "old_value", "new_value", "at", "by", "action", "undoes", "via")


def _paged(db: Database, select: str, params: list[Any],
           batch: int) -> Iterator[dict[str, Any]]:
    """The rows of ``select`` (its ``where`` clause ends with ``and id > ?``; ``id`` is
    selected), in id order, ``batch`` rows at a time."""
    last = 0
    while True:
        rows = db.execute_returning_dicts(select + " order by id limit ?",
                                          [*params, last, batch])
        if not rows:
            return
        yield from rows
        last = rows[-1]["id"]


def iter_deleted_history(db: Database, dataset: str,
                         batch: int = 1000) -> Iterator[dict[str, Any]]:
    """Every history row of the deleted (or replaced) datasets named ``dataset``, in the
    order they were written, ``batch`` rows at a time."""
    for row in _paged(db, f"select id, {', '.join(DELETED_COLUMNS)} from deleted_history "
                      "where about_dataset = ? and id > ?", [dataset], batch):
        yield {k: v for k, v in row.items() if k != "id"}


def deleted_datasets(db: Database) -> list[dict[str, Any]]:
    """``name, deleted_at`` (the last deletion) and ``changes`` of every dataset name with
    a deleted history, newest deletion first."""
    return db.execute_returning_dicts(
        "select about_dataset as name, max(deleted_at) as deleted_at, count(*) as changes "
        "from deleted_history group by about_dataset order by 2 desc, 1")


EVENT_COLUMNS = ("id", "at", "by", "action", "target", "about_dataset", "before", "after")


def add_event(db: Database, *, at: str, by: str, action: str, target: str,
              dataset: str | None = None, before: Any = None, after: Any = None) -> int:
    """Append one audit event (``before`` and ``after`` stored as JSON); returns its id."""
    with db.atomic():
        cursor = db.execute(
            "insert into audit_events (at, by, action, target, about_dataset, before, after) "
            "values (?, ?, ?, ?, ?, ?, ?)",
            [at, by, action, target, dataset,
             None if before is None else json.dumps(before, ensure_ascii=False, sort_keys=True),
             None if after is None else json.dumps(after, ensure_ascii=False, sort_keys=True)],
        )
    assert cursor.lastrowid is not None  # an insert sets it
    return cursor.lastrowid


@dataclass(frozen=True)
class EventFilter:
    """Which audit events to read: ``actions`` (any of them; empty: every action) but not
    ``skip``, ``by`` one person, ``dataset`` one ``about_dataset``, and ``at`` from
    ``since`` (inclusive) to ``before`` (exclusive), both ISO 8601 UTC text compared as
    text (a date such as ``2026-11-28`` is a bound at that day's start)."""

    actions: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    by: str | None = None
    dataset: str | None = None
    since: str | None = None
    before: str | None = None


def _event_where(f: EventFilter | None) -> tuple[str, list[Any]]:
    """The ``where`` conditions of ``f`` (joined by ``and``, or ``1``) and their values."""
    if f is None:
        return "1", []
    terms: list[str] = []
    params: list[Any] = []
    if f.actions:
        terms.append(f"action in ({', '.join('?' * len(f.actions))})")
        params += f.actions
    if f.skip:
        terms.append(f"action not in ({', '.join('?' * len(f.skip))})")
        params += f.skip
    for column, value in (("by", f.by), ("about_dataset", f.dataset)):
        if value is not None:
            terms.append(f"{column} = ?")
            params.append(value)
    if f.since is not None:
        terms.append("at >= ?")
        params.append(f.since)
    if f.before is not None:
        terms.append("at < ?")
        params.append(f.before)
    return " and ".join(terms) or "1", params


def iter_events(db: Database, dataset: str | None = None, batch: int = 1000, *,
                where: EventFilter | None = None) -> Iterator[dict[str, Any]]:
    """Every audit event (of ``dataset``, when given; those ``where`` admits) in the order
    written, ``before`` and ``after`` as JSON text, read ``batch`` rows at a time."""
    if dataset is not None:
        base = where or EventFilter()
        where = EventFilter(base.actions, base.skip, base.by, dataset, base.since, base.before)
    terms, params = _event_where(where)
    last = 0
    while True:
        rows = db.execute_returning_dicts(
            f"select {', '.join(EVENT_COLUMNS)} from audit_events where id > ? and {terms} "
            "order by id limit ?", [last, *params, batch])
        if not rows:
            return
        yield from rows
        last = rows[-1]["id"]


def count_events(db: Database, where: EventFilter | None = None) -> int:
    """How many audit events ``where`` admits (all of them without one)."""
    terms, params = _event_where(where)
    return db.execute(f"select count(*) from audit_events where {terms}", params).fetchone()[0]


def events_page(db: Database, where: EventFilter | None = None, *, limit: int = 50,
                offset: int = 0) -> list[dict[str, Any]]:
    """The audit events ``where`` admits, newest first, ``limit`` of them after the first
    ``offset``."""
    terms, params = _event_where(where)
    return db.execute_returning_dicts(
        f"select {', '.join(EVENT_COLUMNS)} from audit_events where {terms} "
        "order by id desc limit ? offset ?", [*params, limit, offset])


def event_choices(db: Database) -> dict[str, list[str]]:
    """What the events' filters can pick: ``actions``, ``by`` (people) and ``datasets``
    that occur, each sorted."""
    return {
        "actions": [r[0] for r in db.execute("select distinct action from audit_events "
                                             "order by action")],
        "by": [r[0] for r in db.execute("select distinct by from audit_events order by by")],
        "datasets": [r[0] for r in db.execute(
            "select distinct about_dataset from audit_events where about_dataset is not null "
            "order by about_dataset")],
    }


def recent_events(db: Database, limit: int = 200) -> list[dict[str, Any]]:
    """The latest ``limit`` audit events, newest first."""
    return db.execute_returning_dicts(
        f"select {', '.join(EVENT_COLUMNS)} from audit_events order by id desc limit ?", [limit])


def iter_history(db: Database, dataset: str, batch: int = 1000) -> Iterator[dict[str, Any]]:
    """Every history row of ``dataset`` in the order written (values as stored: JSON
    text), read ``batch`` rows at a time."""
    yield from _paged(db, f"select {', '.join(COLUMNS)} from history where dataset = ? "
                      "and id > ?", [dataset], batch)


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
