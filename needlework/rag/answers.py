"""Model answers files: which model answered which question, and what is missing.

An answers file is JSON Lines, one answer per line::

    {"sample_id": "…", "answer": "The light takes about 8 minutes [cite_1]."}
    {"sample_id": "…", "answer": "…", "model": "qwen-32b"}

``sample_id`` names a question of the grounding dataset and ``answer`` is the model's
text (``""`` is an answer too: an empty one). Several models can share one file, each
line naming its ``model``; a line without ``model`` belongs to the model named after
the file (its name without the extension), so one file per model needs no ``model``
field. Other fields are ignored. The same ``sample_id`` twice for one model, a line
that is not a JSON object, a missing field or a field of the wrong type refuse the
whole file with its name, line and field (the strict JSON reader of
:mod:`needlework.formats.reader` also refuses NaN, duplicate keys, bad UTF-8, ...).

Nothing is dropped silently: :func:`coverage` lists, per model, the answers whose
``sample_id`` is no question of the dataset (ignored, reported) and the questions the
model did not answer (they count as failures, reported).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from needlework.formats.checks import type_name
from needlework.formats.errors import FormatError, Problem
from needlework.formats.reader import decode, open_input, read_jsonl
from needlework.rag.non_answers import non_answer_ids

MODEL_FIELD = "model"


@dataclass(frozen=True)
class AnswerSet:
    """One model's answers: ``{sample_id: answer}`` in file order, and where they came from;
    ``failed``: questions whose generation request failed (``{sample_id: reason}``, from
    ``rag-generate``): no answer of the model's, left out of its figures and counted."""

    model: str
    answers: dict[str, str]
    source: str = ""
    failed: dict[str, str] = field(default_factory=dict)

    def digest(self) -> str:
        """SHA-256 of the model name and answers (and the failed ids, when any): part of a
        run's identity."""
        parts: list[object] = [self.model, list(self.answers.items())]
        if self.failed:
            parts.append(sorted(self.failed))
        text = json.dumps(parts, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Coverage:
    """How one model's answers meet a dataset's questions."""

    model: str
    answered: int
    unknown_ids: list[str] = field(default_factory=list)  # answers for no question
    missing_ids: list[str] = field(default_factory=list)  # questions without an answer
    empty_ids: list[str] = field(default_factory=list)  # answered with blank text
    non_answer_ids: list[str] = field(default_factory=list)  # no claim (blank included)
    failed_ids: list[str] = field(default_factory=list)  # the generation request failed

    def as_dict(self) -> dict[str, object]:
        return {"model": self.model, "answered": self.answered, "unknown_ids": self.unknown_ids,
                "missing_ids": self.missing_ids, "empty_ids": self.empty_ids,
                "non_answer_ids": self.non_answer_ids, "failed_ids": self.failed_ids}


def stored_set(row: dict[str, object], default_source: str = "") -> AnswerSet:
    """The :class:`AnswerSet` of a stored row (``store.rag.answer_sets``), its failed
    generation requests (``marks["failed"]``) included."""
    marks = row.get("marks") or {}
    failed = marks.get("failed") if isinstance(marks, dict) else None
    return AnswerSet(str(row["model"]), dict(row["answers"]),  # type: ignore[call-overload]
                     str(row.get("source") or default_source),
                     {str(k): str(v) for k, v in (failed or {}).items()})


def model_from_filename(filename: str) -> str:
    """The default model name of a file: its name without the last extension."""
    name = Path(filename).name
    stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    return stem or name


def parse_answers(data: bytes | str, filename: str, *, default_model: str | None = None) -> list[AnswerSet]:
    """The answer sets in one file, one per model, in order of first appearance.

    Raises :class:`FormatError` naming the file, line and field of the first problem.
    """
    text = data if isinstance(data, str) else decode(data, filename)
    default = default_model or model_from_filename(filename)
    sets: dict[str, dict[str, str]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for raw in read_jsonl(text, filename):
        obj = raw.value

        def fail(message: str, line: int = raw.line) -> FormatError:
            return FormatError([Problem(filename, line, message)])

        if not isinstance(obj, dict):
            raise fail(f"expected an object with fields 'sample_id' and 'answer', got "
                       f"{type_name(obj)}")
        for name in ("sample_id", "answer"):
            if name not in obj:
                raise fail(f"field '{name}' is missing")
            if not isinstance(obj[name], str):
                raise fail(f"field '{name}' must be a string, got {type_name(obj[name])}")
        key = obj["sample_id"]
        if not key.strip():
            raise fail("field 'sample_id' is empty")
        model = obj.get(MODEL_FIELD, default)
        if not isinstance(model, str) or not model.strip():
            raise fail(f"field '{MODEL_FIELD}' must be a non-empty string, got "
                       f"{type_name(model) if not isinstance(model, str) else 'an empty one'}")
        model = model.strip()
        answers = sets.setdefault(model, {})
        if key in answers:
            raise fail(f"field 'sample_id' repeats {key!r} for model {model!r} (first on line "
                       f"{first_line[(model, key)]})")
        answers[key] = obj["answer"]
        first_line[(model, key)] = raw.line
    return [AnswerSet(model, answers, filename) for model, answers in sets.items()]


def read_answers_file(path: str | Path, *, default_model: str | None = None) -> list[AnswerSet]:
    """:func:`parse_answers` of a regular file (a FIFO or a folder is refused)."""
    path = Path(path)
    stream, _ = open_input(path)
    with stream:
        data = stream.read()
    return parse_answers(data, path.name, default_model=default_model)


def merge(sets: Iterable[AnswerSet]) -> list[AnswerSet]:
    """Answer sets from several files as one list; a model named in two files is refused
    (which answers would count?)."""
    out: dict[str, AnswerSet] = {}
    for answer_set in sets:
        if answer_set.model in out:
            first = out[answer_set.model].source
            raise FormatError([Problem(answer_set.source, None, f"model {answer_set.model!r} "
                                       f"is already given by {first}: name each model once")])
        out[answer_set.model] = answer_set
    return list(out.values())


def read_answer_files(paths: Sequence[str | Path]) -> list[AnswerSet]:
    """Every answer set of ``paths`` (see :func:`merge`)."""
    return merge(s for path in paths for s in read_answers_file(path))


def coverage(answer_set: AnswerSet, question_keys: Sequence[str]) -> Coverage:
    """Which answers name no question, which questions got no (or a blank) answer, which
    answers are non-answers (:func:`needlework.rag.non_answers.is_non_answer`) and which
    questions' generation request failed (not counted as missing)."""
    known = set(question_keys)
    answers = answer_set.answers
    failed = answer_set.failed
    return Coverage(
        model=answer_set.model,
        answered=sum(1 for k in question_keys if k in answers),
        unknown_ids=[k for k in answers if k not in known],
        missing_ids=[k for k in question_keys if k not in answers and k not in failed],
        empty_ids=[k for k in question_keys if k in answers and not answers[k].strip()],
        non_answer_ids=non_answer_ids(answers, question_keys),
        failed_ids=[k for k in question_keys if k in failed and k not in answers],
    )


def dump_answers(sets: Iterable[AnswerSet]) -> str:
    """The sets as one JSONL text with a ``model`` field on every line."""
    lines = [json.dumps({"sample_id": key, "answer": answer, MODEL_FIELD: s.model},
                        ensure_ascii=False)
             for s in sets for key, answer in s.answers.items()]
    return "\n".join(lines) + ("\n" if lines else "")
