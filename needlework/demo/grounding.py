"""Build the GaRAGe-format demo records from the text banks.

The format is defined in ``docs/benchmarks.md`` section 1. Derived fields are
computed here so that they cannot drift from the text: ``evidence_cited`` comes
from the ``[cite_N]`` markers of ``answer_generate`` and each passage's ``age``
from its date and the question date.
"""

from __future__ import annotations

import copy

from needlework.demo._util import CITE_RE, age_between, stable_uuid
from needlework.demo.grounding_bank import ANSWERED
from needlework.demo.grounding_bank_more import DEFLECTED, UNLABELED

#: The human answer written when the grounding cannot answer the question.
DEFLECTION = "There is not enough grounding for an answer."

#: Extra, non-schema field carried by every demo record (exercises round trips).
EXTRA_FIELD = ("source_batch", "demo-2025-01")

#: Label code used in the banks -> (evidence_relevant, evidence_correct).
LABELS: dict[str, tuple[str, str]] = {
    "A": ("YES", "ANSWER-THE-QUESTION"),
    "R": ("YES", "RELATED-INFORMATION"),
    "O": ("YES", "OUTDATED"),
    "U": ("YES", "UNKNOWN"),
    "N": ("NO", ""),
    "": ("", ""),
}


def _grounding(question_date: str, passages: list[dict]) -> list[dict]:
    grounding = []
    for i, item in enumerate(passages, start=1):
        age = item["age"]
        if age is None:
            age = age_between(item["date"], question_date) if item["date"] else ""
        grounding.append({f"cite_{i}": item["text"], "age": age, "date": item["date"],
                          "provider": item["provider"]})
    return grounding


def _record(entry: dict, answer: str) -> dict:
    dims = entry["dims"]
    passages = entry["passages"]
    cited = {int(n) for n in CITE_RE.findall(answer)}
    question_tag, topic_tag = dims["tags"]
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
        "evidence_relevant": [LABELS[item["label"]][0] for item in passages],
        "evidence_correct": [LABELS[item["label"]][1] for item in passages],
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
    records = [_record(entry, entry["answer"]) for entry in ANSWERED]
    records += [_record(entry, DEFLECTION) for entry in DEFLECTED]
    records += [_record(entry, "") for entry in UNLABELED]
    return copy.deepcopy(records)
