"""Properties of the built-in demo data (needlework.demo).

The formats are defined in docs/benchmarks.md sections 1 (GaRAGe) and 2
(Long-form RewardBench).
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter

import pytest

from needlework.demo import (
    DEFLECTION,
    corpus_texts,
    grounding_records,
    haystack_paragraphs,
    preference_records,
)
from needlework.demo._util import age_between

CITE_RE = re.compile(r"\[cite_(\d+)\]")
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
DATETIME_RE = re.compile(r"^20(24|25)-\d\d-\d\dT\d\d:\d\d:\d\d$")
DATE_RE = re.compile(r"^\d{4}-\d\d-\d\d$")
SENTENCE_END = re.compile(r"[.!?](?:\s|$)")

YES_NO = {"YES", "NO"}
QUESTION_TYPES = {"", "SLOW-CHANGING", "FAST-CHANGING"}
COMPLEXITIES = {"Simple", "Simple w. condition", "Set", "Comparison", "Aggregation",
                "Multi-hop", "Post-processing heavy"}
POPULARITY = {"Head", "Torso", "Tail"}
RELEVANT = {"YES", "NO", ""}
CORRECT = {"ANSWER-THE-QUESTION", "RELATED-INFORMATION", "OUTDATED", "UNKNOWN", ""}
TAGS = {"web", "arxiv", "sec", "devops", "enron"}
SCHEMA_FIELDS = [
    "sample_id", "question_date", "question", "grounding", "question_valid",
    "question_seeking", "question_false_premise", "question_sensitive", "question_type",
    "question_complexity", "question_category", "question_popularity", "evidence_relevant",
    "evidence_correct", "evidence_cited", "answer_generate", "answer_related_info",
    "answer_validate", "comments", "question_tag", "topic_tag",
]
SUBSETS = {"QA", "RAG", "Chat", "Writing", "Reasoning"}


def tokens(text: str) -> float:
    """Token estimate at 0.75 words per token."""
    return len(text.split()) / 0.75


def is_unlabeled(record: dict) -> bool:
    return (all(v == "" for v in record["evidence_relevant"])
            and all(v == "" for v in record["evidence_correct"]))


def passage_text(record: dict, i: int) -> str:
    return record["grounding"][i - 1][f"cite_{i}"]


@pytest.fixture(scope="module")
def grounding() -> list[dict]:
    return grounding_records()


@pytest.fixture(scope="module")
def preferences() -> list[dict]:
    return preference_records()


# ---------------------------------------------------------------- grounding


def test_grounding_counts(grounding):
    assert len(grounding) >= 12
    assert all(4 <= len(r["grounding"]) <= 15 for r in grounding)


def test_grounding_schema_and_value_sets(grounding):
    for r in grounding:
        assert list(r)[:len(SCHEMA_FIELDS)] == SCHEMA_FIELDS
        for field in SCHEMA_FIELDS:
            if field != "grounding" and not field.startswith("evidence_"):
                assert isinstance(r[field], str), field
        assert DATETIME_RE.match(r["question_date"])
        assert r["question"].strip()
        assert r["question_valid"] in YES_NO
        assert r["question_seeking"] in YES_NO
        assert r["question_false_premise"] in YES_NO
        assert r["question_sensitive"] in YES_NO
        assert r["question_type"] in QUESTION_TYPES
        assert (r["question_type"] != "") == (r["question_sensitive"] == "YES")
        assert r["question_complexity"] in COMPLEXITIES
        assert r["question_category"].strip()
        assert r["question_popularity"] in POPULARITY
        assert set(r["evidence_relevant"]) <= RELEVANT
        assert set(r["evidence_correct"]) <= CORRECT
        assert set(r["evidence_cited"]) <= YES_NO
        assert r["answer_validate"] in {"", "YES"}
        assert r["question_tag"] in TAGS and r["topic_tag"] in TAGS


def test_grounding_lists_aligned(grounding):
    for r in grounding:
        n = len(r["grounding"])
        assert len(r["evidence_relevant"]) == n
        assert len(r["evidence_correct"]) == n
        assert len(r["evidence_cited"]) == n


def test_grounding_passages(grounding):
    for r in grounding:
        for i, passage in enumerate(r["grounding"], start=1):
            assert list(passage) == [f"cite_{i}", "age", "date", "provider"]
            assert passage["provider"] in {"web", "ent"}
            text = passage[f"cite_{i}"]
            assert len(text.split()) >= 12
            assert 2 <= len(SENTENCE_END.findall(text)) <= 6, text
            if passage["date"]:
                assert DATE_RE.match(passage["date"])
                assert passage["date"] <= r["question_date"][:10]
                if passage["age"]:
                    assert passage["age"] == age_between(passage["date"], r["question_date"])
    passages = [p for r in grounding for p in r["grounding"]]
    assert any(p["age"] == "" for p in passages)
    assert any(p["date"] == "" for p in passages)
    assert any(p["date"] == "" and p["age"] for p in passages)
    assert any(p["date"] and p["age"] == "" for p in passages)
    assert {p["provider"] for p in passages} == {"web", "ent"}


def test_age_format():
    assert age_between("2023-12-12", "2024-11-20T10:00:00") == "11 months, 8 days"
    assert age_between("2024-01-14", "2025-01-14T00:00:00") == "1 year"
    assert age_between("2025-01-14", "2025-01-14T09:00:00") == "0 days"


def test_labels_consistent(grounding):
    for r in grounding:
        for rel, cor in zip(r["evidence_relevant"], r["evidence_correct"], strict=True):
            if rel == "YES":
                assert cor in CORRECT - {""}
            else:
                assert cor == ""


def test_all_five_labels_present(grounding):
    pairs = {(rel, cor) for r in grounding
             for rel, cor in zip(r["evidence_relevant"], r["evidence_correct"], strict=True)}
    assert ("NO", "") in pairs
    for label in ("ANSWER-THE-QUESTION", "RELATED-INFORMATION", "OUTDATED", "UNKNOWN"):
        assert ("YES", label) in pairs


def test_question_dimensions_vary(grounding):
    assert {r["question_complexity"] for r in grounding} == COMPLEXITIES
    assert {r["question_popularity"] for r in grounding} == POPULARITY
    assert {r["question_type"] for r in grounding} == QUESTION_TYPES
    assert {r["question_valid"] for r in grounding} == YES_NO
    assert {r["question_seeking"] for r in grounding} == YES_NO
    assert {r["question_false_premise"] for r in grounding} == YES_NO
    assert {r["question_tag"] for r in grounding} == TAGS
    assert len({r["question_category"] for r in grounding}) >= 7


def test_sample_ids_unique_uuid_like(grounding):
    ids = [r["sample_id"] for r in grounding]
    assert len(set(ids)) == len(ids)
    assert all(UUID_RE.match(i) for i in ids)


def test_markers_point_to_relevant_passages(grounding):
    for r in grounding:
        for field in ("answer_generate", "answer_related_info"):
            for n in CITE_RE.findall(r[field]):
                i = int(n)
                assert 1 <= i <= len(r["grounding"]), (r["sample_id"], field, i)
                assert r["evidence_relevant"][i - 1] == "YES", (r["sample_id"], field, i)


def test_evidence_cited_matches_markers(grounding):
    for r in grounding:
        cited = {int(n) for n in CITE_RE.findall(r["answer_generate"])}
        expected = ["YES" if i in cited else "NO" for i in range(1, len(r["grounding"]) + 1)]
        assert r["evidence_cited"] == expected


def test_answered_questions_have_markers(grounding):
    answered = [r for r in grounding
                if r["answer_generate"] and r["answer_generate"] != DEFLECTION]
    assert len(answered) >= 6
    for r in answered:
        assert "ANSWER-THE-QUESTION" in r["evidence_correct"]
        assert CITE_RE.search(r["answer_generate"])
        assert len(r["answer_generate"].split()) >= 30


def test_deflection_rule(grounding):
    labeled = [r for r in grounding if not is_unlabeled(r)]
    needs = [r for r in labeled if "ANSWER-THE-QUESTION" not in r["evidence_correct"]]
    assert len(needs) >= 3
    for r in needs:
        assert r["answer_generate"] == DEFLECTION == "There is not enough grounding for an answer."
        assert set(r["evidence_cited"]) == {"NO"}
    for r in grounding:
        if r["answer_generate"] == DEFLECTION:
            assert "ANSWER-THE-QUESTION" not in r["evidence_correct"]


def test_unlabeled_questions(grounding):
    unlabeled = [r for r in grounding if is_unlabeled(r)]
    assert 2 <= len(unlabeled) <= 3
    for r in unlabeled:
        assert r["answer_generate"] == ""
        assert r["answer_related_info"] == ""
        assert set(r["evidence_cited"]) == {"NO"}


def test_extra_field_everywhere(grounding):
    for r in grounding:
        assert r["source_batch"] == "demo-2025-01"
        assert set(r) == set(SCHEMA_FIELDS) | {"source_batch"}


def test_untrusted_literals_present(grounding):
    texts = [passage_text(r, i) for r in grounding for i in range(1, len(r["grounding"]) + 1)]
    assert any("costs $5 and $10" in t for t in texts)
    assert any("<b>Note</b>" in t for t in texts)


def test_grounding_json_round_trip(grounding):
    for r in grounding:
        line = json.dumps(r, ensure_ascii=False)
        assert "\n" not in line
        assert json.loads(line) == r


# ---------------------------------------------------------------- preferences


def test_preference_counts_and_ids(preferences):
    assert len(preferences) >= 24
    ids = [r["id"] for r in preferences]
    assert len(set(ids)) == len(ids)
    counts = Counter(r["subset"] for r in preferences)
    assert set(counts) == SUBSETS
    assert all(c >= 4 for c in counts.values())
    for r in preferences:
        assert list(r) == ["id", "subset", "prompt", "chosen", "rejected"]
        assert re.fullmatch(rf"{r['subset']}_\d+", r["id"])


def test_preference_shapes(preferences):
    for r in preferences:
        assert r["subset"] in SUBSETS
        assert isinstance(r["prompt"], str) and r["prompt"].strip()
        assert len(r["chosen"]) == 1
        assert len(r["rejected"]) == (1 if r["subset"] == "Reasoning" else 3)
        for text in r["chosen"] + r["rejected"]:
            assert isinstance(text, str) and text.strip()
        for text in r["rejected"]:
            assert text != r["chosen"][0]
        assert len(set(r["rejected"])) == len(r["rejected"])


def test_long_records(preferences):
    long_records = [r for r in preferences
                    if all(tokens(t) > 3000 for t in r["chosen"] + r["rejected"])]
    assert len(long_records) >= 5
    assert len({r["subset"] for r in long_records}) >= 4
    for r in long_records:
        words = len(r["chosen"][0].split())
        assert 3300 <= words <= 6500
        paragraphs = r["chosen"][0].split("\n\n")
        assert len(paragraphs) >= 40
        # Built from many distinct paragraphs, not from one repeated paragraph.
        assert len(set(paragraphs)) / len(paragraphs) > 0.95


def test_near_copy_rejected_for_diff_views(preferences):
    near = 0
    for r in preferences:
        chosen = r["chosen"][0]
        for text in r["rejected"]:
            if len(chosen) < 20_000:
                a, b = chosen.split(), text.split()
            else:
                a, b = chosen.split("\n\n"), text.split("\n\n")
            ratio = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
            if 0.8 <= ratio < 1.0:
                near += 1
                break
    assert near >= 8


def test_total_size_under_4mb(preferences):
    assert len(json.dumps(preferences).encode()) < 4_000_000


# ---------------------------------------------------------------- haystack


def test_haystack_paragraphs():
    paragraphs = haystack_paragraphs()
    assert len(paragraphs) >= 300
    assert len(set(paragraphs)) == len(paragraphs)
    for p in paragraphs:
        assert 40 <= len(p.split()) <= 120
        assert p[0].isupper() and p.endswith(".")
        assert "\n" not in p
    # Consecutive paragraphs change topic (their first sentences differ in subject).
    firsts = [p.split(". ")[0] for p in paragraphs]
    assert all(a != b for a, b in zip(firsts, firsts[1:], strict=False))


# ---------------------------------------------------------------- corpus


def test_corpus_covers_everything(grounding, preferences):
    corpus = corpus_texts()
    assert all(isinstance(t, str) and t for t in corpus)
    assert len(set(corpus)) == len(corpus)
    texts = set(corpus)
    for r in grounding:
        assert r["question"] in texts
        for i in range(1, len(r["grounding"]) + 1):
            assert passage_text(r, i) in texts
        if r["answer_generate"]:
            assert r["answer_generate"] in texts
    for r in preferences:
        assert r["prompt"] in texts
        assert all(t in texts for t in r["chosen"] + r["rejected"])
    assert set(haystack_paragraphs()) <= texts


# ---------------------------------------------------------------- determinism


@pytest.mark.parametrize("fn", [grounding_records, preference_records, haystack_paragraphs,
                                corpus_texts])
def test_deterministic(fn):
    first = fn()
    assert fn() == first
    # Callers get fresh objects: mutating one result does not leak into the next.
    first.clear()
    assert fn()
