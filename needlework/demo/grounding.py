"""Build the GaRAGe-format demo records from the grounding bank.

The format is defined in ``docs/benchmarks.md`` section 1. The text (questions,
passages, answers) is in ``data/grounding/*.json``; derived fields are computed
here so that they cannot drift from the text: ``evidence_cited`` comes from the
``[cite_N]`` markers of ``answer_generate`` and each passage's ``age`` from its
date and the question date.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from needlework.demo._util import age_between, stable_uuid
from needlework.demo.loaders import DemoDataError, load_json
from needlework.formats.garage import CITE_RE, DEFLECTION

__all__ = ["DEFLECTION", "grounding_records"]

#: Extra, non-schema field carried by every demo record (exercises round trips).
EXTRA_FIELD = ("source_batch", "demo-2025-01")

#: The three groups of the bank, in record order, and the answer each gets:
#: its own ``answer``, the deflection sentence, or none (not judged yet).
GROUPS: tuple[tuple[str, str | None], ...] = (
    ("answered", None), ("deflected", DEFLECTION), ("unlabeled", ""),
)


class _PassageFields(TypedDict):
    label: Literal["A", "R", "O", "U", "N", ""]
    provider: str
    date: str
    text: str


class Passage(_PassageFields, total=False):
    """One retrieved passage. ``label`` is a code of ``data/grounding/labels.json``
    (``""``: not judged yet). ``age`` is computed from ``date`` and the question
    date unless given (``""`` keeps it empty)."""

    age: str


class Dimensions(TypedDict):
    """The question's GaRAGe dimensions; ``tags`` is ``[question_tag, topic_tag]``."""

    valid: str
    seeking: str
    false_premise: str
    sensitive: str
    type: str
    complexity: str
    category: str
    popularity: str
    tags: list[str]


class _EntryFields(TypedDict):
    key: str
    question_date: str
    question: str
    dims: Dimensions
    passages: list[Passage]
    validate: str
    comments: str


class GroundingEntry(_EntryFields, total=False):
    """One question of the bank; ``key`` seeds its stable ``sample_id``."""

    answer: str
    related: str


class LabelCode(TypedDict):
    evidence_relevant: Literal["YES", "NO", ""]
    evidence_correct: Literal["ANSWER-THE-QUESTION", "RELATED-INFORMATION", "OUTDATED",
                              "UNKNOWN", ""]


def grounding_bank(group: str) -> list[GroundingEntry]:
    """The questions of one group (``answered``, ``deflected``, ``unlabeled``)."""
    return load_json(f"grounding/{group}.json", list[GroundingEntry])


def label_codes() -> dict[str, LabelCode]:
    """Passage label code -> the (evidence_relevant, evidence_correct) pair it stands for."""
    return load_json("grounding/labels.json", dict[str, LabelCode])


def _grounding(question_date: str, passages: list[Passage]) -> list[dict]:
    grounding = []
    for i, item in enumerate(passages, start=1):
        age = item.get("age")
        if age is None:
            age = age_between(item["date"], question_date) if item["date"] else ""
        grounding.append({f"cite_{i}": item["text"], "age": age, "date": item["date"],
                          "provider": item["provider"]})
    return grounding


def _record(entry: GroundingEntry, answer: str, codes: dict[str, LabelCode]) -> dict:
    dims = entry["dims"]
    passages = entry["passages"]
    cited = {int(n) for n in CITE_RE.findall(answer)}
    question_tag, topic_tag = dims["tags"]
    labels = [codes[item["label"]] for item in passages]
    record = {
        "sample_id": stable_uuid(entry["key"]),
        "question_date": entry["question_date"],
        "question": entry["question"],
        "grounding": _grounding(entry["question_date"], passages),
        "question_valid": dims["valid"],
        "question_seeking": dims["seeking"],
        "question_false_premise": dims["false_premise"],
        "question_sensitive": dims["sensitive"],
        "question_type": dims["type"],
        "question_complexity": dims["complexity"],
        "question_category": dims["category"],
        "question_popularity": dims["popularity"],
        "evidence_relevant": [code["evidence_relevant"] for code in labels],
        "evidence_correct": [code["evidence_correct"] for code in labels],
        "evidence_cited": ["YES" if i in cited else "NO" for i in range(1, len(passages) + 1)],
        "answer_generate": answer,
        "answer_related_info": entry.get("related", ""),
        "answer_validate": entry["validate"],
        "comments": entry["comments"],
        "question_tag": question_tag,
        "topic_tag": topic_tag,
    }
    record[EXTRA_FIELD[0]] = EXTRA_FIELD[1]
    return record


def grounding_records() -> list[dict]:
    """Return the GaRAGe-format demo records (a fresh, identical list on every call).

    The set has 16 questions: 9 answered from the grounding, 4 that need the
    deflection answer (no ANSWER-THE-QUESTION passage), and 3 not judged yet
    (empty labels and answers). Every record also carries the extra field
    ``source_batch``, which is not part of the GaRAGe schema.
    """
    codes = label_codes()
    records = []
    for group, answer in GROUPS:
        for i, entry in enumerate(grounding_bank(group)):
            if answer is None and "answer" not in entry:
                raise DemoDataError(f"grounding/{group}.json: [{i}]: missing field answer")
            records.append(_record(entry, entry["answer"] if answer is None else answer, codes))
    return records
