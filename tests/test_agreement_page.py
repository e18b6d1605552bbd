"""AppTest for the agreement page read from the sums SQL keeps: one annotator is "nothing
overlaps yet", not "no disagreements" (issue 18, point 15); disputes listed a page at a
time on a dataset of a few thousand questions; any question opened for adjudication."""

from __future__ import annotations

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
    import_bytes(db, jsonl(garage_records(3000)), "ground.jsonl")
    return db


def shown(elements) -> list[str]:
    """Element texts as the reader sees them (data in them is Markdown-escaped)."""
    return [e.value.replace("\\", "") for e in elements]


def agreement(annotator: str = "rev") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["annotator"] = annotator
    at.query_params["dataset"] = "ground"
    at.run()
    at.switch_page("app_pages/agreement.py")
    at.query_params["dataset"] = "ground"
    at.run()
    assert not at.exception, at.exception
    return at


def test_one_annotator_says_nothing_overlaps_yet(app_db):
    set_annotation(app_db, "ground", "sample-1", "ana", "label:1", "UNKNOWN")
    at = agreement()
    assert any("Nothing overlaps yet: only ana has labeled this dataset" in i for i in shown(at.info))
    assert not at.success  # never "No disagreements" when nothing was compared
    set_annotation(app_db, "ground", "sample-9", "bo", "label:1", "UNKNOWN")
    at.run()
    assert any("ana, bo have labeled different passages" in i for i in shown(at.info))
    set_annotation(app_db, "ground", "sample-1", "bo", "label:1", "UNKNOWN")
    at.run()
    assert any("No disagreements" in s for s in shown(at.success))
    assert {m.label: m.value for m in at.metric}["Passages labeled by ≥ 2"] == "1"


def test_disputes_are_listed_a_page_at_a_time(app_db):
    disputed = [f"sample-{n}" for n in range(5, 3000, 50)]  # 60 questions in dispute
    for key in disputed:
        set_annotation(app_db, "ground", key, "ana", "label:2", "OUTDATED")
        set_annotation(app_db, "ground", key, "bo", "label:2", "UNKNOWN")
    at = agreement()
    links = [link.proto.query_string for link in at.get("page_link")
             if "item=" in link.proto.query_string]
    assert len(links) == 40 and "item=sample-5" in links[0]
    assert any("60 item(s) with disagreements · questions 5–1,955 shown" in c for c in shown(at.caption))
    at.button(key="nw-dis-next").click().run()
    links = [link.proto.query_string for link in at.get("page_link")
             if "item=" in link.proto.query_string]
    assert len(links) == 20 and "item=sample-2005" in links[0]
    html = " ".join(h.proto.body for h in at.main.get("html"))
    assert "passage 2: Outdated×1/Unknown×1" in html or "passage 2: Unknown×1/Outdated×1" in html


def test_adjudicate_any_question_by_number(app_db):
    for who, value in (("ana", "OUTDATED"), ("bo", "UNKNOWN")):
        set_annotation(app_db, "ground", "sample-2500", who, "label:3", value)
    at = agreement()
    assert at.selectbox(key="nw-adj-item|ground").value == "sample-2500"
    at.toggle(key="nw-adj-all").set_value(True).run()
    at.number_input(key="nw-adj-number|ground").set_value(2500).run()
    assert not at.exception
    final = [s for s in at.segmented_control if s.label == "Final label of passage 3"]
    assert final, "the disputed passage of question 2500 is offered for adjudication"
