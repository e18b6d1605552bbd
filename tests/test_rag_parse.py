"""Sentence splitting and the RAG judges' answer parsers (they never guess)."""

from __future__ import annotations

import pytest

from needlework.rag.parse import (
    parse_deflection,
    parse_eligibility,
    parse_factuality,
    parse_llmeval,
)
from needlework.rag.prompts import (
    deflection_messages,
    eligibility_messages,
    factuality_messages,
    llmeval_messages,
)
from needlework.rag.questions import RagPassage
from needlework.rag.sentences import split_sentences


@pytest.mark.parametrize(("text", "expected"), [
    ("Light takes 8 minutes [cite_1]. It is fast [cite_2][cite_4].",
     ["Light takes 8 minutes [cite_1].", "It is fast [cite_2][cite_4]."]),
    ("NATO was founded in 1949. [cite_1] Its members grew.",
     ["NATO was founded in 1949. [cite_1]", "Its members grew."]),
    ("Founders were e.g. the U.S. and Canada. J. R. R. Tolkien wrote it! Pi is 3.14?",
     ["Founders were e.g. the U.S. and Canada.", "J. R. R. Tolkien wrote it!", "Pi is 3.14?"]),
    ("Intro:\n- first item\n- second item.\n\nDone", ["Intro:", "- first item", "- second item.", "Done"]),
    ('He said "stop." Then he left.', ['He said "stop."', "Then he left."]),
    ("It costs approx. 5 dollars. ok. Yes.", ["It costs approx. 5 dollars. ok.", "Yes."]),
    ("no full stop at all", ["no full stop at all"]),
    ("No. US citizens need no visa. See No. 5 and Fig. 2 below.",
     ["No.", "US citizens need no visa.", "See No. 5 and Fig. 2 below."]),
    ("   ", []),
])
def test_sentences(text, expected) -> None:
    sentences = split_sentences(text)
    assert [s.text for s in sentences] == expected
    assert all(text[s.start:s.end] == s.text for s in sentences)


@pytest.mark.parametrize(("answer", "value"), [
    ('Analysis: fine.\n{"verdict": "No Issues"}', "No Issues"),
    ('{ { "Instruction Following": "Minor Issue(s)" } }', "Minor Issue(s)"),
    ('```json\n{"verdict": "major issues"}\n```', "Major Issue(s)"),
    ("The test answer has a major issue in part two.\nFinal verdict: Minor Issue", "Minor Issue(s)"),
    ('{"verdict": "Major Issue(s)"} then {"verdict": "Major Issue(s)"}', "Major Issue(s)"),
])
def test_eligibility_verdicts(answer, value) -> None:
    parsed = parse_eligibility(answer)
    assert parsed.valid and parsed.value == value


@pytest.mark.parametrize(("answer", "reason"), [
    ("", "empty answer"),
    ("[[A]]", "no verdict found"),
    ("There is a major issue here.", "no verdict found"),  # free text is not a verdict
    ('{"verdict": "No Issues"} {"verdict": "Major Issue(s)"}', "contradictory"),
    ('{"verdict": "Good"}', "is not one of"),
])
def test_eligibility_invalid(answer, reason) -> None:
    parsed = parse_eligibility(answer)
    assert not parsed.valid and reason in parsed.reason


SENTENCES = ["Apples are red.", "Bananas are green.", "Enjoy!"]


def test_factuality_json_by_number_and_by_text() -> None:
    parsed = parse_factuality(
        '{"grounding_quality": [{"sentence": 1, "label": "supported", "rationale": "r1", '
        '"excerpt": "Apples are red fruits."}, {"sentence": "Bananas are green.", "label": '
        '"Contradictory", "excerpt": "Bananas are yellow."}, {"sentence": "3", "label": "no rad"}]}',
        SENTENCES)
    assert parsed.valid
    assert [v["label"] for v in parsed.value] == ["supported", "contradictory", "no_rad"]
    assert parsed.value[0]["excerpt"] == "Apples are red fruits." and parsed.value[2]["rationale"] is None


def test_factuality_lines() -> None:
    parsed = parse_factuality("1: supported\nSentence 2 - unsupported\n3) no_rad", SENTENCES)
    assert parsed.valid and [v["label"] for v in parsed.value] == ["supported", "unsupported", "no_rad"]


@pytest.mark.parametrize(("answer", "reason"), [
    ('{"grounding_quality": [{"sentence": 1, "label": "supported"}]}', "no label for sentence 2, 3"),
    ('{"grounding_quality": [{"sentence": 1, "label": "true"}]}', "label 'true' is not one of"),
    ('{"grounding_quality": [{"sentence": 4, "label": "supported"}, {"sentence": 1, "label": '
     '"supported"}, {"sentence": 2, "label": "supported"}, {"sentence": 3, "label": "no_rad"}]}',
     "a verdict for sentence 4, but the answer has 3"),
    ('{"grounding_quality": [{"label": "supported"}]}', "does not say which sentence"),
    ("1: supported\n1: unsupported\n2: no_rad\n3: no_rad", "contradictory: sentence 1"),
    ("All sentences are supported.", "no sentence verdicts found"),
    ("[[A]]", "no sentence verdicts found"),
])
def test_factuality_invalid(answer, reason) -> None:
    parsed = parse_factuality(answer, SENTENCES)
    assert not parsed.valid and reason in parsed.reason


@pytest.mark.parametrize(("answer", "value"), [
    ('{"justification": "It says it cannot.", "grade": "missing"}', "missing"),
    ('{"justification": "x", "grade": "Attempted",}', "attempted"),  # JSON with a trailing comma
    ("Grade: attempted", "attempted"),
    ("**missing**", "missing"),
])
def test_deflection(answer, value) -> None:
    parsed = parse_deflection(answer)
    if answer.endswith(',}'):  # not JSON: read from the grade line inside it
        assert parsed.valid and parsed.value == value and parsed.rule == "grade"
    else:
        assert parsed.valid and parsed.value == value


@pytest.mark.parametrize("answer", ["", "[[A]]", '{"grade": "maybe"}', "Grade: missing. Grade: attempted"])
def test_deflection_invalid(answer) -> None:
    assert not parse_deflection(answer).valid


@pytest.mark.parametrize(("answer", "score", "weird"), [
    ("Yes", 1, False), ("yes, it is correct", 1, False), ("No.", 0, False),
    ("[[A]]", 0, True), ("Eyes", 1, False),  # BERGEN's substring rule, as it is
])
def test_llmeval_follows_bergens_api_rule(answer, score, weird) -> None:
    parsed = parse_llmeval(answer)
    assert parsed.valid and parsed.value == {"score": score, "weird": weird}


def test_prompts_carry_the_data_and_the_label_sets() -> None:
    passages = [RagPassage(3, "Bananas are yellow.", "web", "2024-01-01", "ANSWER-THE-QUESTION")]
    text = factuality_messages("Q?", passages, SENTENCES)[0]["content"]  # GaRAGe's B.3
    assert "**Context:** [Passage 3] (web, 2024-01-01)\nBananas are yellow." in text
    assert text.endswith("**Response:** Apples are red.\nBananas are green.\nEnjoy!")
    for label in ("supported", "unsupported", "contradictory", "no_rad", "grounding_quality"):
        assert label in text
    assert "(no passages)" in factuality_messages("Q?", [], SENTENCES)[0]["content"]
    eligibility = eligibility_messages("Q?", "model says", "human says")[0]["content"]
    assert "<|begin_of_test_response|>\n\nmodel says\n\n<|end_of_test_response|>" in eligibility
    assert "<|begin_of_baseline_response|>\n\nhuman says\n\n" in eligibility
    assert all(lab in eligibility for lab in ("No Issues", "Minor Issue(s)", "Major Issue(s)"))
    assert '"grade": (missing or attempted),' in deflection_messages("Q?", "A")[0]["content"]
    system, user = llmeval_messages("Q?", "ref", "gen")  # BERGEN's, with its system message
    assert system["role"] == "system" and "{Yes} or {No}" in user["content"]
    assert "golden answer: ref \n Generated answer: gen." in user["content"]


def test_eligibility_inside_json_that_does_not_parse() -> None:
    parsed = parse_eligibility('Verdict follows. {"verdict": "Minor Issue(s)",}')
    assert parsed.valid and parsed.value == "Minor Issue(s)" and parsed.rule == "verdict"
