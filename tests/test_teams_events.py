"""The audit trail of what is not an annotation (issue 26, point 3, first part): each
audited action is one row naming who, what, when and the values before and after; no
password is ever a value; the rows outlive a deleted dataset and are exported by the CLI
and shown on the Audit page."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import store
from needlework.datasets.transfer import delete_dataset
from needlework.jobs.runner import RUNNER
from needlework.review.counting import start_lengths_job
from needlework.teams import accounts, pauses
from needlework.teams.accounts import SignInRefused
from needlework.teams.assignment import assign_dataset, reassign_unfinished
from needlework.teams.audit import event_records, history_records
from needlework.teams.blind import set_visibility
from store import assignments as store_assignments
from store.annotations import set_annotation
from tests.conftest import ROOT
from tests.teams_fixtures import grounding, open_as, preference, team_mode_db

PW = "lead-passphrase-1"
ANA_PW = "ana-passphrase-1"


@pytest.fixture
def db(tmp_path):
    db = store.connect(tmp_path / "a.db")
    accounts.add_user(db, "lead", "admin", password=PW)
    return db


def events(db, action: str | None = None) -> list[dict]:
    return [e for e in event_records(db) if action is None or e["action"] == action]


def test_account_changes_are_audited_with_before_and_after(db) -> None:
    lead = accounts.get_user(db, "lead")
    accounts.add_user(db, "ana", "annotator", password=ANA_PW, actor=lead)
    accounts.set_role(db, "ana", "reviewer", actor=lead)
    accounts.set_disabled(db, "ana", actor=lead)
    accounts.set_disabled(db, "ana", False, actor=lead)
    accounts.reset_password(db, "ana", "ana-new-passphrase-2", actor=lead)
    pauses.unlock(db, "ana", actor=lead)
    rows = [(e["by"], e["action"], e["target"], e["before"], e["after"]) for e in events(db)
            if e["target"] == "ana"]
    assert rows == [
        ("lead", "account.created", "ana", None,
         {"role": "annotator", "email": None, "password": True}),
        ("lead", "account.role", "ana", {"role": "annotator"}, {"role": "reviewer"}),
        ("lead", "account.disabled", "ana", {"disabled": False}, {"disabled": True}),
        ("lead", "account.enabled", "ana", {"disabled": True}, {"disabled": False}),
        ("lead", "account.password_reset", "ana", None, {"password": "reset"}),
        ("lead", "account.unlocked", "ana", {"pauses": 0}, {"pauses": 0}),
    ]
    assert all(e["at"].startswith("20") for e in events(db))
    text = json.dumps(events(db))
    assert ANA_PW not in text and "ana-new-passphrase-2" not in text


def test_sign_ins_and_refusals_are_audited_without_what_was_typed(db) -> None:
    accounts.sign_in(db, "lead", PW, client="10.0.0.5")
    for login in ("lead", "not-a-name-but-a-passphrase"):
        with pytest.raises(SignInRefused):
            accounts.sign_in(db, login, "wrong-password-1", client="10.0.0.6")
    [ok] = events(db, "sign_in")
    assert (ok["by"], ok["target"], ok["after"]) == ("lead", "lead", {
        "client": "10.0.0.5", "device_cookie": False, "method": "password"})
    refused = events(db, "sign_in.refused")
    assert [(e["by"], e["target"]) for e in refused] == [("(not signed in)", "lead"),
                                                         ("(not signed in)", "")]
    text = json.dumps(events(db))
    assert "not-a-name-but-a-passphrase" not in text and "wrong-password-1" not in text


@pytest.mark.slow
def test_assignments_settings_and_a_deleted_dataset_keep_their_events(db, tmp_path) -> None:
    lead = accounts.get_user(db, "lead")
    for name in ("ana", "bob"):
        accounts.add_user(db, name, "annotator", password=ANA_PW, actor=lead)
    grounding(db, 4, "g")
    assign_dataset(db, "g", ["ana", "bob"], actor=lead)
    assign_dataset(db, "g", ["ana"], replace=True, actor=lead)
    reassign_unfinished(db, "g", "ana", to=["bob"], actor=lead)
    set_visibility(db, "g", "annotators_see_file_labels", True, actor=lead)
    key = store_assignments.queue_keys(db, "g", "bob")[0]
    set_annotation(db, "g", key, "bob", "label:1", "OUTDATED")
    set_annotation(db, "g", key, "bob", "label:1", "UNKNOWN")
    delete_dataset(db, "g", actor=lead)
    about = [(e["action"], e["target"]) for e in event_records(db, "g")]
    assert about == [("dataset.imported", "g"), ("assignment.created", "g"),
                     ("assignment.replaced", "g"), ("assignment.reassigned", "ana"),
                     ("dataset.setting", "annotators_see_file_labels"), ("dataset.deleted", "g")]
    _, created, replaced, moved, setting, _ = event_records(db, "g")
    assert created["after"]["annotators"] == ["ana", "bob"] and created["before"] is None
    assert replaced["before"] == {"assignments": created["after"]["assignments"]}
    assert moved["after"]["moved"] == {"bob": 4}
    assert (setting["before"], setting["after"]) == ({"annotators_see_file_labels": False},
                                                     {"annotators_see_file_labels": True})
    out = tmp_path / "events.jsonl"
    done = subprocess.run([sys.executable, "-m", "needlework", "audit", "--events", "--dataset",
                           "g", "--out", str(out), "--db", str(tmp_path / "a.db")], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "wrote 6 audit events about 'g'" in done.stdout
    assert [json.loads(line)["action"] for line in out.read_text().splitlines()] == [
        a for a, _ in about]
    # the annotations' history outlives the dataset: exported with --deleted, not mixed
    # into a new dataset of the same name
    grounding(db, 2, "g")
    assert list(history_records(db, "g")) == []
    kept = tmp_path / "kept.jsonl"
    done = subprocess.run([sys.executable, "-m", "needlework", "audit", "--dataset", "g",
                           "--deleted", "--out", str(kept), "--db", str(tmp_path / "a.db")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "wrote 2 deleted history entries of 'g'" in done.stdout
    rows = [json.loads(line) for line in kept.read_text().splitlines()]
    assert [(r["item_key"], r["by"], r["field"], r["old_value"], r["new_value"]) for r in rows] == [
        (key, "bob", "label:1", None, "OUTDATED"), (key, "bob", "label:1", "OUTDATED", "UNKNOWN")]
    assert all(r["about_dataset"] == "g" and r["deleted_at"] for r in rows)


def test_dataset_guideline_and_gold_actions_are_audited(db) -> None:
    from needlework.datasets import catalog  # noqa: PLC0415
    from needlework.datasets.transfer import import_bytes  # noqa: PLC0415
    from needlework.teams.guidelines import set_guidelines  # noqa: PLC0415
    from needlework.teams.quality import mark_gold, unmark_gold  # noqa: PLC0415
    from tests.conftest import garage_records, jsonl  # noqa: PLC0415

    lead = accounts.get_user(db, "lead")
    import_bytes(db, jsonl(garage_records(3)), "g.jsonl", dataset="g", actor=lead)
    import_bytes(db, jsonl(garage_records(2)), "g2.jsonl", dataset="g", replace=True,
                 drop_annotations=True, actor=lead)
    set_guidelines(db, "g", "Label every passage.", actor=lead)
    set_guidelines(db, "g", "Label every passage carefully.", actor=lead)
    mark_gold(db, "g", "sample-1", {"label:1": "ANSWER-THE-QUESTION"}, actor=lead)
    unmark_gold(db, "g", "sample-1", actor=lead)
    catalog.archive(db, "g", actor=lead)
    catalog.archive(db, "g", False, actor=lead)
    catalog.rename(db, "g", "g-new", actor=lead)
    catalog.delete(db, "g-new", actor=lead)
    rows = [(e["action"], e["target"], e["about_dataset"], e["before"], e["after"])
            for e in events(db) if e["action"].split(".")[0] in ("dataset", "guidelines", "gold")]
    assert rows == [
        ("dataset.imported", "g", "g", None, {"file": "g.jsonl", "format": "garage", "items": 3,
                                              "annotations_dropped": False}),
        ("dataset.replaced", "g", "g", None, {"file": "g2.jsonl", "format": "garage", "items": 2,
                                              "annotations_dropped": True}),
        ("guidelines.changed", "g", "g", None, {"characters": 20}),
        ("guidelines.changed", "g", "g", {"characters": 20}, {"characters": 30}),
        ("gold.marked", "sample-1", "g", None, {"fields": ["label:1"]}),
        ("gold.unmarked", "sample-1", "g", None, None),
        ("dataset.archived", "g", "g", None, None),
        ("dataset.restored", "g", "g", None, None),
        ("dataset.renamed", "g-new", "g-new", {"name": "g"}, {"name": "g-new"}),
        ("dataset.deleted", "g-new", "g-new", {"kind": "grounding", "format": "garage",
                                               "items": 2}, None),
    ]
    assert all(e["by"] == "lead" for e in events(db) if e["action"] != "account.created")
    assert "ANSWER-THE-QUESTION" not in json.dumps(events(db))  # gold answers stay out


@pytest.mark.slow
def test_the_audit_page_shows_the_events_to_an_admin(tmp_path, monkeypatch) -> None:
    db = team_mode_db(tmp_path, monkeypatch, people={"lead": "admin"})
    accounts.add_user(db, "ana", "annotator", password=ANA_PW,
                      actor=accounts.get_user(db, "lead"))
    at = open_as(db, "lead", "app_pages/audit.py")
    [table] = [t for t in at.dataframe if "what" in t.value.columns]
    assert {"account.created", "sign_in"} <= set(table.value["what"])
    assert "ana" in set(table.value["target"])
    assert any("No dataset with annotations has been deleted" in c.value for c in at.caption)
    grounding(db, 2, "gone")
    set_annotation(db, "gone", "sample-1", "ana", "label:1", "OUTDATED")
    delete_dataset(db, "gone", actor=accounts.get_user(db, "lead"))
    at = open_as(db, "lead", "app_pages/audit.py")
    picker = at.selectbox(key="nw-audit-deleted")
    assert picker.options == ["gone · 1 change · deleted " + picker.options[0].split("deleted ")[1]]
    assert at.get("download_button")


def test_a_job_start_is_audited_with_who_started_it(db, tmp_path) -> None:
    """Issue 26, point 3: a background job's start names who, which kind, the dataset and
    the job (a reviewer counting a preference dataset's tokens)."""
    lead = accounts.get_user(db, "lead")
    rita = accounts.add_user(db, "rita", "reviewer", password=ANA_PW, actor=lead)
    preference(db, 3, "p")
    job_id = start_lengths_job(db, tmp_path / "a.db", "p", "estimate", by=rita)
    RUNNER.join(job_id, timeout=60)
    (started,) = events(db, "job.started")
    assert started["by"] == "rita" and started["about_dataset"] == "p"
    assert started["target"] == f"lengths job {job_id}"
    assert started["after"] == {"job": job_id, "kind": "lengths", "model": started["after"]["model"]}
    assert "estimate" in started["after"]["model"]
