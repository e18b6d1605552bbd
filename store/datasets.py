"""Datasets and their items.

Dataset names follow one rule (:mod:`store.names`), enforced here for the CLI and the
UI alike when a dataset is created or renamed.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlite_utils import Database

from store.annotations import now
from store.facts import add_item_facts, drop_agreement, drop_item_facts
from store.names import InvalidDatasetName, check_dataset_name, name_key


class DatasetExists(ValueError):
    """Raised when importing under a name that is already taken (without replace)."""


class AnnotationsExist(DatasetExists):
    """Replacing a dataset would delete its annotations and their history; refused
    unless the caller asks to drop them (``drop_annotations=True``)."""

    def __init__(self, name: str, work: DatasetWork):
        self.name = name
        self.work = work
        who = ", ".join(work.annotators[:5]) + (" and others" if len(work.annotators) > 5 else "")
        super().__init__(
            f"dataset {name!r} has {work.annotations} annotation(s) by {who or 'nobody now'} and "
            f"{work.history} change(s) in its history: replacing it would delete them"
        )


def same_name(db: Database, name: str) -> str | None:
    """The existing dataset whose name equals ``name`` up to case and spaces (the exact
    name first), or ``None``."""
    key = name_key(name)
    match = None
    for (existing,) in db.execute("select name from datasets"):
        if existing == name:
            return existing
        if match is None and name_key(existing) == key:
            match = existing
    return match


@dataclass(frozen=True)
class NewItem:
    """One item to insert: its key, optional subset and title, and the record."""

    key: str
    record: dict[str, Any]
    subset: str = ""
    title: str = ""


@dataclass(frozen=True)
class DatasetWork:
    """What people and models have done on a dataset, which replacing it deletes."""

    annotations: int = 0
    history: int = 0
    annotators: list[str] = field(default_factory=list)
    scored_items: int = 0

    @property
    def annotated(self) -> bool:
        return bool(self.annotations or self.history)


def dataset_work(db: Database, name: str) -> DatasetWork:
    """Counts of a dataset's annotations, history entries and model scores."""
    annotations = db.execute("select count(*) from annotations where dataset = ?", [name]).fetchone()[0]
    history = db.execute("select count(*) from history where dataset = ?", [name]).fetchone()[0]
    who = [r[0] for r in db.execute(
        "select distinct annotator from annotations where dataset = ? order by annotator", [name])]
    scored = (db.execute("select count(*) from item_scores where dataset = ?", [name]).fetchone()[0]
              if db["item_scores"].exists() else 0)
    return DatasetWork(annotations, history, who, scored)


def dataset_losses(db: Database, name: str) -> dict[str, int]:
    """What deleting a dataset deletes, counted: ``items``, ``annotations``, ``history``,
    ``annotators``, ``scored_items`` (model scores), ``judge_runs``, ``rag_runs``,
    ``assignments``."""
    work = dataset_work(db, name)
    out = {"items": db.execute("select coalesce(item_count, (select count(*) from items where "
                               "dataset = name)) from datasets where name = ?",
                               [name]).fetchone()[0] or 0,
           "annotations": work.annotations, "history": work.history,
           "annotators": len(work.annotators), "scored_items": work.scored_items}
    for table, key in (("judge_runs", "judge_runs"), ("rag_runs", "rag_runs"),
                       ("assignments", "assignments")):
        out[key] = (db.execute(f"select count(*) from {table} where dataset = ?", [name]).fetchone()[0]
                    if db[table].exists() else 0)
    return out


ItemRow = tuple[str, str, str, str]
"""``(key, subset, title, record as JSON text)``: one item as :class:`DatasetWriter` takes it."""


class DatasetWriter:
    """Adds items to a dataset being created inside :func:`writing_dataset`'s transaction."""

    def __init__(self, db: Database, name: str, kind: str = "", format: str = ""):
        self.db = db
        self.name = name
        self.kind = kind
        self.format = format
        self.count = 0

    def existing(self, keys: Sequence[str]) -> dict[str, int]:
        """``{key: position}`` for those of ``keys`` already written to this dataset."""
        found: dict[str, int] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(self.db.execute(
                f"select key, position from items where dataset = ? and key in ({marks})",
                [self.name, *chunk]).fetchall())
        return found

    def add(self, rows: Iterable[ItemRow]) -> int:
        """Insert rows in order (positions continue from the last), with their facts
        (:mod:`store.facts`); returns how many. A key already in the dataset raises
        ``sqlite3.IntegrityError`` (check with :meth:`existing` first to report it)."""
        start = self.count
        values = [(self.name, key, start + i, subset, title, record)
                  for i, (key, subset, title, record) in enumerate(rows)]
        self.db.conn.executemany(
            "insert into items (dataset, key, position, subset, title, record) "
            "values (?, ?, ?, ?, ?, ?)", values)
        add_item_facts(self.db, self.name, self.kind, self.format, start,
                       [(v[1], v[4]) for v in values])
        self.count += len(values)
        return len(values)


@contextlib.contextmanager
def writing_dataset(
    db: Database,
    name: str,
    kind: str,
    format: str,
    *,
    source: str = "",
    created_by: str = "",
    meta: dict[str, Any] | None = None,
    replace: bool = False,
    drop_annotations: bool = False,
) -> Iterator[DatasetWriter]:
    """Create dataset ``name`` and yield a :class:`DatasetWriter` for its items, all in
    one transaction: an exception inside the block leaves the database as it was.

    The name is checked (:func:`check_dataset_name`; it must be given trimmed). A name
    taken up to case and spaces raises :class:`DatasetExists`, unless it is the exact
    name and ``replace`` is set. Replacing deletes the old items and their model
    scores; when the dataset has annotations or history it raises
    :class:`AnnotationsExist` unless ``drop_annotations`` is set too (then they go).
    """
    if check_dataset_name(name) != name:
        raise InvalidDatasetName(f"the dataset name {name!r} has surrounding spaces")
    with db.atomic():
        taken = same_name(db, name)
        if taken is not None and (taken != name or not replace):
            if taken == name:
                raise DatasetExists(f"dataset {name!r} already exists (choose another name, or "
                                    "replace it)")
            raise DatasetExists(f"the name {name!r} is taken by dataset {taken!r}: names that "
                                "differ only in case or spaces are the same name")
        if taken is not None:
            work = dataset_work(db, name)
            if work.annotated and not drop_annotations:
                raise AnnotationsExist(name, work)
            _delete(db, name)
        db.table("datasets").insert(
            {
                "name": name,
                "kind": kind,
                "format": format,
                "source": source,
                "created_at": now(),
                "created_by": created_by,
                "meta": json.dumps(meta or {}),
            }
        )
        writer = DatasetWriter(db, name, kind, format)
        yield writer
        db.execute("update datasets set item_count = ? where name = ?", [writer.count, name])


def create_dataset(
    db: Database,
    name: str,
    kind: str,
    format: str,
    items: Iterable[NewItem],
    *,
    source: str = "",
    created_by: str = "",
    meta: dict[str, Any] | None = None,
    replace: bool = False,
    drop_annotations: bool = False,
) -> int:
    """Create dataset ``name`` with ``items`` in one transaction; returns the count.

    All-or-nothing: on any error nothing is written. ``replace`` and
    ``drop_annotations`` as in :func:`writing_dataset`.
    """
    with writing_dataset(db, name, kind, format, source=source, created_by=created_by, meta=meta,
                         replace=replace, drop_annotations=drop_annotations) as writer:
        batch: list[ItemRow] = []
        for item in items:
            batch.append((item.key, item.subset, item.title,
                          json.dumps(item.record, ensure_ascii=False)))
            if len(batch) >= 500:
                writer.add(batch)
                batch = []
        writer.add(batch)
    return writer.count


# Tables whose rows belong to one dataset's items and go with them.
_ITEM_TABLES = ("annotations", "history", "items", "item_scores", "suggestions")


def _delete(db: Database, name: str) -> None:
    drop_item_facts(db, name)  # first: the annotations' triggers then have nothing to update
    if db["deleted_history"].exists():  # the change log outlives the dataset
        db.execute(
            "insert into deleted_history (about_dataset, deleted_at, history_id, item_key, "
            "annotator, field, old_value, new_value, at, by, action, undoes, via) "
            "select dataset, strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now'), id, item_key, "
            "annotator, field, old_value, new_value, at, by, action, undoes, via from history "
            "where dataset = ? order by id", [name])
    for table in _ITEM_TABLES:
        if db[table].exists():
            db.execute(f"delete from {table} where dataset = ?", [name])
    drop_agreement(db, name)  # last: the annotations' triggers updated it as they went
    if db["judge_runs"].exists():  # LLM-judge results on the old items
        if db["judge_results"].exists():
            db.execute("delete from judge_results where run_key in "
                       "(select run_key from judge_runs where dataset = ?)", [name])
        db.execute("delete from judge_runs where dataset = ?", [name])
    db.execute("delete from datasets where name = ?", [name])


def delete_dataset(db: Database, name: str) -> None:
    """Delete a dataset with its items, annotations, history, model and judge scores."""
    with db.atomic():
        _delete(db, name)


_ITEMS = ("coalesce(d.item_count, (select count(*) from items i where i.dataset = d.name)) "
          "as items")


class DatasetBusy(ValueError):
    """A dataset with a job still running cannot be renamed."""


def _dataset_tables(db: Database) -> list[str]:
    """Every table with a ``dataset`` column (items, annotations, history, scores, facts,
    jobs, judge and RAG runs, assignments, ...: whoever added them)."""
    names = [r[0] for r in db.execute("select name from sqlite_master where type = 'table' "
                                      "and name not like 'sqlite_%'")]
    return [n for n in names if n != "datasets" and any(
        c[1] == "dataset" for c in db.execute(f"pragma table_info({json.dumps(n)})"))]


def rename_dataset(db: Database, old: str, new: str) -> str:
    """Rename dataset ``old`` to ``new`` (checked by the name rule; returned trimmed),
    everything that belongs to it following in one transaction. Raises ``KeyError``
    when there is no ``old``, :class:`DatasetExists` when ``new`` is taken up to case
    and spaces, :class:`DatasetBusy` while one of its jobs runs."""
    new = check_dataset_name(new)
    with db.atomic():
        if db.execute("select 1 from datasets where name = ?", [old]).fetchone() is None:
            raise KeyError(f"no dataset {old!r}")
        taken = same_name(db, new)
        if taken is not None and taken != old:
            raise DatasetExists(f"the name {new!r} is taken by dataset {taken!r}")
        if new == old:
            return new
        for table in ("jobs", "judge_runs", "rag_runs"):
            if db[table].exists() and db.execute(
                    f"select 1 from {table} where dataset = ? and status in ('queued', 'running')",
                    [old]).fetchone():
                raise DatasetBusy(f"dataset {old!r} has a job running: rename it when it is done")
        db.execute("pragma defer_foreign_keys = on")  # items and what references them move together
        # progress is made again by the annotations' triggers as they move, which read the
        # item facts under the new name: facts first, progress dropped, then the rest
        for table in ("item_progress", "progress_totals"):
            db.execute(f"delete from {table} where dataset = ?", [old])
        tables = [t for t in _dataset_tables(db) if t not in ("item_progress", "progress_totals")]
        for table in sorted(tables, key=lambda t: t not in ("grounding_items", "preference_items")):
            db.execute(f"update {json.dumps(table)} set dataset = ? where dataset = ?", [new, old])
        db.execute("update datasets set name = ? where name = ?", [new, old])
    return new


def set_archived(db: Database, name: str, archived: bool) -> None:
    """Archive a dataset (hidden from the pickers, kept whole) or bring it back."""
    with db.atomic():
        found = db.execute("update datasets set archived_at = ? where name = ?",
                           [now() if archived else None, name]).rowcount
    if not found:
        raise KeyError(f"no dataset {name!r}")


def list_datasets(db: Database, *, archived: bool = False) -> list[dict[str, Any]]:
    """The datasets (not archived ones, unless ``archived``) with ``name, kind, format,
    source, created_at, created_by, archived_at, items``, oldest first. Counts nothing:
    the item count is stored with the dataset."""
    where = "" if archived else " where d.archived_at is null"
    return db.execute_returning_dicts(
        "select d.name, d.kind, d.format, d.source, d.created_at, d.created_by, d.archived_at, "
        f"{_ITEMS} from datasets d{where} order by d.created_at, d.name"
    )


def get_dataset(db: Database, name: str) -> dict[str, Any] | None:
    """One dataset row (``meta`` parsed) with its item count, or ``None``."""
    rows = db.execute_returning_dicts("select * from datasets where name = ?", [name])
    if not rows:
        return None
    row = rows[0]
    row["meta"] = json.loads(row["meta"] or "{}")
    row["items"] = row.pop("item_count", None)
    if row["items"] is None:
        row["items"] = db.execute("select count(*) from items where dataset = ?", [name]).fetchone()[0]
    return row


def dataset_version(db: Database, name: str) -> str:
    """What changes whenever the dataset's items do, in one indexed read (a cache key that
    holds across server processes): its import time and item count; ``""`` when there is
    no such dataset. Items are written only by an import, which writes a new row."""
    row = db.execute("select created_at, item_count from datasets where name = ?",
                     [name]).fetchone()
    return f"{row[0]}|{row[1]}" if row else ""


def set_dataset_meta(db: Database, name: str, meta: dict[str, Any]) -> None:
    """Replace a dataset's ``meta`` object (e.g. its editable category list)."""
    with db.atomic():
        db.execute("update datasets set meta = ? where name = ?", [json.dumps(meta), name])


def _item(row: dict[str, Any]) -> dict[str, Any]:
    row["record"] = json.loads(row["record"])
    return row


def iter_items(db: Database, name: str) -> Iterator[dict[str, Any]]:
    """Items of a dataset in import order: dicts with ``key, position, subset,
    title, record`` (``record`` parsed)."""
    cursor = db.execute(
        "select key, position, subset, title, record from items "
        "where dataset = ? order by position",
        [name],
    )
    for key, position, subset, title, record in cursor:
        yield {
            "key": key,
            "position": position,
            "subset": subset,
            "title": title,
            "record": json.loads(record),
        }


def items_page(db: Database, name: str, after: int = -1, limit: int = 100
               ) -> list[dict[str, Any]]:
    """Up to ``limit`` items of a dataset after import position ``after``, in import
    order (as :func:`iter_items`): the way through a large dataset in bounded memory,
    with no read held open between pages."""
    rows = db.execute_returning_dicts(
        "select key, position, subset, title, record from items "
        "where dataset = ? and position > ? order by position limit ?",
        [name, after, limit],
    )
    return [_item(row) for row in rows]


def item_index(db: Database, name: str) -> list[dict[str, Any]]:
    """Light list of a dataset's items (``key, position, subset, title``), no records."""
    return db.execute_returning_dicts(
        "select key, position, subset, title from items where dataset = ? order by position",
        [name],
    )


def get_item(db: Database, name: str, key: str) -> dict[str, Any] | None:
    """One item by key (``record`` parsed), or ``None``."""
    rows = db.execute_returning_dicts(
        "select key, position, subset, title, record from items where dataset = ? and key = ?",
        [name, key],
    )
    return _item(rows[0]) if rows else None


def annotated_items_by_annotator(db: Database, name: str) -> dict[str, int]:
    """``{annotator: number of items they have annotated}`` for a dataset."""
    rows = db.execute(
        "select annotator, count(distinct item_key) from annotations "
        "where dataset = ? group by annotator order by annotator",
        [name],
    ).fetchall()
    return {a: n for a, n in rows}


def item_places(db: Database, name: str, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
    """``{key: {"position", "title"}}`` of the items of ``keys`` in dataset ``name`` (keys it
    does not hold are left out), read 500 keys at a time."""
    wanted = list(dict.fromkeys(keys))
    out: dict[str, dict[str, Any]] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start:start + 500]
        for row in db.execute_returning_dicts(
                f"select key, position, title from items where dataset = ? and key in "
                f"({', '.join('?' * len(chunk))})", [name, *chunk]):
            out[row["key"]] = {"position": row["position"], "title": row["title"]}
    return out
