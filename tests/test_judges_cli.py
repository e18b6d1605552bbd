"""The ``judge`` and ``judge-check`` verbs: output read by ``metrics``, resuming after
SIGKILL without re-sending a cached call, and an API key that appears nowhere."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import store
from needlework.cli import main
from needlework.judges.cache import prompt_hash
from store.datasets import NewItem, create_dataset
from tests.judges_fixtures import FakeJudgeServer, free_port
from tests.test_judges_engine import picks_good

ROOT = Path(__file__).resolve().parents[1]
SECRET = "sk-test-SECRET123"


def make_dataset(db_path: Path, name: str = "pairs", n: int = 8) -> None:
    db = store.connect(db_path)
    items = [NewItem(f"q{k}", {"id": f"q{k}", "subset": "QA" if k % 2 else "Chat",
                               "prompt": f"Question {k}?",
                               "chosen": [f"A good, kind answer to question {k}."],
                               "rejected": [f"A rude answer {k}, you fool.", f"Another rude one {k}.",
                                            f"A third rude answer {k}."]}, "QA" if k % 2 else "Chat")
             for k in range(n)]
    create_dataset(db, name, "preference", "lfrb", items)
    db.conn.close()


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "needlework", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


@pytest.mark.slow
def test_judge_verb_writes_a_file_that_metrics_reads(tmp_path: Path, capsys) -> None:
    db = tmp_path / "j.db"
    make_dataset(db)
    out = tmp_path / "judged.jsonl"
    with FakeJudgeServer(picks_good) as server:
        code = main(["judge", "--dataset", "pairs", "--base-url", server.base_url, "--model", "judge",
                     "--mode", "selection", "--rotations", "--concurrency", "3", "--out", str(out),
                     "--json", "--no-progress", "--db", str(db)])
        summary = json.loads(capsys.readouterr().out)
        assert code == 0
        assert summary["requests"] == 32 and summary["accuracy"] == 1.0
        assert summary["position_bias"]["4"]["consistency"] == 1.0
        code = main(["metrics", "--kind", "bon", "--scores", str(out), "--json"])
        assert code == 0
        assert json.loads(capsys.readouterr().out)["accuracy"] == 1.0
        # plain text output, and a re-run that is all cache
        code = main(["judge", "--dataset", "pairs", "--base-url", server.base_url, "--model", "judge",
                     "--mode", "selection", "--rotations", "--no-progress", "--db", str(db)])
        text = capsys.readouterr().out
        assert code == 0 and "0 requests, 32 from cache" in text
        assert "  accuracy 100.0 % (32/32 trials), 95 % Wilson" in text
        assert "  Chat: 100.0 % (16/16 trials), 95 % Wilson" in text
        assert "position bias (4 responses)" in text


def test_judge_verb_errors_are_one_line(tmp_path: Path, capsys) -> None:
    db = tmp_path / "j.db"
    make_dataset(db)
    code = main(["judge", "--dataset", "nope", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                 "--mode", "selection", "--db", str(db)])
    assert code == 1 and "no dataset named 'nope'" in capsys.readouterr().err
    code = main(["judge", "--dataset", "pairs", "--base-url", f"http://127.0.0.1:{free_port()}/v1",
                 "--model", "m", "--mode", "scoring", "--no-progress", "--db", str(db)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: server down: nothing answers at")
    assert len(err.strip().splitlines()) == 1
    code = main(["judge-check", "--base-url", f"http://127.0.0.1:{free_port()}/v1", "--model", "m"])
    assert code == 2 and capsys.readouterr().out.startswith("server down:")


def _cached_hashes(db_path: Path) -> set[str]:
    conn = sqlite3.connect(db_path)
    try:
        return {row[0] for row in conn.execute("select prompt_hash from judge_calls")}
    finally:
        conn.close()


@pytest.mark.slow
def test_sigkill_then_restart_sends_no_request_for_a_cached_call(tmp_path: Path) -> None:
    db = tmp_path / "kill.db"
    make_dataset(db, n=10)
    with FakeJudgeServer(picks_good, delay=0.4) as server:
        args = [sys.executable, "-m", "needlework", "judge", "--dataset", "pairs", "--base-url",
                server.base_url, "--model", "judge", "--mode", "selection", "--rotations",
                "--concurrency", "2", "--no-progress", "--db", str(db)]
        proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            time.sleep(0.2)
            if db.exists() and len(_cached_hashes(db)) >= 6:
                break
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        cached = _cached_hashes(db)
        assert 6 <= len(cached) < 40, "killed mid-run"
        before = len(server.chat_requests())
        done = run_cli("judge", "--dataset", "pairs", "--base-url", server.base_url, "--model",
                       "judge", "--mode", "selection", "--rotations", "--json", "--no-progress",
                       "--db", str(db))
        assert done.returncode == 0, done.stderr
        resent = [prompt_hash(r["body"]["messages"]) for r in server.chat_requests()[before:]]
    assert not set(resent) & cached, "a cached call was sent again"
    summary = json.loads(done.stdout)
    assert summary["requests"] == len(resent) == 40 - len(cached)
    assert summary["trials"] == 40 and summary["accuracy"] == 1.0


@pytest.mark.slow
def test_api_key_appears_nowhere(tmp_path: Path) -> None:
    """OPENAI_API_KEY=sk-test-SECRET123: not in the database, the logs (openai debug
    logging on), the output file or any message, on success and on failure."""
    db = tmp_path / "secret.db"
    make_dataset(db, n=3)
    out = tmp_path / "out.jsonl"
    env = {"OPENAI_API_KEY": SECRET, "OPENAI_LOG": "debug"}
    texts: list[str] = []

    def echo(status: int, body: dict) -> dict:
        return {"error": {"message": f"Incorrect API key provided: {SECRET}."}}

    with FakeJudgeServer(picks_good, require_key=SECRET) as server:
        ok = run_cli("judge", "--dataset", "pairs", "--base-url", server.base_url, "--model", "judge",
                     "--mode", "selection", "--out", str(out), "--json", "--db", str(db), env=env)
        assert ok.returncode == 0, ok.stderr
        sent = server.chat_requests()[0]["headers"]
        assert SECRET in str(sent)  # the key did travel, where it belongs
        check = run_cli("judge-check", "--base-url", server.base_url, "--model", "judge", env=env)
        assert check.returncode == 0 and check.stdout.startswith("ok:")
        texts += [ok.stdout, ok.stderr, check.stdout, check.stderr]
    with FakeJudgeServer(picks_good, statuses=[401] * 20, error_body=echo) as server:
        bad = run_cli("judge", "--dataset", "pairs", "--base-url", server.base_url, "--model", "judge",
                      "--mode", "scoring", "--db", str(db), env=env)
        check = run_cli("judge-check", "--base-url", server.base_url, "--model", "judge", env=env)
    assert bad.returncode == 2 and "bad key:" in bad.stderr and "$OPENAI_API_KEY (set)" in bad.stderr
    assert check.stdout.startswith("bad key:")
    texts += [bad.stdout, bad.stderr, check.stdout, check.stderr]
    assert "DEBUG" in ok.stderr or "debug" in ok.stderr.lower()  # openai's logging was on
    for text in texts:
        assert SECRET not in text
    assert SECRET not in out.read_text(encoding="utf-8")
    for path in tmp_path.iterdir():  # the database, its WAL, the output
        assert SECRET.encode() not in path.read_bytes(), path.name
    conn = sqlite3.connect(db)
    dump = "\n".join(conn.iterdump())
    conn.close()
    assert SECRET not in dump and "judge_runs" in dump


@pytest.mark.parametrize("verb", ["judge", "judge-check", "demo-judge"])
def test_verbs_have_help(verb: str, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main([verb, "--help"])
    assert exc.value.code == 0 and "usage" in capsys.readouterr().out
