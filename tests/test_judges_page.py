"""AppTest for the LLM judge on the Reward model page: the connection form, Test connection,
a judge job through the runner against a real local HTTP server, the results per subset with
the invalid rate, the failures with the judge's own words and the Review link on the failing
comparison, downloads, a second result side by side; and the key found nowhere."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.datasets.transfer import import_bytes
from needlework.jobs.runner import RUNNER
from needlework.results.compare import list_runs
from needlework.rewards import registry
from store.scores import list_jobs, save_item_scores
from tests.conftest import ROOT, jsonl
from tests.judges_fixtures import FakeJudgeServer, last_user_text

PAGE = "app_pages/rewards.py"
# a response as the default (Long-form RewardBench's) prompt shows it, or the project's
BLOCK = re.compile(r"\[(?:Response |The Start of Assistant )([A-Z])(?:'s Answer)?\]\n(.*?)\n"
                   r"\[(?:End of Response |The End of Assistant )\1(?:'s Answer)?\]", re.S)
SECRET = "sk-test-SECRET123"


def records() -> list[dict]:
    return [{"id": f"q{k}", "subset": "QA" if k < 2 else "Chat", "prompt": f"Question {k}?",
             "chosen": [f"good answer {k}"],
             "rejected": [f"bad answer {k} one", f"bad answer {k} two", f"bad answer {k} three"]}
            for k in range(4)]


def judge(body: dict) -> str:
    """Right on q0 and q2, names 'bad … two' on q1, unreadable on q3."""
    text = last_user_text(body)
    if "Question 3?" in text:
        return "Both are fine, really."
    for mark, t in BLOCK.findall(text):
        if ("Question 1?" in text and t.endswith("two")) or ("Question 1?" not in text and "good" in t):
            return f"Response {mark} is clearly better. [[{mark}]]"
    return "[[A]]"


@pytest.fixture(autouse=True)
def fresh_registry():
    registry.MODELS.clear()
    yield
    registry.MODELS.clear()


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, jsonl(records()), "prefs.jsonl", dataset="prefs", format="lfrb")
    return db


def open_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["dataset"] = "prefs"
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    return at


def connect(at: AppTest, server: FakeJudgeServer, key_env: str | None = None) -> AppTest:
    at.text_input(key="jd_base_url").set_value(server.base_url)
    at.text_input(key="jd_model").set_value("judge")
    if key_env:
        at.selectbox(key="jd_key_from").set_value("env")
        at.run()
        at.text_input(key="jd_key_env").set_value(key_env)
    at.run()
    assert not at.exception, at.exception
    return at


def judge_all(at: AppTest, db) -> dict:
    at.button(key="rj_run").click()
    at.run()
    job = next(j for j in list_jobs(db) if j["kind"] == "judge")
    RUNNER.join(int(job["id"]), timeout=60)
    at.run()
    assert not at.exception, at.exception
    return next(j for j in list_jobs(db) if j["kind"] == "judge")


def frame(at: AppTest, column: str):
    for f in at.dataframe:
        if column in f.value.columns:
            return f.value
    raise AssertionError(f"no table with a {column!r} column")


@pytest.mark.slow
def test_connection_form_tests_the_endpoint_in_one_line(app_db):
    at = open_page()
    assert at.button(key="jd_test").disabled  # nothing to test yet
    with FakeJudgeServer(judge) as server:
        connect(at, server)
        at.button(key="jd_test").click()
        at.run()
        assert any(s.value.startswith("ok") for s in at.success), [s.value for s in at.success]
        at.text_input(key="jd_model").set_value("other-model").run()
        at.button(key="jd_test").click()
        at.run()
    assert any("wrong model name" in e.value for e in at.error), [e.value for e in at.error]
    at.button(key="jd_test").click()
    at.run()  # the server is gone now
    assert any("server down" in e.value for e in at.error)


@pytest.mark.slow
def test_judging_shows_accuracy_and_invalid_rate_per_subset_and_the_judges_words(app_db):
    at = open_page()
    with FakeJudgeServer(judge) as server:
        connect(at, server)
        job = judge_all(at, app_db)
    assert job["status"] == "done", job
    assert any("Judged 4 trials of 4 items" in s.value for s in at.success)
    table = frame(at, "invalid rate").set_index("subset")
    assert table.loc["QA", "accuracy"] == "50.0%" and table.loc["QA", "invalid rate"] == "0.0%"
    assert table.loc["Chat", "accuracy"] == "50.0%" and table.loc["Chat", "invalid rate"] == "50.0%"
    assert table.loc["overall", "accuracy"] == "50.0%"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["accuracy (per trial)"] == "50.0%" and metrics["invalid answers"] == "25.0%"
    fails = at.dataframe(key="rj_failures").value
    assert list(fails["item"]) == ["q1", "q3"]
    assert fails.iloc[0]["verdict"] == "named rejected 2 over chosen 1"
    assert fails.iloc[0]["opens"] == "chosen 1 vs rejected 2"
    assert fails.iloc[1]["verdict"].startswith("invalid answer")
    words = " ".join(str(h.proto.body) for h in at.get("html"))
    assert "clearly better" in words  # the judge's own words on the first failure
    links = [link for link in at.get("page_link") if "rejected 2" in link.proto.label]
    query = parse_qs(urlsplit(links[0].proto.page).query) if links else {}
    assert links and (query == {} or query.get("i") == ["1"]), links
    assert "i=1" in str(links[0].proto) and "j=2" in str(links[0].proto)
    labels = [b.label for b in at.get("download_button")]
    assert {"Answers JSONL", "Answers CSV", "Figures CSV"} <= set(labels)


@pytest.mark.slow
def test_a_judge_run_side_by_side_with_a_reward_model(app_db):
    save_item_scores(app_db, "prefs", "f" * 32, "fp32|full", "/models/some-rm",
                     [{"item_key": f"q{k}", "subset": "QA" if k < 2 else "Chat",
                       "chosen_scores": [1.0], "rejected_scores": [0.0, 0.0, 2.0 if k == 0 else 0.0]}
                      for k in range(4)])
    at = open_page()
    with FakeJudgeServer(judge) as server:
        connect(at, server)
        judge_all(at, app_db)
    assert at.selectbox(key="rw_run").value.startswith("judge:")  # the new run is shown
    options = at.selectbox(key="rw_compare").options
    classifier = next(o for o in options if "some-rm" in o)
    at.selectbox(key="rw_compare").set_value(next(
        k for k in at.selectbox(key="rw_compare").options if k == classifier)).run()
    both = frame(at, "judge judge better").set_index("subset")
    # judge right on q0 and q2; the model right on q1, q2, q3 (q0: rejected 3 scores higher)
    assert both.loc["overall", "judge judge"] == "50.0%" and both.loc["overall", "some-rm"] == "75.0%"
    # judge better on q0, the model on q1 and q3, tied on q2
    assert both.loc["overall", "judge judge better"] == 1 and both.loc["overall", "some-rm better"] == 2
    assert both.loc["overall", "tied"] == 1 and both.loc["overall", "test"].startswith("McNemar")


@pytest.mark.slow
def test_the_key_is_read_from_the_environment_and_stored_nowhere(app_db, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    at = open_page()
    with FakeJudgeServer(judge, require_key=SECRET) as server:
        connect(at, server, key_env="OPENAI_API_KEY")
        assert any("$OPENAI_API_KEY (set)" in re.sub(r"\\(.)", r"\1", c.value) for c in at.caption)
        job = judge_all(at, app_db)
        sent = {r["headers"].get("authorization") for r in server.chat_requests()}
    assert job["status"] == "done" and sent == {f"Bearer {SECRET}"}
    page = " ".join(str(e.proto) for e in at.main) + " ".join(str(v) for v in at.session_state)
    assert SECRET not in page
    app_db.conn.close()
    for path in tmp_path.iterdir():
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_a_judge_run_another_session_finished_does_not_take_over_results(app_db):
    """Only a run this session started (or saw running) comes to the front when it
    finishes; a visitor who opens the page later sees the default (the newest result),
    and a choice made in "Results of" sticks over later reruns."""
    at = open_page()
    with FakeJudgeServer(judge) as server:
        connect(at, server)
        judge_all(at, app_db)
    save_item_scores(app_db, "prefs", "f" * 32, "fp32|full", "/models/some-rm",
                     [{"item_key": f"q{k}", "subset": "QA", "chosen_scores": [1.0],
                       "rejected_scores": [0.0, 0.0, 0.0]} for k in range(4)])
    later = open_page()
    assert later.selectbox(key="rw_run").value.startswith("score:"), later.selectbox(key="rw_run").value
    assert any("Ties count as wrong" in c.value for c in later.caption)
    judge_key = next(r.key for r in list_runs(app_db, "prefs") if r.kind == "judge")
    later.selectbox(key="rw_run").set_value(judge_key).run()
    later.run()
    assert later.selectbox(key="rw_run").value == judge_key
