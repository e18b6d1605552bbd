"""Attribution precision / recall / F1 of model answers (benchmarks.md §1, our rule).

gold = the passages the human answer cites; predicted = the passages the model
answer cites. Per question P = |pred ∩ gold| / |pred|, R = |pred ∩ gold| / |gold|,
F1 their harmonic mean. A question with empty gold is skipped; an empty prediction
(including a question with no model answer) gives P = R = F1 = 0. The report gives
the mean over the scored questions (macro).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from needlework.grounding.answer import cited_numbers


class AnswersError(ValueError):
    """A model-answers file is not valid; the message names file, line and field."""


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null", int: "a number", float: "a number"}.get(type(value), "a value")


def read_answers(data: bytes | str, filename: str) -> dict[str, str]:
    """``{sample_id: answer}`` from JSONL ``{"sample_id": ..., "answer": ...}`` lines.

    Raises :class:`AnswersError` at the first problem, naming file, line and field.
    """
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise AnswersError(f"{filename}: not UTF-8 text (byte {e.start})") from None
    answers: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise AnswersError(f"{filename} line {number}: not valid JSON ({e.msg})") from None
        if not isinstance(obj, dict):
            raise AnswersError(f"{filename} line {number}: expected an object with fields "
                               f"'sample_id' and 'answer', got {_type_name(obj)}")
        for name in ("sample_id", "answer"):
            if name not in obj:
                raise AnswersError(f"{filename} line {number}: field '{name}' is missing")
            if not isinstance(obj[name], str):
                raise AnswersError(f"{filename} line {number}: field '{name}' must be a "
                                   f"string, got {_type_name(obj[name])}")
        key = obj["sample_id"]
        if not key.strip():
            raise AnswersError(f"{filename} line {number}: field 'sample_id' is empty")
        if key in answers:
            raise AnswersError(f"{filename} line {number}: field 'sample_id' repeats {key!r} "
                               f"(first on line {first_line[key]})")
        answers[key] = obj["answer"]
        first_line[key] = number
    if not answers:
        raise AnswersError(f"{filename}: no answers (expected JSONL lines "
                           '{"sample_id": ..., "answer": ...})')
    return answers


def score(gold: set[int], pred: set[int]) -> tuple[float, float, float]:
    """P, R, F1 of one question with non-empty ``gold``."""
    if not pred:
        return 0.0, 0.0, 0.0
    hits = len(pred & gold)
    precision, recall = hits / len(pred), hits / len(gold)
    f1 = 0.0 if hits == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1


@dataclass
class Report:
    """Per-question rows and the macro means over the scored questions."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    scored: int = 0
    skipped_empty_gold: int = 0
    missing_answers: int = 0
    unknown_ids: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "mean": {"precision": self.precision, "recall": self.recall, "f1": self.f1},
            "scored": self.scored,
            "skipped_empty_gold": self.skipped_empty_gold,
            "missing_answers": self.missing_answers,
            "unknown_ids": self.unknown_ids,
            "questions": self.rows,
        }


def attribution(gold_answers: dict[str, str], model_answers: dict[str, str]) -> Report:
    """Score ``model_answers`` against ``gold_answers`` (both ``{sample_id: text}``).

    Questions are taken in ``gold_answers`` order; model answers for ids that are
    not questions are listed in ``unknown_ids`` and otherwise ignored.
    """
    report = Report(unknown_ids=[k for k in model_answers if k not in gold_answers])
    totals = [0.0, 0.0, 0.0]
    for key, human in gold_answers.items():
        gold = set(cited_numbers(human))
        answer = model_answers.get(key)
        pred = set(cited_numbers(answer or ""))
        row: dict[str, Any] = {"sample_id": key, "gold": sorted(gold), "pred": sorted(pred),
                               "precision": None, "recall": None, "f1": None}
        if answer is None:
            report.missing_answers += 1
        if not gold:
            row["status"] = "skipped: empty gold"
            report.skipped_empty_gold += 1
        else:
            p, r, f = score(gold, pred)
            row.update(precision=p, recall=r, f1=f,
                       status="scored" if answer is not None else "scored: no model answer")
            totals = [totals[0] + p, totals[1] + r, totals[2] + f]
            report.scored += 1
        report.rows.append(row)
    if report.scored:
        report.precision, report.recall, report.f1 = (t / report.scored for t in totals)
    return report
