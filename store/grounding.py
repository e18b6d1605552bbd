"""SQL for grounding annotation: item summaries, per-annotator progress, disagreements."""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from sqlite_utils import Database

#: Record fields read for the question list (one json_extract call per record).
SUMMARY_FIELDS = (
    "question_valid", "question_false_premise", "question_seeking", "question_sensitive",
    "question_type", "question_complexity", "question_popularity", "question_category",
    "answer_generate", "evidence_correct", "evidence_relevant",
)


def item_summaries(db: Database, dataset: str) -> list[dict[str, Any]]:
    """Every item of a grounding dataset in order: ``key, position, title,
    n_passages`` and the record's ``fields`` (dimension values, imported answer and
    evidence lists; missing ones are ``None``)."""
    paths = ", ".join(f"'$.{f}'" for f in SUMMARY_FIELDS)
    rows = db.execute(
        f"select key, position, title, json_array_length(record, '$.grounding'), "
        f"json_extract(record, {paths}) from items where dataset = ? order by position",
        [dataset],
    ).fetchall()
    out = []
    for key, position, title, n, extracted in rows:
        values = json.loads(extracted) if extracted else [None] * len(SUMMARY_FIELDS)
        out.append({"key": key, "position": position, "title": title or "",
                    "n_passages": n or 0, "fields": dict(zip(SUMMARY_FIELDS, values, strict=True))})
    return out


def _only(keys: Collection[str] | None, params: list[Any]) -> str:
    """An ``and item_key in (...)`` clause for ``keys`` (none when ``keys`` is None)."""
    if keys is None:
        return ""
    params.extend(keys)
    return f" and item_key in ({', '.join('?' * len(keys))})" if keys else " and 0"


def annotator_status(db: Database, dataset: str, annotator: str,
                     keys: Collection[str] | None = None) -> dict[str, dict[str, Any]]:
    """Per item that ``annotator`` touched (of ``keys``, or all): ``labels`` (passages
    labeled), ``answered`` (a non-empty answer), ``deflected``, ``has_answer_label``
    (some passage labeled ANSWER-THE-QUESTION) and ``dims`` ({field: value})."""
    params: list[Any] = [dataset, annotator]
    only = _only(keys, params)
    rows = db.execute(
        "select item_key, "
        "sum(field like 'label:%'), "
        "max(field = 'answer' and value not in ('\"\"', 'null')), "
        "max(field = 'deflected' and value = 'true'), "
        "max(field like 'label:%' and value = '\"ANSWER-THE-QUESTION\"') "
        f"from annotations where dataset = ? and annotator = ?{only} group by item_key",
        params,
    ).fetchall()
    out = {
        key: {"labels": labels or 0, "answered": bool(answered), "deflected": bool(deflected),
              "has_answer_label": bool(has_answer), "dims": {}}
        for key, labels, answered, deflected, has_answer in rows
    }
    params = [dataset, annotator]
    only = _only(keys, params)
    for key, field, value in db.execute(
        "select item_key, field, value from annotations where dataset = ? and annotator = ? "
        f"and field like 'dim:%'{only}",
        params,
    ):
        out[key]["dims"][field[4:]] = json.loads(value)
    return out


def annotator_labels(db: Database, dataset: str, annotator: str) -> dict[str, dict[int, str]]:
    """``{item_key: {passage number: label}}`` of one annotator's own labels."""
    out: dict[str, dict[int, str]] = {}
    for key, field, value in db.execute(
        "select item_key, field, value from annotations where dataset = ? and annotator = ? "
        "and field like 'label:%'",
        [dataset, annotator],
    ):
        number = field[6:]
        if number.isdigit():
            out.setdefault(key, {})[int(number)] = json.loads(value)
    return out


def disagreeing_items(db: Database, dataset: str,
                      keys: Collection[str] | None = None) -> dict[str, int]:
    """``{item_key: number of fields}`` (of ``keys``, or all items) where annotators
    gave different passage labels or dimension values (adjudicated or not)."""
    params: list[Any] = [dataset]
    only = _only(keys, params)
    rows = db.execute(
        "select item_key, count(*) from ("
        f" select item_key, field from annotations where dataset = ?{only} "
        " and (field like 'label:%' or field like 'dim:%') "
        " group by item_key, field having count(distinct value) > 1"
        ") group by item_key",
        params,
    ).fetchall()
    return {key: n for key, n in rows}


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


def label_annotators(db: Database, dataset: str) -> list[str]:
    """Everyone with at least one passage label or dimension in ``dataset``."""
    rows = db.execute(
        "select distinct annotator from annotations where dataset = ? "
        "and (field like 'label:%' or field like 'dim:%') order by annotator",
        [dataset],
    ).fetchall()
    return [r[0] for r in rows]
