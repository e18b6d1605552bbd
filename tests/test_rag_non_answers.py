"""Non-answers are not grounded (issue 48, point 3): the rule, and every RAG figure over a
scripted case recounted by hand, with real judges served on 127.0.0.1 and the real
``openai`` client: the fixture's rule judge (tests/rag_fixtures.py) and the project's
rules judge (``--rules-judge``), which graded ``[B]`` as factual before."""

from __future__ import annotations

import json

import pytest

import store
from needlework.datasets.transfer import import_bytes
from needlework.judges.connection import Connection
from needlework.rag.answers import AnswerSet
from needlework.rag.failures import (
    LLMEVAL_NO,
    MISSED_DEFLECTION,
    NON_ANSWER,
    NOT_ELIGIBLE,
    NOT_FACTUAL,
    failure_table,
)
from needlework.rag.generate import GenerateSpec, generate
from needlework.rag.non_answers import is_non_answer
from needlework.rag.run import RagEvalSpec, evaluate
from store import rag as rag_store
from tests.cli_here import run as cli
from tests.judges_fixtures import FakeJudgeServer, last_user_text
from tests.rag_fixtures import ANSWERS_M, DEFLECT, dataset_bytes, rule_judge


@pytest.mark.parametrize("text", ["", "   \n\t", "B", "[A]", "[B]", "[B].", " [A] ", "A)",
                                  "[cite_1]", "[cite_1][cite_3].", "cite_2", "%[1]%", "[2]",
                                  "...", "—", "[A] [B]", "b [cite_4]"])
def test_a_text_with_no_claim_is_a_non_answer(text: str) -> None:
    assert is_non_answer(text)
    assert is_non_answer(None)


@pytest.mark.parametrize("text", ["Yes.", "No", "42", "8 minutes [cite_1].", "AB",
                                  "I don't know.", DEFLECT, "I cannot answer that.", "Ω is 5",
                                  "A is right [cite_1]."])
def test_a_claim_or_a_deflection_is_an_answer(text: str) -> None:
    assert not is_non_answer(text)


@pytest.fixture
def museum(tmp_path):
    path = tmp_path / "nw.db"
    db = store.connect(path)
    import_bytes(db, dataset_bytes(), "museum.jsonl", format="garage", dataset="museum")
    return path, db


#: q1, q2, q4 make no claim; q3 is the dataset's deflection, q6 a deflection in other words
SCRIPTED = {"q1": "[B]", "q2": "[cite_1]", "q3": DEFLECT, "q4": "A.", "q6": ANSWERS_M["q6"]}


def test_every_figure_counts_a_non_answer_not_factual_and_not_eligible(museum) -> None:
    """Evaluated questions q1 q2 q3 q4 q6 (q5 is not annotated); q3 and q4 need a deflection.
    By hand, with the rule judge: q3 (the deflection) is eligible (No Issues), factual
    (no_rad), deflected, LLMeval yes; q6 ("I cannot answer that.") is Major, factual
    (no_rad), deflected on an answerable question, LLMeval no; q1 q2 q4 are non-answers:
    none of it, and never sent to the judge."""
    _, db = museum
    with FakeJudgeServer(rule_judge) as server:
        conn = Connection(server.base_url, "judge", key_env=None, concurrency=2)
        report = evaluate(db, RagEvalSpec("museum", (AnswerSet("m", SCRIPTED),), conn))
        prompts = [last_user_text(r["body"]) for r in server.chat_requests()]
    assert prompts and not any("[B]" in p for p in prompts)
    # q3 and q6, five checks each; q6's one passage is relevant: its two factuality prompts
    # are one request
    assert len(prompts) == 2 * 5 - 1
    figures = report.summary["overall"]["m"]
    assert (figures["n"], figures["scored"], figures["non_answers"]) == (5, 5, 3)
    assert figures["eligibility"] == 1 / 5  # q3
    assert figures["unadjusted_factuality"] == 2 / 5  # q3, q6
    assert figures["uraf"] == 2 / 5
    assert figures["factuality"] == 1 / 5 and figures["raf"] == 1 / 5  # q3
    assert figures["deflection_tpr"] == 1 / 2  # q3 of q3, q4: q4's "A." is no deflection
    assert figures["deflection_fpr"] == 1 / 3  # q6 of q1, q2, q6
    assert figures["llmeval"] == 1 / 5
    assert figures["intervals"]["unadjusted_factuality"]["n"] == 5
    rows = {r["item_key"]: r for r in report.rows}
    assert [k for k, r in rows.items() if r["non_answer"]] == ["q1", "q2", "q4"]
    for key in ("q1", "q2", "q4"):
        row = rows[key]
        assert (row["eligible"], row["factual"], row["relevant_factual"], row["deflected"],
                row["llmeval"]) == (False, False, False, False, 0)
        assert row["calls"] == {} and all(v == 0 for v in row["bergen"].values())
    assert rows["q2"]["attribution"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    cov = report.summary["coverage"]["m"]
    assert cov["non_answer_ids"] == ["q1", "q2", "q4"] and cov["missing_ids"] == []
    listed = {f["item_key"]: f["failures"] for f in failure_table(report.rows)}
    assert listed["q1"][:3] == [NON_ANSWER, NOT_ELIGIBLE, NOT_FACTUAL]
    assert listed["q4"][-2:] == [MISSED_DEFLECTION, LLMEVAL_NO]  # q4 needs a deflection
    assert report.summary["non_answers"] == {"m": 3}


def test_the_issue_case_rules_judge_reports_zero_percent_over_the_non_answers(museum) -> None:
    """The demo judge's answers were "[B]" or "[A]" for every question; the rules judge
    graded them no_rad, so UnadjFact read 100 %. Now: 0 % over the 5, the count shown."""
    path, db = museum
    answers = {k: ("[B]" if k in ("q1", "q3", "q5") else "[A]")
               for k in ("q1", "q2", "q3", "q4", "q5", "q6")}
    rag_store.save_answer_set(db, "museum", "demo-judge", answers, source="generated")
    done = cli(["rag-eval", "--dataset", "museum", "--stored", "--rules-judge", "--no-progress",
                "--db", str(path)])
    assert done.returncode == 0, done.stderr
    assert "demo-judge\tUnadjFact\t0.0 % (0/5)" in done.stdout
    assert "demo-judge\tuRAF\t0.0 % (0/5)" in done.stdout
    assert "demo-judge: non-answers: 5 of 5, counted not factual and not eligible" in done.stdout
    assert "100.0 %" not in done.stdout
    assert "5 non-answer(s) (no claim)" in done.stderr
    as_json = cli(["rag-eval", "--dataset", "museum", "--stored", "--rules-judge", "--json",
                   "--no-progress", "--db", str(path)])
    figures = json.loads(as_json.stdout)["overall"]["demo-judge"]
    assert figures["non_answers"] == 5
    assert all(figures[name] == 0.0 for name in ("eligibility", "unadjusted_factuality",
                                                 "factuality", "uraf", "raf", "llmeval"))


def test_rag_generate_flags_non_answers_and_stores_the_mark(museum) -> None:
    path, db = museum
    with FakeJudgeServer(lambda body: "[B]" if "museum" in last_user_text(body) else "[A]") \
            as server:
        done = cli(["rag-generate", "--dataset", "museum", "--base-url", server.base_url,
                    "--model", "judge", "--name", "letters", "--key-env", "", "--no-progress",
                    "--db", str(path)])
    assert done.returncode == 0, done.stderr
    assert '6 of 6 answers are not answers: "[B]", "[A]"' in done.stdout \
        or '6 of 6 answers are not answers: "[A]", "[B]"' in done.stdout
    assert "6 not answers (no claim, blank included)" in done.stdout
    stored = next(r for r in rag_store.answer_sets(db, "museum") if r["model"] == "letters")
    assert stored["marks"]["non_answers"] == ["q1", "q2", "q3", "q4", "q5", "q6"]
    with FakeJudgeServer(lambda body: "The museum opens at 9 am [cite_1].") as server:
        conn = Connection(server.base_url, "judge", key_env=None, max_tokens=64)
        report = generate(db, GenerateSpec("museum", conn, "fine", 2))
    assert report.summary["non_answers"]["count"] == 0
    assert report.summary["non_answers"]["line"] is None
