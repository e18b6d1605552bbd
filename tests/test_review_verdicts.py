"""Verdict values, per-annotator summaries, and the review SQL (store/review.py)."""

from __future__ import annotations

import pytest

from needlework.verdicts import (
    REASONS,
    VERDICTS,
    field_name,
    make_value,
    parse_field,
    summarize,
    verdict_of,
)
from store.annotations import history, set_annotation
from store.review import item_scores_map, item_verdicts, my_verdicts, scored_runs, verdict_rows


def test_verdict_names_reasons_and_shortcuts_are_distinct():
    assert list(VERDICTS) == ["agree", "flip", "tie", "both-bad", "skip"]
    keys = [k for _, k in VERDICTS.values()] + list(REASONS.values())
    assert len(keys) == len(set(keys))
    assert "C" not in keys and "R" not in keys  # reserved by Streamlit


def test_make_value_checks_and_orders_reasons():
    value = make_value("flip", ["verbose", "factual error"], "  wrong year  ")
    assert value == {"verdict": "flip", "reasons": ["factual error", "verbose"], "note": "wrong year"}
    with pytest.raises(ValueError):
        make_value("maybe")
    with pytest.raises(ValueError):
        make_value("agree", ["rude"])
    assert verdict_of(value) == "flip" and verdict_of(None) is None and verdict_of({"x": 1}) is None


def test_field_names_round_trip():
    assert field_name(2, 1) == "verdict:2:1"
    assert parse_field("verdict:2:1") == (2, 1)
    assert parse_field("label:3") is None and parse_field("verdict:x:1") is None


def test_summary_agreement_is_agree_among_agree_and_flip():
    rows = [{"annotator": "ana", "value": {"verdict": v}, "updated_at": f"2026-01-0{k + 1}"}
            for k, v in enumerate(["agree", "agree", "agree", "flip", "tie", "skip"])]
    rows.append({"annotator": "bo", "value": {"verdict": "tie"}, "updated_at": "x"})
    ana, bo = summarize(rows)
    assert ana.total == 6 and ana.agreement == 0.75 and ana.last_at == "2026-01-06"
    assert bo.agreement is None


def test_store_reads_verdicts_with_who_and_when(db):
    set_annotation(db, "ds", "k1", "ana", "verdict:0:1", make_value("flip", ["unsafe"], "n"))
    set_annotation(db, "ds", "k1", "bo", "verdict:0:1", make_value("agree"))
    set_annotation(db, "ds", "k2", "ana", "verdict:0:0", make_value("skip"))
    set_annotation(db, "ds", "k1", "ana", "label:1", "OUTDATED")  # not a verdict
    rows = verdict_rows(db, "ds")
    assert {(r["annotator"], r["item_key"], r["i"], r["j"], r["verdict"]) for r in rows} == {
        ("ana", "k1", 0, 1, "flip"), ("bo", "k1", 0, 1, "agree"), ("ana", "k2", 0, 0, "skip")}
    assert all(r["updated_at"] for r in rows)
    assert my_verdicts(db, "ds", "ana") == {("k1", 0, 1): "flip", ("k2", 0, 0): "skip"}
    assert my_verdicts(db, "ds", "") == {}
    assert [r["annotator"] for r in item_verdicts(db, "ds", "k1")] == ["ana", "bo"]
    assert history(db, dataset="ds", annotator="ana")[0]["by"] == "ana"


def test_scores_map_is_empty_without_scores_and_reads_the_latest_run(db):
    assert item_scores_map(db, "ds") == {}
    db.execute(
        "insert into item_scores (dataset, item_key, fingerprint, variant, model, subset, "
        "chosen_scores, rejected_scores, updated_at) values "
        "('ds', 'k1', 'old', 'fp32|full', 'm', '', '[1.0]', '[0.0]', '2026-01-01'), "
        "('ds', 'k1', 'new', 'fp32|full', 'm2', '', '[0.5]', '[0.7]', '2026-02-01')"
    )
    assert [r["fingerprint"] for r in scored_runs(db, "ds")] == ["new", "old"]
    assert item_scores_map(db, "ds") == {"k1": {"chosen_scores": [0.5], "rejected_scores": [0.7]}}
    assert item_scores_map(db, "ds", "old")["k1"]["chosen_scores"] == [1.0]
    db.execute("drop table item_scores")
    assert item_scores_map(db, "ds") == {} and scored_runs(db, "ds") == []
