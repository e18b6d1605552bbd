"""Audit: every change carries the signed-in user in ``by``; an admin exports a dataset's
history as CSV or JSONL (function and CLI), whole or not at all."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

import store
from needlework.actions import writes
from needlework.teams.assignment import assign_dataset, queue
from needlework.teams.audit import AuditError, export_history, history_records
from needlework.teams.permissions import PermissionDenied
from store.audit import COLUMNS
from tests.conftest import ROOT
from tests.teams_fixtures import grounding, team


@pytest.fixture
def worked(tmp_path):
    """A file database where ana labels, rita adjudicates and undoes, boss is admin."""
    path = tmp_path / "team.db"
    db = store.connect(path)
    people = team(db, annotators=("ana",))
    grounding(db, 2)
    assign_dataset(db, "g", ["ana"], actor=people["boss"])
    key = queue(db, "g", "ana")[0].key
    writes.write_annotation(db, "g", key, "label:1", "OUTDATED", actor=people["ana"])
    hid = writes.write_annotation(db, "g", key, "label:2", "UNKNOWN", actor=people["ana"])
    writes.save_answer(db, "g", key, 'Line one,\n"quoted" [cite_1]', actor=people["ana"])
    writes.adjudicate(db, "g", key, "final:label:1", "irrelevant", actor=people["rita"])
    writes.undo_change(db, hid, actor=people["rita"])
    return db, path, people, key


def test_every_change_names_the_signed_in_user(worked):
    db, _, _, key = worked
    rows = list(history_records(db, "g"))
    assert [(r["by"], r["annotator"], r["field"], r["action"]) for r in rows] == [
        ("ana", "ana", "label:1", "set"), ("ana", "ana", "label:2", "set"),
        ("ana", "ana", "answer", "set"), ("rita", "rita", "final:label:1", "set"),
        ("rita", "ana", "label:2", "undo")]
    assert rows[-1]["undoes"] == rows[1]["id"] and rows[-1]["new_value"] is None


def test_an_admin_exports_the_history_as_csv_and_jsonl(worked, tmp_path):
    db, _, people, _ = worked
    out = tmp_path / "history.csv"
    assert export_history(db, "g", out, actor=people["boss"]) == 5
    with out.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(COLUMNS)
    assert [r["by"] for r in rows] == ["ana", "ana", "ana", "rita", "rita"]
    assert json.loads(rows[2]["new_value"]) == 'Line one,\n"quoted" [cite_1]'
    assert rows[0]["old_value"] == "" and rows[4]["new_value"] == ""
    lines = tmp_path / "history.jsonl"
    assert export_history(db, "g", lines, actor=people["boss"]) == 5
    records = [json.loads(line) for line in lines.read_text(encoding="utf-8").splitlines()]
    assert records == list(history_records(db, "g"))
    assert records[2]["new_value"] == 'Line one,\n"quoted" [cite_1]'
    with pytest.raises(PermissionDenied, match="rita is a reviewer and may not export the "
                                               "change history"):
        export_history(db, "g", tmp_path / "r.csv", actor=people["rita"])
    with pytest.raises(AuditError, match="as csv or jsonl"):
        export_history(db, "g", tmp_path / "h.xlsx", actor=people["boss"])
    with pytest.raises(AuditError, match="no dataset named 'nope'"):
        export_history(db, "nope", tmp_path / "n.csv", actor=people["boss"])
    assert not (tmp_path / "r.csv").exists() and not (tmp_path / "n.csv").exists()


@pytest.mark.slow
def test_cli_audit(worked, tmp_path):
    db, path, _, _ = worked
    db.conn.close()
    out = tmp_path / "audit.jsonl"
    done = subprocess.run([sys.executable, "-m", "needlework", "audit", "--dataset", "g",
                           "--out", str(out), "--db", str(path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote 5 history entries of 'g' to {out}"
    assert [json.loads(line)["by"] for line in out.read_text().splitlines()] == [
        "ana", "ana", "ana", "rita", "rita"]
    out.write_text("previous\n")
    failed = subprocess.run([sys.executable, "-m", "needlework", "audit", "--dataset", "nope",
                             "--out", str(out), "--db", str(path)],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert failed.returncode == 1 and failed.stderr.strip() == "audit: no dataset named 'nope'"
    assert out.read_text() == "previous\n"
