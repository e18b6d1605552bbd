"""Failed requests are not answers (issue 48, point 1): the ``judge`` verb against real
local servers (the real ``openai`` client over HTTP) that refuse everything, or answer
HTTP 500 to one prompt in five; every figure recounted by hand from what the server saw."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import store
from needlework.cli import main
from needlework.judges.connection import Connection
from needlework.judges.engine import NO_ANSWER_LIMIT, run_judge
from needlework.judges.errors import JudgeError
from needlework.judges.evaluate import summarize
from store.datasets import NewItem, create_dataset
from tests.judges_fixtures import last_user_text
from tests.judges_hosted_fixtures import HostedJudgeServer
from tests.test_judges_engine import BLOCK, pairs

QUESTION = re.compile(r"Question (\d+)\?")


def make_pairs(db_path: Path, n: int = 10) -> None:
    db = store.connect(db_path)
    items = [NewItem(f"q{k}", {"id": f"q{k}", "subset": "QA" if k % 2 else "Chat",
                               "prompt": f"Question {k}?",
                               "chosen": [f"A good, kind answer to question {k}."],
                               "rejected": [f"A rude answer {k}, you fool."]},
                     "QA" if k % 2 else "Chat") for k in range(n)]
    create_dataset(db, "pairs", "preference", "lfrb", items)
    db.conn.close()


def item_of(prompt: str) -> int:
    return int(QUESTION.search(prompt).group(1))


def good_letter(prompt: str) -> str:
    return next(label for label, text in BLOCK.findall(prompt) if "good" in text)


def right_unless_third(body: dict) -> str:
    """Names the good response, except for items 0, 3, 6, ...: the rude one."""
    prompt = last_user_text(body)
    good = good_letter(prompt)
    if item_of(prompt) % 3 == 0:
        return "[[B]]" if good == "A" else "[[A]]"
    return f"[[{good}]]"


def judge_args(server: HostedJudgeServer, db: Path, *more: str) -> list[str]:
    return ["judge", "--dataset", "pairs", "--base-url", server.base_url, "--model", "judge",
            "--key-env", "", "--mode", "selection", "--rotations", "--concurrency", "1",
            "--no-progress", "--db", str(db), *more]


def test_an_endpoint_that_refuses_everything_fails_in_one_line_and_stores_nothing(
        tmp_path: Path, capsys) -> None:
    db = tmp_path / "j.db"
    make_pairs(db)
    sentence = "This request was rejected by the content policy of the organisation."
    with HostedJudgeServer(right_unless_third, refuse_all=sentence) as server:
        code = main(judge_args(server, db, "--json"))
        sent = len(server.requests)
    out, err = capsys.readouterr()
    assert code != 0 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("error: no answers: ") and sentence in err and "HTTP 400" in err
    assert "nothing stored" in err
    # it stops after the first few refusals instead of sending all 20
    assert sent == NO_ANSWER_LIMIT
    conn = store.connect(db)
    assert conn.execute("select count(*) from judge_runs").fetchone()[0] == 0
    assert conn.execute("select count(*) from judge_calls").fetchone()[0] == 0
    assert conn.execute("select count(*) from judge_results").fetchone()[0] == 0
    conn.conn.close()


@pytest.mark.slow
def test_one_prompt_in_five_failing_gives_figures_over_the_answered_ones(
        tmp_path: Path, capsys) -> None:
    db = tmp_path / "j.db"
    out_file = tmp_path / "judged.jsonl"
    make_pairs(db)
    with HostedJudgeServer(right_unless_third, fail_every=5) as server:
        code = main(judge_args(server, db, "--max-retries", "1", "--json", "--out",
                               str(out_file)))
        summary = json.loads(capsys.readouterr().out)
        answered = server.answered()
        failed = server.failed_prompts()
        requests = list(server.requests)
        # the text output of the same run (all from the cache but the failed ones, asked again)
        code_text = main(judge_args(server, db, "--max-retries", "0"))
        text = capsys.readouterr().out
    assert code == 0 and code_text == 0
    # by hand, from what the server saw: 10 items × 2 orders = 20 prompts, the 5th, 10th,
    # 15th and 20th failing every time (asked twice each: one retry)
    assert len(failed) == 4
    assert len(requests) == 16 + 4 * 2
    right = {"all": 0, "QA": 0, "Chat": 0}
    seen = {"all": 0, "QA": 0, "Chat": 0}
    by_position = {"A": [0, 0], "B": [0, 0]}  # [right, trials] by where the good one was shown
    for r in answered:
        prompt = last_user_text(r["body"])
        k, good = item_of(prompt), good_letter(prompt)
        hit = int(k % 3 != 0)
        subset = "QA" if k % 2 else "Chat"
        for name in ("all", subset):
            seen[name] += 1
            right[name] += hit
        by_position[good][0] += hit
        by_position[good][1] += 1
    assert seen["all"] == 16
    assert summary["trials"] == 20 and summary["answered"] == 16 and summary["failed"] == 4
    assert summary["accuracy"] == right["all"] / 16
    assert summary["metrics"]["bon"]["n"] == 16 and summary["metrics"]["bon"]["correct"] == right["all"]
    for name in ("QA", "Chat"):
        part = summary["subsets"][name]
        assert part["n"] == seen[name] and part["correct"] == right[name]
        assert part["accuracy"] == right[name] / seen[name]
        assert part["failed"] == 10 - seen[name]
    bias = summary["position_bias"]["2"]
    assert bias["trials_by_position"] == [by_position["A"][1], by_position["B"][1]]
    assert bias["accuracy_by_position"] == [by_position[p][0] / by_position[p][1] for p in "AB"]
    # consistency over the items both of whose orders were answered: every such item names
    # the same response both times (this judge is order-blind), so 1.0 over that many
    whole = {item_of(p) for p in server.prompts} - {item_of(p) for p in failed}
    assert bias["groups"] == len(whole) and bias["consistency"] == 1.0
    # the interval resamples the answered trials of each item
    assert summary["intervals"]["overall"]["estimate"] == summary["accuracy"]
    groups = summary["failures"]
    assert [(g["kind"], g["count"]) for g in groups] == [("server_error", 4)]
    assert "HTTP 500" in groups[0]["message"] and "Sorry about that" in groups[0]["message"]
    # failures never reach the cache: the second run asked exactly the 4 failed prompts again
    conn = store.connect(db)
    assert conn.execute("select count(*) from judge_calls").fetchone()[0] == 16
    conn.conn.close()
    assert "20 requests" not in text
    assert f"accuracy {right['all'] / 16:.4f}" in text
    assert "answered 16 of 20 trials, failed 4 (4 server error: no answer (server error): " \
        "server error:" in text
    assert "QA: " in text and "failed" in text
    # the --out file holds the answered trials only: metrics on it gives the same figure
    lines = [json.loads(x) for x in out_file.read_text().splitlines()]
    assert len(lines) == 16
    capsys.readouterr()
    assert main(["metrics", "--kind", "bon", "--scores", str(out_file), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == summary["accuracy"]


def test_a_refused_request_is_failed_not_invalid_and_a_rerun_asks_again(tmp_path: Path) -> None:
    """In the engine: a 400 that is not an answer is a failed trial (not an invalid one),
    and it is asked again by the next run."""
    db = store.connect(":memory:")
    calls = {"n": 0}

    def second_refused(body: dict) -> str:
        return f"[[{good_letter(last_user_text(body))}]]"

    with HostedJudgeServer(second_refused, fail_every=2) as server:
        conn = Connection(server.base_url, "judge", key_env=None, concurrency=1, max_retries=0)
        run = run_judge(db, conn, pairs(4), "selection", dataset="t")
        calls["n"] = len(server.requests)
        rerun = run_judge(db, conn, pairs(4), "selection", dataset="t")
    s = run.summary
    assert s["trials"] == 4 and s["answered"] == 2 and s["failed"] == 2 and s["invalid"] == 0
    assert s["accuracy"] == 1.0 and s["invalid_rate"] == 0.0
    failed = [r for r in run.results if r.get("failed")]
    assert len(failed) == 2 and all(r["valid"] is None and r["correct"] is None for r in failed)
    assert all(r["reason"].startswith("no answer (server error): server error: ") for r in failed)
    # the re-run sent only the two failed prompts (which fail again: they are the 2nd, 4th)
    assert calls["n"] == 4 and rerun.summary["requests"] == 2 and rerun.summary["cached"] == 2
    # the Review page's view of the run: a failed trial is neither right nor wrong
    review = store.judges.review_scores(db, run.run_key)
    for r in run.results:
        scores = review[r["item_key"]]
        if r.get("failed"):
            assert scores == {"chosen_scores": [None], "rejected_scores": [None], "disagree": []}
        else:
            assert scores["chosen_scores"] == [1.0] and scores["disagree"] == []
    db.conn.close()


def test_summarize_leaves_failed_trials_out_of_every_figure() -> None:
    """By hand: 3 trials of one item right, 1 wrong, 2 failed; scoring: an item with a
    failed rating is left out whole."""
    def trial(k: int, picked: int | None, failed: bool = False) -> dict:
        return {"item_key": f"i{k // 2}", "subset": "S", "trial": k, "group": 0, "rotation": k % 2,
                "members": ["chosen[0]", "rejected[0]"] if k % 2 == 0 else
                ["rejected[0]", "chosen[0]"], "chosen_positions": [k % 2],
                "skipped": False, "valid": None if failed else True, "picked": picked,
                "correct": None if failed else picked == k % 2, "failed": failed,
                "failure": "timeout" if failed else None,
                "reason": "no answer (timed out): timeout: …" if failed else None}

    rows = [trial(0, 0), trial(1, 1), trial(2, 0), trial(3, 0), trial(4, None, True),
            trial(5, None, True)]
    s = summarize(rows, "selection")
    assert (s["trials"], s["answered"], s["failed"]) == (6, 4, 2)
    assert s["accuracy"] == 3 / 4 and s["metrics"]["bon"]["n"] == 4
    assert s["items_judged"] == 3 and s["answered_items"] == 2
    assert s["failures"] == [{"kind": "timeout", "count": 2,
                              "message": "no answer (timed out): timeout: …"}]
    bias = s["position_bias"]["2"]
    assert bias["trials"] == 4 and bias["groups"] == 2 and bias["consistency"] == 0.5

    def rating(item: str, member: str, score: float | None, failed: bool = False) -> dict:
        return {"item_key": item, "subset": "S", "trial": 0, "group": 0, "rotation": None,
                "members": [member], "chosen_positions": [0], "skipped": False,
                "valid": None if failed else True, "score": score, "failed": failed,
                "failure": "server_error" if failed else None, "reason": None}

    scored = [rating("a", "chosen[0]", 8), rating("a", "rejected[0]", 3),
              rating("b", "chosen[0]", 2), rating("b", "rejected[0]", None, True),
              rating("c", "chosen[0]", 2), rating("c", "rejected[0]", 5)]
    s = summarize(scored, "scoring")
    assert s["metrics"]["bon"]["n"] == 2 and s["accuracy"] == 1 / 2
    assert s["failed"] == 1 and s["answered"] == 5 and s["answered_items"] == 2


def test_run_judge_with_no_answer_raises_one_line_and_keeps_no_run() -> None:
    db = store.connect(":memory:")
    with HostedJudgeServer(right_unless_third, refuse_all="Request blocked.") as server:
        conn = Connection(server.base_url, "judge", key_env=None, concurrency=2)
        try:
            run_judge(db, conn, pairs(3), "selection", dataset="t")
        except JudgeError as exc:
            error = exc
        else:
            raise AssertionError("a run with no answer must fail")
        sent = len(server.requests)
    assert error.kind == "bad_request" and error.status == 400
    assert str(error) == (f"no answers: 3 of 3 requests failed, 3 refused: bad request: "
                          f"{server.base_url.removesuffix('/')} answered HTTP 400 (Request "
                          "blocked.); nothing stored")
    assert "\n" not in str(error) and sent == 3
    assert store.judges.list_runs(db) == [] and store.judges.count_calls(db) == 0
    db.conn.close()


def test_the_needle_heatmap_leaves_a_failed_request_out() -> None:
    """The needle lab's frame of a judge run: a trial whose request failed has no row (it
    is neither right nor wrong), the answered trials keep theirs."""
    from needlework.needle import analysis  # noqa: PLC0415
    from tests.test_needle_analysis import NEEDLE_RECORDS, trial  # noqa: PLC0415

    lost = trial("p2", 1, 1, picked=None, valid=None, raw=None)
    lost["entry"].update(failed=True, failure="server_error",
                         reason="no answer (server error): server error: HTTP 500")
    trials = [trial("p1", 0, 0, picked=0), trial("p1", 1, 1, picked=1),
              trial("p2", 0, 0, picked=1), lost]
    frame = analysis.judge_results(NEEDLE_RECORDS, trials, "judge x")
    assert frame["id"].tolist() == ["p1", "p1", "p2"]
    assert frame["correct"].tolist() == [True, True, False]
    cells = analysis.heatmap_frame(frame, thin=3)
    got = {(r.length_tokens, r.bucket): (r.n, r.n_correct) for r in cells.itertuples()}
    assert got == {(1000, 0): (2, 2), (1000, 5): (1, 0)}
