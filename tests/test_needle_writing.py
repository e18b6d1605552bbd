"""Needles written by an LLM, end to end: the records chart like built ones (length_tokens,
site_index, needle_char), haystacks are cut to lengths as the builder cuts, a second model
verifies, the ``needle write`` CLI (progress, resume from the cache, one-line errors, the key
never written) and the ``judge-needles`` job. Real HTTP servers on 127.0.0.1 (a scripted
OpenAI-compatible one: a tiny model cannot be made to write a one-fact rewrite on cue)."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from needlework import tokens
from needlework.cli import main
from needlework.formats import needle as needle_format
from needlework.jobs.runner import RUNNER
from needlework.judges.cache import prompt_hash
from needlework.judges.connection import Connection
from needlework.judges.job import WRITE_KIND, latest_write_job
from needlework.judges.needle_edits import length_bin
from needlework.judges.needles import Haystack, write_needles
from needlework.needle import analysis
from needlework.needle.inputs import demo_haystacks
from needlework.needle.sites import TokenCounter, paragraph_spans
from store import connect
from store.datasets import get_dataset, iter_items
from store.scores import list_jobs
from tests.conftest import ROOT
from tests.judges_fixtures import FakeJudgeServer, free_port, last_user_text

SECRET = "sk-test-SECRET123"
COUNTER = TokenCounter(tokens.estimate, "estimate")
PAPER_INPUT = "** Input Text Segment **\n"
PASSAGE = re.compile(r"\[Passage\]\n(.*)\n\[End of passage\]", re.S)
VERSIONS = re.compile(r"\[Version A\]\n(.*)\n\[End of version A\]\n\n\[Version B\]\n(.*)\n"
                      r"\[End of version B\]", re.S)


def flaw(passage: str) -> str | None:
    """The scripted writer's one-word change (None: it cannot make one)."""
    return passage.replace(" the ", " no ", 1) if " the " in passage else None


def writer_answer(body: dict) -> str:
    """Rewrites with one changed word (the paper's prompt: that rewrite as the negative
    modification, the passage as it is as the positive one), and checks a rewrite by comparing the two versions:
    yes exactly when B is A with that one change."""
    text = last_user_text(body)
    if text.startswith("Here are two versions"):
        a, b = VERSIONS.search(text).groups()
        return "One word changed. [[YES]]" if flaw(a) == b else "Not that change. [[NO]]"
    if PAPER_INPUT in text:  # the paper's prompt (factuality's default): both versions at once
        passage = text.rsplit(PAPER_INPUT, 1)[1]
        changed = flaw(passage)
        return (f"** Positive Modification **\n{passage}\n\n** Negative Modification **\n{changed}"
                if changed else "I cannot do that.")
    passage = PASSAGE.search(text).group(1)
    changed = flaw(passage)
    return f"<rewrite>{changed}</rewrite>" if changed else "I cannot do that."


def strict_verifier(body: dict) -> str:
    """A second model that rejects every rewrite (it must be the one asked)."""
    return "I see a change but it is not an error. [[NO]]"


def haystacks(count: int = 2, target: int = 2000) -> list[Haystack]:
    return demo_haystacks(count, target, counter=COUNTER.count)


@pytest.mark.slow
def test_records_chart_like_built_ones_at_each_cut_length():
    db = connect(":memory:")
    hay = haystacks()
    with FakeJudgeServer(writer_answer) as server:
        conn = Connection(server.base_url, "judge", key_env=None)
        done = write_needles(db, conn, hay, aspect="factuality", per_haystack=2, seed=3,
                             lengths=(500, 1000), counter=COUNTER)
    assert len(done.records) == 8  # 2 haystacks × 2 lengths × 2 needles
    for r in done.records:
        assert needle_format.validate(r) == []
        assert r["length_tokens"] in (500, 1000) and r["kind"] == "factuality"
        chosen, rejected = r["chosen"][0], r["rejected"][0]
        assert abs(COUNTER.count(chosen) - r["length_tokens"]) <= 0.05 * r["length_tokens"]
        k = r["needle_char"]
        assert chosen[:k] == rejected[:k] and chosen[k] != rejected[k]
        assert rejected[k:].startswith("no ")
        assert r["tagged_position"] == round(COUNTER.count(rejected[:k]) / r["response_tokens"], 6)
        assert r["response_tokens"] == COUNTER.count(rejected)
        hay_text = next(h.text for h in hay if h.id == r["haystack_id"])
        start = paragraph_spans(hay_text)[r["site_index"]][0]
        assert start <= k and "\n\n" not in rejected[start:k]  # in that paragraph
        # factual needles are asked for with the paper's prompt unless told otherwise
        assert r["writer"]["template"]["name"] == "long-form-rewardbench"
        assert r["writer"]["rewrite_prompt"].startswith("Given a segment from a LLM response")
        assert "[[YES]]" in r["writer"]["check_answer"]
    assert len({r["id"] for r in done.records}) == 8
    # the lab's analysis takes them as they are: one row per length, positions in buckets
    frame = analysis.results_frame([dict(r, chosen_score=1.0, rejected_score=0.0, model="m")
                                    for r in done.records])
    heat = analysis.heatmap_frame(frame)
    assert sorted(heat["length_tokens"].unique()) == [500, 1000] and heat["n"].sum() == 8
    assert done.summary() | {"requests": 0} == {"attempts": 8, "kept": 8, "rejected": 0, "short": 0,
                                                "requests": 0, "prompt_version": "needlework-judge-1",
                                                "token_method": "estimate"}


def test_a_haystack_too_short_for_a_length_is_skipped_and_said():
    db = connect(":memory:")
    hay = haystacks(1, 600)
    with FakeJudgeServer(writer_answer) as server:
        done = write_needles(db, Connection(server.base_url, "judge", key_env=None), hay,
                             aspect="safety", lengths=(500, 4000), counter=COUNTER)
    assert [r["length_tokens"] for r in done.records] == [500]
    assert any(a["reason"] == "shorter than 4000 tokens: skipped" for a in done.attempts)
    assert done.summary()["short"] == 1


def test_a_whole_haystack_gets_its_length_rounded_as_its_row():
    db = connect(":memory:")
    hay = haystacks(1, 1300)
    with FakeJudgeServer(writer_answer) as server:
        done = write_needles(db, Connection(server.base_url, "judge", key_env=None), hay,
                             aspect="factuality", counter=COUNTER)
    (record,) = done.records
    assert record["length_tokens"] == length_bin(COUNTER.count(hay[0].text))
    assert record["chosen"] == [hay[0].text]
    assert [length_bin(n) for n in (40, 949, 950, 1499, 2380, 8100)] == [100, 900, 1000, 1000, 2000, 8000]


@pytest.mark.slow
def test_a_second_model_verifies_and_its_no_rejects():
    db = connect(":memory:")
    with FakeJudgeServer(writer_answer) as writer, \
            FakeJudgeServer(strict_verifier, model="checker", models=("checker",)) as checker:
        done = write_needles(db, Connection(writer.base_url, "judge", key_env=None), haystacks(1),
                             aspect="factuality", lengths=(1000,), counter=COUNTER,
                             verifier=Connection(checker.base_url, "checker", key_env=None))
        asked_writer = [last_user_text(r["body"]) for r in writer.chat_requests()]
        asked_checker = [last_user_text(r["body"]) for r in checker.chat_requests()]
    assert done.records == []
    assert asked_writer and all(t.startswith("Given a segment from a LLM") for t in asked_writer)
    assert len(asked_checker) == len(asked_writer)
    assert all(t.startswith("Here are two versions") for t in asked_checker)
    assert done.summary()["rejected"] == len(asked_writer) and done.summary()["kept"] == 0


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_cli_writes_importable_needles_resumes_from_cache_and_never_writes_the_key(
        tmp_path, capsys, monkeypatch):
    db_path, out = tmp_path / "w.db", tmp_path / "needles.jsonl"
    monkeypatch.setenv("NW_TEST_KEY", SECRET)
    with FakeJudgeServer(writer_answer, require_key=SECRET) as server:
        args = ["needle", "write", "--haystacks", "demo", "--demo-count", "2", "--aspect", "factuality",
                "--base-url", server.base_url, "--model", "judge", "--key-env", "NW_TEST_KEY",
                "--lengths", "500,1000", "--seed", "1", "--out", str(out), "--db", str(db_path)]
        code, stdout, stderr = run_cli(args, capsys)
        sent = len(server.chat_requests())
        assert code == 0, stderr
        assert "4 needles kept, 0 rejected" in stdout and f"wrote {out}" in stdout
        assert "writing (factuality)" in stderr and "4/4" in stderr  # the progress bar
        assert "prompt: long-form-rewardbench (" in stdout  # the paper's, factuality's default
        again, stdout2, _ = run_cli(args[:-4] + ["--out", str(tmp_path / "again.jsonl"), "--db",
                                                 str(db_path), "--json"], capsys)
        assert again == 0 and len(server.chat_requests()) == sent  # all from the cache
        ours, stdout3, stderr3 = run_cli(args[:-4] + ["--out", str(tmp_path / "ours.jsonl"), "--db",
                                                      str(db_path), "--json", "--template",
                                                      "needlework"], capsys)
        assert ours == 0, stderr3  # the project's rewrite, asked for by name: new prompts
        assert json.loads(stdout3)["template"]["name"] == "needlework"
        assert json.loads(stdout3)["requests"] > 0
    assert json.loads(stdout2)["template"]["name"] == "long-form-rewardbench"
    summary = json.loads(stdout2)
    assert summary["requests"] == 0 and summary["kept"] == 4
    assert (tmp_path / "again.jsonl").read_bytes() == out.read_bytes()
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(r["writer"]["writer"] == {"endpoint": server.base_url, "model": "judge"} for r in records)
    # import --format needle reads it as it is
    code, stdout, stderr = run_cli(["import", str(out), "--format", "needle", "--dataset", "llm",
                                    "--db", str(db_path)], capsys)
    assert code == 0, stderr
    items = list(iter_items(connect(db_path), "llm"))
    assert [i["record"] for i in items] == records
    for path in (db_path, out):
        assert SECRET.encode() not in path.read_bytes()
    assert SECRET not in stdout + stderr + stdout2


def test_cli_errors_are_one_line(tmp_path, capsys):
    db = str(tmp_path / "e.db")
    out = tmp_path / "none.jsonl"
    base = ["needle", "write", "--model", "judge", "--key-env", "", "--out", str(out), "--db", db,
            "--no-progress"]
    code, _, err = run_cli(base + ["--haystacks", "demo", "--base-url",
                                   f"http://127.0.0.1:{free_port()}/v1"], capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1 and err.startswith("error: ")
    assert "cached" in err and not out.exists()
    code, _, err = run_cli(base + ["--haystacks", "no-such-thing", "--base-url", "http://127.0.0.1:9/v1"],
                           capsys)
    assert code == 1 and err.strip() == "error: no file and no dataset named 'no-such-thing'"
    with FakeJudgeServer(lambda body: "No.") as server:
        code, stdout, err = run_cli(base + ["--haystacks", "demo", "--demo-count", "1",
                                            "--base-url", server.base_url], capsys)
    assert code == 1 and err.strip() == "error: no rewrite was verified: nothing written"
    assert "0 needles kept, 3 rejected" in stdout and "rewrite refused" in stdout
    assert "no more chunks to try (at most 3 per needle)" in stdout and len(server.chat_requests()) == 3
    assert not out.exists()
    code, _, err = run_cli(base + ["--haystacks", "demo", "--base-url", "http://x/v1",
                                   "--per-haystack", "0"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    missing = tmp_path / "no-such-template.txt"
    code, _, err = run_cli(base + ["--haystacks", "demo", "--base-url", "http://x/v1",
                                   "--template", str(missing)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and str(missing) in err
    (tmp_path / "bad.txt").write_text("Rewrite {passage} please", encoding="utf-8")
    code, _, err = run_cli(base + ["--haystacks", "demo", "--base-url", "http://x/v1",
                                   "--template", str(tmp_path / "bad.txt")], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "passage" in err


@pytest.mark.slow
def test_the_write_job_saves_a_needle_dataset_with_its_verifier(tmp_path):
    path = tmp_path / "job.db"
    db = connect(path)
    with FakeJudgeServer(writer_answer) as writer, \
            FakeJudgeServer(writer_answer, model="checker", models=("checker",)) as checker:
        conn = Connection(writer.base_url, "judge", key_env=None)
        verifier = Connection(checker.base_url, "checker", key_env=None)
        options = {"aspect": "factuality", "per_haystack": 1, "seed": 0, "lengths": [1000],
                   "replace": False, "created_by": "tester", "connection": conn.describe(),
                   "verifier": verifier.describe()}
        job_id = RUNNER.submit(db, WRITE_KIND, "llm-set", "judge", options)
        row = RUNNER.run(path, job_id, inputs={"connection": conn, "verifier": verifier,
                                               "haystacks": haystacks(2)})
        assert len(checker.chat_requests()) == 2  # the checks went to the verifier
    assert row["status"] == "done", row
    assert row["result"]["kept"] == 2 and row["result"]["dataset"] == "llm-set"
    assert (row["done"], row["total"]) == (2, 2)
    assert get_dataset(db, "llm-set")["kind"] == "needle"
    records = [i["record"] for i in iter_items(db, "llm-set")]
    assert {r["length_tokens"] for r in records} == {1000}
    assert all(r["writer"]["verifier"]["model"] == "checker" for r in records)
    assert latest_write_job(db)["id"] == job_id
    assert next(j for j in list_jobs(db) if j["id"] == job_id)["options"]["verifier"]["model"] == "checker"


def test_bad_arguments_are_refused():
    db = connect(":memory:")
    conn = Connection("http://127.0.0.1:9/v1", "m", key_env=None)
    with pytest.raises(ValueError, match="at least 1"):
        write_needles(db, conn, haystacks(1), aspect="safety", per_haystack=0)
    with pytest.raises(ValueError, match="positive"):
        write_needles(db, conn, haystacks(1), aspect="safety", lengths=(0,))


def cached_hashes(db) -> set[str]:
    conn = sqlite3.connect(db)
    try:
        return {row[0] for row in conn.execute("select prompt_hash from judge_calls")}
    except sqlite3.OperationalError:  # not created yet
        return set()
    finally:
        conn.close()


@pytest.mark.slow
def test_sigkill_then_restart_resumes_from_the_cache(tmp_path):
    """A killed ``needle write`` and a restart: no cached call is sent again, and the
    restart writes the same file an uninterrupted run writes."""
    db, out = tmp_path / "kill.db", tmp_path / "killed.jsonl"
    with FakeJudgeServer(writer_answer, delay=0.3) as server:
        args = ["needle", "write", "--haystacks", "demo", "--demo-count", "3", "--lengths", "500,1000",
                "--base-url", server.base_url, "--model", "judge", "--key-env", "", "--no-progress",
                "--out", str(out), "--db", str(db)]
        proc = subprocess.Popen([sys.executable, "-m", "needlework", *args], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and len(cached_hashes(db)) < 4:
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        cached = cached_hashes(db)
        assert 4 <= len(cached) < 12 and not out.exists(), "killed mid-run"
        before = len(server.chat_requests())
        done = subprocess.run([sys.executable, "-m", "needlework", *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        resent = [prompt_hash(r["body"]["messages"]) for r in server.chat_requests()[before:]]
        fresh = tmp_path / "fresh.db"
        whole = subprocess.run([sys.executable, "-m", "needlework", *args[:-4], "--out",
                                str(tmp_path / "whole.jsonl"), "--db", str(fresh)],
                               cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert whole.returncode == 0, whole.stderr
    assert not set(resent) & cached, "a cached call was sent again"
    assert len(resent) == 12 - len(cached)  # 6 needles: 6 rewrites + 6 checks in all
    assert out.read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
