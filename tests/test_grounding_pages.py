"""AppTest for the annotate and agreement pages (temp database via $NEEDLEWORK_DB)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.datasets import import_bytes
from needlework.formats.garage import DEFLECTION
from store.annotations import get_value, set_annotation
from tests.conftest import ROOT, garage_records, jsonl


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(3)), "ground.jsonl")
    return db


def open_page(page: str, annotator: str = "", **params: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    if annotator:
        at.session_state["annotator"] = annotator
    at.query_params.update({"dataset": "ground", **params})
    at.run()
    at.switch_page(page)
    at.query_params.update({"dataset": "ground", **params})
    at.run()
    assert not at.exception, at.exception
    return at


def by_label(widgets, text: str):
    """The one widget whose label is ``text`` (keys carry saved values and versions)."""
    (found,) = [w for w in widgets if w.label == text]
    return found


def label(db, key: str, who: str, n: int):
    return get_value(db, "ground", key, who, f"label:{n}")


def test_annotate_labels_with_keys_and_moves_the_cursor(app_db):
    at = open_page("pages/annotate.py", annotator="ana")
    assert at.query_params["item"] == "sample-1"
    at.button(key="nw-key-2").click().run()
    at.button(key="nw-key-1").click().run()
    assert label(app_db, "sample-1", "ana", 1) == "ANSWER-THE-QUESTION"
    assert label(app_db, "sample-1", "ana", 2) == "irrelevant"
    at.button(key="nw-key-prev").click().run()
    at.button(key="nw-key-clear").click().run()  # clear passage 2
    assert label(app_db, "sample-1", "ana", 2) is None
    assert not at.exception
    html = " ".join(h.proto.body for h in at.main.get("html"))
    assert "✓ saved" in html and "by ana" in html and "not labeled yet" in html
    assert at.button(key="nw-card-1-2").proto.type == "primary"  # the saved label
    at.button(key="nw-card-1-4").click().run()  # a click on a card's label button
    assert label(app_db, "sample-1", "ana", 1) == "OUTDATED"
    at.button(key="nw-card-1-4").click().run()  # the chosen one again: cleared
    assert label(app_db, "sample-1", "ana", 1) is None


def test_annotate_deep_link_and_item_navigation(app_db):
    at = open_page("pages/annotate.py", annotator="ana", item="sample-2")
    assert at.query_params["item"] == "sample-2"
    at.button(key="nw-key-item-next").click().run()
    assert at.query_params["item"] == "sample-3"
    assert at.button(key="nw-key-item-next").disabled
    at.button(key="nw-key-item-prev").click().run()
    assert at.query_params["item"] == "sample-2"
    for n in (1, 2, 3):  # finish sample-2
        set_annotation(app_db, "ground", "sample-2", "ana", f"label:{n}", "UNKNOWN")
    set_annotation(app_db, "ground", "sample-2", "ana", "answer", "x [cite_1]")
    at.button(key="nw-key-item-unfinished").click().run()
    assert at.query_params["item"] == "sample-3"
    at.button(key="nw-key-item-unfinished").click().run()
    assert at.query_params["item"] == "sample-1"


def test_annotate_answer_checks_and_deflection(app_db):
    at = open_page("pages/annotate.py", annotator="ana")
    at.button(key="nw-key-1").click().run()  # passage 1 irrelevant
    area = by_label(at.text_area, "Answer with [cite_N] markers")
    area.set_value("Costs $5 [cite_1] and [cite_7].").run()
    assert get_value(app_db, "ground", "sample-1", "ana", "answer") == \
        "Costs $5 [cite_1] and [cite_7]."
    assert any("[cite_7] points to no passage" in e.value for e in at.error)
    assert any("labeled irrelevant" in w.value for w in at.warning)
    assert any("needs the deflection" in w.value for w in at.warning)
    at.selectbox(key="nw-cite-pick|ground|sample-1|ana").set_value(3)
    at.button(key="nw-cite-go|ground|sample-1|ana").click().run()
    assert get_value(app_db, "ground", "sample-1", "ana", "answer") == \
        "Costs $5 [cite_1] and [cite_7] [cite_3]."
    by_label(at.text_area, "Answer with [cite_N] markers").set_value("").run()
    assert get_value(app_db, "ground", "sample-1", "ana", "answer") is None
    at.button(key="nw-key-deflect").click().run()
    assert get_value(app_db, "ground", "sample-1", "ana", "answer") == DEFLECTION
    assert get_value(app_db, "ground", "sample-1", "ana", "deflected") is True


def test_annotate_dimensions_categories_and_filters(app_db):
    at = open_page("pages/annotate.py", annotator="ana")
    by_label(at.selectbox, "Time sensitivity").set_value("fast-changing").run()
    assert get_value(app_db, "ground", "sample-1", "ana", "dim:question_type") == "FAST-CHANGING"
    assert get_value(app_db, "ground", "sample-1", "ana", "dim:question_sensitive") == "YES"
    by_label(at.selectbox, "Complexity").set_value("Set").run()
    assert get_value(app_db, "ground", "sample-1", "ana", "dim:question_complexity") == "Set"
    at.text_area(key="nw-categories|ground").set_value("Travel\nSpace\n")
    at.button(key="nw-categories-save|ground").click().run()
    assert store.datasets.get_dataset(app_db, "ground")["meta"]["categories"] == ["Travel", "Space"]
    # filters: complexity Set matches only sample-1 (the annotator's own value)
    at.multiselect(key="nw-nav-f-complexity|ground").set_value(["Set"]).run()
    assert len(by_label(at.selectbox, "Question").options) == 1
    at.multiselect(key="nw-nav-f-complexity|ground").set_value([]).run()
    at.text_input(key="nw-nav-f-text|ground").set_value("museum").run()
    assert len(by_label(at.selectbox, "Question").options) == 3
    at.text_input(key="nw-nav-f-text|ground").set_value("sample-2").run()
    assert len(by_label(at.selectbox, "Question").options) == 2  # + current (filtered out)
    assert any("filtered out" in c.value for c in at.caption)


def test_annotate_without_name_is_read_only(app_db):
    at = open_page("pages/annotate.py")
    assert any("Enter your name" in w.value for w in at.warning)
    assert at.button(key="nw-key-2").disabled


def test_annotate_other_kind_says_what_to_do(app_db):
    import_bytes(app_db, jsonl([{"id": "p1", "prompt": "p", "chosen": ["a"], "rejected": ["b"],
                                 "subset": "QA"}]), "pref.jsonl", format="lfrb")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.run()
    at.selectbox(key="dataset").set_value("pref").run()
    at.switch_page("pages/annotate.py")
    at.run()
    assert not at.exception
    assert any("Pick a grounding dataset" in i.value for i in at.info)


@pytest.fixture
def disputed(app_db):
    for who, values in (("ana", ["irrelevant", "OUTDATED"]), ("bo", ["irrelevant", "UNKNOWN"])):
        for n, value in enumerate(values, start=1):
            set_annotation(app_db, "ground", "sample-2", who, f"label:{n}", value)
    return app_db


def test_agreement_page_figures_links_and_adjudication(disputed):
    at = open_page("pages/agreement.py", annotator="rev")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Annotators"] == "2"
    assert metrics["Passages labeled by ≥ 2"] == "2"
    links = at.get("page_link")
    assert len(links) == 1 and "2\\. What does a ticket cost" in links[0].proto.label
    assert "item=sample-2" in str(links[0].proto)
    seg = by_label(at.segmented_control, "Final label of passage 2")
    seg.set_value("OUTDATED").run()
    assert get_value(disputed, "ground", "sample-2", "rev", "final:label:2") == "OUTDATED"
    assert not at.exception


def test_agreement_attribution_tab(disputed):
    at = open_page("pages/agreement.py", annotator="rev")
    upload = at.file_uploader[0]
    upload.set_value(("model.jsonl", b'{"sample_id": "sample-1", "answer": "[cite_1]"}\n',
                      "application/json")).run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["F1"] == "0.333"  # 1, 0, 0 over three scored questions
    assert metrics["Scored questions"] == "3"
    at.file_uploader[0].set_value(("bad.jsonl", b'{"sample_id": 1, "answer": ""}\n',
                                   "application/json")).run()
    assert any("bad.jsonl line 1: field 'sample_id' must be a string" in e.value for e in at.error)


def test_agreement_page_for_other_kinds(app_db):
    at = open_page("pages/agreement.py")
    assert not at.exception


def test_key_log_applies_every_press_once_in_order(app_db):
    """The browser sends all presses as one log; entries already applied are skipped."""
    at = open_page("pages/annotate.py", annotator="ana")
    log = by_label(at.text_input, "Key log")
    log.set_value("11:2 12:1 13:n 14:5 15:k 16:3").run()
    assert label(app_db, "sample-1", "ana", 1) == "ANSWER-THE-QUESTION"
    assert label(app_db, "sample-1", "ana", 2) == "irrelevant"
    assert label(app_db, "sample-2", "ana", 1) == "RELATED-INFORMATION"  # k went back to 1
    assert label(app_db, "sample-2", "ana", 2) is None
    assert at.query_params["item"] == "sample-2"
    by_label(at.text_input, "Key log").set_value("11:2 12:1 13:n 14:5 15:k 16:3 17:j 18:4 19:d").run()
    assert label(app_db, "sample-2", "ana", 3) == "OUTDATED"  # 3 moved on to 2, j to 3
    assert get_value(app_db, "ground", "sample-2", "ana", "answer") == DEFLECTION
    assert label(app_db, "sample-1", "ana", 1) == "ANSWER-THE-QUESTION"  # not re-applied


def test_question_picker_opens_an_item(app_db):
    at = open_page("pages/annotate.py", annotator="ana")
    by_label(at.selectbox, "Question").set_value("sample-3").run()
    assert at.query_params["item"] == "sample-3"
    assert not at.exception

