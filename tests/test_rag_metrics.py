"""Hand-computed GaRAGe figures: eligibility x factuality, RAF vs uRAF, deflection TPR/FPR.

The run goes through the real path (a grounding dataset in SQLite, the judge cache, a real
HTTP judge on 127.0.0.1 answering by the rules of tests.rag_fixtures); the expected
figures are worked out by hand below, question by question.
"""

from __future__ import annotations

import pytest

from needlework.datasets.transfer import import_bytes
from needlework.rag import metrics
from needlework.rag.answers import AnswerSet
from needlework.rag.run import RagEvalSpec, evaluate
from store import connect
from tests.judges_fixtures import FakeJudgeServer
from tests.rag_fixtures import ANSWERS_M, ANSWERS_M2, dataset_bytes, rule_judge


@pytest.fixture(scope="module")
def report():
    db = connect(":memory:")
    import_bytes(db, dataset_bytes(), "museum.jsonl", format="garage", dataset="museum")
    with FakeJudgeServer(rule_judge) as server:
        from needlework.judges.connection import Connection  # noqa: PLC0415

        spec = RagEvalSpec("museum", (AnswerSet("m", ANSWERS_M), AnswerSet("m2", ANSWERS_M2)),
                           Connection(server.base_url, "judge", key_env=None, concurrency=3))
        return evaluate(db, spec)


def rows(report, model):
    return {r["item_key"]: r for r in report.rows if r["model"] == model}


def test_questions_evaluated_and_not(report) -> None:
    q = report.summary["questions"]
    assert q["total"] == 6 and q["evaluated"] == 5
    assert q["not_evaluated"] == [{"item_key": "q5", "reason":
                                   "not annotated: no human answer, no passage labelled"}]


def test_per_question_verdicts(report) -> None:
    m = rows(report, "m")
    # q1: both sentences backed by some passage, the second only by the irrelevant passage 2
    assert [s["all"]["label"] for s in m["q1"]["sentences"]] == ["supported", "supported"]
    assert [s["relevant"]["label"] for s in m["q1"]["sentences"]] == ["supported", "unsupported"]
    assert (m["q1"]["eligible"], m["q1"]["factual"], m["q1"]["relevant_factual"]) == (True, True, False)
    assert (m["q1"]["factuality"], m["q1"]["raf"]) == (True, False)
    # q2: minor issue is still eligible; "Dogs are welcome." is unsupported
    assert m["q2"]["eligibility"] == "Minor Issue(s)" and m["q2"]["eligible"] is True
    assert m["q2"]["factual"] is False and m["q2"]["sentences"][1]["all"]["label"] == "unsupported"
    # q3: the deflection sentence needs no attribution: factual everywhere, a true positive
    assert m["q3"]["sentences"][0]["all"]["label"] == "no_rad" and m["q3"]["raf"] is True
    assert m["q3"]["needs_deflection"] and m["q3"]["deflected"] is True
    # q4: factual against the UNKNOWN passage (relevant), but a major issue: no factuality
    assert (m["q4"]["factual"], m["q4"]["relevant_factual"], m["q4"]["eligible"]) == (True, True, False)
    assert (m["q4"]["factuality"], m["q4"]["raf"], m["q4"]["deflected"]) == (False, False, False)
    # q6: declines an answerable question: factual (no_rad) yet not eligible; a false positive
    assert (m["q6"]["factual"], m["q6"]["factuality"], m["q6"]["deflected"]) == (True, False, True)


def test_hand_computed_figures(report) -> None:
    m = report.summary["overall"]["m"]
    assert m["n"] == 5 and m["no_answer"] == 0
    assert m["eligibility"] == pytest.approx(3 / 5)  # q1, q2, q3
    assert m["unadjusted_factuality"] == pytest.approx(4 / 5)  # q1, q3, q4, q6
    assert m["factuality"] == pytest.approx(2 / 5)  # eligible and factual: q1, q3
    assert m["uraf"] == pytest.approx(3 / 5)  # q3, q4, q6 (q1 leans on the irrelevant passage)
    assert m["raf"] == pytest.approx(1 / 5)  # q3
    assert m["deflection_n"] == {"needs deflection": 2, "answerable": 3}
    assert m["deflection_tpr"] == pytest.approx(1 / 2)  # q3 of q3, q4
    assert m["deflection_fpr"] == pytest.approx(1 / 3)  # q6 of q1, q2, q6
    assert m["llmeval"] == pytest.approx(2 / 5)  # the judge says yes to q1 and q3
    assert m["invalid"] == {"eligibility": 0, "factuality": 0, "relevant_factuality": 0,
                            "deflection": 0}


def test_answer_backed_by_an_irrelevant_passage_only(report) -> None:
    m2 = report.summary["overall"]["m2"]
    q1 = rows(report, "m2")["q1"]
    assert q1["factual"] is True and q1["relevant_factual"] is False  # factual, not uRAF
    assert m2["unadjusted_factuality"] == pytest.approx(1 / 5) and m2["uraf"] == 0.0
    # the unanswered questions fail everything and are not deflections
    assert m2["no_answer"] == 4 and m2["eligibility"] == 0.0 and m2["deflection_tpr"] == 0.0
    # q1's deflection grade is unreadable: counted as a false alarm on an answerable question
    assert q1["deflected"] is None and "deflection" in q1["invalid"]
    assert m2["deflection_fpr"] == pytest.approx(1 / 3) and m2["invalid"]["deflection"] == 1
    cov = report.summary["coverage"]["m2"]
    assert cov["unknown_ids"] == ["nope"] and cov["missing_ids"] == ["q2", "q3", "q4", "q6"]


def test_breakdowns_and_side_by_side(report) -> None:
    parts = report.summary["breakdowns"]["m"]
    assert list(parts["deflection"]) == ["answerable", "needs deflection"]
    assert parts["deflection"]["needs deflection"]["n"] == 2
    assert parts["provider"]["enterprise"]["n"] == 2 and parts["provider"]["web"]["n"] == 3
    assert list(parts["complexity"]) == ["Simple", "Comparison"]
    assert parts["complexity"]["Comparison"]["eligibility"] == 1.0
    assert parts["provider"]["web"]["raf"] == 0.0  # q1, q2, q6: none is RAF
    table = metrics.side_by_side(report.summary["overall"])
    assert [r["model"] for r in table] == ["m", "m2"] and table[0]["raf"] == pytest.approx(0.2)
    long = metrics.breakdown_table(report.summary["breakdowns"])
    cell = [r for r in long if r["dimension"] == "provider" and r["value"] == "enterprise"]
    assert [(r["model"], r["n"]) for r in cell] == [("m", 2), ("m2", 2)]


def test_summaries_of_hand_made_rows() -> None:
    def row(needs, deflected, **flags):
        base = {"answered": True, "judged": True, "needs_deflection": needs, "deflected": deflected,
                "eligible": False, "factual": False, "relevant_factual": False, "factuality": False,
                "raf": False, "llmeval": 0, "llmeval_weird": False, "invalid": {},
                "bergen": dict.fromkeys(("M", "EM", "F1", "Precision", "Recall", "Recall_char3gram",
                                         "Rouge-1", "Rouge-2", "Rouge-L"), 0.0),
                "attribution": None, "dims": {}}
        return {**base, **flags}

    figures = metrics.summarize([row(True, True), row(True, True), row(True, False),
                                 row(False, False), row(False, None), row(False, False),
                                 row(False, True)])
    assert figures["deflection_tpr"] == pytest.approx(2 / 3)
    assert figures["deflection_fpr"] == pytest.approx(2 / 4)  # one missing, one unreadable
    empty = metrics.summarize([])
    assert empty["n"] == 0 and empty["eligibility"] is None
