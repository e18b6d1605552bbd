"""Issue 31's bugs of the judge connection form (components/models/judge.py), with AppTest
and real local servers: a greyed-out Test connection and Judge say why, a result about
another connection is not shown, the settings survive a visit to another page, and the page
and the command line share the demo judge's answers."""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.jobs.runner import RUNNER
from needlework.judges.local import LOCAL
from needlework.seeding.demo import DEMO_PREFERENCE, seed_demo
from store.scores import list_jobs
from tests import cli_here
from tests.conftest import ROOT
from tests.judges_fixtures import FakeJudgeServer, free_port


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    seed_demo(db)
    yield path
    db.conn.close()


def open_page(page: str, dataset: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.query_params["dataset"] = dataset
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception, at.exception
    return at


def warnings(at: AppTest) -> list[str]:
    """The warnings' text (the Markdown escapes of components.text.label taken out)."""
    return [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]


@pytest.mark.slow
def test_max_tokens_at_the_window_says_why_test_and_judge_are_greyed_out(app_db):
    at = open_page("app_pages/rewards.py", DEMO_PREFERENCE)
    with FakeJudgeServer() as server:
        at.text_input(key="jd_base_url").set_value(server.base_url)
        at.text_input(key="jd_model").set_value("judge").run()
        at.button(key="jd_test").click().run()
        assert any(s.value.startswith("ok") for s in at.success)
        at.number_input(key="jd_window").set_value(8192).run()
        at.number_input(key="jd_max_tokens").set_value(8192).run()
    assert not at.exception, at.exception
    assert at.button(key="jd_test").disabled and at.button(key="rj_run").disabled
    assert any("context window (8192) must exceed max tokens (8192)" in w
               for w in warnings(at)), warnings(at)
    assert not any(s.value.startswith("ok") for s in at.success)  # that was another connection


@pytest.mark.slow
def test_an_earlier_error_goes_once_the_connection_is_fixed(app_db):
    at = open_page("app_pages/rewards.py", DEMO_PREFERENCE)
    at.text_input(key="jd_base_url").set_value(f"http://127.0.0.1:{free_port()}/v1")
    at.text_input(key="jd_model").set_value("judge").run()
    at.button(key="jd_test").click().run()
    assert any("server down" in e.value for e in at.error), [e.value for e in at.error]
    with FakeJudgeServer() as server:
        at.text_input(key="jd_base_url").set_value(server.base_url).run()
        assert not any("server down" in e.value for e in at.error)
        at.button(key="jd_test").click().run()
        assert any(s.value.startswith("ok") for s in at.success)


@pytest.mark.slow
def test_the_judge_settings_survive_a_visit_to_another_page(app_db):
    """The connection and the run's options on the Reward model page; the user goes to the
    home page and comes back: everything is as they left it."""
    at = open_page("app_pages/rewards.py", DEMO_PREFERENCE)
    at.text_input(key="jd_base_url").set_value("http://127.0.0.1:9/v1")
    at.text_input(key="jd_model").set_value("judge").run()
    at.number_input(key="jd_max_tokens").set_value(100)
    at.number_input(key="jd_temperature").set_value(0.5)
    at.radio(key="rj_order").set_value("rotations")
    at.selectbox(key="rj_policy").set_value("keep-end")
    at.number_input(key="rj_per").set_value(2).run()
    at.switch_page("app_pages/home.py")
    at.run()
    at.switch_page("app_pages/rewards.py")
    at.run()
    assert not at.exception, at.exception
    assert at.text_input(key="jd_base_url").value == "http://127.0.0.1:9/v1"
    assert (at.number_input(key="jd_max_tokens").value, at.number_input(key="jd_temperature").value
            ) == (100, 0.5)
    assert at.radio(key="rj_order").value == "rotations"
    assert at.selectbox(key="rj_policy").value == "keep-end"
    assert at.number_input(key="rj_per").value == 2
    at.radio(key="rj_mode").set_value("scoring").run()
    at.switch_page("app_pages/rag.py")
    at.run()
    at.switch_page("app_pages/rewards.py")
    at.run()
    assert at.radio(key="rj_mode").value == "scoring"


@pytest.mark.slow
def test_the_page_and_the_cli_share_the_demo_judges_answers(app_db, demo_models_dir):
    """Start the demo judge on the Reward model page and judge one item per subset; the
    same run from the command line, with its defaults, finds every answer in the cache."""
    at = open_page("app_pages/rewards.py", DEMO_PREFERENCE)
    try:
        at.button(key="jd_demo").click().run()
        assert not at.exception, at.exception
        server = LOCAL.running()
        assert server is not None, [e.value for e in at.error]
        at.number_input(key="rj_per").set_value(1).run()
        at.button(key="rj_run").click().run()
        db = store.connect(app_db)
        job = next(j for j in list_jobs(db) if j["kind"] == "judge")
        RUNNER.join(int(job["id"]), timeout=300)
        finished = RUNNER.get(db, int(job["id"]))
        assert finished["status"] == "done", finished["error"]
        done = cli_here.run(["judge", "--dataset", DEMO_PREFERENCE, "--mode", "selection",
                             "--base-url", server.base_url, "--model", server.model,
                             "--key-env", "", "--per-subset", "1", "--db", str(app_db),
                             "--no-progress", "--json"])
    finally:
        LOCAL.stop()
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["requests"] == 0 and summary["cached"] == 5
    assert summary["run_key"] == finished["result"]["run_key"]  # the same run
    assert summary["params"]["max_tokens"] == 16
