"""GaRAGe JSONL: questions with grounding passages (benchmarks.md §1)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from needlework.formats import checks

NAME = "garage"
KIND = "grounding"
CONTAINER = "jsonl"

YES_NO = ("YES", "NO")
RELEVANT = ("YES", "NO", "")
CORRECT_LABELS = ("ANSWER-THE-QUESTION", "RELATED-INFORMATION", "OUTDATED", "UNKNOWN")
CORRECT = CORRECT_LABELS + ("",)
CITED = ("YES", "NO", "")
QUESTION_TYPES = ("", "SLOW-CHANGING", "FAST-CHANGING")
COMPLEXITIES = (
    "Simple",
    "Simple w. condition",
    "Set",
    "Comparison",
    "Aggregation",
    "Multi-hop",
    "Post-processing heavy",
)
POPULARITY = ("Head", "Torso", "Tail")
TAGS = ("web", "arxiv", "sec", "devops", "enron")
PROVIDERS = ("web", "ent", "")
VALIDATE = ("", "YES")
DEFLECTION = "There is not enough grounding for an answer."
CITE_RE = re.compile(r"\[cite_(\d+)\]")

# Dimension fields: (field, allowed values). "" means not set yet.
DIMENSIONS: dict[str, tuple[str, ...]] = {
    "question_valid": YES_NO,
    "question_false_premise": YES_NO,
    "question_seeking": YES_NO,
    "question_sensitive": YES_NO,
    "question_type": QUESTION_TYPES,
    "question_complexity": COMPLEXITIES,
    "question_popularity": POPULARITY,
}
ALIGNED = {
    "evidence_relevant": RELEVANT,
    "evidence_correct": CORRECT,
    "evidence_cited": CITED,
}


def looks_like(obj: Any) -> bool:
    return isinstance(obj, dict) and ("grounding" in obj or ("sample_id" in obj and "question" in obj))


def passage_text(passage: dict[str, Any], number: int) -> str:
    """The text of passage ``number`` (1-based): the value under ``cite_<number>``."""
    return passage.get(f"cite_{number}", "")


def validate(obj: Any) -> list[str]:
    problems: list[str] = []
    if not checks.require_object(obj, problems):
        return problems
    checks.string(obj, "sample_id", problems, non_empty=True)
    checks.string(obj, "question", problems, non_empty=True)
    checks.string(obj, "question_date", problems, required=False)
    for field, allowed in DIMENSIONS.items():
        if field in obj and obj[field] != "":
            checks.enum(obj, field, allowed, problems)
        elif field in obj:
            checks.string(obj, field, problems)
    for field in ("question_tag", "topic_tag"):
        if field in obj and obj[field] != "":
            checks.enum(obj, field, TAGS, problems)
    checks.enum(obj, "answer_validate", VALIDATE, problems)
    for field in ("question_category", "answer_generate", "answer_related_info", "comments"):
        checks.string(obj, field, problems, required=False)
    grounding = obj.get("grounding")
    if "grounding" not in obj:
        problems.append("grounding is missing")
        return problems
    if not isinstance(grounding, list):
        problems.append(f"grounding must be a list, got {checks.type_name(grounding)}")
        return problems
    for i, passage in enumerate(grounding, start=1):
        where = f"grounding[{i - 1}]"
        if not isinstance(passage, dict):
            problems.append(f"{where} must be an object, got {checks.type_name(passage)}")
            continue
        key = f"cite_{i}"
        if key not in passage:
            found = [k for k in passage if k.startswith("cite_")]
            problems.append(
                f"{where}.{key} is missing (passage {i} must hold its text under {key!r}"
                + (f", found {found[0]!r})" if found else ")")
            )
        elif not isinstance(passage[key], str):
            problems.append(f"{where}.{key} must be a string, got {checks.type_name(passage[key])}")
        for field in ("age", "date"):
            if field in passage and not isinstance(passage[field], str):
                problems.append(
                    f"{where}.{field} must be a string, got {checks.type_name(passage[field])}"
                )
        if "provider" in passage and passage["provider"] not in PROVIDERS:
            problems.append(
                f"{where}.provider is {passage['provider']!r}, expected one of 'web', 'ent'"
            )
    for field, allowed in ALIGNED.items():
        if field not in obj:
            continue
        if checks.string_list(obj, field, problems, allowed=allowed):
            if len(obj[field]) != len(grounding):
                problems.append(
                    f"{field} has {len(obj[field])} entries but grounding has {len(grounding)}"
                )
    for field in ("answer_generate", "answer_related_info"):
        text = obj.get(field)
        if isinstance(text, str):
            for n in sorted({int(m) for m in CITE_RE.findall(text)}):
                if not 1 <= n <= len(grounding):
                    problems.append(
                        f"{field} cites [cite_{n}] but grounding has {len(grounding)} passages"
                    )
    return problems


def key(obj: dict[str, Any], index: int) -> str:
    return obj["sample_id"]


def key_field() -> str:
    return "sample_id"


def title(obj: dict[str, Any]) -> str:
    return obj.get("question", "")


def subset(obj: dict[str, Any], filename: str = "") -> str:
    return obj.get("question_category", "")


def dump_iter(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    """JSONL, one record per line (fields in their original order), a line at a time."""
    for record in records:
        yield json.dumps(record, ensure_ascii=False) + "\n"


def dump(records: Iterable[dict[str, Any]]) -> str:
    """JSONL, one record per line, fields in their original order."""
    return "".join(dump_iter(records))
