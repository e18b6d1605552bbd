"""BERGEN's own generation output, scored with :mod:`needlework.rag.bergen`.

BERGEN writes ``eval_<split>_out.json``: a JSON array with one object per question::

    {"q_id": "…", "question": "…", "response": "the generated answer",
     "label": ["gold answer", "another gold answer"], "instruction": "…", ...}

:func:`read_bergen_output` reads it (the project's strict JSON reader: each element
keeps its line for error messages); :func:`score_rows` gives every question BERGEN's
metrics against its ``label`` list and the means over the questions, the figures
BERGEN's ``eval_<split>_metrics.json`` holds. A question whose ``label`` list is empty
cannot be scored (BERGEN's code fails on it): it is listed, not scored (**our rule**).
Fields other than the four above are ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from needlework.formats.checks import type_name
from needlework.formats.errors import FormatError, Problem
from needlework.formats.json_array import is_json_array, read_json_array
from needlework.formats.reader import decode, open_input
from needlework.rag import bergen


@dataclass(frozen=True)
class BergenRow:
    """One question of a BERGEN output file."""

    q_id: str
    question: str
    response: str
    labels: tuple[str, ...]
    line: int


def _row(value: Any, index: int, line: int, filename: str) -> BergenRow:
    def fail(message: str) -> FormatError:
        return FormatError([Problem(filename, line, message, record=index)])

    if not isinstance(value, dict):
        raise fail(f"expected an object with q_id, response and label, got {type_name(value)}")
    for name in ("q_id", "response", "label"):
        if name not in value:
            raise fail(f"field '{name}' is missing")
    q_id = value["q_id"]
    if isinstance(q_id, bool) or not isinstance(q_id, (str, int)):
        raise fail(f"field 'q_id' must be a string, got {type_name(q_id)}")
    if not isinstance(value["response"], str):
        raise fail(f"field 'response' must be a string, got {type_name(value['response'])}")
    labels = value["label"]
    if not isinstance(labels, list):
        raise fail(f"field 'label' must be a list of strings (the gold answers), got "
                   f"{type_name(labels)}")
    for k, label in enumerate(labels):
        if not isinstance(label, str):
            raise fail(f"field 'label[{k}]' must be a string, got {type_name(label)}")
    question = value.get("question", "")
    if not isinstance(question, str):
        raise fail(f"field 'question' must be a string, got {type_name(question)}")
    return BergenRow(str(q_id), question, value["response"], tuple(labels), line)


def parse_bergen_output(data: bytes | str, filename: str) -> list[BergenRow]:
    """The rows of a BERGEN output file; :class:`FormatError` names file, record, line
    and field of the first problem (a repeated ``q_id`` too)."""
    text = data if isinstance(data, str) else decode(data, filename)
    if not is_json_array(text):
        raise FormatError([Problem(filename, 1, "not a BERGEN output file: expected a JSON "
                                   "array of {\"q_id\", \"response\", \"label\"} objects")])
    rows: list[BergenRow] = []
    seen: dict[str, int] = {}
    for raw in read_json_array(text, filename):
        row = _row(raw.value, raw.index, raw.line, filename)
        if row.q_id in seen:
            raise FormatError([Problem(filename, raw.line, f"field 'q_id' repeats {row.q_id!r} "
                                       f"(first on line {seen[row.q_id]})", record=raw.index)])
        seen[row.q_id] = raw.line
        rows.append(row)
    return rows


def read_bergen_output(path: str | Path) -> list[BergenRow]:
    """:func:`parse_bergen_output` of a regular file."""
    path = Path(path)
    stream, _ = open_input(path)
    with stream:
        data = stream.read()
    return parse_bergen_output(data, path.name)


def score_rows(rows: Sequence[BergenRow]) -> dict[str, Any]:
    """BERGEN's metrics per question and their means (JSON-ready)."""
    scored: list[dict[str, Any]] = []
    unscored: list[dict[str, str]] = []
    for row in rows:
        if not row.labels:
            unscored.append({"q_id": row.q_id, "reason": "no gold answer (empty label list)"})
            continue
        scored.append({"q_id": row.q_id, "question": row.question, "response": row.response,
                       "label": list(row.labels),
                       **bergen.answer_scores(row.response, row.labels).as_dict()})
    return {"questions": len(rows), "scored": len(scored), "not_scored": unscored,
            "mean": bergen.mean_scores(scored), "per_question": scored}
