"""Who annotates which item, in what order, and how far they are (SQL aggregates).

One row of ``assignments`` per (dataset, item, annotator), with the item's place in
that annotator's queue (``queue_pos``) and how many units finish it (``units``:
passages of a grounding item, comparisons of a preference or needle item). An
assignment is **done** when the annotator's own annotations cover it, the same rule
as the annotate and review pages: every passage labelled and an answer written (or
the deflection) for grounding; a verdict on every comparison for preference and needle
items. ``gold`` marks gold items; nothing meant for annotators reads it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from store.agreement import recounted
from store.own_work import started_sql

_PROGRESS = ("(select {column} from item_progress p where p.dataset = a.dataset "
             "and p.item_key = a.item_key and p.annotator = a.annotator)")

#: 1 when the assignment ``a`` is done, else 0: the pages' own rule, kept by SQL as the
#: annotations are written (``item_progress.done``, store.migrations m008): every passage
#: labelled and an answer with no marker pointing to no passage (grounding), a verdict on
#: every comparison (preference, needle).
DONE_SQL = "coalesce(" + _PROGRESS.format(column="p.done") + ", 0)"

#: 1 when the annotator has set anything on the item that is no mark (adjudications aside;
#: an item only flagged, skipped or commented is not started).
STARTED_SQL = "coalesce(" + _PROGRESS.format(column=started_sql("p")) + ", 0)"

_STATUS = (f"select a.dataset, a.item_key, a.annotator, a.queue_pos, a.units, a.gold, a.source, "
           f"{DONE_SQL} as done, {STARTED_SQL} as started from assignments a "
           "join datasets d on d.name = a.dataset")


@dataclass(frozen=True)
class Row:
    """One assignment to write."""

    item_key: str
    annotator: str
    queue_pos: float
    units: int
    gold: bool = False
    source: str = "plan"


def is_assigned(db: Database, dataset: str, item_key: str, annotator: str) -> bool:
    """Whether ``item_key`` is in ``annotator``'s queue."""
    return db.execute("select 1 from assignments where dataset = ? and item_key = ? and "
                      "annotator = ?", [dataset, item_key, annotator]).fetchone() is not None


def count(db: Database, dataset: str) -> int:
    """Assignments of a dataset."""
    return db.execute("select count(*) from assignments where dataset = ?",
                      [dataset]).fetchone()[0]


def _insert(db: Database, dataset: str, rows: Iterable[Row], at: str, by: str) -> int:
    values = [(dataset, r.item_key, r.annotator, r.queue_pos, r.units, int(r.gold), r.source,
               at, by) for r in rows]
    db.conn.executemany(
        "insert into assignments (dataset, item_key, annotator, queue_pos, units, gold, source, "
        "assigned_at, assigned_by) values (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "on conflict (dataset, item_key, annotator) do update set "
        "gold = max(assignments.gold, excluded.gold)", values)
    return len(values)


def replace_plan(db: Database, dataset: str, rows: Iterable[Row], *, annotators: list[str],
                 overlap: int, double_share: float, seed: int, at: str, by: str) -> int:
    """Drop every assignment of ``dataset`` and write ``rows`` and the plan, in one
    transaction; returns the rows written."""
    with recounted(db, dataset):
        db.execute("delete from assignments where dataset = ?", [dataset])
        written = _insert(db, dataset, rows, at, by)
        db.execute(
            "insert into assignment_plans (dataset, annotators, overlap, double_share, seed, "
            "created_at, created_by) values (?, ?, ?, ?, ?, ?, ?) on conflict (dataset) do "
            "update set annotators = excluded.annotators, overlap = excluded.overlap, "
            "double_share = excluded.double_share, seed = excluded.seed, "
            "created_at = excluded.created_at, created_by = excluded.created_by",
            [dataset, json.dumps(annotators, ensure_ascii=False), overlap, double_share, seed,
             at, by])
    return written


def add(db: Database, dataset: str, rows: Iterable[Row], *, at: str, by: str) -> int:
    """Add assignments (an existing one only gains the gold mark)."""
    rows = list(rows)
    with recounted(db, dataset, [r.item_key for r in rows]):
        return _insert(db, dataset, rows, at, by)


def get_plan(db: Database, dataset: str) -> dict[str, Any] | None:
    """The dataset's plan (``annotators`` parsed), or ``None``."""
    rows = db.execute_returning_dicts("select * from assignment_plans where dataset = ?",
                                      [dataset])
    if not rows:
        return None
    row = rows[0]
    row["annotators"] = json.loads(row["annotators"])
    return row


def forget_plan(db: Database, dataset: str) -> None:
    """Drop a deleted dataset's plan (its assignments went with its items)."""
    with db.atomic():
        db.execute("delete from assignment_plans where dataset = ?", [dataset])


def set_plan_annotators(db: Database, dataset: str, annotators: list[str]) -> None:
    """Change the annotator list of an existing plan."""
    with db.atomic():
        db.execute("update assignment_plans set annotators = ? where dataset = ?",
                   [json.dumps(annotators, ensure_ascii=False), dataset])


def status(db: Database, dataset: str, annotator: str | None = None,
           item_key: str | None = None) -> list[dict[str, Any]]:
    """Assignments with ``done`` and ``started`` (0/1), in queue order per annotator."""
    sql, params = _STATUS + " where a.dataset = ?", [dataset]
    if annotator is not None:
        sql += " and a.annotator = ?"
        params.append(annotator)
    if item_key is not None:
        sql += " and a.item_key = ?"
        params.append(item_key)
    sql += " order by a.annotator, a.queue_pos, a.item_key"
    return db.execute_returning_dicts(sql, params)


def next_unfinished(db: Database, dataset: str, annotator: str,
                    after: float | None = None) -> str | None:
    """The first item of ``annotator``'s queue not done, after queue place ``after``
    when given (wrapping around to the start)."""
    base = _STATUS + f" where a.dataset = ? and a.annotator = ? and not {DONE_SQL}"
    if after is not None:
        row = db.execute(base + " and a.queue_pos > ? order by a.queue_pos, a.item_key limit 1",
                         [dataset, annotator, after]).fetchone()
        if row is not None:
            return row[1]
    row = db.execute(base + " order by a.queue_pos, a.item_key limit 1",
                     [dataset, annotator]).fetchone()
    return row[1] if row else None


def queue_keys(db: Database, dataset: str, annotator: str) -> list[str]:
    """``annotator``'s items in queue order (keys only: an index scan, no progress)."""
    return [r[0] for r in db.execute(
        "select item_key from assignments where dataset = ? and annotator = ? "
        "order by queue_pos, item_key", [dataset, annotator])]


def queue_pos(db: Database, dataset: str, item_key: str, annotator: str) -> float | None:
    """Where ``item_key`` is in ``annotator``'s queue."""
    row = db.execute("select queue_pos from assignments where dataset = ? and item_key = ? "
                     "and annotator = ?", [dataset, item_key, annotator]).fetchone()
    return row[0] if row else None


def loads(db: Database, dataset: str) -> dict[str, int]:
    """``{annotator: assignments}`` in a dataset."""
    return {a: n for a, n in db.execute(
        "select annotator, count(*) from assignments where dataset = ? group by annotator",
        [dataset])}


def datasets_of(db: Database, annotator: str) -> list[str]:
    """The datasets where ``annotator`` has assignments, by name (one index probe per
    dataset: ``assignments_queue`` starts with dataset, annotator)."""
    return [r[0] for r in db.execute(
        "select name from datasets d where exists (select 1 from assignments a where "
        "a.dataset = d.name and a.annotator = ?) order by name", [annotator])]


def assignees(db: Database, dataset: str, item_key: str) -> list[str]:
    """Who has ``item_key`` in their queue."""
    return [r[0] for r in db.execute(
        "select annotator from assignments where dataset = ? and item_key = ? order by annotator",
        [dataset, item_key])]


def assignees_by_item(db: Database, dataset: str) -> dict[str, set[str]]:
    """``{item_key: annotators}`` of every assigned item of ``dataset``."""
    out: dict[str, set[str]] = {}
    for key, who in db.execute("select item_key, annotator from assignments where dataset = ?",
                               [dataset]):
        out.setdefault(key, set()).add(who)
    return out


def move(db: Database, dataset: str, item_key: str, old: str, new: str, *, at: str,
         by: str) -> None:
    """Give ``old``'s assignment of ``item_key`` to ``new``."""
    with recounted(db, dataset, [item_key]):
        db.execute("update assignments set annotator = ?, source = 'reassigned', "
                   "assigned_at = ?, assigned_by = ? where dataset = ? and item_key = ? "
                   "and annotator = ?", [new, at, by, dataset, item_key, old])


def remove(db: Database, dataset: str, item_key: str, annotator: str) -> None:
    """Drop one assignment."""
    with recounted(db, dataset, [item_key]):
        db.execute("delete from assignments where dataset = ? and item_key = ? "
                   "and annotator = ?", [dataset, item_key, annotator])


def clear_gold(db: Database, dataset: str, item_key: str) -> int:
    """Unmark a gold item in every queue: the assignments it added that are not done go,
    the others lose the mark. Returns the assignments removed."""
    with recounted(db, dataset, [item_key]):
        gone = db.execute(
            "delete from assignments where rowid in (select a.rowid from assignments a "
            f"join datasets d on d.name = a.dataset where a.dataset = ? and a.item_key = ? "
            f"and a.source = 'gold' and not {DONE_SQL})", [dataset, item_key]).rowcount
        db.execute("update assignments set gold = 0 where dataset = ? and item_key = ?",
                   [dataset, item_key])
    return gone


def progress_by_annotator(db: Database, dataset: str) -> list[dict[str, Any]]:
    """Per annotator: ``assigned``, ``done``, ``started`` (begun, not done), ``remaining``."""
    return db.execute_returning_dicts(
        f"with s as ({_STATUS} where a.dataset = ?) "
        "select annotator, count(*) as assigned, sum(done) as done, "
        "sum(started and not done) as started, count(*) - sum(done) as remaining "
        "from s group by annotator order by annotator", [dataset])


def progress_by_dataset(db: Database, dataset: str | None = None) -> list[dict[str, Any]]:
    """Per dataset with assignments: ``items`` (in the dataset), ``assigned_items``,
    ``assignments``, ``done`` (assignments), ``complete_items`` (every assignee done),
    ``annotators``."""
    where, params = ("where a.dataset = ?", [dataset]) if dataset is not None else ("", [])
    return db.execute_returning_dicts(
        f"with s as ({_STATUS} {where}), "
        "per_item as (select dataset, item_key, min(done) as complete from s "
        "group by dataset, item_key) "
        "select s.dataset, (select count(*) from items i where i.dataset = s.dataset) as items, "
        "count(distinct s.item_key) as assigned_items, count(*) as assignments, "
        "sum(s.done) as done, (select count(*) from per_item p where p.dataset = s.dataset "
        "and p.complete = 1) as complete_items, count(distinct s.annotator) as annotators "
        "from s group by s.dataset order by s.dataset", params)


def gold_loads(db: Database, dataset: str) -> dict[str, tuple[int, int]]:
    """``{annotator: (gold items, items)}`` of every queue of ``dataset``: its
    assignments, and how many of them are items of ``gold_items`` (done or not)."""
    return {who: (gold, items) for who, gold, items in db.execute(
        "select a.annotator, count(g.item_key), count(*) from assignments a "
        "left join gold_items g on g.dataset = a.dataset and g.item_key = a.item_key "
        "where a.dataset = ? group by a.annotator", [dataset])}
