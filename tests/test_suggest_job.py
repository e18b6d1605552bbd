"""Suggestions a model makes (issue 30, point 2): the label and dimension prompts and
their parsers, the rules judge's answers to them, the ``suggest`` job against real HTTP
judges (resume, cancel, a judge down, unreadable answers, bounded pages), suggested
verdicts from scoring runs, the CLI and the offline demo seed."""

from __future__ import annotations

import json
import re

import pytest

from needlework.datasets.transfer import import_bytes
from needlework.grounding.item import Passage, passages
from needlework.grounding.labels import LABELS
from needlework.jobs.runner import RUNNER
from needlework.rag import rules_judge
from needlework.rag.rules_server import start_rules_server
from needlework.seeding.demo import seed_demo
from needlework.suggest import job as suggest_job
from needlework.suggest.job import DIMS, SuggestSpec, run_suggest_here
from needlework.suggest.job import LABELS as ASK_LABELS
from needlework.suggest.prompts import (
    dimension_messages,
    label_messages,
    parse_dimensions,
    parse_label,
)
from needlework.suggest.verdicts import margin_rows, verdict_of_margin
from needlework.teams import accounts
from needlework.teams.permissions import PermissionDenied
from store import connect
from store.datasets import iter_items
from store.suggestions import dataset_suggestions, suggestion_sources
from tests.cli_here import run
from tests.conftest import garage_records, jsonl
from tests.judges_fixtures import FakeJudgeServer, last_user_text

P = Passage(2, "Tickets cost $5 for adults at the Lakeside Museum.", "web", "2024-11-11",
            "2 months, 3 days", "")


@pytest.mark.parametrize(("text", "value"), [
    ('The passage is current.\n{"label": "ANSWER-THE-QUESTION"}', "ANSWER-THE-QUESTION"),
    ('{"label": "irrelevant"}', "irrelevant"),
    ('{"label": "IRRELEVANT"}', "irrelevant"),
    ("```json\n{\"label\": \"OUTDATED\"}\n```", "OUTDATED"),
    ("Dated 2019: this is OUTDATED", "OUTDATED"),
    ("Reasoning about UNKNOWN ages...\nLabel: RELATED-INFORMATION", "RELATED-INFORMATION"),
])
def test_parse_label_reads_json_first_then_a_label_named_alone(text, value):
    parsed = parse_label(text)
    assert parsed.valid and parsed.value == value


@pytest.mark.parametrize("text", ['{"label": "relevant"}', "OUTDATED or UNKNOWN", "no idea", ""])
def test_parse_label_refuses_what_is_not_one_label(text):
    assert not parse_label(text).valid


def test_label_prompt_holds_the_question_date_the_passage_and_its_date_as_text():
    text = label_messages("What does a <b>ticket</b> cost?", "2025-01-14", P)[0]["content"]
    assert "[User question]\nWhat does a <b>ticket</b> cost?\n(asked on 2025-01-14)" in text
    assert "[Passage]\n" + P.text + "\n[End of passage]" in text
    assert "(passage 2, dated 2024-11-11, 2 months, 3 days old when the question was asked)" in text
    for label in ("IRRELEVANT", "ANSWER-THE-QUESTION", "RELATED-INFORMATION", "OUTDATED", "UNKNOWN"):
        assert f"{label}:" in text


def test_parse_dimensions_keeps_allowed_values_only():
    parsed = parse_dimensions('{"question_valid": "yes", "question_complexity": "Multi-hop", '
                              '"question_popularity": "Viral", "question_type": ""}')
    assert parsed.value == {"question_valid": "YES", "question_complexity": "Multi-hop"}
    assert not parse_dimensions('{"question_popularity": "Viral"}').valid


def test_rules_judge_labels_by_overlap_and_date_as_its_docstring_says():
    def label(passage: Passage, asked: str = "2025-01-14") -> str:
        answer = rules_judge.reply(label_messages("What does a ticket cost at the Lakeside Museum?",
                                                  asked, passage))
        return parse_label(answer).value

    assert label(P) == "ANSWER-THE-QUESTION"  # every content word, dated
    assert label(Passage(1, "Bananas are yellow.", "web", "2024-01-01", "1 year", "")) == "irrelevant"
    assert label(Passage(1, "The museum opens at 9.", "web", "2024-01-01", "1 year", "")) \
        == "RELATED-INFORMATION"  # 1 of the 4 content words (ticket, cost, lakeside, museum)
    assert label(Passage(1, "A ticket at the Lakeside Museum costs $5.", "web", "", "", "unknown")) \
        == "UNKNOWN"
    assert label(Passage(1, "A ticket at the Lakeside Museum costs $5.", "web", "2019-05-01",
                         "5 years", "")) == "OUTDATED"
    dims = parse_dimensions(rules_judge.reply(dimension_messages(
        "Compare the latest ticket prices versus last year", "2025-01-14"))).value
    assert dims["question_complexity"] == "Comparison"
    assert dims["question_type"] == "FAST-CHANGING"
    assert "question_popularity" not in dims


@pytest.fixture
def grounding(db_path):
    db = connect(db_path)
    records = garage_records(5)  # 3 passages each
    for n, r in enumerate(records, start=1):  # five different questions: five sets of prompts
        r["question"] = f"Question {n}: {r['question']}"
    import_bytes(db, jsonl(records), "g.jsonl", dataset="g")
    return db


def _labels(db, dataset="g", source=None):
    return {(r["item_key"], r["field"]): r for r in dataset_suggestions(db, dataset, source)
            if r["field"].startswith("label:")}


def test_job_with_the_rules_judge_fills_every_passage_then_resumes_with_no_request(db_path):
    db = connect(db_path)
    seed_demo(db)
    expected = sum(len(passages(it["record"])) for it in iter_items(db, "demo-grounding"))
    with start_rules_server() as rules:
        spec = SuggestSpec("demo-grounding", rules.connection(), (ASK_LABELS, DIMS))
        row = run_suggest_here(db, db_path, spec)
        assert row["status"] == "done", row
        found = _labels(db, "demo-grounding")
        assert len(found) == expected
        assert {r["value"] for r in found.values()} <= set(LABELS)
        assert {r["source"] for r in found.values()} == {"judge:needlework-rules"}
        detail = next(iter(found.values()))["detail"]
        assert detail["prompt"] == "needlework-suggest-2" and detail["model"] == "needlework-rules"
        assert detail["job"] == row["id"]
        dims = [r for r in dataset_suggestions(db, "demo-grounding") if r["field"].startswith("dim:")]
        assert {r["item_key"] for r in dims} == {it["key"] for it in iter_items(db, "demo-grounding")}
        assert row["result"]["sent"] == expected + 16 and row["result"]["invalid"] == 0
        again = run_suggest_here(db, db_path, spec)
        assert again["result"]["skipped"] == 16 and again["result"]["sent"] == 0
        replaced = run_suggest_here(db, db_path, SuggestSpec("demo-grounding", rules.connection(),
                                                             (ASK_LABELS,), replace=True))
        assert replaced["result"]["sent"] == 0 and replaced["result"]["cached"] == expected
    # suggestions never count as annotations
    assert db.execute("select count(*) from annotations").fetchone()[0] == 0


def test_unreadable_answers_store_nothing_for_their_field_and_are_counted(grounding, db_path):
    def answer(body):
        text = last_user_text(body)
        return "I am not sure." if "(passage 2," in text else '{"label": "OUTDATED"}'

    with FakeJudgeServer(answer) as judge:
        spec = SuggestSpec("g", _conn(judge))
        row = run_suggest_here(grounding, db_path, spec)
    assert row["status"] == "done"
    assert row["result"]["invalid"] == 5 and row["result"]["suggestions"] == 10
    assert "label:2" in row["result"]["example_invalid"]
    assert {f for _, f in _labels(grounding)} == {"label:1", "label:3"}
    assert {r["source"] for r in _labels(grounding).values()} == {"judge:judge"}


def _conn(judge, **kw):
    from needlework.judges.connection import Connection  # noqa: PLC0415

    return Connection(judge.base_url, "judge", key_env=None, max_retries=0, timeout=5, **kw)


def test_a_judge_that_is_down_fails_the_job_in_one_line_and_keeps_earlier_pages(grounding, db_path,
                                                                                 monkeypatch):
    monkeypatch.setattr(suggest_job, "PAGE", 2)
    calls = []

    def answer(body):
        calls.append(1)
        return '{"label": "RELATED-INFORMATION"}'

    with FakeJudgeServer(answer, statuses=[200] * 6 + [500] * 50) as judge:
        row = run_suggest_here(grounding, db_path, SuggestSpec("g", _conn(judge, concurrency=1)))
    assert row["status"] == "failed"
    assert "\n" not in row["error"] and "500" in row["error"]
    # the first page (2 questions, 6 passages) was committed before the judge failed
    assert len(_labels(grounding)) == 6


def test_cancel_stops_between_pages_and_a_new_job_resumes(grounding, db_path, monkeypatch):
    monkeypatch.setattr(suggest_job, "PAGE", 1)
    job_ids = []

    def answer(body):
        if len(seen_calls) == 3:  # the first question answered: ask the job to stop
            RUNNER.cancel(connect(db_path), job_ids[0])
        seen_calls.append(1)
        return '{"label": "UNKNOWN"}'

    seen_calls: list[int] = []
    with FakeJudgeServer(answer) as judge:
        spec = SuggestSpec("g", _conn(judge, concurrency=1))
        job_ids.append(RUNNER.submit(grounding, "suggest", "g", "judge",
                                     suggest_job.job_options(spec)))
        row = RUNNER.run(db_path, job_ids[0], inputs={"spec": spec})
        assert row["status"] == "cancelled", row
        stored = len(_labels(grounding))
        assert 3 <= stored < 15
        assert row["result"]["questions"] * 3 == stored
        sent_before = len(seen_calls)
        again = run_suggest_here(grounding, db_path, spec)
    assert again["status"] == "done"
    assert len(_labels(grounding)) == 15
    assert again["result"]["skipped"] == stored // 3
    # no passage asked twice: the answers of the stopped job were cached or stored
    assert len(seen_calls) - sent_before <= 15 - stored + 3


def test_only_a_lead_starts_a_suggestion_job_in_team_mode(grounding, db_path):
    accounts.add_user(grounding, "ann", "annotator", password="a-long-password-1")
    accounts.add_user(grounding, "rev", "reviewer", password="a-long-password-2")
    ann = accounts.get_user(grounding, "ann")
    rev = accounts.get_user(grounding, "rev")
    with start_rules_server() as rules:
        for who in (ann, rev):
            with pytest.raises(PermissionDenied, match="suggestions"):
                suggest_job.start_suggest_job(grounding, db_path,
                                              SuggestSpec("g", rules.connection()), by=who)
    assert not list(dataset_suggestions(grounding, "g"))


def test_a_preference_dataset_is_refused_with_a_sentence(db_path):
    db = connect(db_path)
    seed_demo(db)
    with start_rules_server() as rules, pytest.raises(suggest_job.SuggestError, match="preference"):
        suggest_job.start_suggest_job(db, db_path, SuggestSpec("demo-preference", rules.connection()))


def test_margin_rows_suggest_agree_flip_and_tie_with_the_margin_as_score():
    scores = {"a": {"chosen_scores": [2.0, 0.5], "rejected_scores": [1.0, None]},
              "b": {"chosen_scores": [1.0], "rejected_scores": [1.0]}}
    rows = {(r["item_key"], r["field"]): (r["value"], r["score"])
            for r in margin_rows("d", scores, "reward:m", {"model": "m"})}
    assert rows == {("a", "verdict:0:0"): ("agree", 1.0), ("a", "verdict:1:0"): ("flip", -0.5),
                    ("b", "verdict:0:0"): ("tie", 0.0)}
    assert [verdict_of_margin(x) for x in (0.1, -0.1, 0.0)] == ["agree", "flip", "tie"]


@pytest.mark.slow
def test_cli_ask_with_the_rules_judge_and_from_scores_without_a_run(db_path):
    db = connect(db_path)
    seed_demo(db)
    out = run(["suggestions", "ask", "--dataset", "demo-grounding", "--rules-judge", "--dims",
               "--db", str(db_path)])
    assert out.returncode == 0, out.stderr
    assert re.search(r"^\d+ suggestion\(s\) from judge:needlework-rules for 16 question\(s\)",
                     out.stdout)
    listed = json.loads(run(["suggestions", "list", "--dataset", "demo-grounding", "--json",
                             "--db", str(db_path)]).stdout)
    assert {r["source"] for r in listed} == {"judge:needlework-rules"} and listed
    bad = run(["suggestions", "ask", "--dataset", "demo-grounding", "--db", str(db_path)])
    assert bad.returncode == 2 and "--rules-judge" in bad.stderr
    none = run(["suggestions", "from-scores", "--dataset", "demo-preference", "--db", str(db_path)])
    assert none.returncode == 1 and "no scoring run" in none.stderr
    assert not any(s["source"].startswith("reward:")
                   for s in suggestion_sources(db, "demo-preference"))


@pytest.mark.slow
def test_demo_seed_suggests_every_passage_and_every_scored_comparison_once(db_path, demo_models_dir):
    from needlework.suggest.demo import seed_demo_suggestions  # noqa: PLC0415
    from store.review import item_scores_map, scored_runs  # noqa: PLC0415

    db = connect(db_path)
    seed_demo(db)
    lines = seed_demo_suggestions(db, db_path, demo_models_dir / "demo-model")
    assert lines[0].startswith("demo-grounding: done, ") and "rules judge" in lines[0]
    passages_total = sum(len(passages(it["record"])) for it in iter_items(db, "demo-grounding"))
    assert len(_labels(db, "demo-grounding")) == passages_total
    run = scored_runs(db, "demo-preference")[0]
    scores = item_scores_map(db, "demo-preference", run["fingerprint"], run["variant"])
    verdicts = {(r["item_key"], r["field"]): r for r in dataset_suggestions(db, "demo-preference")}
    expected = {(key, f"verdict:{i}:{j}"): c - r for key, row in scores.items()
                for i, c in enumerate(row["chosen_scores"]) for j, r in enumerate(row["rejected_scores"])}
    assert set(verdicts) == set(expected)
    for k, margin in expected.items():
        assert verdicts[k]["score"] == pytest.approx(margin, abs=1e-6)
        assert verdicts[k]["value"] == ("agree" if margin > 0 else "flip" if margin < 0 else "tie")
        assert verdicts[k]["source"] == "reward:demo-model"  # the folder's name, no path
    again = seed_demo_suggestions(db, db_path, demo_models_dir / "demo-model")
    assert again == ["demo-grounding: suggestions already there",
                     "demo-preference: suggestions already there"]
