"""A judge run's interval names one method, once, the same in `judge`'s lines, its --json,
the leaderboard's JSON and the Reward model page (issue 59, point 6): Wilson's interval
never comes with "a bootstrap" beside it nor with "resamples": 1000; a bootstrap is named
once, with how it treats an item's trials. A real judge (a local HTTP server), the CLI and
AppTest."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.cli import main
from needlework.datasets.transfer import import_bytes
from needlework.rewards import registry
from tests.conftest import ROOT, jsonl
from tests.judges_fixtures import FakeJudgeServer


def records() -> list[dict]:
    """Items of 2 and 3 responses (rotations of unequal size), in two subsets."""
    out = [{"id": f"q{k}", "subset": "QA", "prompt": f"Question {k}?", "chosen": [f"good {k}"],
            "rejected": [f"bad {k}"]} for k in range(4)]
    out += [{"id": f"q{k}", "subset": "Chat", "prompt": f"Question {k}?", "chosen": [f"good {k}"],
             "rejected": [f"bad {k} one", f"bad {k} two"]} for k in range(4, 8)]
    return out


def fair(body: dict) -> str:
    """Names the good response, wherever it is shown."""
    text = body["messages"][-1]["content"]
    for part in text.split("[The Start of Assistant ")[1:]:
        letter, answer = part[0], part.split("[The End of", 1)[0]
        if "good" in answer:
            return f"[[{letter}]]"
    return "no verdict"


def always_a(body: dict) -> str:
    return "[[A]]"


@pytest.fixture
def db_path(tmp_path, monkeypatch):
    registry.MODELS.clear()
    path = tmp_path / "nw.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, jsonl(records()), "prefs.jsonl", dataset="prefs", format="lfrb")
    db.conn.close()
    yield path
    registry.MODELS.clear()


def judge(path, server, capsys, *extra: str) -> str:
    code = main(["judge", "--dataset", "prefs", "--base-url", server.base_url, "--model", "judge",
                 "--key-env", "", "--mode", "selection", "--rotations", "--no-progress",
                 "--db", str(path), *extra])
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def test_wilson_is_named_once_and_resamples_nothing(db_path, capsys) -> None:
    with FakeJudgeServer(fair) as server:
        text = judge(db_path, server, capsys)
        report = json.loads(judge(db_path, server, capsys, "--json"))
    assert "accuracy 100.0 % (20/20 trials), 95 % Wilson over 8 items 67.6–100.0 %" in text, text
    assert "bootstrap" not in text and "resampled" not in text, text
    for interval in [report["intervals"]["overall"], *report["intervals"]["subsets"].values()]:
        assert interval["method"] == "wilson"
        assert interval["resamples"] is None and interval["seed"] is None, interval
    assert main(["metrics", "--leaderboard", "--dataset", "prefs", "--json",
                 "--db", str(db_path)]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    judged = [r for r in rows if r["kind"] == "judge"]
    assert judged and judged[0]["interval"]["method"] == "wilson"
    assert judged[0]["interval"]["resamples"] is None, judged[0]["interval"]
    # the page: the same method, once, with no trials "resampled together"
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["dataset"] = "prefs"
    at.run()
    at.switch_page("app_pages/rewards.py")
    at.run()
    assert not at.exception, at.exception  # the one run: shown without a picker
    captions = " ".join(c.value for c in at.caption)
    assert "20 of 20 trials right; 95 % interval 67.6–100.0 % (95 % Wilson score interval " \
           "over 8 items)." in captions, captions
    assert "Wilson score interval over 8 items, an item's trials" not in captions


def test_a_bootstrap_is_named_once_with_how_it_takes_the_trials(db_path, capsys) -> None:
    with FakeJudgeServer(always_a) as server:
        text = judge(db_path, server, capsys)
        report = json.loads(judge(db_path, server, capsys, "--json"))
    lines = text.splitlines()
    head = next(line for line in lines if line.strip().startswith("accuracy "))
    assert "95 % bootstrap over 8 items" in head, head
    assert "  (an item's trials resampled together, items of unequal size weighted by their " \
           "trials)" in lines, lines
    # named once: the overall interval's (each subset's items are all alike: Wilson's)
    assert sum(line.count("bootstrap") for line in lines) == 1, lines
    overall = report["intervals"]["overall"]
    assert overall["method"] == "bootstrap" and overall["resamples"] == 1000
