"""Import in the UI: a bad file shows the same file/line/field messages and writes nothing."""

from __future__ import annotations

import sqlite3

from tests.browser.harness import assert_no_exception, screenshot, wait_idle
from tests.conftest import garage_records, jsonl


def _count(db_path) -> int:
    conn = sqlite3.connect(db_path)
    try:
        return conn.execute("select count(*) from items").fetchone()[0]
    finally:
        conn.close()


def test_bad_upload_lists_problems_and_imports_nothing(page, app_url, seeded_db, tmp_path):
    records = garage_records(2)
    records[1]["evidence_correct"] = ["ANSWER-THE-QUESTION", ""]
    bad = tmp_path / "sample.jsonl"
    bad.write_bytes(jsonl(records))
    before = _count(seeded_db)
    page.goto(f"{app_url}/data")
    wait_idle(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(bad))
    wait_idle(page)
    page.get_by_role("button", name="Import", exact=True).click()
    page.get_by_text("Nothing imported: 1 problem(s).").wait_for(timeout=20_000)
    page.get_by_text(
        "sample.jsonl line 2: evidence_correct has 2 entries but grounding has 3"
    ).wait_for(timeout=10_000)
    assert_no_exception(page)
    screenshot(page, "import-error")
    assert _count(seeded_db) == before


def test_good_upload_imports(page, app_url, seeded_db, tmp_path):
    good = tmp_path / "fresh-set.jsonl"
    good.write_bytes(jsonl(garage_records(2)))
    page.goto(f"{app_url}/data")
    wait_idle(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(good))
    wait_idle(page)
    page.get_by_role("button", name="Import", exact=True).click()
    page.get_by_text("imported 2 grounding items as 'fresh-set' (garage)").wait_for(timeout=20_000)
    conn = sqlite3.connect(seeded_db)
    assert conn.execute("select count(*) from items where dataset='fresh-set'").fetchone()[0] == 2
