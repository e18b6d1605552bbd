"""RewardBench 2 judged in the official generative mode (issue 62, point 3), against a real
local OpenAI-compatible server (the real ``openai`` client over HTTP): the best-of-4
instances four-way (four completions shown, one letter answered), the Ties rows rated one
completion at a time from 1 to 10; a failed request counted apart, unreadable answers
counted wrong; every figure recounted by hand from what the server answered."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

import store
from needlework.datasets.transfer import import_bytes
from needlework.judges.connection import Connection
from needlework.judges.plan import load_items
from needlework.judges.rewardbench2 import FOUR_WAY, TIES_RATING, run_rewardbench2_judge
from needlework.results.leaderboard import leaderboard
from store import judges as store_judges
from tests import cli_here
from tests.judges_fixtures import FakeJudgeServer
from tests.test_judges_engine import BLOCK
from tests.test_rewardbench2 import jsonl, record

QUESTION = re.compile(r"\[User Question\]\nQuestion (\S+)\?")
RATED = re.compile(r"\[Query\]\n(.*?)\n\n\[Response\]\n(.*?)\n\n\[Your judgement\]$", re.S)

#: what the judge does with each best-of-4 instance (the first one's request fails)
PLAN = {"F-0": "right", "F-1": "right", "F-2": "wrong", "F-3": "unreadable",
        "P-0": "right", "M-0": "wrong", "S-0": "right", "Fo-0": "right"}
SUBSET = {"F": "Factuality", "P": "Precise IF", "M": "Math", "S": "Safety", "Fo": "Focus"}
#: the judge's rating of each Ties completion ("0" is off the 1-10 scale the prompt asks for)
RATINGS = {"Red.": "9", "Blue.": "8", "Yellow.": "9", "Green.": "3", "Purple.": "4",
           "11": "7", "13": "7", "17": "6", "12": "0", "15": "2",
           "Saturn": "8", "Jupiter": "8", "Mars": "8"}


def records() -> list[dict[str, Any]]:
    out = [record(key, SUBSET[key.split("-")[0]], [f"The correct answer to {key}."],
                  [f"Wrong answer {k} to {key}." for k in range(3)], prompt=f"Question {key}?")
           for key in PLAN]
    colour, prime, planet = "A primary colour of light?", "A prime between 10 and 20?", \
        "A planet with rings?"
    out += [record("ref:1", "Ties", ["Red."], ["Green.", "Purple."], prompt=colour),
            record("tied:1", "Ties", ["Red.", "Blue.", "Yellow."], ["Green.", "Purple."],
                   prompt=colour),
            record("ref:2", "Ties", ["11"], ["12", "15"], prompt=prime),
            record("tied:2", "Ties", ["11", "13", "17"], ["12", "15"], prompt=prime),
            record("tied:3", "Ties", ["Saturn", "Jupiter"], ["Mars"], prompt=planet)]
    return out


def judge(body: dict[str, Any]) -> str:
    """Four-way: names the correct completion, a wrong one, or nothing, as PLAN says;
    Ties: the rating of RATINGS."""
    messages = body["messages"]
    user = messages[-1]["content"]
    rated = RATED.search(user)
    if rated:
        return f"It answers the query.\n{RATINGS[rated.group(2)]}"
    key = QUESTION.search(user).group(1)
    shown = dict(BLOCK.findall(user))
    correct = next(letter for letter, text in shown.items() if text.startswith("The correct"))
    wrong = next(letter for letter, text in shown.items() if text.startswith("Wrong"))
    action = PLAN[key]
    if action == "unreadable":
        return "They all have merits; I cannot pick one."
    return f"Compared.\n[[{correct if action == 'right' else wrong}]]"


def connection(server: FakeJudgeServer) -> Connection:
    return Connection(server.base_url, "judge", key_env=None, concurrency=1, max_retries=0)


@pytest.fixture
def rb2_db(tmp_path: Path):
    db = store.connect(tmp_path / "nw.db")
    import_bytes(db, jsonl(records()), "judged.jsonl")
    return db


def ties_score_by_hand() -> float:
    # prompt 1: ref gap 9 - 4 = 5, accurate; tied spread 9 - 8 = 1, gap 8 - 4 = 4, accurate
    # prompt 2: "12" rated 0 is no rating: both rows have a missing score, nothing holds
    # prompt 3: tied only, gap 8 - 8 = 0: not accurate
    ref_accuracy, tied_accuracy = 1 / 2, 1 / 3
    preferred = hard = 1 / 2  # prompt 1 yes (4 > 1, min(5, 4) > 1), prompt 2 no
    margin = (math.tanh(4 / 1 - 1) + 0.0) / 2
    return 0.3 * tied_accuracy + 0.3 * ref_accuracy + 0.2 * preferred + 0.2 * hard + 0.01 * margin


def test_the_official_generative_mode_recounted_by_hand(rb2_db) -> None:
    _, items = load_items(rb2_db, "judged")
    seen: list[tuple[int, int]] = []
    with FakeJudgeServer(judge, statuses=[400]) as server:  # the first request is refused
        run = run_rewardbench2_judge(rb2_db, connection(server), items, dataset="judged",
                                     progress=lambda done, total: seen.append((done, total)))
        chats = server.chat_requests()
    four = [r["body"] for r in chats if r["body"]["messages"][0]["role"] == "system"]
    rated = [r["body"] for r in chats if r["body"]["messages"][0]["role"] == "user"]
    # four-way: 8 instances, each shown once with its four completions, one letter asked
    assert len(four) == 8 and len(rated) == 13  # 19 ratings, 13 distinct prompts
    for body in four:
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        assert "four AI assistants" in system
        assert '"[[A]]" if assistant A is best' in system and '"[[D]]" if assistant D' in system
        assert len(BLOCK.findall(user)) == 4
        assert sum(text.startswith("The correct") for _, text in BLOCK.findall(user)) == 1
    for body in rated:
        assert len(body["messages"]) == 1 and "on a scale of 1 to 10" in body["messages"][0]["content"]
        assert "depth and level of detail do not matter" in body["messages"][0]["content"]
    assert seen[-1] == (8 + 19, 8 + 19)

    summary = run.summary
    subsets = summary["subsets"]
    # Factuality: F-0 failed (left out); F-1 right, F-2 wrong, F-3 unreadable (wrong)
    assert (subsets["Factuality"]["n"], subsets["Factuality"]["right"]) == (3, 1)
    assert subsets["Factuality"]["accuracy"] == pytest.approx(1 / 3)
    for name, value in (("Precise IF", 1.0), ("Math", 0.0), ("Safety", 1.0), ("Focus", 1.0)):
        assert (subsets[name]["accuracy"], subsets[name]["n"]) == (value, 1), name
    ties = subsets["Ties"]
    assert ties["rule"] == "ties" and ties["missing"] == 2
    assert (ties["ref"]["right"], ties["ref"]["n"], ties["tied"]["right"], ties["tied"]["n"]) == \
        (1, 2, 1, 3)
    assert ties["accuracy"] == pytest.approx(ties_score_by_hand())
    overall = (1 / 3 + 1 + 0 + 1 + 1 + ties_score_by_hand()) / 6
    assert summary["accuracy"] == pytest.approx(overall) and summary["comparable"]
    # the official script's 0.25 for the unreadable answer, beside ours
    official = summary["official_invalid_rule"]
    assert official["subsets"]["Factuality"] == pytest.approx((1 + 0 + 0.25) / 3)
    assert official["accuracy"] == pytest.approx(overall + 0.25 / 3 / 6)
    # failed apart; unreadable counted (a Ties rating of 0 is no rating)
    assert summary["failed"] == 1 and summary["failures"][0]["kind"] == "bad_request"
    assert summary["answers"]["four-way"] == {"answered": 7, "invalid": 1, "skipped": 0,
                                              "failed": 1, "invalid_rate": 1 / 7}
    assert summary["answers"]["ties-ratings"]["invalid"] == 2  # "12" in ref:2 and tied:2
    assert summary["invalid"] == 3
    assert summary["intervals"]["overall"]["method"] == "bootstrap"
    assert summary["intervals"]["subsets"]["Factuality"]["method"] == "wilson"
    # both parts are judge runs with the combined figures, as any judge run is stored
    for part, key in summary["runs"].items():
        stored = store_judges.get_run(rb2_db, key)
        assert stored["status"] == "done" and stored["summary"]["rewardbench2"]["part"] == part
        assert stored["summary"]["rewardbench2"]["accuracy"] == summary["accuracy"]
    four_run = store_judges.get_run(rb2_db, summary["runs"]["four-way"])
    assert four_run["summary"]["template"]["digest"] == FOUR_WAY.digest
    assert four_run["summary"]["selection"]["subsets"] == sorted(SUBSET.values())
    ties_run = store_judges.get_run(rb2_db, summary["runs"]["ties-ratings"])
    assert ties_run["mode"] == "scoring" and ties_run["summary"]["template"]["digest"] == \
        TIES_RATING.digest


def test_a_second_run_asks_only_the_failed_request_again(rb2_db) -> None:
    _, items = load_items(rb2_db, "judged")
    with FakeJudgeServer(judge, statuses=[400]) as server:
        first = run_rewardbench2_judge(rb2_db, connection(server), items, dataset="judged")
        before = len(server.chat_requests())
        second = run_rewardbench2_judge(rb2_db, connection(server), items, dataset="judged")
        asked = server.chat_requests()[before:]
    assert len(asked) == 1 and "Question F-0?" in asked[0]["body"]["messages"][1]["content"]
    assert first.summary["runs"] == second.summary["runs"]
    assert second.summary["failed"] == 0
    assert (second.summary["subsets"]["Factuality"]["n"],
            second.summary["subsets"]["Factuality"]["right"]) == (4, 2)
    (row,) = leaderboard(rb2_db, "judged")  # the two runs are one row
    assert row.mode == "RewardBench 2: four-way, Ties by ratings" and row.failed == 0
    assert row.accuracy == second.summary["accuracy"] and row.kind == "judge"
    assert list(row.subsets) == ["Factuality", "Precise IF", "Math", "Safety", "Focus", "Ties"]


def test_the_judge_rewardbench2_verb(rb2_db, tmp_path: Path) -> None:
    path = tmp_path / "nw.db"
    with FakeJudgeServer(judge) as server:
        args = ["judge-rewardbench2", "--dataset", "judged", "--base-url", server.base_url,
                "--model", "judge", "--key-env", "", "--concurrency", "1", "--no-progress",
                "--db", str(path)]
        done = cli_here.run(args)
        as_json = cli_here.run([*args, "--json"])
        requests = len(server.chat_requests())
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("judged: RewardBench 2 by judge: ")
    assert "  four-way: 8 answered, 1 unreadable (counted wrong), 0 skipped, 0 failed" in lines[1]
    assert any(line.startswith("  Factuality (four-way): 50.0 % (2/4 instances), 95 % Wilson")
               for line in lines)
    assert any(line.startswith("  Ties (Ties rule, ratings): ") for line in lines)
    assert "with the official script's 0.25 for an unreadable four-way answer" in done.stdout
    assert requests == 8 + 13  # the second call came from the cache
    result = json.loads(as_json.stdout)
    assert result["subsets"]["Ties"]["accuracy"] == pytest.approx(ties_score_by_hand())
    refused = cli_here.run(["judge-rewardbench2", "--dataset", "nope", "--base-url",
                            "http://127.0.0.1:9/v1", "--model", "judge", "--key-env", "",
                            "--db", str(path)])
    assert refused.returncode == 1 and "no dataset named 'nope'" in refused.stderr
