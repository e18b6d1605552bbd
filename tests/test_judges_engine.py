"""The judge engine against a real local HTTP server, with the real openai client."""

from __future__ import annotations

import re

import pytest

from needlework.cli.metrics import read_scores
from needlework.figures import metrics
from needlework.figures.stats import bootstrap_mean
from needlework.figures.stats_text import percent_range
from needlework.formats.preference import Preference
from needlework.judges.connection import Connection
from needlework.judges.engine import run_judge, write_output
from needlework.judges.errors import JudgeCancelled
from needlework.judges.evaluate import item_accuracy, position_bias
from needlework.judges.results import bias_table
from store import connect
from store import judges as store_judges
from tests.judges_fixtures import FakeJudgeServer, last_user_text

# a response as the default (Long-form RewardBench's) prompt shows it, or the project's
BLOCK = re.compile(r"\[(?:Response |The Start of Assistant )([A-Z])(?:'s Answer)?\]\n(.*?)\n"
                   r"\[(?:End of Response |The End of Assistant )\1(?:'s Answer)?\]", re.S)


def pairs(n: int = 3) -> list[tuple[str, Preference]]:
    return [(f"p{k}", Preference(f"p{k}", "safety" if k % 2 else "chat", f"Question {k}?",
                                 [f"A good and kind answer number {k}."],
                                 [f"A rude answer number {k}, you fool."])) for k in range(n)]


def bon_items() -> list[tuple[str, Preference]]:
    return [(f"b{k}", Preference(f"b{k}", "QA", f"Question {k}?", [f"good answer {k}"],
                                 [f"bad answer {k} one", f"bad answer {k} two",
                                  f"bad answer {k} three"])) for k in range(2)]


def picks_good(body: dict) -> str:
    """A judge that reads the responses and names the one containing 'good'."""
    for label, text in BLOCK.findall(last_user_text(body)):
        if "good" in text:
            return f"The kind one wins. [[{label}]]"
    return "[[A]]"


def always_a(body: dict) -> str:
    return "Verdict: [[A]]"


@pytest.fixture
def db():
    database = connect(":memory:")
    yield database
    database.conn.close()


def test_selection_content_judge_is_right_and_consistent(db) -> None:
    with FakeJudgeServer(picks_good) as server:
        run = run_judge(db, Connection(server.base_url, "judge", key_env=None), pairs(),
                        "selection", dataset="t", order="rotations")
    s = run.summary
    assert s["accuracy"] == 1.0 and s["invalid_rate"] == 0.0
    bias = s["position_bias"]["2"]
    assert bias["accuracy_by_position"] == [1.0, 1.0] and bias["spread"] == 0.0
    assert bias["consistency"] == 1.0 and bias["pick_rate"] == [0.5, 0.5]
    assert set(item_accuracy(run.results).values()) == {1.0}


def test_position_bias_of_a_judge_that_always_says_a(db) -> None:
    """Hand-made case: 3 pairs, both orders, the judge always names A."""
    with FakeJudgeServer(always_a) as server:
        run = run_judge(db, Connection(server.base_url, "judge", key_env=None), pairs(),
                        "selection", dataset="t", order="rotations")
    s = run.summary
    assert s["trials"] == 6 and s["accuracy"] == 0.5
    bias = s["position_bias"]["2"]
    assert bias["accuracy_by_position"] == [1.0, 0.0]
    assert bias["spread"] == 1.0
    assert bias["pick_rate"] == [1.0, 0.0]
    assert bias["pick_deviation"] == pytest.approx(0.5)
    assert bias["consistency"] == 0.0
    assert set(item_accuracy(run.results).values()) == {0.5}  # both orders: it cancels


def test_position_bias_by_hand() -> None:
    """Four-way rotations written out: the judge names position 0 three times of four."""
    members = ["chosen[0]", "rejected[0]", "rejected[1]", "rejected[2]"]
    rows = []
    for r in range(4):
        shown = [members[(k - r) % 4] for k in range(4)]
        picked = 0 if r < 3 else shown.index("chosen[0]")
        rows.append({"item_key": "x", "group": 0, "rotation": r, "members": shown,
                     "valid": True, "picked": picked, "skipped": False})
    bias = position_bias(rows)["4"]
    # the chosen is at position r in rotation r: right at 0 (picked 0) and at 3 (picked it)
    assert bias["accuracy_by_position"] == [1.0, 0.0, 0.0, 1.0]
    assert bias["pick_rate"] == [0.75, 0.0, 0.0, 0.25]
    assert bias["pick_deviation"] == pytest.approx(0.5 * (0.5 + 0.25 + 0.25 + 0.0))
    assert bias["consistency"] == 0.0
    assert bias["trials_by_position"] == [1, 1, 1, 1]
    assert [i["estimate"] for i in bias["interval_by_position"]] == [1.0, 0.0, 0.0, 1.0]
    assert position_bias([{**rows[0], "rotation": None}]) is None


def test_position_bias_intervals_are_the_bootstrap_of_each_positions_trials() -> None:
    """Ten two-way items: the judge is right on 7 of 10 with the chosen shown as A and on
    4 of 10 shown as B; each position's interval is the bootstrap over its own trials."""
    rows = []
    for item in range(10):
        for r in range(2):
            shown = ["chosen[0]", "rejected[0]"] if r == 0 else ["rejected[0]", "chosen[0]"]
            right = item < 7 if r == 0 else item < 4
            rows.append({"item_key": f"q{item}", "group": 0, "rotation": r, "members": shown,
                         "valid": True, "picked": shown.index("chosen[0]") if right
                         else 1 - shown.index("chosen[0]"), "skipped": False})
    bias = position_bias(rows)["2"]
    assert bias["accuracy_by_position"] == [0.7, 0.4] and bias["trials_by_position"] == [10, 10]
    first, second = bias["interval_by_position"]
    assert first == bootstrap_mean([1.0] * 7 + [0.0] * 3, unit="trial").as_dict()
    assert second == bootstrap_mean([1.0] * 4 + [0.0] * 6, unit="trial").as_dict()
    assert first["low"] < 0.7 < first["high"] and first["n"] == 10
    row = bias_table({"position_bias": {"2": bias}})[0]
    assert row["accuracy, chosen shown as A"] == f"70.0% (10 trials, CI {percent_range(first)})"
    assert row["accuracy, chosen shown as B"] == f"40.0% (10 trials, CI {percent_range(second)})"


def test_best_of_four_shuffle_is_seeded_and_recorded(db) -> None:
    with FakeJudgeServer(picks_good) as server:
        conn = Connection(server.base_url, "judge", key_env=None)
        first = run_judge(db, conn, bon_items(), "selection", dataset="t", seed=7)
        orders = [r["members"] for r in first.results]
        again = run_judge(db, conn, bon_items(), "selection", dataset="t", seed=7)
        other = run_judge(db, conn, bon_items(), "selection", dataset="t", seed=8)
    assert [r["members"] for r in again.results] == orders
    assert first.summary["seed"] == 7 and first.summary["accuracy"] == 1.0
    assert again.summary["requests"] == 0 and again.summary["cached"] == 2
    assert [r["members"] for r in other.results] != orders or other.summary["requests"] == 0


def test_invalid_selection_counts_wrong_and_in_the_rate(db) -> None:
    def half_invalid(body: dict) -> str:
        return "I cannot decide." if "number 1" in last_user_text(body) else picks_good(body)

    with FakeJudgeServer(half_invalid) as server:
        run = run_judge(db, Connection(server.base_url, "judge", key_env=None), pairs(3),
                        "selection", dataset="t")
    s = run.summary
    assert s["invalid"] == 1 and s["invalid_rate"] == pytest.approx(1 / 3)
    assert s["accuracy"] == pytest.approx(2 / 3)
    assert s["subsets"]["safety"]["invalid_rate"] == 1.0  # p1 is the only safety item
    assert s["subsets"]["safety"]["accuracy"] == 0.0
    bad = next(r for r in run.results if not r["valid"])
    assert bad["reason"] == "no choice found" and bad["correct"] is False
    rows = store_judges.run_results(db, run.run_key, bad["item_key"])
    assert rows[0]["raw"] == "I cannot decide."  # the judge's own words are kept


def test_scoring_ties_are_wrong(db) -> None:
    with FakeJudgeServer(lambda body: "Fine.\nRating: 5") as server:
        run = run_judge(db, Connection(server.base_url, "judge", key_env=None), pairs(),
                        "scoring", dataset="t")
    assert run.summary["accuracy"] == 0.0
    assert run.summary["metrics"]["pairwise"]["accuracy"] == 0.0
    assert run.summary["invalid"] == 0


def test_scoring_invalid_counts_wrong(db) -> None:
    def judge(body: dict) -> str:
        text = last_user_text(body)
        if "rude" in text:
            return "Rating: 2" if "number 0" in text else "no idea"
        return "Rating: 9"

    with FakeJudgeServer(judge) as server:
        run = run_judge(db, Connection(server.base_url, "judge", key_env=None), pairs(),
                        "scoring", dataset="t")
    s = run.summary
    # p0: 9 vs 2, right; p1, p2: the rejected answer is invalid, so wrong although 9 > nothing
    assert s["accuracy"] == pytest.approx(1 / 3)
    assert s["metrics"]["pairwise"]["accuracy"] == pytest.approx(1 / 3)
    assert s["invalid"] == 2 and s["invalid_rate"] == pytest.approx(2 / 6)


@pytest.mark.slow
def test_rerun_is_served_from_the_cache(db, tmp_path) -> None:
    with FakeJudgeServer(picks_good) as server:
        conn = Connection(server.base_url, "judge", key_env=None)
        first = run_judge(db, conn, pairs(), "selection", dataset="t", order="rotations")
        sent = len(server.chat_requests())
        second = run_judge(db, conn, pairs(), "selection", dataset="t", order="rotations")
        assert len(server.chat_requests()) == sent == 6
    assert first.summary["requests"] == 6 and second.summary["requests"] == 0
    assert second.summary["accuracy"] == first.summary["accuracy"]
    assert store_judges.get_run(db, first.run_key)["status"] == "done"
    # a change of a generation parameter is a new cache key
    with FakeJudgeServer(picks_good) as server:
        conn = Connection(server.base_url, "judge", key_env=None, temperature=0.5)
        third = run_judge(db, conn, pairs(), "selection", dataset="t", order="rotations")
    assert third.summary["requests"] == 6


def test_requests_are_bounded_by_the_concurrency(db) -> None:
    with FakeJudgeServer(picks_good, delay=0.15) as server:
        conn = Connection(server.base_url, "judge", key_env=None, concurrency=3)
        run_judge(db, conn, pairs(6), "selection", dataset="t", order="rotations")
        assert 2 <= server.max_in_flight <= 3


@pytest.mark.slow
def test_cancel_stops_and_a_rerun_resumes(db) -> None:
    seen: list[int] = []

    def stop_after_three() -> bool:
        return len(seen) >= 3

    with FakeJudgeServer(picks_good, delay=0.05) as server:
        conn = Connection(server.base_url, "judge", key_env=None, concurrency=1)
        with pytest.raises(JudgeCancelled):
            run_judge(db, conn, pairs(6), "selection", dataset="t", order="rotations",
                      progress=lambda done, total: seen.append(done) if done else None,
                      should_stop=stop_after_three)
        cached = store_judges.count_calls(db)
        assert 3 <= cached < 12
        runs = store_judges.list_runs(db, "t")
        assert runs[0]["status"] == "cancelled"
        before = len(server.chat_requests())
        run = run_judge(db, conn, pairs(6), "selection", dataset="t", order="rotations")
        assert len(server.chat_requests()) - before == 12 - cached
    assert run.summary["requests"] == 12 - cached and run.summary["accuracy"] == 1.0


def test_context_policy_skip_and_keep_are_reported(db) -> None:
    long_items = [("L", Preference("L", "long", "Q?", ["good " + "word " * 400],
                                   ["bad " + "word " * 400]))]
    with FakeJudgeServer(picks_good) as server:
        conn = Connection(server.base_url, "judge", key_env=None, context_window=600,
                          max_tokens=64)
        skipped = run_judge(db, conn, long_items, "selection", dataset="t", context_policy="skip")
        assert skipped.summary["skipped"] == 1 and skipped.summary["requests"] == 0
        assert skipped.summary["too_long"][0]["skipped"] is True
        assert skipped.results[0]["reason"].endswith("skipped")
        kept = run_judge(db, conn, long_items, "selection", dataset="t",
                         context_policy="keep-start")
        sent = last_user_text(server.chat_requests()[-1]["body"])
    assert kept.summary["skipped"] == 0 and kept.summary["cut"] == 1
    cut = kept.results[0]["fit"]["cut"]
    assert len(cut) == 2 and all(c["kept"] < c["tokens"] for c in cut)
    assert kept.results[0]["fit"]["prompt_tokens"] <= 600 - 64
    assert "tokens cut ...]" in sent and "good word" in sent  # the start is kept
    assert kept.summary["accuracy"] == 1.0


def test_output_file_gives_the_same_accuracy_through_metrics(db, tmp_path) -> None:
    def judge(body: dict) -> str:
        return "[[A]]" if "good answer 0" in last_user_text(body) else "[[B]]"

    with FakeJudgeServer(judge) as server:
        conn = Connection(server.base_url, "judge", key_env=None)
        run = run_judge(db, conn, bon_items() + pairs(), "selection", dataset="t",
                        order="rotations")
        scored = run_judge(db, conn, pairs(), "scoring", dataset="t")
    out = tmp_path / "sel.jsonl"
    write_output(out, run)
    lines = read_scores(out)
    assert len(lines) == run.summary["trials"]
    assert {"selected_idx", "chosen_idx", "chosen_scores", "rejected_scores"} <= set(lines[0])
    assert metrics.best_of_n(lines)["accuracy"] == pytest.approx(run.summary["accuracy"])
    assert 0 < run.summary["accuracy"] < 1
    write_output(tmp_path / "score.jsonl", scored)
    lines = read_scores(tmp_path / "score.jsonl")
    assert len(lines) == 3 and all(len(x["rejected_scores"]) == 1 for x in lines)


def test_rmbench_selection_is_judged_pair_by_pair(db) -> None:
    items = [("r0", Preference("r0", "alpacaeval", "Q?", ["good a", "good b", "good c"],
                               ["bad a", "bad b", "bad c"]))]
    with FakeJudgeServer(always_a) as server:
        run = run_judge(db, Connection(server.base_url, "judge", key_env=None), items,
                        "selection", dataset="t", format_name="rmbench", order="rotations")
    assert run.summary["trials"] == 18  # 3 x 3 pairs, both orders
    figures = run.summary["metrics"]["rmbench"]["domains"]["chat"]
    assert figures["matrix"] == [[0.5] * 3] * 3 and figures["hard"] == 0.5
    assert run.summary["metrics"]["rmbench"]["accuracy"] == 0.5
