"""``rag-eval`` and ``answer-metrics`` as a user runs them: real processes, a real database
file, judges served over HTTP on 127.0.0.1 (a rule-following server, and ``transformers
serve`` with a tiny model and with the demo judge when it is built)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from needlework.datasets.transfer import import_bytes
from needlework.judges.serve import start_server
from store import connect
from store import rag as rag_store
from tests.conftest import ROOT
from tests.judges_fixtures import FakeJudgeServer, build_tiny_causal_lm
from tests.rag_fixtures import ANSWERS_M, ANSWERS_M2, answers_jsonl, dataset_bytes, rule_judge

SECRET = "sk-test-SECRET123"


def cli(*args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "needlework", *args], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, **(env or {})}, timeout=timeout)


@pytest.fixture
def museum_db(tmp_path):
    path = tmp_path / "nw.db"
    db = connect(path)
    import_bytes(db, dataset_bytes(), "museum.jsonl", format="garage", dataset="museum")
    db.conn.close()
    return path


@pytest.fixture
def answers(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text(answers_jsonl("m", ANSWERS_M) + answers_jsonl("m2", ANSWERS_M2))
    return path


@pytest.mark.slow
def test_rag_eval_json_with_a_judge(museum_db, answers) -> None:
    with FakeJudgeServer(rule_judge) as server:
        done = cli("rag-eval", "--dataset", "museum", "--answers", str(answers),
                   "--judge-base-url", server.base_url, "--judge-model", "judge", "--json",
                   "--db", str(museum_db), env={"OPENAI_API_KEY": SECRET})
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        again = cli("rag-eval", "--dataset", "museum", "--answers", str(answers),
                    "--judge-base-url", server.base_url, "--judge-model", "judge",
                    "--db", str(museum_db), env={"OPENAI_API_KEY": SECRET})
        sent = len(server.chat_requests())
        assert all(r["headers"].get("authorization") == f"Bearer {SECRET}"
                   for r in server.chat_requests())
    m = report["overall"]["m"]
    assert (m["eligibility"], m["factuality"], m["uraf"], m["raf"]) == (0.6, 0.4, 0.6, 0.2)
    assert m["deflection_tpr"] == 0.5 and m["deflection_fpr"] == pytest.approx(1 / 3)
    assert len(report["answers"]) == 10
    assert "m2: 1 answers for unknown sample_id(s), ignored: nope" in done.stderr
    assert "m2: 4 question(s) without an answer, counted as failures: q2, q3, q4, q6" in done.stderr
    assert "not evaluated: q5: not annotated" in done.stderr
    assert again.returncode == 0 and "judge calls: 0 sent" in again.stdout
    assert sent == report["calls"]["sent"]  # the second run asked nothing
    assert SECRET.encode() not in museum_db.read_bytes()
    assert SECRET not in done.stdout + done.stderr + again.stdout + again.stderr


@pytest.mark.slow
def test_rag_eval_without_a_judge_and_the_stored_answers(museum_db, answers) -> None:
    db = connect(museum_db)
    rag_store.save_answer_set(db, "museum", "kept", {"q1": "The museum opens at 9 am."})
    db.conn.close()
    done = cli("rag-eval", "--dataset", "museum", "--answers", str(answers), "--stored",
               "--db", str(museum_db))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "no judge (BERGEN and attribution only)" in lines[0]
    assert [line.split("\t")[0] for line in lines[2:5]] == ["m", "m2", "kept"]
    assert lines[5].startswith("with denominators and 95 % intervals")
    assert lines[2].split("\t")[2] == "n/a"  # eligibility needs a judge


@pytest.mark.parametrize(("args", "code", "message"), [
    (["--dataset", "nope", "--answers", "ANSWERS"], 1, "rag-eval: no dataset 'nope'"),
    (["--dataset", "museum"], 1, "rag-eval: no answers: give --answers FILE"),
    (["--dataset", "museum", "--answers", "ANSWERS", "--judge-base-url", "http://x/v1"], 2,
     "give both --judge-base-url and --judge-model"),
    (["--dataset", "museum", "--answers", "ANSWERS", "--judge-base-url", "ftp://x",
      "--judge-model", "m"], 2, "base URL must start with http"),
    (["--dataset", "museum", "--answers", "BAD"], 1, "bad.jsonl line 2: field 'answer' is missing"),
])
@pytest.mark.slow
def test_rag_eval_errors_in_one_line(museum_db, answers, tmp_path, args, code, message) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"sample_id": "q1", "answer": "x"}\n{"sample_id": "q2"}\n')
    args = [str(answers) if a == "ANSWERS" else str(bad) if a == "BAD" else a for a in args]
    done = cli("rag-eval", *args, "--db", str(museum_db))
    assert done.returncode == code, done.stderr
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert done.stdout == ""
    db = connect(museum_db)
    assert rag_store.list_runs(db) == []  # nothing written


@pytest.mark.slow
def test_answer_metrics_of_an_answers_file(museum_db, answers) -> None:
    done = cli("answer-metrics", str(answers), "--dataset", "museum", "--json", "--db", str(museum_db))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["format"] == "answers" and report["scored"] == 5
    q3 = next(r for r in report["models"]["m"]["per_question"] if r["item_key"] == "q3")
    assert q3["EM"] == 1.0  # both deflect
    assert report["models"]["m2"]["coverage"]["unknown_ids"] == ["nope"]
    missing = cli("answer-metrics", str(answers), "--db", str(museum_db))
    assert missing.returncode == 1 and "give --dataset NAME" in missing.stderr


@pytest.fixture(scope="module")
def tiny_server(tmp_path_factory):
    server = start_server(build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-rag-judge")), threads=1)
    yield server
    server.stop()


@pytest.mark.slow
def test_rag_eval_against_transformers_serve(museum_db, tmp_path, tiny_server) -> None:
    """A random tiny model answers nonsense: every answer is kept and counted invalid."""
    path = tmp_path / "one.jsonl"
    path.write_text(answers_jsonl("m", {"q6": ANSWERS_M["q6"]}))
    done = cli("rag-eval", "--dataset", "museum", "--answers", str(path), "--judge-base-url",
               tiny_server.base_url, "--judge-model", tiny_server.model, "--max-tokens", "8",
               "--concurrency", "2", "--json", "--db", str(museum_db))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["calls"]["sent"] == 4  # q6: its uRAF prompt is its factuality prompt
    row = next(r for r in report["answers"] if r["item_key"] == "q6")
    assert [r["item_key"] for r in report["answers"] if r["answered"]] == ["q6"]
    assert set(row["calls"]) == {"eligibility", "factuality", "relevant_factuality",
                                 "deflection", "llmeval"}
    assert all(c["raw"] is not None for c in row["calls"].values())
    m = report["overall"]["m"]
    assert m["invalid"]["eligibility"] == int(row["eligibility"] is None)
    assert "judging answers" in done.stderr  # the progress bar


@pytest.mark.slow
def test_demo_answers_through_the_demo_judge(tmp_path, demo_models_dir) -> None:
    path = tmp_path / "demo.db"
    assert cli("seed-demo", "--db", str(path)).returncode == 0
    server = start_server(demo_models_dir / "demo-judge", threads=1)
    try:
        done = cli("rag-eval", "--dataset", "demo-grounding", "--stored", "--judge-base-url",
                   server.base_url, "--judge-model", server.model, "--max-tokens", "16",
                   "--context-window", "8192", "--json", "--db", str(path))
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["models"] == ["demo-careful", "demo-hasty"]
    assert report["calls"]["sent"] + report["calls"]["too_long"] > 0
    for figures in report["overall"].values():
        assert figures["judged"] and figures["n"] == 13
