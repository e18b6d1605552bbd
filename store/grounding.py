"""SQL for grounding annotation: item summaries, per-annotator progress, disagreements."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from sqlite_utils import Database

from store.facts import DIM_COLUMNS
from store.migrations_facts_early import counted
from store.own_work import started_sql

#: Record fields read for the question list (one json_extract call per record).
SUMMARY_FIELDS = (
    "question_valid", "question_false_premise", "question_seeking", "question_sensitive",
    "question_type", "question_complexity", "question_popularity", "question_category",
    "answer_generate", "evidence_correct", "evidence_relevant",
)


def _only(keys: Collection[str] | None, params: list[Any]) -> str:
    """An ``and item_key in (...)`` clause for ``keys`` (none when ``keys`` is None)."""
    if keys is None:
        return ""
    params.extend(keys)
    return f" and item_key in ({', '.join('?' * len(keys))})" if keys else " and 0"


def disagreeing_items(db: Database, dataset: str,
                      keys: Collection[str] | None = None) -> dict[str, int]:
    """``{item_key: number of fields}`` (of ``keys``, or all items) where annotators
    gave different passage labels or dimension values (adjudicated or not): read from
    ``item_disputes``, kept by SQL as annotations are written (m010)."""
    params: list[Any] = [dataset]
    only = _only(keys, params)
    return dict(db.execute(f"select item_key, units from item_disputes where dataset = ?{only}",
                           params).fetchall())


def last_change(db: Database, dataset: str) -> int:
    """The id of the latest history row of ``dataset`` (0 when none): every
    annotation change writes one, so a new id means something changed."""
    row = db.execute("select max(id) from history where dataset = ?", [dataset]).fetchone()
    return int(row[0] or 0)


def changed_items(db: Database, dataset: str, since: int) -> set[str]:
    """Items of ``dataset`` with an annotation change after history id ``since``."""
    rows = db.execute("select distinct item_key from history where dataset = ? and id > ?",
                      [dataset, since]).fetchall()
    return {r[0] for r in rows}


def item_fields(
    db: Database, dataset: str, item_key: str, annotator: str
) -> dict[str, tuple[Any, str]]:
    """``{field: (value, updated_at)}`` of one annotator on one item."""
    rows = db.execute(
        "select field, value, updated_at from annotations where dataset = ? and item_key = ? "
        "and annotator = ?",
        [dataset, item_key, annotator],
    ).fetchall()
    return {field: (json.loads(value), at) for field, value, at in rows}


def grouped_annotations(
    db: Database, dataset: str, item_key: str | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Current annotations of a dataset (or one item) grouped by item:
    ``{item_key: [{annotator, field, value, updated_at}, ...]}``."""
    sql = ("select item_key, annotator, field, value, updated_at from annotations "
           "where dataset = ?")
    params: list[Any] = [dataset]
    if item_key is not None:
        sql += " and item_key = ?"
        params.append(item_key)
    out: dict[str, list[dict[str, Any]]] = {}
    for key, who, field, value, at in db.execute(sql + " order by item_key, annotator, field",
                                                 params):
        out.setdefault(key, []).append(
            {"annotator": who, "field": field, "value": json.loads(value), "updated_at": at})
    return out


# --- the question list at any size: item facts and progress (store.facts, m008) -----------

#: Item states as the SQL below names them (needlework.grounding.progress maps its own).
UNLABELED, IN_PROGRESS, DONE, DISAGREE = "unlabeled", "in progress", "done", "disagree"
#: Deflection filters: what the SQL below understands.
DEFLECTED, ANSWERED, NO_ANSWER, NEEDS_DEFLECTION = "deflected", "answered", "no answer", "needs"
TIME_COLUMN = "time"  # the combined time sensitivity (static / slow-changing / fast-changing)


@dataclass(frozen=True)
class ItemQuery:
    """What the question list shows, in plain values: ``text`` (case-folded) matched in the
    question and id, or ``position`` (an item's 0-based place); ``dims`` {column: allowed
    values} (``time``: the combined time sensitivity; ``''`` is "not set"); ``states``
    (any of :data:`UNLABELED`, :data:`IN_PROGRESS`, :data:`DONE`, :data:`DISAGREE`, for
    ``annotator``); ``deflection`` (``''`` or one of the four above);
    ``deflection_text``: the standard deflection, case-folded; ``marks``: item fields of
    the annotator's (``flag``, ``skipped``, ``comment``), any of which keeps an item.
    Dimensions and states use the annotator's own value where set, else the record's
    (``file_values`` False: the annotator's own only, for a person kept from the file's
    values)."""

    annotator: str = ""
    text: str = ""
    position: int | None = None
    dims: dict[str, frozenset[str]] = dataclass_field(default_factory=dict)
    states: frozenset[str] = frozenset()
    deflection: str = ""
    deflection_text: str = ""
    marks: frozenset[str] = frozenset()
    file_values: bool = True


#: The item fields that mark a question for its annotator (:attr:`ItemQuery.marks`).
MARKS = ("flag", "skipped", "comment")


def _own(column: str) -> str:
    return ("(select json_extract(o.value, '$') from annotations o where o.dataset = g.dataset "
            f"and o.item_key = g.key and o.annotator = :who and o.field = 'dim:{column}')")


def _dim_value(column: str, file_values: bool = True) -> str:
    if column == TIME_COLUMN:
        sensitive = _dim_value("question_sensitive", file_values)
        qtype = _dim_value("question_type", file_values)
        return (f"(case {sensitive} when 'NO' then 'static' when 'YES' then (case {qtype} "
                "when 'SLOW-CHANGING' then 'slow-changing' when 'FAST-CHANGING' then "
                "'fast-changing' else '' end) else '' end)")
    if column not in DIM_COLUMNS:
        raise ValueError(f"unknown dimension {column!r}")
    return f"coalesce({_own(column)}, g.{column})" if file_values else f"coalesce({_own(column)}, '')"


_DISPUTED = ("exists (select 1 from item_disputes x where x.dataset = g.dataset "
             "and x.item_key = g.key)")
_DEFLECTED = ("(coalesce(p.deflected, 0) > 0 or (coalesce(p.answered, 0) = 0 "
              "and g.answer_head = :deflection_text))")
_NEEDS_OWN = "coalesce(p.answer_labels, 0) = 0"
#: No ANSWER label of the annotator's, nor one of the file's on a passage they left unlabelled.
_NEEDS = (f"{_NEEDS_OWN} and not exists (select 1 from json_each(g.evidence) e "
          "where e.value = 'ANSWER-THE-QUESTION' and e.key < g.n_passages and not exists "
          "(select 1 from annotations o where o.dataset = g.dataset and o.item_key = g.key "
          "and o.annotator = :who and o.field = 'label:' || (e.key + 1)))")


def _where(query: ItemQuery, params: dict[str, Any]) -> str:
    """The SQL condition of ``query`` over ``g`` (grounding_items) left-joined with ``p``
    (the annotator's item_progress row)."""
    params.update(who=query.annotator, deflection_text=query.deflection_text)
    parts: list[str] = []
    if query.text or query.position is not None:
        found = []
        if query.text:
            params["text"] = query.text
            found.append("instr(g.fold, :text) > 0")
        if query.position is not None:
            params["pos"] = query.position
            found.append("g.position = :pos")
        parts.append("(" + " or ".join(found) + ")")
    for n, (column, allowed) in enumerate(sorted(query.dims.items())):
        if allowed:
            marks = ", ".join(f":d{n}_{k}" for k in range(len(allowed)))
            params.update({f"d{n}_{k}": v for k, v in enumerate(sorted(allowed))})
            parts.append(f"{_dim_value(column, query.file_values)} in ({marks})")
    if query.states:
        states = {
            UNLABELED: f"(coalesce(p.done, 0) = 0 and not {started_sql('p')})",
            IN_PROGRESS: f"(coalesce(p.done, 0) = 0 and {started_sql('p')})",
            DONE: "coalesce(p.done, 0) = 1",
            DISAGREE: _DISPUTED,
        }
        parts.append("(" + " or ".join(states[s] for s in sorted(query.states)) + ")")
    if query.marks:
        unknown = set(query.marks) - set(MARKS)
        if unknown:
            raise ValueError(f"unknown marks {sorted(unknown)}")
        fields = ", ".join(f"'{m}'" for m in sorted(query.marks))
        parts.append("exists (select 1 from annotations m where m.dataset = g.dataset and "
                     f"m.item_key = g.key and m.annotator = :who and m.field in ({fields}))")
    if query.deflection:
        parts.append({
            DEFLECTED: _DEFLECTED,
            ANSWERED: f"(coalesce(p.answered, 0) > 0 and not {_DEFLECTED})",
            NO_ANSWER: "coalesce(p.answered, 0) = 0",
            NEEDS_DEFLECTION: f"({_NEEDS if query.file_values else _NEEDS_OWN})",
        }[query.deflection])
    return " and ".join(parts) or "1"


_FROM = ("from grounding_items g left join item_progress p on p.dataset = g.dataset "
         "and p.item_key = g.key and p.annotator = :who where g.dataset = :dataset")


def matching_items(db: Database, dataset: str, query: ItemQuery,
                   keys: Collection[str] | None = None) -> list[tuple[int, str]]:
    """``(position, key)`` of the items (of ``keys``, or all) that ``query`` keeps, in
    order. One pass over the dataset's facts: call it when the filter changes, and with
    ``keys`` (the items that changed) to bring an earlier answer up to date."""
    params: dict[str, Any] = {"dataset": dataset}
    where = _where(query, params)
    if keys is None:
        sql = f"select g.position, g.key {_FROM} and {where} order by g.position"
        return [(position, key) for position, key in db.execute(sql, params).fetchall()]
    keys = list(keys)
    found: list[tuple[int, str]] = []
    for start in range(0, len(keys), 500):
        chunk = keys[start:start + 500]
        marks = ", ".join(f":k{n}" for n in range(len(chunk)))
        found += db.execute(f"select g.position, g.key {_FROM} and g.key in ({marks}) and {where}",
                            {**params, **{f"k{n}": k for n, k in enumerate(chunk)}}).fetchall()
    return sorted(found)


def item_count(db: Database, dataset: str) -> int:
    """Items of a grounding dataset (an index count)."""
    return db.execute("select count(*) from grounding_items where dataset = ?",
                      [dataset]).fetchone()[0]


def item_position(db: Database, dataset: str, key: str) -> int | None:
    """The 0-based place of ``key`` in its dataset (``None``: no such item)."""
    row = db.execute("select position from grounding_items where dataset = ? and key = ?",
                     [dataset, key]).fetchone()
    return None if row is None else row[0]


def key_at(db: Database, dataset: str, position: int, direction: int = 0) -> str | None:
    """The item at ``position`` (``direction`` 0), or the nearest one after (1) / before
    (-1) it; ``None`` past either end."""
    if direction > 0:
        sql, order = "position > ?", "position"
    elif direction < 0:
        sql, order = "position < ?", "position desc"
    else:
        sql, order = "position = ?", "position"
    row = db.execute(f"select key from grounding_items where dataset = ? and {sql} "
                     f"order by {order} limit 1", [dataset, position]).fetchone()
    return None if row is None else row[0]


def list_rows(db: Database, dataset: str, annotator: str,
              positions: Collection[int] | None = None, *, start: int = 0,
              stop: int = 0) -> list[dict[str, Any]]:
    """The picker's rows, in order: ``key, position, title, n_passages`` and the
    annotator's ``fields`` (anything set, adjudications aside), ``done`` and ``marks``
    (their :data:`MARKS` on the item, comma-separated, or ``None``); for the items at
    ``positions``, or at positions ``start`` to ``stop`` (excluded)."""
    params: dict[str, Any] = {"dataset": dataset, "who": annotator}
    if positions is not None:
        if not positions:
            return []
        params.update({f"q{n}": p for n, p in enumerate(positions)})
        where = "g.position in (" + ", ".join(f":q{n}" for n in range(len(positions))) + ")"
    else:
        params.update(start=start, stop=stop)
        where = "g.position >= :start and g.position < :stop"
    return db.execute_returning_dicts(
        "select g.key, g.position, g.title, g.n_passages, coalesce(p.fields, 0) as fields, "
        "coalesce(p.done, 0) as done, (select group_concat(m.field) from annotations m where "
        "m.dataset = g.dataset and m.item_key = g.key and m.annotator = :who and m.field in "
        f"({', '.join(repr(m) for m in MARKS)})) as marks "
        f"{_FROM} and {where} order by g.position", params)


def unfinished_after(db: Database, dataset: str, annotator: str, position: int,
                     positions: Sequence[int] | None = None) -> str | None:
    """The first item after ``position`` (wrapping around) that ``annotator`` has not
    finished, of ``positions`` (sorted) or of all; ``None`` when every one is done. Walks
    forward over finished items only: as long as the run of done items ahead."""
    if positions is None:
        sql = ("select g.key from grounding_items g where g.dataset = ? and g.position {} ? "
               "and not exists (select 1 from item_progress p where p.dataset = g.dataset and "
               "p.item_key = g.key and p.annotator = ? and p.done = 1) order by g.position limit 1")
        for op in (">", "<"):
            row = db.execute(sql.format(op), [dataset, position, annotator]).fetchone()
            if row is not None:
                return row[0]
        return None
    after = [p for p in positions if p > position] + [p for p in positions if p < position]
    for start in range(0, len(after), 200):
        chunk = after[start:start + 200]
        marks = ", ".join("?" * len(chunk))
        rows = dict(db.execute(
            f"select g.position, g.key from grounding_items g where g.dataset = ? and "
            f"g.position in ({marks}) and not exists (select 1 from item_progress p where "
            "p.dataset = g.dataset and p.item_key = g.key and p.annotator = ? and p.done = 1)",
            [dataset, *chunk, annotator]).fetchall())
        for p in chunk:
            if p in rows:
                return rows[p]
    return None


def left_for_later(db: Database, dataset: str, annotator: str) -> list[tuple[int, str]]:
    """``(position, key)`` of the items ``annotator`` left for later, in dataset order: those
    they flagged, and those they skipped and have not finished since (one query over their
    own marks, index ``annotations(dataset, annotator)``)."""
    return [(position, key) for position, key in db.execute(
        "select distinct g.position, g.key from annotations m join grounding_items g on "
        "g.dataset = m.dataset and g.key = m.item_key where m.dataset = ? and m.annotator = ? "
        "and (m.field = 'flag' or (m.field = 'skipped' and not exists (select 1 from "
        "item_progress p where p.dataset = m.dataset and p.item_key = m.item_key and "
        "p.annotator = m.annotator and p.done = 1))) order by g.position",
        [dataset, annotator]).fetchall()]


def progress_total(db: Database, dataset: str, annotator: str) -> tuple[int, int]:
    """``(started, done)``: items ``annotator`` set anything on (adjudications aside),
    and finished, in ``dataset`` (kept by triggers: one row read)."""
    row = db.execute("select started, done from progress_totals where dataset = ? and "
                     "annotator = ?", [dataset, annotator]).fetchone()
    return (row[0], row[1]) if row else (0, 0)


def used_categories(db: Database, dataset: str) -> list[str]:
    """The distinct non-empty ``question_category`` values of a dataset's records."""
    rows = db.execute("select distinct question_category from grounding_items where dataset = ? "
                      "and question_category <> '' order by question_category", [dataset])
    return [r[0] for r in rows]


def item_progress_row(db: Database, dataset: str, item_key: str,
                      annotator: str) -> dict[str, Any] | None:
    """One annotator's item_progress counts on one item (``None``: nothing set)."""
    rows = db.execute_returning_dicts(
        "select * from item_progress where dataset = ? and item_key = ? and annotator = ?",
        [dataset, item_key, annotator])
    return rows[0] if rows else None


# --- agreement kept by SQL (m010): coincidences, confusions, disputes --------------------


def agreement_pairs(db: Database, dataset: str) -> list[tuple[str, str, str, int, int]]:
    """``(scope, a, b, m, n)``: Krippendorff coincidence sums of ``dataset`` (scope
    ``label`` or a ``dim:FIELD``; values as stored JSON; see store.migrations m010)."""
    return db.execute("select scope, a, b, m, n from agreement_pairs where dataset = ? and n <> 0",
                      [dataset]).fetchall()


def agreement_confusion(db: Database, dataset: str) -> list[tuple[str, str, str, str, int]]:
    """``(x, y, label of x, label of y, units)`` over passages both x < y labelled."""
    return db.execute("select x, y, vx, vy, n from agreement_confusion where dataset = ? "
                      "and n <> 0", [dataset]).fetchall()


def coders(db: Database, dataset: str, *, labels_only: bool = False) -> list[str]:
    """Everyone with a passage label (and, unless ``labels_only``, a dimension) in
    ``dataset`` that counts in agreement (on an item assigned to them, or nobody is
    assigned: :func:`store.migrations_facts_early.counted`), sorted: one indexed probe per
    person who started anything."""
    what = "p.labels > 0" if labels_only else "(p.labels > 0 or p.dims > 0)"
    return [r[0] for r in db.execute(
        "select t.annotator from progress_totals t where t.dataset = ? and exists (select 1 from "
        "item_progress p where p.dataset = t.dataset and p.annotator = t.annotator "
        f"and {what} and {counted('p.dataset', 'p.item_key', 'p.annotator')}) "
        "order by t.annotator", [dataset])]


def disputed_count(db: Database, dataset: str) -> int:
    """Items where annotators gave different passage labels or dimension values."""
    return db.execute("select count(*) from item_disputes where dataset = ?", [dataset]).fetchone()[0]


def disputed_items(db: Database, dataset: str, limit: int = 40,
                   after: int = -1) -> list[dict[str, Any]]:
    """The first ``limit`` items in dispute after position ``after``, in dataset order:
    ``key, position, title, units`` (units in dispute)."""
    return db.execute_returning_dicts(
        "select g.key, g.position, g.title, d.units from item_disputes d join grounding_items g "
        "on g.dataset = d.dataset and g.key = d.item_key where d.dataset = ? and g.position > ? "
        "order by g.position limit ?", [dataset, after, limit])


def item_titles(db: Database, dataset: str, keys: Collection[str]) -> dict[str, tuple[int, str]]:
    """``{key: (position, title)}`` of some items of a grounding dataset."""
    out: dict[str, tuple[int, str]] = {}
    keys = list(keys)
    for start in range(0, len(keys), 500):
        chunk = keys[start:start + 500]
        marks = ", ".join("?" * len(chunk))
        for key, position, title in db.execute(
                f"select key, position, title from grounding_items where dataset = ? and key in ({marks})",
                [dataset, *chunk]):
            out[key] = (position, title)
    return out


def items_annotations(db: Database, dataset: str, keys: Collection[str]) -> list[dict[str, Any]]:
    """Current annotations of some items (``item_key, annotator, field, value, updated_at``)."""
    out: list[dict[str, Any]] = []
    keys = list(keys)
    for start in range(0, len(keys), 500):
        chunk = keys[start:start + 500]
        marks = ", ".join("?" * len(chunk))
        out += [{"item_key": k, "annotator": a, "field": f, "value": json.loads(v), "updated_at": u}
                for k, a, f, v, u in db.execute(
                    "select item_key, annotator, field, value, updated_at from annotations "
                    f"where dataset = ? and item_key in ({marks}) order by item_key, annotator, field",
                    [dataset, *chunk])]
    return out


def openings(db: Database, dataset: str, annotator: str,
             keys: Collection[str]) -> dict[str, tuple[int, int]]:
    """``{item_key: (passages, first passage without a label of annotator's)}`` of
    ``keys`` (items of other kinds or unknown keys are left out): where the keyboard
    cursor starts when one of them is opened (1 when every passage is labeled)."""
    keys = [k for k in keys if k]
    if not keys:
        return {}
    marks = ", ".join("?" * len(keys))
    sizes = dict(db.execute(f"select key, n_passages from grounding_items where dataset = ? "
                            f"and key in ({marks})", [dataset, *keys]).fetchall())
    labeled: dict[str, set[int]] = {k: set() for k in sizes}
    rows = db.execute(
        f"select item_key, field from annotations where dataset = ? and annotator = ? "
        f"and item_key in ({marks}) and field like 'label:%' and value is not null "
        f"and value <> 'null'", [dataset, annotator, *keys]).fetchall()
    for key, field in rows:
        number = field.split(":", 1)[1]
        if key in labeled and number.isdigit():
            labeled[key].add(int(number))
    return {k: (int(n or 0), next((i for i in range(1, int(n or 0) + 1) if i not in labeled[k]), 1))
            for k, n in sizes.items()}
