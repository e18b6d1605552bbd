"""An uploaded answers file, told apart by its content as ``answer-metrics`` does: a
JSON array is BERGEN's own generation output (:mod:`.bergen_file`, scored against its
own gold labels), JSON lines are a model answers file (:mod:`.answers`, one or several
models, evaluated against a grounding dataset)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from needlework.formats.json_array import is_json_array
from needlework.formats.reader import decode
from needlework.rag.answers import AnswerSet, parse_answers
from needlework.rag.bergen_file import parse_bergen_output, score_rows


@dataclass(frozen=True)
class Upload:
    """One file: its answer sets (answers file) or BERGEN's report of it (``bergen``)."""

    filename: str
    kind: str  # "answers" | "bergen"
    sets: list[AnswerSet] = field(default_factory=list)
    bergen: dict[str, Any] | None = None


def read_upload(data: bytes, filename: str) -> Upload:
    """The content of ``data``; :class:`~needlework.formats.errors.FormatError` names the
    file, line and field of the first problem."""
    text = decode(data, filename)
    if is_json_array(text):
        report = score_rows(parse_bergen_output(text, filename))
        return Upload(filename, "bergen", bergen={"file": filename, "format": "bergen", **report})
    return Upload(filename, "answers", sets=parse_answers(text, filename))
