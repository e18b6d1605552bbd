"""Suggestions carry a confidence where the source gives one (issue 50, point 2): a file's
``confidence`` (or a Label Studio / Argilla score from 0 to 1), a reward model's verdict
(sigmoid of its margin), a judge's stated confidence with its label; none from the rules
judge. The question list orders by it, and the page says it beside the suggestion."""

from __future__ import annotations

import json
import math

import pytest

from needlework.datasets.transfer import import_bytes
from needlework.formats import FormatError
from needlework.grounding.progress import ItemFilter, make_list
from needlework.rag import rules_judge
from needlework.suggest.data import import_suggestions, sure_text
from needlework.suggest.order import LEAST, LIST, MOST, by_confidence
from needlework.suggest.prompts import LABEL_SCHEMA, label_messages, stated_confidence
from needlework.suggest.verdicts import margin_rows
from store.suggestions import dataset_suggestions, has_confidence, item_confidences
from tests.conftest import garage_records, jsonl


def lines(*objects) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objects).encode()


@pytest.fixture
def grounding(db):
    import_bytes(db, jsonl(garage_records(4)), "g.jsonl", dataset="g")
    return db


def test_a_file_confidence_and_a_tool_score_from_0_to_1_are_kept(grounding):
    assert not has_confidence(grounding, "g")
    import_suggestions(grounding, lines(
        {"item": "sample-1", "field": "label:1", "value": "OUTDATED", "confidence": 0.35},
        {"item": "sample-1", "field": "label:2", "value": "UNKNOWN", "score": 3.5},
        {"data": {"id": "sample-2"}, "predictions": [{"model_version": "ls", "score": 0.9,
                                                      "result": [{"from_name": "label:1",
                                                                  "value": {"choices": ["irrelevant"]}}]}]},
        {"id": "sample-3", "suggestions": {"label_1": {"value": "UNKNOWN", "score": 12,
                                                       "agent": "big"}}}),
        "s.jsonl", "g", by="lena")
    rows = {(r["item_key"], r["field"]): r for r in dataset_suggestions(grounding, "g")}
    assert rows[("sample-1", "label:1")]["confidence"] == 0.35
    assert rows[("sample-1", "label:2")]["confidence"] is None  # a score only
    assert rows[("sample-2", "label:1")]["confidence"] == 0.9  # Label Studio's score
    assert rows[("sample-3", "label:1")]["confidence"] is None  # 12 is no probability
    assert item_confidences(grounding, "g") == {"sample-1": 0.35, "sample-2": 0.9}
    assert has_confidence(grounding, "g")


def test_a_confidence_out_of_range_names_the_line_and_field_and_stores_nothing(grounding):
    with pytest.raises(FormatError) as e:
        import_suggestions(grounding, lines(
            {"item": "sample-1", "field": "label:1", "value": "OUTDATED", "confidence": 0.5},
            {"item": "sample-1", "field": "label:2", "value": "UNKNOWN", "confidence": 1.5}),
            "s.jsonl", "g", by="lena")
    assert "s.jsonl" in str(e.value) and "line 2" in str(e.value)
    assert "confidence must be a number from 0 to 1" in str(e.value)
    assert list(dataset_suggestions(grounding, "g")) == []


def test_a_reward_margin_gives_a_probability_a_judge_run_none():
    scores = {"k": {"chosen_scores": [2.0, 0.0], "rejected_scores": [0.5]}}
    reward = {(r["field"], r["value"]): r["confidence"]
              for r in margin_rows("p", scores, "reward:m", {"margin": "reward"})}
    assert reward[("verdict:0:0", "agree")] == pytest.approx(1 / (1 + math.exp(-1.5)), abs=1e-6)
    assert reward[("verdict:1:0", "flip")] == pytest.approx(1 / (1 + math.exp(-0.5)), abs=1e-6)
    judged = list(margin_rows("p", scores, "judge:m", {"margin": "rating"}))
    assert {r["confidence"] for r in judged} == {None}


def test_a_judge_states_its_confidence_with_its_label_the_rules_judge_none():
    assert stated_confidence('thinking...\n{"label": "OUTDATED", "confidence": 0.8}') == 0.8
    assert stated_confidence('{"label": "OUTDATED", "confidence": 80}') is None  # no probability
    assert stated_confidence('{"label": "OUTDATED"}') is None
    assert stated_confidence(None) is None
    assert LABEL_SCHEMA["schema"]["required"] == ["label", "confidence"]
    from needlework.grounding.item import Passage  # noqa: PLC0415

    passage = Passage(1, "A ticket at the Lakeside Museum costs $5.", "web", "2024-01-01",
                      "1 year", "")
    prompt = label_messages("What does a ticket cost at the Lakeside Museum?", "2025-01-14", passage)
    assert '"confidence": <how likely your label is right, from 0 to 1>' in prompt[0]["content"]
    assert stated_confidence(rules_judge.reply(prompt)) is None  # rules, not a probability


def test_the_list_orders_by_the_least_sure_suggestion_and_keeps_its_members(grounding):
    import_suggestions(grounding, lines(
        {"item": "sample-1", "field": "label:1", "value": "OUTDATED", "confidence": 0.9},
        {"item": "sample-1", "field": "label:2", "value": "OUTDATED", "confidence": 0.6},
        {"item": "sample-3", "field": "label:1", "value": "OUTDATED", "confidence": 0.2},
        {"item": "sample-4", "field": "label:1", "value": "OUTDATED", "confidence": 0.7}),
        "s.jsonl", "g", by="lena")
    every = make_list(grounding, "g", "ana", ItemFilter(), 0)
    assert by_confidence(grounding, every, LIST) is every
    least = by_confidence(grounding, every, LEAST)
    assert least.keys == ["sample-3", "sample-1", "sample-4", "sample-2"]  # none: last
    assert least.ordered and least.positions == [2, 0, 3, 1]
    assert by_confidence(grounding, every, MOST).keys == ["sample-4", "sample-1", "sample-3",
                                                          "sample-2"]
    assert every.keys is None  # the list given (kept between reruns) is left as it was
    # a queue keeps its members: only their order changes
    queue = make_list(grounding, "g", "ana", ItemFilter(), 0, ["sample-2", "sample-4", "sample-1"])
    assert by_confidence(grounding, queue, LEAST).keys == ["sample-1", "sample-4", "sample-2"]
    # moving through it follows the order
    assert least.step(grounding, "sample-3", 2, 1) == "sample-1"
    assert least.next_unfinished(grounding, "sample-1", 0) == "sample-4"


def test_the_confidence_is_said_in_words_beside_a_suggestion():
    assert sure_text({"confidence": 0.823, "score": 5}) == " 82% sure"
    assert sure_text({"confidence": None, "score": 0.7}) == " 0.70"
    assert sure_text({"confidence": None, "score": None}) == ""
