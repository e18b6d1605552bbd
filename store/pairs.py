"""SQL for the review page's list of comparisons at any size: preference item facts
(``preference_items``, :mod:`store.facts`), the reviewer's progress kept by triggers
(``item_progress``: verdicts, verdicts on same-style comparisons, flips) and the token
counts a background job stores (``response_lengths``).

A comparison is chosen[i] vs rejected[j] of one item; under the ``same-style`` scope an
item with as many chosen as rejected responses (more than one: RM-Bench) gives only its
diagonal. The SQL below counts an item's comparisons in scope with :data:`TOTAL` and
the reviewer's verdicts among them with :data:`REVIEWED`.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

_SQUARE = ("(:scope = 'same-style' and r.n_chosen = r.n_rejected and r.n_chosen > 1)")
#: Comparisons of item ``r`` in scope.
TOTAL = f"(case when {_SQUARE} then r.n_chosen else r.n_chosen * r.n_rejected end)"
#: The reviewer's verdicts among them (``p``: their item_progress row).
REVIEWED = (f"(case when {_SQUARE} then coalesce(p.same_style, 0) "
            "else coalesce(p.verdicts, 0) end)")
FLIPS = (f"(case when {_SQUARE} then coalesce(p.same_style_flips, 0) "
         "else coalesce(p.flips, 0) end)")
_FROM = ("from preference_items r left join item_progress p on p.dataset = r.dataset "
         "and p.item_key = r.key and p.annotator = :who where r.dataset = :dataset")

ItemRow = tuple[int, str, int, int]
"""``(position, key, n_chosen, n_rejected)``."""


@dataclass(frozen=True)
class PairQuery:
    """What the review list keeps, in plain values: ``subsets`` / ``sources`` (empty:
    any), ``state`` (``all``, ``unreviewed``: not every comparison in scope has the
    reviewer's verdict, ``reviewed``, ``flipped``: some verdict is "rejected better"),
    ``text`` (case-folded, matched in the prompt and the id), and token bounds on the
    item's longest response as counted with ``method`` (stored by the ``lengths`` job)."""

    annotator: str = ""
    scope: str = "all"
    subsets: frozenset[str] = frozenset()
    sources: frozenset[str] = frozenset()
    state: str = "all"
    text: str = ""
    min_tokens: int | None = None
    max_tokens: int | None = None
    method: str = ""


def _where(query: PairQuery, params: dict[str, Any]) -> str:
    params.update(who=query.annotator, scope=query.scope)
    parts: list[str] = []
    for column, values, name in (("r.subset", query.subsets, "s"), ("r.source_subset", query.sources, "o")):
        if values:
            marks = ", ".join(f":{name}{k}" for k in range(len(values)))
            params.update({f"{name}{k}": v for k, v in enumerate(sorted(values))})
            parts.append(f"{column} in ({marks})")
    if query.state == "unreviewed":
        parts.append(f"{REVIEWED} < {TOTAL}")
    elif query.state == "reviewed":
        parts.append(f"{REVIEWED} >= {TOTAL}")
    elif query.state == "flipped":
        parts.append(f"{FLIPS} > 0")
    if query.text:
        params["text"] = query.text
        parts.append("instr(r.fold, :text) > 0")
    if query.min_tokens is not None or query.max_tokens is not None:
        params.update(method=query.method, low=query.min_tokens if query.min_tokens is not None else -1,
                      high=query.max_tokens if query.max_tokens is not None else 1 << 62)
        parts.append("exists (select 1 from response_lengths l where l.dataset = r.dataset and "
                     "l.method = :method and l.item_key = r.key and l.longest between :low and :high)")
    return " and ".join(parts) or "1"


def matching(db: Database, dataset: str, query: PairQuery,
             keys: Collection[str] | None = None) -> list[ItemRow]:
    """The items (of ``keys``, or all) ``query`` keeps, in dataset order."""
    params: dict[str, Any] = {"dataset": dataset}
    where = _where(query, params)
    sql = f"select r.position, r.key, r.n_chosen, r.n_rejected {_FROM} and {where}"
    if keys is None:
        return db.execute(sql + " order by r.position", params).fetchall()
    keys = list(keys)
    found: list[ItemRow] = []
    for start in range(0, len(keys), 500):
        chunk = keys[start:start + 500]
        marks = ", ".join(f":k{n}" for n in range(len(chunk)))
        found += db.execute(f"{sql} and r.key in ({marks})",
                            {**params, **{f"k{n}": k for n, k in enumerate(chunk)}}).fetchall()
    return sorted(found)


def item(db: Database, dataset: str, key: str) -> ItemRow | None:
    """One item's ``(position, key, n_chosen, n_rejected)``."""
    return db.execute("select position, key, n_chosen, n_rejected from preference_items "
                      "where dataset = ? and key = ?", [dataset, key]).fetchone()


def item_near(db: Database, dataset: str, position: int, direction: int) -> ItemRow | None:
    """The item right after (``direction`` 1) or before (-1) ``position``; the first item
    with ``direction`` 1 and position -1."""
    op, order = (">", "position") if direction > 0 else ("<", "position desc")
    return db.execute(f"select position, key, n_chosen, n_rejected from preference_items where "
                      f"dataset = ? and position {op} ? order by {order} limit 1",
                      [dataset, position]).fetchone()


def not_fully_reviewed_after(db: Database, dataset: str, annotator: str, scope: str,
                             position: int, ring: Sequence[int] | None = None) -> ItemRow | None:
    """The first item on which ``annotator`` has not judged every comparison in scope:
    of the positions ``ring``, in that order, or of all items after ``position`` then
    from the start (wrapping around to ``position`` itself); ``None`` when every one is
    judged. Walks over fully reviewed items only."""
    params = {"dataset": dataset, "who": annotator, "scope": scope, "pos": position}
    select = f"select r.position, r.key, r.n_chosen, r.n_rejected {_FROM} and {REVIEWED} < {TOTAL}"
    if ring is None:
        for op in (">", "<="):
            row = db.execute(f"{select} and r.position {op} :pos order by r.position limit 1",
                             params).fetchone()
            if row is not None:
                return row
        return None
    for start in range(0, len(ring), 200):
        chunk = list(ring[start:start + 200])
        marks = ", ".join(f":q{n}" for n in range(len(chunk)))
        rows = {r[0]: r for r in db.execute(f"{select} and r.position in ({marks})",
                                            {**params, **{f"q{n}": p for n, p in enumerate(chunk)}})}
        for p in chunk:
            if p in rows:
                return rows[p]
    return None


def reviewed_by_item(db: Database, dataset: str, annotator: str, scope: str,
                     keys: Collection[str] | None = None) -> dict[str, int]:
    """``{key: comparisons in scope judged}`` of some items (``keys``), or of every item
    ``annotator`` touched (their own progress rows); items with none left out."""
    sql = (f"select p.item_key, min({REVIEWED}, {TOTAL}) from item_progress p join preference_items r "
           "on r.dataset = p.dataset and r.key = p.item_key where p.dataset = :dataset and "
           "p.annotator = :who")
    params = {"dataset": dataset, "who": annotator, "scope": scope}
    out: dict[str, int] = {}
    if keys is None:
        out.update(db.execute(sql, params).fetchall())
    else:
        keys = list(keys)
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            marks = ", ".join(f":k{n}" for n in range(len(chunk)))
            out.update(db.execute(f"{sql} and p.item_key in ({marks})",
                                  {**params, **{f"k{n}": k for n, k in enumerate(chunk)}}).fetchall())
    return {k: n for k, n in out.items() if n}


def comparisons_by_position(db: Database, dataset: str, scope: str) -> list[int]:
    """Comparisons in scope of each item, in dataset order (for running totals)."""
    return [n for (n,) in db.execute(f"select {TOTAL} from preference_items r "
                                     "where r.dataset = :dataset order by r.position",
                                     {"dataset": dataset, "scope": scope})]


def reviewed_total(db: Database, dataset: str, annotator: str, scope: str,
                   keys: Collection[str] | None = None) -> int:
    """Comparisons in scope ``annotator`` has judged, over the items they touched (of
    ``keys``, or all): reads their own progress rows only."""
    params: dict[str, Any] = {"dataset": dataset, "who": annotator, "scope": scope}
    sql = (f"select coalesce(sum(min({REVIEWED}, {TOTAL})), 0) from item_progress p join "
           "preference_items r on r.dataset = p.dataset and r.key = p.item_key "
           "where p.dataset = :dataset and p.annotator = :who")
    if keys is None:
        return db.execute(sql, params).fetchone()[0]
    keys, total = list(keys), 0
    for start in range(0, len(keys), 500):
        chunk = keys[start:start + 500]
        marks = ", ".join(f":k{n}" for n in range(len(chunk)))
        total += db.execute(f"{sql} and p.item_key in ({marks})",
                            {**params, **{f"k{n}": k for n, k in enumerate(chunk)}}).fetchone()[0]
    return total


def my_verdicts_on(db: Database, dataset: str, key: str,
                   annotator: str) -> dict[tuple[int, int], str | None]:
    """``{(i, j): verdict}`` of one annotator on one item."""
    return {ij: value.get("verdict") for ij, value in my_verdict_values(db, dataset, key, annotator).items()}


def my_verdict_values(db: Database, dataset: str, key: str,
                      annotator: str) -> dict[tuple[int, int], dict[str, Any]]:
    """``{(i, j): saved value}`` (verdict, reasons, note) of one annotator on one item, in
    one query."""
    out: dict[tuple[int, int], dict[str, Any]] = {}
    for field, value in db.execute(
            "select field, value from annotations where dataset = ? and item_key = ? and "
            "annotator = ? and field >= 'verdict:' and field < 'verdict;'", [dataset, key, annotator]):
        parts = field[len("verdict:"):].split(":")
        parsed = json.loads(value)
        if len(parts) == 2 and all(p.isdigit() for p in parts) and isinstance(parsed, dict):
            out[(int(parts[0]), int(parts[1]))] = parsed
    return out


def subsets(db: Database, dataset: str) -> tuple[list[str], list[str]]:
    """The distinct non-empty stored subsets and source subsets, sorted."""
    rows = db.execute("select distinct subset, source_subset from preference_items where dataset = ?",
                      [dataset]).fetchall()
    return (sorted({s for s, _ in rows if s}), sorted({o for _, o in rows if o}))


def square(db: Database, dataset: str) -> bool:
    """Whether some item has as many chosen as rejected responses, more than one."""
    return db.execute("select 1 from preference_items where dataset = ? and n_chosen = n_rejected "
                      "and n_chosen > 1 limit 1", [dataset]).fetchone() is not None


# --- token counts (the ``lengths`` job) ---------------------------------------------------


def counted(db: Database, dataset: str, method: str) -> int:
    """Items whose responses are counted with ``method``."""
    return db.execute("select count(*) from response_lengths where dataset = ? and method = ?",
                      [dataset, method]).fetchone()[0]


def uncounted_keys(db: Database, dataset: str, method: str) -> list[str]:
    """Keys of the items not counted with ``method`` yet, in dataset order."""
    return [r[0] for r in db.execute(
        "select r.key from preference_items r where r.dataset = ? and not exists (select 1 from "
        "response_lengths l where l.dataset = r.dataset and l.method = ? and l.item_key = r.key) "
        "order by r.position", [dataset, method])]


def store_lengths(db: Database, dataset: str, method: str,
                  rows: Sequence[tuple[str, Sequence[int], Sequence[int]]]) -> None:
    """Keep ``(key, chosen token counts, rejected token counts)`` of some items."""
    with db.atomic():
        db.conn.executemany(
            "insert or replace into response_lengths (dataset, item_key, method, chosen, rejected, "
            "longest) values (?, ?, ?, ?, ?, ?)",
            [(dataset, key, method, json.dumps(list(c)), json.dumps(list(r)), max([*c, *r], default=0))
             for key, c, r in rows])


def longest(db: Database, dataset: str, method: str) -> int:
    """The longest response counted with ``method`` (0 when none)."""
    row = db.execute("select max(longest) from response_lengths where dataset = ? and method = ?",
                     [dataset, method]).fetchone()
    return int(row[0] or 0)


def lengths(db: Database, dataset: str, method: str,
            keys: Collection[str] | None = None) -> dict[str, tuple[list[int], list[int]]]:
    """``{key: (chosen counts, rejected counts)}`` counted with ``method`` (of ``keys``)."""
    sql = "select item_key, chosen, rejected from response_lengths where dataset = ? and method = ?"
    if keys is None:
        return {k: (json.loads(c), json.loads(r)) for k, c, r in db.execute(sql, [dataset, method])}
    keys, out = list(keys), {}
    for start in range(0, len(keys), 500):
        chunk = keys[start:start + 500]
        marks = ", ".join("?" * len(chunk))
        out.update({k: (json.loads(c), json.loads(r)) for k, c, r in db.execute(
            f"{sql} and item_key in ({marks})", [dataset, method, *chunk])})
    return out


def item_scores(db: Database, dataset: str, key: str, fingerprint: str,
                variant: str | None) -> dict[str, list[float | None]] | None:
    """One item's scores of one scoring run (``chosen_scores``, ``rejected_scores``)."""
    sql = ("select chosen_scores, rejected_scores from item_scores where dataset = ? and "
           "item_key = ? and fingerprint = ?")
    params: list[Any] = [dataset, key, fingerprint]
    if variant is not None:
        sql += " and variant = ?"
        params.append(variant)
    row = db.execute(sql, params).fetchone()
    if row is None:
        return None
    return {"chosen_scores": json.loads(row[0] or "[]"), "rejected_scores": json.loads(row[1] or "[]")}


# --- the dataset overview: aggregates over a whole dataset (asked for, never per rerun) ----


def item_subsets(db: Database, dataset: str) -> dict[str, tuple[str, int, int]]:
    """``{key: (subset, n_chosen, n_rejected)}`` of every item."""
    return {k: (s, c, r) for k, s, c, r in db.execute(
        "select key, subset, n_chosen, n_rejected from preference_items where dataset = ?", [dataset])}


def verdict_counts(db: Database, dataset: str) -> list[tuple[str, str, str, int, str]]:
    """``(annotator, item_key, verdict, comparisons, last updated_at)``: every verdict of
    the dataset counted per annotator, item and verdict."""
    return db.execute(
        "select annotator, item_key, json_extract(value, '$.verdict'), count(*), max(updated_at) "
        "from annotations where dataset = ? and field >= 'verdict:' and field < 'verdict;' "
        "and json_type(value) = 'object' group by 1, 2, 3", [dataset]).fetchall()


def reviewed_comparisons(db: Database, dataset: str) -> dict[str, tuple[list[str], int]]:
    """``{item_key: (comparisons with a verdict by anyone, verdicts that flip)}``."""
    out: dict[str, tuple[list[str], int]] = {}
    for key, fields, flips in db.execute(
            "select item_key, group_concat(distinct field), "
            "sum(json_extract(value, '$.verdict') = 'flip') from annotations where dataset = ? "
            "and field >= 'verdict:' and field < 'verdict;' and json_type(value) = 'object' "
            "group by item_key", [dataset]):
        out[key] = ((fields or "").split(","), int(flips or 0))
    return out
