"""The ``judge`` job kind, a run's page figures and failures, and judge runs in the
review page's "model disagrees" filter: against a real local HTTP server, through the
real job runner and a real SQLite file."""

from __future__ import annotations

import re

import pytest

import store
from needlework.datasets.transfer import import_bytes
from needlework.jobs.runner import RUNNER
from needlework.judges import results as judge_results
from needlework.judges.connection import Connection
from needlework.judges.job import (
    JudgeJobError,
    judge_options,
    latest_judge_job,
    run_judge_job,
    start_judge_job,
)
from needlework.judges.plan import load_items, select_items
from needlework.review.filters import Filters, apply_filters, disagreements
from needlework.review.lengths import ItemFacts
from store import judges as store_judges
from store.review import item_scores_map, scored_runs
from tests.conftest import jsonl
from tests.judges_fixtures import FakeJudgeServer, last_user_text

# a response as the default (Long-form RewardBench's) prompt shows it, or the project's
BLOCK = re.compile(r"\[(?:Response |The Start of Assistant )([A-Z])(?:'s Answer)?\]\n(.*?)\n"
                   r"\[(?:End of Response |The End of Assistant )\1(?:'s Answer)?\]", re.S)


def lfrb_records() -> list[dict]:
    """Six best-of-four items in three subsets; item q1's chosen says 'tricky', which the
    test judge below gets wrong (it names the first rejected response instead)."""
    return [
        {"id": f"q{k}", "subset": ("QA", "Chat", "Writing")[k % 3], "prompt": f"Question {k}?",
         "chosen": [f"good answer {k}" + (" tricky" if k == 1 else "")],
         "rejected": [f"bad answer {k} one", f"bad answer {k} two", f"bad answer {k} three"]}
        for k in range(6)
    ]


def judge(body: dict) -> str:
    """Names the response holding 'good' ('bad ... one' when the good one is tricky);
    says nothing usable for 'Question 4'."""
    text = last_user_text(body)
    if "Question 4?" in text:
        return "I cannot decide."
    blocks = BLOCK.findall(text)
    tricky = any("tricky" in t for _, t in blocks)
    for label, t in blocks:
        if (tricky and t.endswith("one")) or (not tricky and "good" in t):
            return f"Verdict: [[{label}]]"
    return "[[A]]"


@pytest.fixture
def db_path(tmp_path):
    path = tmp_path / "judge.db"
    db = store.connect(path)
    import_bytes(db, jsonl(lfrb_records()), "prefs.jsonl", dataset="prefs", format="lfrb")
    db.conn.close()
    return path


def run_job(db_path, server, **options) -> dict:
    db = store.connect(db_path)
    job_id = RUNNER.submit(db, "judge", "prefs", "judge",
                           judge_options(**{"mode": "selection", **options}))
    row = run_judge_job(db_path, job_id, Connection(server.base_url, "judge", key_env=None))
    db.conn.close()
    return row


def test_judge_job_runs_the_dataset_and_records_the_run(db_path) -> None:
    with FakeJudgeServer(judge) as server:
        row = run_job(db_path, server, seed=3)
    assert row["status"] == "done", row
    result = row["result"]
    assert result["items"] == 6 and result["trials"] == 6
    assert result["invalid"] == 1 and result["accuracy"] == pytest.approx(4 / 6)
    db = store.connect(db_path)
    run = store_judges.get_run(db, result["run_key"])
    assert run["status"] == "done" and run["summary"]["seed"] == 3
    rows = judge_results.subset_rows(run["summary"])
    by = {r["subset"]: r for r in rows}
    assert by["Chat"]["accuracy"] == 0.0 and by["Chat"]["invalid rate"] == 0.5  # q1 wrong, q4 invalid
    assert by["Writing"]["accuracy"] == 1.0 and by["QA"]["accuracy"] == 1.0
    assert by["QA"]["invalid rate"] == 0.0 and by["Chat"]["trials"] == 2
    assert by["overall"]["accuracy"] == pytest.approx(4 / 6) and by["overall"]["invalid"] == 1


def test_a_selection_of_the_items_is_a_run_of_its_own(db_path) -> None:
    with FakeJudgeServer(judge) as server:
        part = run_job(db_path, server, per_subset=1)
        whole = run_job(db_path, server)
        sent = len(server.chat_requests())
    assert part["result"]["items"] == 3 and part["result"]["selection"] == {"per_subset": 1}
    assert whole["result"]["items"] == 6 and whole["result"]["run_key"] != part["result"]["run_key"]
    assert whole["result"]["cached"] == 3 and sent == 6  # the part's answers were reused
    db = store.connect(db_path)
    _, items = load_items(db, "prefs")
    assert [k for k, _ in select_items(items, subsets=["Chat"], per_subset=1)] == ["q1"]
    with pytest.raises(ValueError):
        select_items(items, per_subset=0)
    with pytest.raises(JudgeJobError):
        judge_options(mode="ranking")


def test_failures_say_what_the_judge_named_in_the_readers_numbering(db_path) -> None:
    with FakeJudgeServer(judge) as server:
        row = run_job(db_path, server)
    db = store.connect(db_path)
    rows = store_judges.run_results(db, row["result"]["run_key"])
    fails = judge_results.failures(rows)
    assert {f.item for f in fails} == {"q1", "q4"}
    q1 = next(f for f in fails if f.item == "q1")
    assert q1.picked == "rejected[0]" and q1.pair == (0, 0)
    assert q1.verdict == "named rejected 1 over chosen 1"
    assert q1.comparison == "chosen 1 vs rejected 1"
    assert q1.raw.startswith("Verdict: [[")  # the judge's own words
    assert "= chosen 1" in q1.order_words
    q4 = next(f for f in fails if f.item == "q4")
    assert q4.picked is None and q4.verdict.startswith("invalid answer")
    assert q4.raw == "I cannot decide."
    csv_text = judge_results.trials_csv(rows)
    assert "I cannot decide." in csv_text and csv_text.count("\n") == 7


def _facts(key: str, position: int) -> ItemFacts:
    return ItemFacts(key=key, position=position, subset="", source_subset="", chosen_tokens=(5,),
                     rejected_tokens=(5, 5, 5))


def test_judge_runs_feed_the_review_filter(db_path) -> None:
    with FakeJudgeServer(judge) as server:
        row = run_job(db_path, server)
    db = store.connect(db_path)
    runs = scored_runs(db, "prefs")
    judged = [r for r in runs if r["fingerprint"].startswith("judge:")]
    assert len(judged) == 1 and judged[0]["items"] == 6
    assert judged[0]["model"] == "judge judge" and judged[0]["variant"] == "selection, shuffle"
    scores = item_scores_map(db, "prefs", judged[0]["fingerprint"], judged[0]["variant"])
    assert scores["q0"]["chosen_scores"] == [1.0] and scores["q0"]["disagree"] == []
    assert scores["q1"]["rejected_scores"][0] == 1.0 and scores["q1"]["disagree"] == [[0, 0]]
    assert scores["q4"]["disagree"] == [[0, 0], [0, 1], [0, 2]]  # invalid: every pair wrong
    assert disagreements(scores["q1"], [(0, 0), (0, 1), (0, 2)]) == [(0, 0)]
    facts = [_facts(f"q{k}", k) for k in range(6)]
    shown = apply_filters(facts, Filters(model_disagrees=True), {}, scores)
    assert [f.key for f in shown] == ["q1", "q4"]
    assert row["result"]["run_key"] in judged[0]["fingerprint"]


def test_scoring_runs_in_the_review_shape(db_path) -> None:
    def rate(body: dict) -> str:
        text = last_user_text(body)
        if "tricky" in text:
            return "Rating: 5"
        if "bad answer 1 two" in text:
            return "Rating: 5"  # a tie with the chosen: wrong
        if "bad answer 2 one" in text:
            return "no idea"
        return "Rating: 8" if "good" in text else "Rating: 2"

    with FakeJudgeServer(rate) as server:
        row = run_job(db_path, server, mode="scoring")
    assert row["status"] == "done", row["error"]
    db = store.connect(db_path)
    fp = "judge:" + row["result"]["run_key"]
    scores = item_scores_map(db, "prefs", fp, "scoring")
    assert scores["q1"]["chosen_scores"] == [5.0] and scores["q1"]["disagree"] == [[0, 1]]
    assert scores["q2"]["rejected_scores"][0] is None and scores["q2"]["disagree"] == [[0, 0]]
    assert scores["q0"]["disagree"] == []
    rows = store_judges.run_results(db, row["result"]["run_key"])
    wrong = judge_results.scoring_failures(rows)
    assert {w["item"] for w in wrong} == {"q1", "q2"}
    q1 = next(w for w in wrong if w["item"] == "q1")
    assert q1["pair"] == (0, 1) and q1["answers"]["rejected[1]"]["raw"] == "Rating: 5"
    outcomes = judge_results.item_outcomes("scoring", [r["entry"] for r in rows])
    assert outcomes["q1"] == 0.0 and outcomes["q0"] == 1.0


def test_the_job_is_started_in_the_background_and_the_key_is_stored_nowhere(
        db_path, tmp_path, monkeypatch) -> None:
    secret = "sk-test-SECRET123"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    db = store.connect(db_path)
    with FakeJudgeServer(judge, require_key=secret) as server:
        connection = Connection(server.base_url, "judge")  # the key from $OPENAI_API_KEY
        job_id = start_judge_job(db, db_path, connection, "prefs", mode="selection",
                                 order="rotations")
        RUNNER.join(job_id, 60)
        assert all(r["headers"].get("authorization") == f"Bearer {secret}"
                   for r in server.chat_requests())
    job = latest_judge_job(db, "prefs")
    assert job["id"] == job_id and job["display_status"] == "done", job
    assert job["options"]["connection"]["key_env"] == "OPENAI_API_KEY"
    assert job["model"] == "judge"
    run = store_judges.get_run(db, job["result"]["run_key"])
    assert run["summary"]["position_bias"]["4"]["groups"] == 6
    rows = store_judges.run_results(db, run["run_key"])
    exports = judge_results.trials_csv(rows) + judge_results.jsonl(r["entry"] for r in rows)
    db.conn.close()
    for path in tmp_path.iterdir():
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert secret not in exports


def test_a_job_without_its_connection_fails_in_one_line(db_path) -> None:
    db = store.connect(db_path)
    job_id = RUNNER.submit(db, "judge", "prefs", "judge", judge_options(mode="selection"))
    row = RUNNER.run(db_path, job_id, inputs={})
    assert row["status"] == "failed" and "no connection" in row["error"]
