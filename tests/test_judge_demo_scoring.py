"""The demo judge cannot rate: scoring mode is refused before any request, on the command
line, the job and the page, instead of a run of invalid answers; and an answer whose
brackets do not pair up (``[A]]]``, ``[A]]``) is invalid, never read as A (issue 59,
point 8). The shipped demo judge's folder (models/demo-judge) names the judge; a real
local HTTP server answers as it does ("[[A]]")."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.cli import main
from needlework.datasets.transfer import import_bytes
from needlework.judges.connection import Connection
from needlework.judges.job import start_judge_job
from needlework.judges.local import mode_refusal
from needlework.judges.parse import parse_score, parse_selection
from tests.conftest import ROOT, jsonl
from tests.judges_fixtures import FakeJudgeServer

DEMO = str(ROOT / "models" / "demo-judge")  # the demo judge's folder: the name it is served as


@pytest.mark.parametrize("answer", ["[A]]]", "[A]]", "A]]", "[[A]", "[[A]]]", "[[[A]]",
                                    "Verdict: [A]]", "I pick [B]]."])
def test_brackets_that_do_not_pair_up_are_invalid(answer: str) -> None:
    got = parse_selection(answer, 2)
    assert not got.valid and got.reason.startswith("malformed brackets"), (answer, got)


@pytest.mark.parametrize(("answer", "value"), [("[[A]]", 0), ("**[[B]]**", 1), ("[[A]].", 0),
                                               ("(A)", 0), ("[A]", 0), ("Verdict: B", 1)])
def test_brackets_that_pair_up_still_read(answer: str, value: int) -> None:
    got = parse_selection(answer, 2)
    assert got.valid and got.value == value, (answer, got)


def test_a_score_in_brackets_that_do_not_pair_up_is_invalid() -> None:
    assert not parse_score("[7]]").valid and not parse_score("[[7]]]").valid
    assert parse_score("[[7]]").value == 7


@pytest.fixture
def db_path(tmp_path, monkeypatch):
    path = tmp_path / "nw.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    records = [{"id": f"q{k}", "subset": "Chat", "prompt": f"Question {k}?",
                "chosen": [f"good {k}"], "rejected": [f"bad {k}"]} for k in range(3)]
    import_bytes(db, jsonl(records), "prefs.jsonl", dataset="prefs", format="lfrb")
    db.conn.close()
    return path


def test_the_command_refuses_scoring_with_the_demo_judge_before_any_request(db_path,
                                                                             capsys) -> None:
    assert mode_refusal(DEMO, "scoring") and mode_refusal(DEMO, "selection") is None
    assert mode_refusal("gpt-4o", "scoring") is None
    with FakeJudgeServer(lambda body: "[[A]]", models=(DEMO,), model=DEMO) as server:
        args = ["judge", "--dataset", "prefs", "--base-url", server.base_url, "--model", DEMO,
                "--key-env", "", "--no-progress", "--db", str(db_path)]
        code = main([*args, "--mode", "scoring"])
        err = capsys.readouterr().err
        assert code == 2, err
        assert "the demo judge cannot rate a response" in err and "--mode selection" in err
        assert server.chat_requests() == []
        with pytest.raises(ValueError, match="cannot rate"):
            start_judge_job(store.connect(db_path), db_path, Connection(server.base_url, DEMO),
                            "prefs", mode="scoring")
        assert main([*args, "--mode", "selection"]) == 0  # what it was trained for
        assert len(server.chat_requests()) == 3


def test_the_page_says_so_before_the_run_and_offers_no_run(db_path) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["dataset"] = "prefs"
    at.run()
    at.switch_page("app_pages/rewards.py")
    at.run()
    with FakeJudgeServer(lambda body: "[[A]]", models=(DEMO,), model=DEMO) as server:
        at.text_input(key="jd_base_url").set_value(server.base_url)
        at.text_input(key="jd_model").set_value(DEMO)
        at.run()
        at.radio(key="rj_mode").set_value("scoring").run()
        assert not at.exception, at.exception
        assert any("The demo judge cannot rate a response" in w.value for w in at.warning)
        assert at.button(key="rj_run").disabled
        at.radio(key="rj_mode").set_value("selection").run()
        assert not at.button(key="rj_run").disabled
        assert server.chat_requests() == []
