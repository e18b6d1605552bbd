"""Saved needle reports: the report's form and how its sets are found again
(needlework/needle/reports.py), and their rows (store/needle_reports.py, migration m012)."""

from __future__ import annotations

import json

import pytest

import store
from needlework.needle.reports import (
    Report,
    ReportError,
    SetRef,
    clean_name,
    resolve,
    set_key,
)
from store import needle_reports
from store.datasets import create_dataset, delete_dataset, rename_dataset

MODEL = SetRef("model", "demo-model", fingerprint="fp1", variant="fp32|cpu")
JUDGE = SetRef("judge", "judge demo", run_key="rk1")
UPLOAD = SetRef("uploaded", "mine (uploaded)", results_csv="id,chosen_score\nx,1\n")


@pytest.fixture
def db(tmp_path):
    return store.connect(tmp_path / "r.db")


def test_a_report_round_trips_through_json():
    report = Report("needles", (MODEL, JUDGE), "Lost in the middle")
    again = Report.from_json(report.to_json())
    assert again == report
    assert Report.from_json(Report("n", (UPLOAD,)).to_json()).sets[0].results_csv == UPLOAD.results_csv


@pytest.mark.parametrize(("report", "field"), [
    (Report("", (MODEL,)), "dataset"),
    (Report("n", ()), "sets"),
    (Report("n", (MODEL, JUDGE, MODEL)), "sets"),
    (Report("n", (SetRef("model", "m"),)), "sets[0].fingerprint"),
    (Report("n", (SetRef("judge", "j"),)), "sets[0].run_key"),
    (Report("n", (MODEL, SetRef("uploaded", "u"))), "sets[1].results_csv"),
    (Report("n", (SetRef("drawn", "x"),)), "sets[0].kind"),
    (Report("n", (MODEL,), "t" * 201), "title"),
])
def test_a_report_that_cannot_be_kept_names_its_field(report, field):
    with pytest.raises(ReportError, match=field.replace("[", r"\[").replace("]", r"\]")):
        report.to_json()


def test_a_damaged_spec_names_its_field():
    with pytest.raises(ReportError, match="spec"):
        Report.from_json("{not json")
    with pytest.raises(ReportError, match=r"sets\[0\]"):
        Report.from_json(json.dumps({"dataset": "n", "sets": [3]}))


def test_names_are_trimmed_and_required():
    assert clean_name("  my   report ") == "my report"
    with pytest.raises(ReportError, match="name"):
        clean_name("   ")
    with pytest.raises(ReportError, match="name"):
        clean_name("x" * 101)


def test_resolve_keeps_the_order_and_says_what_is_gone():
    report = Report("n", (JUDGE, MODEL))
    here = {set_key("model", fingerprint="fp1", variant="fp32|cpu"): "the model",
            set_key("judge", run_key="rk1"): "the judge"}
    found = resolve(report, here)
    assert found.found == ["the judge", "the model"] and not found.missing
    assert found.missing_line() == ""
    # The model's scores were deleted (or it ran with another dtype): the report says so.
    gone = resolve(report, {set_key("judge", run_key="rk1"): "the judge",
                            set_key("model", fingerprint="fp1", variant="bf16|cpu"): "other"})
    assert gone.found == ["the judge"] and gone.missing == [MODEL]
    assert "'demo-model' is no longer here" in gone.missing_line()
    nothing = resolve(report, {})
    assert nothing.found == [] and "None of its result sets" in nothing.missing_line()


def _needle_set(db, name="needles"):
    create_dataset(db, name, "needle", "needle", [], created_by="t")


def test_store_saves_lists_renames_and_deletes(db):
    _needle_set(db)
    spec = Report("needles", (MODEL,), "T").to_json()
    first = needle_reports.save_report(db, "needles", "baseline", spec, "ana")
    second = needle_reports.save_report(db, "needles", "with judge", spec, "bo")
    rows = needle_reports.list_reports(db)
    assert [r["name"] for r in rows] == ["with judge", "baseline"]  # newest first
    assert rows[1]["created_by"] == "ana" and rows[1]["created_at"] and rows[1]["dataset_exists"]
    assert Report.from_json(rows[1]["spec"]).title == "T"
    with pytest.raises(needle_reports.ReportExists):
        needle_reports.save_report(db, "needles", "BASELINE", spec, "bo")  # up to case
    with pytest.raises(needle_reports.ReportExists):
        needle_reports.rename_report(db, second, "Baseline", "bo")
    needle_reports.rename_report(db, first, "the baseline", "bo")
    row = needle_reports.get_report(db, first)
    assert row["name"] == "the baseline" and row["updated_by"] == "bo" and row["created_by"] == "ana"
    needle_reports.rename_report(db, first, "The Baseline", "bo")  # its own name, new case
    assert needle_reports.get_report(db, first)["name"] == "The Baseline"
    with pytest.raises(KeyError):
        needle_reports.rename_report(db, 999, "x", "bo")
    assert needle_reports.delete_report(db, second) is True
    assert needle_reports.delete_report(db, second) is False
    assert [r["name"] for r in needle_reports.list_reports(db, "needles")] == ["The Baseline"]
    assert needle_reports.list_reports(db, "other") == []


def test_reports_follow_a_renamed_dataset_and_outlive_a_deleted_one(db):
    _needle_set(db)
    report_id = needle_reports.save_report(db, "needles", "r", Report("needles", (MODEL,)).to_json(), "ana")
    rename_dataset(db, "needles", "needles-v2")
    assert needle_reports.get_report(db, report_id)["dataset"] == "needles-v2"
    delete_dataset(db, "needles-v2")
    rows = needle_reports.list_reports(db)
    assert [r["name"] for r in rows] == ["r"] and rows[0]["dataset_exists"] is False
