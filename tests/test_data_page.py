"""AppTest for the Import & export page: the history in words, and a large dataset
exported by streaming into a file on the server rather than into memory."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

import components.transfer.import_export as transfer
import store
from needlework.datasets.transfer import import_bytes
from store.annotations import set_annotation
from tests.conftest import ROOT, garage_records, jsonl


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(3)), "ground.jsonl")
    return db


def data_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.query_params["dataset"] = "ground"
    at.run()
    at.switch_page("app_pages/data.py")
    at.query_params["dataset"] = "ground"
    at.run()
    assert not at.exception, at.exception
    return at


def test_history_says_what_changed_on_which_question(app_db):
    set_annotation(app_db, "ground", "sample-2", "ana", "label:3", "OUTDATED")
    set_annotation(app_db, "ground", "sample-2", "ana", "label:3", "ANSWER-THE-QUESTION")
    at = data_page()
    table = at.dataframe[-1].value
    title = app_db.execute("select title from items where key = 'sample-2'").fetchone()[0]
    assert list(table["change"]) == ["labeled passage 3 as Answer", "labeled passage 3 as Outdated"]
    assert list(table["was"]) == ["Outdated", ""]
    assert set(table["item"]) == {title} and set(table["who"]) == {"ana"}


def test_a_large_dataset_is_streamed_into_a_file_on_the_server(app_db, tmp_path, monkeypatch):
    monkeypatch.setattr(transfer, "IN_BROWSER_ITEMS", 2)
    at = data_page()
    assert not [b for b in at.get("download_button")]
    target = tmp_path / "out" / "ground.jsonl"
    (path,) = [t for t in at.text_input if t.label == "File on the server"]
    path.set_value(str(target)).run()
    at.button(key="export_file_go").click().run()
    assert not at.exception
    lines = target.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["sample_id"] for line in lines] == ["sample-1", "sample-2", "sample-3"]
    assert any("Wrote" in s.value for s in at.success)
