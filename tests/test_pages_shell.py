"""AppTest for the shell: router, sidebar, home and import/export pages."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

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


def run_app(page: str | None = None, annotator: str = "") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    if annotator:
        at.session_state["annotator"] = annotator
    at.run()
    if page:
        at.switch_page(page)
        at.run()
    assert not at.exception, at.exception
    return at


def test_home_lists_datasets_with_progress(app_db):
    set_annotation(app_db, "ground", "sample-1", "ana", "label:1", "OUTDATED")
    at = run_app()
    captions = [c.value for c in at.caption]
    assert any(c.startswith("3 grounding questions · garage") for c in captions)
    assert "0 of 3 items done by ana · 1 more started" in captions  # the annotate page's words
    assert at.sidebar.selectbox[0].value == "ground"
    title = app_db.execute("select title from items where key = 'sample-1'").fetchone()[0]
    html = " ".join(h.proto.body for h in at.main.get("html"))
    assert f"ana labeled passage 1 as Outdated on “{title}” in ground" in html
    links = [(link.proto.label, link.proto.page, str(link.proto)) for link in at.get("page_link")]
    assert any(text == "Open ›" and "annotate" in page and "sample-1" in proto
               for text, page, proto in links)


def test_home_without_datasets_says_how_to_start(tmp_path, monkeypatch):
    monkeypatch.setenv("NEEDLEWORK_DB", str(tmp_path / "empty.db"))
    at = run_app()
    assert any("No datasets yet" in i.value for i in at.info)


def test_data_page_history_and_undo(app_db):
    hid = set_annotation(app_db, "ground", "sample-1", "ana", "label:1", "OUTDATED")
    at = run_app("app_pages/data.py", annotator="rev")
    history = at.dataframe[-1].value
    assert list(history["id"]) == [hid]
    at.number_input(key="undo_id").set_value(hid)
    at.button(key="undo_go").click()
    at.run()
    assert not at.exception
    rows = app_db.execute("select action, by, undoes from history order by id").fetchall()
    assert rows[-1] == ("undo", "rev", hid)


def test_data_page_export_offers_kind_formats(app_db):
    at = run_app("app_pages/data.py")
    assert at.selectbox(key="export_format").options == ["garage"]
    assert json.loads(store.connect(store.default_path()).execute(
        "select record from items limit 1").fetchone()[0])["sample_id"] == "sample-1"
