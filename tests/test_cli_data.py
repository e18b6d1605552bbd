"""The CLI contract: import, export, datasets, seed-demo (run as real subprocesses)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import RMBENCH_DIR, ROOT, garage_records, jsonl


def cli(*args, db):
    return subprocess.run([sys.executable, "-m", "needlework", *args, "--db", str(db)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def db_snapshot(db):
    import sqlite3  # noqa: PLC0415

    conn = sqlite3.connect(db)
    try:
        return {t: conn.execute(f"select * from {t} order by 1").fetchall()
                for t in ("datasets", "items", "annotations", "history")}
    finally:
        conn.close()


def test_garage_import_export_identical(tmp_path):
    src = tmp_path / "sample.jsonl"
    records = garage_records(4)
    src.write_bytes(jsonl(records))
    db = tmp_path / "db.sqlite"
    r = cli("import", str(src), db=db)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "imported 4 grounding items as 'sample' (garage)"
    r = cli("datasets", "--json", db=db)
    assert json.loads(r.stdout) == [{"name": "sample", "kind": "grounding", "format": "garage", "items": 4}]
    out = tmp_path / "out.jsonl"
    r = cli("export", "--dataset", "sample", "--format", "garage", "--out", str(out), db=db)
    assert r.returncode == 0, r.stderr
    exported = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in exported] == records


BAD_CASES = {
    "misaligned": lambda r: r[1].__setitem__("evidence_relevant", ["YES"]),
    "label": lambda r: r[0].__setitem__("evidence_correct", ["WRONG", "", ""]),
    "type": lambda r: r[1].__setitem__("question", ["x"]),
    "missing": lambda r: r[1].pop("sample_id"),
    "duplicate": lambda r: r[1].__setitem__("sample_id", r[0]["sample_id"]),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES) + ["truncated", "not_utf8", "empty"])
def test_bad_input_exits_nonzero_and_changes_nothing(tmp_path, case):
    db = tmp_path / "db.sqlite"
    good = tmp_path / "good.jsonl"
    good.write_bytes(jsonl(garage_records(2)))
    assert cli("import", str(good), db=db).returncode == 0
    before = db_snapshot(db)
    records = garage_records(2)
    if case in BAD_CASES:
        BAD_CASES[case](records)
        data = jsonl(records)
    elif case == "truncated":
        data = jsonl(records)[:-25]
    elif case == "not_utf8":
        data = jsonl(records) + b"\xff\n"
    else:
        data = b""
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(data)
    r = cli("import", str(bad), db=db)
    assert r.returncode != 0
    first = r.stderr.splitlines()[0]
    assert first.startswith("bad.jsonl line "), first
    assert "nothing imported" in r.stderr
    assert db_snapshot(db) == before


def test_rmbench_import_and_metadata(tmp_path):
    db = tmp_path / "db.sqlite"
    path = RMBENCH_DIR / "code_filtered.json"
    r = cli("import", str(path), "--dataset", "code", db=db)
    assert r.returncode == 0, r.stderr
    assert json.loads(cli("datasets", "--json", db=db).stdout) == [
        {"name": "code", "kind": "preference", "format": "rmbench", "items": 228}]
    r = cli("import", str(path), "--dataset", "code", db=db)
    assert r.returncode == 1 and "already exists" in r.stderr


def test_every_verb_has_help(tmp_path):
    for verb in ("import", "export", "datasets", "seed-demo"):
        r = subprocess.run([sys.executable, "-m", "needlework", verb, "--help"], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and "usage:" in r.stdout
