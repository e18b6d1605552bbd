"""Exporting a dataset's change log for audit (admins).

Every change is in ``history`` with ``by``, the person who made it: in team mode the
signed-in user, never a typed name (:mod:`needlework.actions.writes`). The export holds
every row of a dataset in the order written: ``id, dataset, item_key, annotator, field,
old_value, new_value, at, by, action, undoes``. In CSV the values are their JSON text,
as stored; in JSONL they are the JSON values themselves. The file is written whole or
not at all (:func:`needlework.files.atomic_writer`).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from needlework.files import atomic_writer
from needlework.teams.accounts import NOT_SIGNED_IN
from needlework.teams.events import LOCAL
from needlework.teams.permissions import User, check
from store import audit as store_audit
from store.audit import EventFilter
from store.datasets import get_dataset

FORMATS = ("csv", "jsonl")
PER_PAGE = 50  # audit events on one page of the Audit page
SIGN_INS = ("sign_in", "sign_in.refused")  # what "hide sign-ins" leaves out


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


def _bound(value: date | datetime | str | None, what: str) -> datetime | date | None:
    """A date (a whole day) or a moment from ``value`` (``YYYY-MM-DD``, or ISO 8601 with a
    time: without a zone it is UTC)."""
    if value is None or isinstance(value, datetime | date):
        return value
    text = str(value).strip()
    try:
        if len(text) == 10:
            return date.fromisoformat(text)
        return datetime.fromisoformat(text)
    except ValueError:
        raise AuditError(f"{what} {text!r} is not a date (YYYY-MM-DD, or YYYY-MM-DDTHH:MM "
                         "in UTC)") from None


def _iso(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def event_filter(*, actions: Iterable[str] = (), skip: Iterable[str] = (),
                 by: str | None = None, dataset: str | None = None,
                 since: date | datetime | str | None = None,
                 until: date | datetime | str | None = None) -> EventFilter:
    """The audit events of any of ``actions`` (none: every action) but not ``skip``, made
    by ``by``, about ``dataset``, from ``since`` to ``until`` (a date counts whole, UTC: an
    ``until`` date includes that day; a moment counts as it is). Empty text is no filter;
    raises :class:`AuditError` for a date that is not one or a range that ends before it
    starts."""
    start, end = _bound(since or None, "--since"), _bound(until or None, "--until")
    low = None if start is None else (
        _iso(start) if isinstance(start, datetime) else start.isoformat())
    if end is None:
        high = None
    elif isinstance(end, datetime):  # inclusive: the next millisecond is the bound
        high = _iso(end + timedelta(milliseconds=1))
    else:
        high = (end + timedelta(days=1)).isoformat()
    if low is not None and high is not None and high <= low:
        raise AuditError(f"the dates end ({until}) before they start ({since})")
    return EventFilter(actions=tuple(dict.fromkeys(a for a in actions if a)),
                       skip=tuple(dict.fromkeys(a for a in skip if a)),
                       by=by or None, dataset=dataset or None, since=low, before=high)


@dataclass(frozen=True)
class EventPage:
    """One page of audit events, newest first: ``rows`` (``before``/``after`` as JSON
    text), the ``total`` the filter admits, this ``page`` (1-based) of ``pages``."""

    rows: list[dict[str, Any]]
    total: int
    page: int
    pages: int


def event_page(db: Database, filters: EventFilter | None = None, page: int = 1, *,
               per_page: int = PER_PAGE, actor: User | None = None) -> EventPage:
    """Page ``page`` (clamped to the pages there are) of the events ``filters`` admits,
    newest first. Admins only."""
    check(db, actor, "audit", filters.dataset if filters else None)
    total = store_audit.count_events(db, filters)
    pages = max(1, math.ceil(total / per_page))
    page = min(max(1, int(page)), pages)
    return EventPage(store_audit.events_page(db, filters, limit=per_page,
                                             offset=(page - 1) * per_page), total, page, pages)


#: Who an event was by when nobody was: local mode's one person, a refused sign-in.
NOT_PEOPLE = (LOCAL, NOT_SIGNED_IN)


def event_choices(db: Database, *, actor: User | None = None) -> dict[str, list[str]]:
    """The actions, people and datasets the events hold (the filters' options; ``by``
    people only, never :data:`NOT_PEOPLE`). Admins only."""
    check(db, actor, "audit")
    choices = store_audit.event_choices(db)
    return {**choices, "by": [n for n in choices["by"] if n and n not in NOT_PEOPLE]}


def event_records(db: Database, dataset: str | None = None, *,
                  filters: EventFilter | None = None) -> Iterator[dict[str, Any]]:
    """The audit events (of ``dataset``; those ``filters`` admits), oldest first,
    ``before``/``after`` parsed."""
    for row in store_audit.iter_events(db, dataset, where=filters):
        row = dict(row)
        for name in ("before", "after"):
            row[name] = None if row[name] is None else json.loads(row[name])
        yield row


def export_events(db: Database, out: str | Path, *, dataset: str | None = None,
                  filters: EventFilter | None = None, format: str | None = None,
                  actor: User | None = None) -> int:
    """Write the audit events (every one, or those about ``dataset``, which may have been
    deleted since, and those ``filters`` admits) to ``out``, oldest first; returns the
    rows written. Admins only."""
    check(db, actor, "audit", dataset or (filters.dataset if filters else None))
    format = format_for(out, format)
    return _write(out, format, store_audit.EVENT_COLUMNS,
                  store_audit.iter_events(db, dataset, where=filters),
                  event_records(db, dataset, filters=filters))


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
