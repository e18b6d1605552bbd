"""Gold answers from a file (:mod:`needlework.teams.gold` marks items gold one at a time):
a CSV or JSONL file of ``item, field, value`` rows (:data:`COLUMNS`) read and checked
against each item's answer fields (:func:`read_gold_file`: every problem with its line and
field, and nothing changes while there is one), then every item in it marked gold at once
(:func:`import_gold`).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from needlework.formats.errors import FormatError, Problem, ProblemList
from needlework.formats.garage import DIMENSIONS
from needlework.formats.reader import decode, read_jsonl
from needlework.grounding import labels as gl
from needlework.teams.events import record
from needlework.teams.gold import GoldError, _dataset, _mark_many, check_answers
from needlework.teams.permissions import User, check
from needlework.verdicts import VERDICTS, parse_field
from store import gold as store_gold
from store.datasets import get_item

#: The columns of a gold answers file (CSV header, JSONL keys).
COLUMNS = ("item", "field", "value")
FORMATS = ("csv", "jsonl")


@dataclass(frozen=True)
class GoldImport:
    """What :func:`import_gold` recorded: ``items`` (keys, in the file's order) and the
    number of answers; ``replaced``: items that were gold already (their answers are now
    the file's)."""

    dataset: str
    file: str
    items: tuple[str, ...]
    answers: int
    replaced: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Row:
    line: int
    item: Any
    field: Any
    value: Any


def _words(kind: str, name: str) -> dict[str, str]:
    """``{lower-case button word or stored value: stored value}`` of a field's choices."""
    if kind == "grounding" and gl.passage_number(name) is not None:
        return {w.lower(): v for v, w in gl.SHORT.items()} | {v.lower(): v for v in gl.LABELS}
    if kind != "grounding" and parse_field(name) is not None:
        return ({words.lower(): v for v, (words, _) in VERDICTS.items()}
                | {v: v for v in VERDICTS})
    if kind == "grounding" and name.startswith("dim:"):
        return {v.lower(): v for v in DIMENSIONS.get(name[4:], ()) if v}
    return {}


def _value(kind: str, name: str, value: Any) -> Any:
    """The stored value of ``value`` (a stored value, or its button word, any case)."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    return _words(kind, name).get(text.lower(), text)


def _csv_rows(text: str, file: str) -> list[_Row]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise FormatError([Problem(file, 1, "the file is empty: expected a header item,field,"
                                            "value and one row per answer")]) from None
    except csv.Error as e:
        raise FormatError([Problem(file, 1, f"not CSV: {e}")]) from None
    names = [h.strip().lower() for h in header]
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise FormatError([Problem(file, 1, f"{missing[0]}: the header has no {missing[0]} "
                                            "column (expected item,field,value)")])
    where = {c: names.index(c) for c in COLUMNS}
    rows, line = [], reader.line_num + 1
    try:
        for cells in reader:
            if any(c.strip() for c in cells):
                got = [cells[where[c]] if where[c] < len(cells) else None for c in COLUMNS]
                rows.append(_Row(line, *got))
            line = reader.line_num + 1
    except csv.Error as e:
        raise FormatError([Problem(file, line, f"not CSV: {e}")]) from None
    return rows


def _jsonl_rows(text: str, file: str) -> list[_Row]:
    rows = []
    problems = ProblemList()
    for raw in read_jsonl(text, file):
        if not isinstance(raw.value, dict):
            problems.add(Problem(file, raw.line, 'not an answer: expected an object {"item": '
                                 '..., "field": ..., "value": ...}'))
            continue
        rows.append(_Row(raw.line, raw.value.get("item"), raw.value.get("field"),
                         raw.value.get("value")))
    problems.raise_if_any()
    return rows


def read_gold_rows(data: bytes, file: str, format: str | None = None) -> list[_Row]:
    """The rows of a gold answers file (``format`` ``csv`` or ``jsonl``, else from the
    file's extension); :class:`FormatError` naming file and line when it cannot be read."""
    fmt = format or file.rsplit(".", 1)[-1].lower()
    if fmt not in FORMATS:
        raise FormatError([Problem(file, None, "gold answers are read from a .csv or .jsonl "
                                               "file (or give the format)")])
    text = decode(data, file)
    rows = _csv_rows(text, file) if fmt == "csv" else _jsonl_rows(text, file)
    if not rows:
        raise FormatError([Problem(file, 1, "the file holds no answer: expected one row per "
                                            "(item, field, value)")])
    return rows


def _key(raw: Any) -> str | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return str(raw)
    return raw.strip() if isinstance(raw, str) and raw.strip() else None


def read_gold_file(db: Database, dataset: str, data: bytes, file: str,
                   format: str | None = None) -> dict[str, dict[str, Any]]:
    """``{item: answers}`` of a gold answers file for ``dataset``, every row checked:
    :class:`FormatError` naming file, line and field for each row whose item is not in
    the dataset, whose field the item lacks, whose value is not one of the field's
    choices (the stored value or the annotation page's word, e.g. ``OUTDATED`` or
    ``Outdated``, ``agree`` or ``Chosen better``), or which repeats an item's field.
    Each item's rows together pass :func:`check_answers`. Reads only."""
    row = _dataset(db, dataset)
    rows = read_gold_rows(data, file, format)
    problems = ProblemList()
    answers: dict[str, dict[str, Any]] = {}
    first: dict[tuple[str, str], int] = {}
    records: dict[str, dict[str, Any] | None] = {}
    for r in rows:
        key = _key(r.item)
        if key is None:
            problems.add(Problem(file, r.line, "item: missing (the item's key, a text)"))
            continue
        if not isinstance(r.field, str) or not r.field.strip():
            problems.add(Problem(file, r.line, "field: missing (label:N, dim:FIELD or "
                                               "verdict:I:J)"))
            continue
        name = r.field.strip()
        if r.value is None or (isinstance(r.value, str) and not r.value.strip()):
            problems.add(Problem(file, r.line, f"{name}: value missing"))
            continue
        if key not in records:
            found = get_item(db, dataset, key)
            records[key] = None if found is None else found["record"]
        item_record = records[key]
        if item_record is None:
            problems.add(Problem(file, r.line, f"item: {key!r} is not an item of {dataset!r}"))
            continue
        if (key, name) in first:
            problems.add(Problem(file, r.line, f"{name}: given twice for item {key!r} (first "
                                               f"on line {first[key, name]})"))
            continue
        value = _value(row["kind"], name, r.value)
        try:
            check_answers(row["kind"], row["format"], item_record, {name: value})
        except GoldError as e:
            problems.add(Problem(file, r.line, str(e)))
            continue
        first[key, name] = r.line
        answers.setdefault(key, {})[name] = value
    problems.raise_if_any()
    for key, values in answers.items():
        item_record = records[key]
        assert item_record is not None
        try:
            check_answers(row["kind"], row["format"], item_record, values)
        except GoldError as e:  # every row passed alone: kept for answers that need each other
            line = min(first[key, name] for name in values)
            raise FormatError([Problem(file, line, f"item {key!r}: {e}")]) from None
    return answers


def import_gold(db: Database, dataset: str, data: bytes, file: str, format: str | None = None,
                *, actor: User | None = None) -> GoldImport:
    """Record the gold answers of the file ``file`` (``data``: CSV with the columns
    ``item,field,value``, or JSONL objects with those keys, one per line) for ``dataset``:
    each item's rows become its answers (an item gold already gets the file's answers
    instead of its own) and it joins every queue of the plan. All or nothing: any bad
    row raises :class:`FormatError` naming file, line and field (:func:`read_gold_file`)
    and nothing changes. One audit event (``gold.imported``). Reviewers and admins only."""
    actor = check(db, actor, "mark_gold", dataset)
    answers = read_gold_file(db, dataset, data, file, format)
    before = store_gold.gold_items(db, dataset)
    by = actor.name if actor else ""
    with db.atomic():
        _mark_many(db, dataset, answers, by)
        record(db, actor, "gold.imported", file, dataset=dataset,
               after={"items": list(answers), "answers": sum(map(len, answers.values())),
                      "replaced": [k for k in answers if k in before]})
    return GoldImport(dataset, file, tuple(answers), sum(map(len, answers.values())),
                      tuple(k for k in answers if k in before))
