"""Adjudication's D key: the next question with an open dispute (annotators disagree and
no final value is set yet), wrapping around, past the first 200 of the list by number,
and a sentence when none is open (store.disputes, components.agreement.adjudication)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.datasets.transfer import import_bytes
from store.annotations import set_annotation
from store.disputes import next_open, open_count
from tests.conftest import ROOT, garage_records, jsonl


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(300)), "ground.jsonl")
    return db


def dispute(db, key: str, field: str = "label:2") -> None:
    set_annotation(db, "ground", key, "ana", field, "OUTDATED")
    set_annotation(db, "ground", key, "bo", field, "UNKNOWN")


def shown(elements) -> list[str]:
    return [e.value.replace("\\", "") for e in elements]


def agreement() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["annotator"] = "rev"
    at.query_params["dataset"] = "ground"
    at.run()
    at.switch_page("app_pages/agreement.py")
    at.query_params["dataset"] = "ground"
    at.run()
    assert not at.exception, at.exception
    return at


def press_d(at: AppTest) -> str:
    """D (the button it presses); returns what the page then says about it."""
    at.button(key="nw-adj-next").click().run()
    assert not at.exception, at.exception
    said = [c for c in shown(at.caption) if c.startswith(("Question ", "No open dispute"))]
    assert len(said) == 1, shown(at.caption)
    return said[0]


def test_next_open_skips_adjudicated_questions_and_wraps(app_db):
    for key in ("sample-3", "sample-7", "sample-9"):
        dispute(app_db, key)
    dispute(app_db, "sample-7", "dim:question_valid")  # two units in dispute on one item
    assert open_count(app_db, "ground") == 3
    assert next_open(app_db, "ground") == ("sample-3", 2)
    assert next_open(app_db, "ground", 2) == ("sample-7", 6)
    set_annotation(app_db, "ground", "sample-7", "rev", "final:label:2", "UNKNOWN")
    assert next_open(app_db, "ground", 2) == ("sample-7", 6)  # its dimension is still open
    set_annotation(app_db, "ground", "sample-7", "rev", "final:dim:question_valid", "YES")
    assert next_open(app_db, "ground", 2) == ("sample-9", 8)
    assert next_open(app_db, "ground", 8) == ("sample-3", 2)  # wraps around
    assert open_count(app_db, "ground") == 2
    set_annotation(app_db, "ground", "sample-3", "rev", "final:label:2", "OUTDATED")
    set_annotation(app_db, "ground", "sample-9", "rev", "final:label:2", "OUTDATED")
    assert next_open(app_db, "ground") is None and open_count(app_db, "ground") == 0


def test_d_moves_to_the_next_open_dispute_and_says_when_none_is_left(app_db):
    for key in ("sample-3", "sample-7", "sample-9"):
        dispute(app_db, key)
    set_annotation(app_db, "ground", "sample-7", "rev", "final:label:2", "UNKNOWN")
    at = agreement()
    assert at.button(key="nw-adj-next").proto.shortcut.upper() == "D"
    assert any("Keys: D opens the next question with an open dispute" in c for c in shown(at.caption))
    picker = at.selectbox(key="nw-adj-item|ground")
    assert picker.value == "sample-3"
    assert press_d(at) == "Question 9: an open dispute (2 questions with one)."
    assert at.selectbox(key="nw-adj-item|ground").value == "sample-9"  # 7 is adjudicated
    assert press_d(at) == "Question 3: an open dispute (2 questions with one)."
    assert at.selectbox(key="nw-adj-item|ground").value == "sample-3"
    # the reviewer settles question 3 on the page: D then finds only 9, then nothing
    final = next(s for s in at.segmented_control if s.label == "Final label of passage 2")
    final.set_value("OUTDATED").run()
    assert not at.exception, at.exception
    assert press_d(at) == "Question 9: an open dispute (1 question with one)."
    assert press_d(at) == "Question 9: the only question with an open dispute."
    set_annotation(app_db, "ground", "sample-9", "rev", "final:label:2", "OUTDATED")
    assert press_d(at) == "No open dispute: every disagreement has a final value."
    assert at.selectbox(key="nw-adj-item|ground").value == "sample-9"  # stays where it was


def test_d_opens_a_dispute_beyond_the_first_200_by_number(app_db):
    for n in range(1, 202):  # 201 questions in dispute: the list shows the first 200
        dispute(app_db, f"sample-{n}")
    for n in range(1, 201):
        set_annotation(app_db, "ground", f"sample-{n}", "rev", "final:label:2", "UNKNOWN")
    at = agreement()
    assert press_d(at) == "Question 201: an open dispute (1 question with one)."
    assert at.toggle(key="nw-adj-all").value is True
    assert at.number_input(key="nw-adj-number|ground").value == 201
    assert [s for s in at.segmented_control if s.label == "Final label of passage 2"]
