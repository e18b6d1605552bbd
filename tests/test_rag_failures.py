"""Failed requests are not answers (issue 48, point 1) in RAG evaluation, answer generation
and judge suggestions: real servers on 127.0.0.1 (tests/judges_hosted_fixtures.py) that
answer HTTP 500 to one prompt in five or refuse everything, the real ``openai`` client,
and every figure recounted by hand from what the server answered."""

from __future__ import annotations

import json

import pytest

import store
from needlework.datasets.transfer import import_bytes
from needlework.judges.connection import Connection
from needlework.judges.errors import JudgeError
from needlework.rag.answers import AnswerSet
from needlework.rag.failures import failure_table
from needlework.rag.generate import GenerateSpec, generate
from needlework.rag.metrics import ROW_FIELDS
from needlework.rag.rules_judge import reply as rules_reply
from needlework.rag.run import RagEvalSpec, evaluate
from needlework.rag.verdicts import JUDGE_CHECKS
from needlework.suggest.job import SuggestSpec, run_suggest_here
from store import rag as rag_store
from store.suggestions import suggestion_sources
from tests.cli_here import run as cli
from tests.judges_fixtures import FakeJudgeServer, last_user_text
from tests.judges_hosted_fixtures import HostedJudgeServer
from tests.rag_fixtures import ANSWERS_M, dataset_bytes, rule_judge

REFUSAL = "Your request was flagged by our safety system."


def _museum(tmp_path, name: str):
    path = tmp_path / f"{name}.db"
    db = store.connect(path)
    import_bytes(db, dataset_bytes(), "museum.jsonl", format="garage", dataset="museum")
    return path, db


def _conn(server, **options) -> Connection:
    return Connection(server.base_url, "judge", key_env=None, max_retries=0,
                      concurrency=options.pop("concurrency", 1), **options)


def _calls(db) -> int:
    return db.execute("select count(*) from judge_calls").fetchone()[0]


@pytest.mark.slow
def test_one_request_in_five_failing_leaves_those_answers_unscored(tmp_path) -> None:
    """The figures are the clean run's, over the answers none of whose judge requests
    failed; the failed ones are counted apart with the server's sentence and never
    cached."""
    _, clean_db = _museum(tmp_path, "clean")
    with FakeJudgeServer(rule_judge) as server:
        clean = evaluate(clean_db, RagEvalSpec("museum", (AnswerSet("m", ANSWERS_M),),
                                               _conn(server)))
    _, db = _museum(tmp_path, "failing")
    with HostedJudgeServer(rule_judge, fail_every=5) as server:
        report = evaluate(db, RagEvalSpec("museum", (AnswerSet("m", ANSWERS_M),), _conn(server)))
        failed_prompts = server.failed_prompts()
        answered = {last_user_text(r["body"]) for r in server.answered()}
    assert failed_prompts, "the server failed no prompt: the case tests nothing"
    rows = {r["item_key"]: r for r in report.rows}
    clean_rows = {r["item_key"]: r for r in clean.rows}
    unscored = {k for k, r in rows.items() if r["judge_failed"]}
    # by hand: an answer is unscored when one of its prompts is among those the server failed
    sent_by = {k: {json.dumps(c["raw"]) for c in r["calls"].values()} for k, r in rows.items()}
    assert unscored == {k for k, r in rows.items()
                        if any(c["raw"] is None for c in r["calls"].values())}
    assert all(sent_by[k] for k in rows)
    scored = [k for k in rows if k not in unscored]
    figures = report.summary["overall"]["m"]
    assert figures["n"] == 5 and figures["scored"] == len(scored) == 5 - len(unscored)
    assert figures["not_scored"] == len(unscored) >= 1
    for figure, field in ROW_FIELDS.items():
        hits = sum(1 for k in scored if clean_rows[k][field])
        assert figures[figure] == (hits / len(scored) if scored else None), figure
        assert figures["intervals"][figure]["n"] == len(scored)
    calls = report.summary["calls"]
    assert calls["failed"] == len(failed_prompts) and calls["refused"] == 0
    assert "HTTP 500" in calls["failure_messages"]["failed"]
    assert report.summary["failures"].startswith(f"{len(failed_prompts)} request")
    assert _calls(db) == len(answered)  # failures are never cached
    assert {f["item_key"] for f in failure_table(report.rows)}.isdisjoint(unscored)
    for row in rows.values():
        for check, failure in row["judge_failed"].items():
            assert check in JUDGE_CHECKS and check not in row["invalid"]
            assert failure["kind"] == "failed" and row["calls"][check]["failure"] == "failed"
            assert failure["message"].startswith("no answer (server error): server error:")


def test_a_judge_that_refuses_everything_fails_in_one_line_and_stores_nothing(tmp_path) -> None:
    path, db = _museum(tmp_path, "refused")
    with HostedJudgeServer(rule_judge, refuse_all=REFUSAL) as server:
        with pytest.raises(JudgeError) as err:
            evaluate(db, RagEvalSpec("museum", (AnswerSet("m", ANSWERS_M),), _conn(server)))
        message = str(err.value)
        assert message.startswith("no answers: ") and "refused" in message
        assert REFUSAL in message and "\n" not in message
        assert rag_store.list_runs(db, "museum") == [] and _calls(db) == 0
        (tmp_path / "m.jsonl").write_text("".join(
            json.dumps({"sample_id": k, "answer": v}) + "\n" for k, v in ANSWERS_M.items()))
        done = cli(["rag-eval", "--dataset", "museum", "--answers", str(tmp_path / "m.jsonl"),
                    "--judge-base-url", server.base_url, "--judge-model", "judge",
                    "--judge-key-env", "", "--no-progress", "--db", str(path)])
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith("error: no answers: ")
    assert rag_store.list_runs(db, "museum") == []


def _generation_reply(body) -> str:
    return "The museum opens at 9 am [cite_1]."


def test_rag_generate_counts_failed_questions_apart_and_evaluation_leaves_them_out(
        tmp_path) -> None:
    path, db = _museum(tmp_path, "gen")
    with HostedJudgeServer(_generation_reply, fail_every=5) as server:
        report = generate(db, GenerateSpec("museum", _conn(server, max_tokens=64), "g"))
        failed = server.failed_prompts()
    assert len(failed) == 1  # 6 questions, the fifth distinct prompt fails
    summary = report.summary
    assert summary["failed"] == {"refused": 0, "timed_out": 0, "failed": 1}
    [missing] = summary["not_answered"]
    assert missing["failure"] == "failed" and "HTTP 500" in missing["reason"]
    assert summary["answered"] == 5 and _calls(db) == 5
    stored = next(r for r in rag_store.answer_sets(db, "museum") if r["model"] == "g")
    assert list(stored["marks"]["failed"]) == [missing["item_key"]]
    done = cli(["rag-eval", "--dataset", "museum", "--stored", "--json", "--no-progress",
                "--db", str(path)])
    out = json.loads(done.stdout)
    evaluated = 5 - (missing["item_key"] != "q5")  # q5 is not evaluated (not annotated)
    assert out["overall"]["g"]["n"] == evaluated
    assert out["coverage"]["g"]["missing_ids"] == []


def test_rag_generate_against_a_refusing_endpoint_exits_non_zero_and_stores_no_set(
        tmp_path) -> None:
    path, db = _museum(tmp_path, "gen-refused")
    with HostedJudgeServer(_generation_reply, refuse_all=REFUSAL) as server:
        done = cli(["rag-generate", "--dataset", "museum", "--base-url", server.base_url,
                    "--model", "judge", "--key-env", "", "--name", "g", "--no-progress",
                    "--db", str(path)])
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert "no answers: 6 of 6 requests failed, 6 refused" in done.stderr
    assert rag_store.answer_sets(db, "museum") == [] and _calls(db) == 0


def _rules(body) -> str:
    return rules_reply(body["messages"])


def test_suggestions_count_failed_requests_apart_and_store_only_answers(tmp_path) -> None:
    path, db = _museum(tmp_path, "suggest")
    with HostedJudgeServer(_rules, fail_every=5) as server:
        row = run_suggest_here(db, path, SuggestSpec("museum", _conn(server), ("labels",)))
        failed, answered = server.failed_prompts(), server.answered()
    assert row["status"] == "done", row.get("error")
    result = row["result"]
    assert failed and result["failed"] == len(failed) and result["refused"] == 0
    assert result["suggestions"] == len({last_user_text(r["body"]) for r in answered})
    assert result["invalid"] == 0
    assert "HTTP 500" in result["failures"]
    assert _calls(db) == result["suggestions"]
    [source] = suggestion_sources(db, "museum")
    assert source["suggestions"] == result["suggestions"]


def test_suggestions_from_a_refusing_judge_fail_the_job_and_store_nothing(tmp_path) -> None:
    path, db = _museum(tmp_path, "suggest-refused")
    with HostedJudgeServer(_rules, refuse_all=REFUSAL) as server:
        row = run_suggest_here(db, path, SuggestSpec("museum", _conn(server), ("labels",)))
    assert row["status"] == "failed"
    assert str(row["error"]).startswith("no answers: ") and "\n" not in str(row["error"])
    assert suggestion_sources(db, "museum") == [] and _calls(db) == 0


@pytest.mark.slow
def test_a_failed_request_is_asked_again_on_a_rerun(tmp_path) -> None:
    """Same endpoint: the answered prompts come from the cache, only the failed ones are
    sent again."""
    _, db = _museum(tmp_path, "rerun")
    with HostedJudgeServer(rule_judge, fail_every=5) as server:
        spec = RagEvalSpec("museum", (AnswerSet("m", ANSWERS_M),), _conn(server))
        first = evaluate(db, spec)
        before = len(server.requests)
        again = evaluate(db, spec)
        asked = {last_user_text(r["body"]) for r in server.requests[before:]}
        assert asked == server.failed_prompts()
    assert again.summary["calls"]["sent"] == len(asked) and again.summary["calls"]["cached"] > 0
    assert again.summary["overall"]["m"] == first.summary["overall"]["m"]


def test_a_run_where_every_answer_lost_a_request_stores_nothing(tmp_path) -> None:
    """One prompt in three fails: each answer has five, so none is left to score."""
    _, db = _museum(tmp_path, "none-scored")
    with HostedJudgeServer(rule_judge, fail_every=3) as server:
        with pytest.raises(JudgeError) as err:
            evaluate(db, RagEvalSpec("museum", (AnswerSet("m", ANSWERS_M),), _conn(server)))
    assert str(err.value).startswith("no answers scored: ") and "\n" not in str(err.value)
    assert rag_store.list_runs(db, "museum") == []


def test_rag_generate_against_a_reasoning_model_uses_its_default_temperature(tmp_path) -> None:
    """OpenAI's reasoning models refuse temperature 0 (HTTP 400, param temperature): the
    parameter is dropped, every question is answered, and the output says so."""
    path, db = _museum(tmp_path, "reasoning")
    with HostedJudgeServer(_generation_reply, reasoning=True) as server:
        done = cli(["rag-generate", "--dataset", "museum", "--base-url", server.base_url,
                    "--model", "judge", "--key-env", "", "--name", "g", "--no-progress",
                    "--concurrency", "1", "--db", str(path)])
        answered = server.answered()
    assert done.returncode == 0, done.stderr
    assert len(answered) == 6 and all("temperature" not in r["body"] for r in answered)
    assert "the provider's default used: temperature: provider default (refused 0)" \
        in done.stdout
    assert "answers: 6 of 6; 0 without one" in done.stdout
