"""Evaluation runs: adjudicated references, stored results, cache and resume, cancel,
endpoint failures, the job-runner entry point and the seeded demo answers."""

from __future__ import annotations

import json

import pytest

from needlework.datasets.transfer import import_bytes
from needlework.judges.connection import Connection
from needlework.judges.errors import JudgeCancelled, JudgeError
from needlework.rag.answers import AnswerSet
from needlework.rag.questions import DatasetError, load_questions
from needlework.rag.run import RagEvalSpec, evaluate, run_rag_eval
from needlework.seeding.demo import DEMO_GROUNDING, seed_demo
from store import judges as judge_store
from store import rag as rag_store
from store.annotations import set_annotation
from tests.judges_fixtures import FakeJudgeServer, free_port
from tests.rag_fixtures import ANSWERS_M, dataset_bytes, rule_judge


@pytest.fixture
def museum(db):
    import_bytes(db, dataset_bytes(), "museum.jsonl", format="garage", dataset="museum")
    return db


def spec(server, **options):
    conn = Connection(server.base_url, "judge", key_env=None, **options)
    return RagEvalSpec("museum", (AnswerSet("m", ANSWERS_M),), conn)


def test_references_and_labels_are_adjudicated_first(museum) -> None:
    set_annotation(museum, "museum", "q2", "ann", "answer", "Annotator answer [cite_2].")
    set_annotation(museum, "museum", "q2", "rev", "final:answer", "Final answer [cite_1].")
    set_annotation(museum, "museum", "q4", "rev", "final:label:1", "ANSWER-THE-QUESTION")
    set_annotation(museum, "museum", "q1", "a1", "label:2", "RELATED-INFORMATION")
    set_annotation(museum, "museum", "q1", "a2", "label:2", "RELATED-INFORMATION")
    questions = {q.key: q for q in load_questions(museum, "museum")}
    assert questions["q2"].reference == "Final answer [cite_1]."
    assert questions["q2"].references() == ["Final answer."]
    assert questions["q4"].needs_deflection is False  # the reviewer found an answering passage
    assert [p.number for p in questions["q1"].relevant] == [1, 2]  # the annotators' majority
    assert questions["q3"].needs_deflection and questions["q3"].dims["provider"] == "enterprise"


def test_not_a_grounding_dataset(db) -> None:
    seed_demo(db)
    with pytest.raises(DatasetError, match="preference dataset, not a grounding one"):
        load_questions(db, "demo-preference")
    with pytest.raises(DatasetError, match="no dataset 'nope'"):
        load_questions(db, "nope")


def test_results_are_stored_and_a_rerun_sends_nothing(museum) -> None:
    with FakeJudgeServer(rule_judge) as server:
        first = evaluate(museum, spec(server))
        sent = len(server.chat_requests())
        again = evaluate(museum, spec(server))
        assert len(server.chat_requests()) == sent
    # 5 answers x 5 checks, but for q2 and q6 every passage is relevant: their uRAF prompt
    # is their factuality prompt, asked once
    assert sent == 5 * 5 - 2
    assert first.summary["calls"]["sent"] == sent and again.summary["calls"]["cached"] == 25
    assert again.summary["overall"] == first.summary["overall"]
    run = rag_store.get_run(museum, first.run_key)
    assert run["status"] == "done" and run["done"] == run["total"] == 25
    assert run["summary"]["overall"]["m"]["raf"] == pytest.approx(0.2)
    stored = rag_store.run_results(museum, first.run_key, item_key="q1")
    assert stored[0]["answer"] == ANSWERS_M["q1"]
    assert stored[0]["calls"]["factuality"]["raw"].startswith('{"grounding_quality"')


@pytest.mark.slow
def test_cancel_keeps_answers_and_a_rerun_resumes(museum) -> None:
    calls = []

    def stop() -> bool:
        return len(calls) >= 6

    with FakeJudgeServer(rule_judge) as server:
        with pytest.raises(JudgeCancelled):
            evaluate(museum, spec(server, concurrency=1),
                     progress=lambda done, total: calls.append(done), should_stop=stop)
        sent_before = len(server.chat_requests())
        run = rag_store.list_runs(museum, "museum")[0]
        assert run["status"] == "cancelled"
        assert judge_store.count_calls(museum) == sent_before < 23
        report = evaluate(museum, spec(server, concurrency=1))
        assert len(server.chat_requests()) == 23  # the rest only, nothing asked twice
    assert report.summary["calls"]["cached"] >= sent_before


def test_endpoint_down_fails_the_run_in_one_line(museum) -> None:
    conn = Connection(f"http://127.0.0.1:{free_port()}/v1", "judge", key_env=None, max_retries=0)
    with pytest.raises(JudgeError) as err:
        evaluate(museum, RagEvalSpec("museum", (AnswerSet("m", ANSWERS_M),), conn))
    assert str(err.value).startswith("server down:")
    assert rag_store.list_runs(museum, "museum") == []  # no answer: nothing stored


def test_prompts_over_the_window_are_not_sent(museum) -> None:
    with FakeJudgeServer(rule_judge) as server:
        report = evaluate(museum, spec(server, context_window=300, max_tokens=64))
        sent = len(server.chat_requests())
    calls = report.summary["calls"]
    assert calls["too_long"] > 0 and sent == calls["sent"] < 23
    q1 = next(r for r in report.rows if r["item_key"] == "q1")
    assert "not sent" in q1["invalid"]["factuality"] and q1["factual"] is False


def test_without_a_judge_only_bergen_and_attribution(museum) -> None:
    report = evaluate(museum, RagEvalSpec("museum", (AnswerSet("m", ANSWERS_M),)))
    m = report.summary["overall"]["m"]
    assert m["judged"] is False and m["raf"] is None and m["eligibility"] is None
    assert m["bergen"]["F1"] is not None and m["attribution"]["n"] == 3
    q3 = next(r for r in report.rows if r["item_key"] == "q3")
    assert q3["bergen"]["EM"] == 1.0  # the deflection matches the human deflection


@pytest.mark.slow
def test_job_entry_point_on_the_seeded_demo(db) -> None:
    seed_demo(db)
    models = [r["model"] for r in rag_store.answer_sets(db, DEMO_GROUNDING)]
    assert models == ["demo-careful", "demo-hasty"]

    def judge(body):  # any well-formed judge: every figure must show
        text = body["messages"][-1]["content"]
        if "[Answer sentences]" in text:
            n = len(text.split("[Answer sentences]\n")[1].split("\n[End")[0].splitlines())
            return json.dumps({"grounding_quality": [
                {"sentence": k, "label": "supported" if k % 2 else "unsupported"}
                for k in range(1, n + 1)]})
        if "[Test answer]" in text:
            return '{"verdict": "Minor Issue(s)"}'
        if "[Model answer]" in text:
            return '{"grade": "%s"}' % ("missing" if "not enough" in text else "attempted")
        return "Yes"

    seen = []
    with FakeJudgeServer(judge) as server:
        summary = run_rag_eval({"dataset": DEMO_GROUNDING, "judge": {
            "base_url": server.base_url, "model": "judge", "key_env": None}}, db,
            lambda done, total: seen.append((done, total)), lambda: False)
    assert seen[-1] == (125, 125)  # 25 answers x 5 checks
    for model in models:
        figures = summary["overall"][model]
        assert all(figures[name] is not None for name in (
            "eligibility", "unadjusted_factuality", "factuality", "uraf", "raf",
            "deflection_tpr", "deflection_fpr", "llmeval"))
    assert summary["coverage"]["demo-hasty"]["missing_ids"]  # it skips a question
    assert summary["questions"]["evaluated"] == 13


def test_job_entry_point_takes_a_job_with_json_params(museum) -> None:
    from types import SimpleNamespace  # noqa: PLC0415

    job = SimpleNamespace(params=json.dumps({
        "dataset": "museum", "answer_sets": [{"model": "m", "answers": ANSWERS_M}], "judge": None}))
    summary = run_rag_eval(job, museum, lambda done, total: None, lambda: False)
    assert summary["models"] == ["m"] and summary["judge"] is None
    assert rag_store.get_run(museum, summary["run_key"])["status"] == "done"
    with pytest.raises(TypeError, match="RagEvalSpec or job parameters"):
        run_rag_eval(object(), museum, lambda done, total: None, lambda: False)
