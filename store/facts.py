"""Item facts: a slim row per item with what lists, search and filters read, so that no
page has to open every record to draw one screen.

The records stay verbatim in ``items.record`` (15 KB a GaRAGe question); reading a
list of 100,000 of them on every rerun is what made pages slow. The facts are written
once, when the items are (:func:`add_item_facts`, called by
:class:`store.datasets.DatasetWriter` batch by batch), and go with them
(:func:`drop_item_facts`):

- ``grounding_items``: position, the question, its passage count, the dimension
  values of the record (``''`` where the record has none or not a string), the record's
  ``evidence_correct`` list (for "needs the deflection") and the start of its answer;
- ``preference_items``: position, the stored subset and the record's own subset, the
  number of chosen and rejected responses.

Both keep ``fold``: the title and the key case-folded (Python's ``str.casefold``, which
SQLite's ``lower`` is not beyond ASCII), separated by U+001F: what search matches.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sqlite_utils import Database

#: Record fields kept as grounding_items columns (the question dimensions).
DIM_COLUMNS = (
    "question_valid", "question_false_premise", "question_seeking", "question_sensitive",
    "question_type", "question_complexity", "question_popularity", "question_category",
)
FOLD_SEPARATOR = "\x1f"


def fold(title: str, key: str) -> str:
    """What search matches for one item: its title and key, case-folded."""
    return f"{(title or '').casefold()}{FOLD_SEPARATOR}{(key or '').casefold()}"


def _text(path: str) -> str:
    return (f"case when json_type(i.record, '{path}') = 'text' "
            f"then json_extract(i.record, '{path}') else '' end")


_GROUNDING = (
    "insert into grounding_items (dataset, key, position, title, fold, n_passages, "
    + ", ".join(DIM_COLUMNS) + ", evidence, answer_head) "
    "select i.dataset, i.key, i.position, coalesce(i.title, ''), f.value, "
    "case when json_type(i.record, '$.grounding') = 'array' "
    "then json_array_length(i.record, '$.grounding') else 0 end, "
    + ", ".join(_text(f"$.{c}") for c in DIM_COLUMNS) + ", "
    "case when json_type(i.record, '$.evidence_correct') = 'array' "
    "then json_extract(i.record, '$.evidence_correct') else '[]' end, "
    "lower(trim(substr(" + _text("$.answer_generate") + ", 1, 200))) "
    "from json_each(?) f cross join items i on i.dataset = ? and i.position = ? + f.key"
)

_PREFERENCE = (
    "insert into preference_items (dataset, key, position, fold, subset, source_subset, "
    "n_chosen, n_rejected) "
    "select i.dataset, i.key, i.position, f.value, coalesce(i.subset, ''), "
    "case when ? in ('lfrb', 'rmbench') and json_type(i.record, '$.subset') = 'text' "
    "and json_extract(i.record, '$.subset') <> '' then json_extract(i.record, '$.subset') "
    "else coalesce(i.subset, '') end, "
    "case when ? = 'pairs' then 1 when json_type(i.record, '$.chosen') = 'array' "
    "then json_array_length(i.record, '$.chosen') else 1 end, "
    "case when ? = 'pairs' then 1 when json_type(i.record, '$.rejected') = 'array' "
    "then json_array_length(i.record, '$.rejected') else 1 end "
    "from json_each(?) f cross join items i on i.dataset = ? and i.position = ? + f.key"
)


def add_item_facts(db: Database, dataset: str, kind: str, format: str, start: int,
                   titles: Sequence[tuple[str, str]]) -> None:
    """Write the facts of the items at positions ``start``, ``start + 1``, ... of
    ``dataset`` (already in ``items``); ``titles`` are their ``(key, title)`` in that
    order. Needle datasets are reviewed as preference pairs and get preference facts."""
    if not titles:
        return
    folds = json.dumps([fold(title, key) for key, title in titles], ensure_ascii=False)
    if kind == "grounding":
        db.execute(_GROUNDING, [folds, dataset, start])
    elif kind in ("preference", "needle"):
        db.execute(_PREFERENCE, [format, format, format, folds, dataset, start])


def drop_item_facts(db: Database, dataset: str) -> None:
    """Delete the facts and the progress rows of ``dataset`` (its items are going): before
    its annotations are deleted, so that their triggers have no progress to update."""
    for table in ("grounding_items", "preference_items", "item_progress", "progress_totals",
                  "response_lengths"):
        db.execute(f"delete from {table} where dataset = ?", [dataset])


def drop_agreement(db: Database, dataset: str) -> None:
    """Delete what the agreement triggers kept for ``dataset``: after its annotations are
    deleted (their triggers take their part away as they go)."""
    for table in ("agreement_pairs", "agreement_confusion", "unit_disputes", "item_disputes"):
        db.execute(f"delete from {table} where dataset = ?", [dataset])


def backfill_item_facts(db: Database, batch: int = 2000) -> None:
    """Facts for every item already stored (the migration that adds the tables)."""
    datasets = db.execute("select name, kind, format from datasets").fetchall()
    for name, kind, format in datasets:
        start = 0
        while True:
            rows = db.execute("select key, title, position from items where dataset = ? and "
                              "position >= ? order by position limit ?",
                              [name, start, batch]).fetchall()
            if not rows:
                break
            # positions are contiguous from 0 when written by DatasetWriter; add them one
            # run of consecutive positions at a time all the same
            run: list[tuple[str, str]] = []
            first = rows[0][2]
            for key, title, position in rows:
                if position != first + len(run):
                    add_item_facts(db, name, kind, format, first, run)
                    run, first = [], position
                run.append((key, title or ""))
            add_item_facts(db, name, kind, format, first, run)
            start = rows[-1][2] + 1


def progress_by_dataset(db: Database) -> dict[str, list[dict[str, object]]]:
    """``{dataset: [{annotator, started, done}, ...]}`` of everyone who started something,
    most done first (progress_totals: one row per dataset and annotator, no counting)."""
    out: dict[str, list[dict[str, object]]] = {}
    for dataset, who, started, done in db.execute(
            "select dataset, annotator, started, done from progress_totals where started > 0 "
            "order by dataset, done desc, started desc, annotator"):
        out.setdefault(dataset, []).append({"annotator": who, "started": started, "done": done})
    return out


def scored_by(db: Database, dataset: str) -> str | None:
    """A model whose scores of ``dataset`` are stored (reward scores or a needle run;
    one indexed row), or ``None``."""
    row = db.execute("select model from item_scores where dataset = ? limit 1", [dataset]).fetchone()
    return None if row is None else str(row[0] or "a model")
