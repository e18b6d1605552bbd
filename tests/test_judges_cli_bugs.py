"""Issue 31's bugs of the judges on the command line, each against real local servers:
limits refused at once (as the page refuses them), the local judges' settings and cache
keys shared with the page whatever port they get, the dataset checked before a model
loads, and the page's subset options on ``judge``."""

from __future__ import annotations

import json
import time

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.judges.connection import Connection
from needlework.judges.local import RULES_MODEL
from needlework.rag.calls import request_key
from needlework.seeding.demo import DEMO_GROUNDING, DEMO_PREFERENCE, seed_demo
from tests import cli_here
from tests.conftest import ROOT
from tests.judges_fixtures import FakeJudgeServer, free_port

MESSAGES = [{"role": "user", "content": "Which is better? [[A]] or [[B]]"}]
#: what the Reward model page starts the demo judge with (max tokens, requests in flight)
PAGE_DEMO_MAX_TOKENS, PAGE_DEMO_CONCURRENCY = 16, 2


@pytest.fixture
def demo_path(tmp_path):
    path = tmp_path / "nw.db"
    db = store.connect(path)
    seed_demo(db)
    db.conn.close()
    return path


def judge_args(path, server, model: str = "judge", *extra: str) -> list[str]:
    return ["judge", "--dataset", DEMO_PREFERENCE, "--mode", "selection", "--base-url",
            server.base_url, "--model", model, "--key-env", "", "--db", str(path),
            "--no-progress", *extra]


def test_max_tokens_over_the_pages_cap_is_refused_at_once(demo_path) -> None:
    with FakeJudgeServer() as server:
        started = time.monotonic()
        done = cli_here.run(judge_args(demo_path, server, "judge", "--max-tokens", "100000000"))
        took = time.monotonic() - started
        asked = server.chat_requests()
    assert done.returncode == 2 and asked == []
    assert "max tokens must be from 1 to 32,768, got 100000000" in done.stderr
    assert took < 10


def test_the_demo_judges_window_is_known_to_the_cli(demo_path, demo_models_dir) -> None:
    """The CLI reads the demo judge's context window from its folder, as the page does, so
    max tokens at the window is refused before any request."""
    folder = str((demo_models_dir / "demo-judge").resolve())
    with FakeJudgeServer(model=folder) as server:
        done = cli_here.run(judge_args(demo_path, server, folder, "--max-tokens", "8192"))
        asked = server.chat_requests()
    assert done.returncode == 2 and asked == []
    assert "context window (8192) must exceed max tokens (8192)" in done.stderr


def test_the_demo_judge_keeps_its_settings_and_answers_on_any_port(demo_path,
                                                                   demo_models_dir) -> None:
    """Two starts of the demo judge on two ports (servers that answer in its name): the CLI
    uses the page's settings for it (max tokens 16, 2 requests in flight) and the second
    start finds every answer of the first in the cache."""
    folder = str((demo_models_dir / "demo-judge").resolve())
    with FakeJudgeServer(model=folder, delay=0.02) as first:
        done = cli_here.run(judge_args(demo_path, first, folder, "--json"))
        bodies = [r["body"] for r in first.chat_requests()]
        in_flight = first.max_in_flight
    with FakeJudgeServer(model=folder) as second:
        again = cli_here.run(judge_args(demo_path, second, folder, "--json"))
        asked = second.chat_requests()
    assert done.returncode == 0 and again.returncode == 0, done.stderr + again.stderr
    sent = json.loads(done.stdout)["sent"]  # prompts over the demo judge's window are skipped
    assert len(bodies) == sent > 0 and {b["max_tokens"] for b in bodies} == {PAGE_DEMO_MAX_TOKENS}
    assert in_flight <= PAGE_DEMO_CONCURRENCY
    assert asked == [] and json.loads(again.stdout)["cached"] == sent
    assert json.loads(again.stdout)["run_key"] == json.loads(done.stdout)["run_key"]


def test_only_the_local_judges_are_keyed_without_their_port(demo_models_dir) -> None:
    folder = str((demo_models_dir / "demo-judge").resolve())
    for model in (RULES_MODEL, folder):
        a = Connection("http://127.0.0.1:8565/v1", model, key_env=None)
        b = Connection("http://127.0.0.1:40123/v1", model, key_env=None)
        c = Connection("http://localhost:40124/v1", model, key_env=None)
        assert request_key(a, MESSAGES) == request_key(b, MESSAGES) == request_key(c, MESSAGES)
        remote = Connection("https://api.example.com/v1", model, key_env=None)
        assert request_key(remote, MESSAGES) != request_key(a, MESSAGES)
    other = [Connection(url, "llama", key_env=None)
             for url in ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8001/v1")]
    assert request_key(other[0], MESSAGES) != request_key(other[1], MESSAGES)


@pytest.mark.slow
def test_rag_eval_with_the_rules_judge_on_another_port_asks_nothing_again(
        demo_path, monkeypatch) -> None:
    args = ["rag-eval", "--dataset", DEMO_GROUNDING, "--stored", "--rules-judge", "--db",
            str(demo_path), "--no-progress"]
    monkeypatch.setenv("NEEDLEWORK_RULES_JUDGE_PORT", str(free_port()))
    first = cli_here.run(args)
    monkeypatch.setenv("NEEDLEWORK_RULES_JUDGE_PORT", str(free_port()))
    second = cli_here.run(args)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    sent = [int(m) for m in
            (line.split("judge calls: ")[1].split(" sent")[0] for line in first.stdout.splitlines()
             if line.startswith("judge calls: "))]
    assert sent and sent[0] > 0
    assert "judge calls: 0 sent" in second.stdout


@pytest.mark.slow
def test_the_rules_judge_of_the_app_and_of_rag_eval_share_answers(demo_path, monkeypatch):
    """The RAG answers page evaluates with the app's rules judge; rag-eval --rules-judge,
    while it runs (its port taken), gets another port and still asks nothing."""
    from needlework.jobs.runner import RUNNER  # noqa: PLC0415
    from needlework.rag.rules_server import RULES  # noqa: PLC0415
    from store.scores import list_jobs  # noqa: PLC0415

    monkeypatch.setenv("NEEDLEWORK_DB", str(demo_path))
    monkeypatch.setenv("NEEDLEWORK_RULES_JUDGE_PORT", str(free_port()))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["dataset"] = DEMO_GROUNDING
    at.run()
    at.switch_page("app_pages/rag.py")
    at.run()
    try:
        at.segmented_control(key="rag_judge_mode").set_value("judge").run()
        at.button(key="jd_rules").click().run()
        assert not at.exception, at.exception
        app_port = RULES.running().port
        at.button(key="rag_run_button").click().run()
        db = store.connect(demo_path)
        job = next(j for j in list_jobs(db) if j["kind"] == "rag")
        RUNNER.join(int(job["id"]), timeout=120)
        assert RUNNER.get(db, int(job["id"]))["status"] == "done"
        done = cli_here.run(["rag-eval", "--dataset", DEMO_GROUNDING, "--stored", "--rules-judge",
                             "--db", str(demo_path), "--no-progress", "--json"])
    finally:
        RULES.stop()
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["judge"]["endpoint"] != f"http://127.0.0.1:{app_port}/v1"
    assert report["calls"]["sent"] == 0 and report["calls"]["cached"] > 0


def test_score_says_there_is_no_such_dataset_before_loading_a_model(tmp_path) -> None:
    path = tmp_path / "nw.db"
    store.connect(path).conn.close()
    done = cli_here.run(["score", "--dataset", "nope", "--model", str(tmp_path / "no-model"),
                         "--db", str(path), "--no-progress"])
    assert done.returncode == 1
    assert "no dataset named 'nope' in the store" in done.stderr


def test_judge_takes_the_pages_subsets_and_items_per_subset(demo_path) -> None:
    with FakeJudgeServer(lambda body: "[[A]]") as server:
        done = cli_here.run(judge_args(demo_path, server, "judge", "--subset", "QA", "--subset",
                                       "Chat", "--per-subset", "2", "--json"))
        asked = len(server.chat_requests())
        wrong = cli_here.run(judge_args(demo_path, server, "judge", "--subset", "Nope"))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["selection"] == {"subsets": ["Chat", "QA"], "per_subset": 2}
    assert summary["items"] == 4 == asked and set(summary["subsets"]) == {"Chat", "QA"}
    assert wrong.returncode == 1 and "has no subset 'Nope'" in wrong.stderr
