"""AppTest for the annotate and agreement pages (temp database via $NEEDLEWORK_DB)."""

from __future__ import annotations

import re
import uuid

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.actions import positions
from needlework.actions.service import apply_actions
from needlework.datasets.transfer import import_bytes
from needlework.formats.garage import DEFLECTION
from store.annotations import get_value, set_annotation
from tests.conftest import ROOT, garage_records, jsonl
from tests.page_keys import TAB, as_tab, key_data, move, press


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


def act(app_db, *actions: dict) -> None:
    """Deliver actions as the outbox does (the key script makes them in the browser;
    tests/browser/test_keys.py drives that part)."""
    delivery = apply_actions(app_db, [dict(a, id=f"test-{uuid.uuid4().hex}", dataset="ground",
                                           annotator="ana") for a in actions])
    assert delivery.error is None and not delivery.rejected, delivery


def set_label(item: str, n: int, value: str | None) -> dict:
    return {"kind": "set", "item": item, "field": f"label:{n}", "value": value}


def test_annotate_shows_labels_delivered_by_the_outbox(app_db):
    at = open_page("app_pages/annotate.py", annotator="ana")
    assert at.query_params["item"] == "sample-1"
    act(app_db, set_label("sample-1", 1, "ANSWER-THE-QUESTION"), set_label("sample-1", 2, "irrelevant"))
    at.run()
    assert not at.exception
    html = " ".join(h.proto.body for h in at.main.get("html"))
    assert "✓ saved" in html and "by ana" in html and "not labeled yet" in html
    assert chosen_labels(at) == {1: ["2"], 2: ["1"]}  # the saved labels' buttons
    act(app_db, set_label("sample-1", 1, None))
    at.run()
    assert chosen_labels(at) == {2: ["1"]}


def chosen_labels(at) -> dict[int, list[str]]:
    """Passage number → the label keys of its buttons drawn as chosen (the card's HTML)."""
    found: dict[int, list[str]] = {}
    for h in at.main.get("html"):
        for number, key in re.findall(r'<button[^>]*class="nw-label-button nw-chosen"[^>]*'
                                      r'data-nw-passage="(\d+)" data-nw-label="(\d)"', h.proto.body):
            found.setdefault(int(number), []).append(key)
    return found


def test_annotate_deep_link_and_item_navigation(app_db):
    at = open_page("app_pages/annotate.py", annotator="ana", item="sample-2")
    assert at.query_params["item"] == "sample-2"
    assert press(at, "annotate", "next")["item"] == "sample-3"
    assert at.query_params["item"] == "sample-3"
    assert at.button(key="nw-key-item-next").disabled
    assert press(at, "annotate", "next") is None  # nothing after the last one: stays
    assert at.query_params["item"] == "sample-3"
    press(at, "annotate", "previous")
    assert at.query_params["item"] == "sample-2"
    for n in (1, 2, 3):  # finish sample-2
        set_annotation(app_db, "ground", "sample-2", "ana", f"label:{n}", "UNKNOWN")
    set_annotation(app_db, "ground", "sample-2", "ana", "answer", "x [cite_1]")
    at.run()
    press(at, "annotate", "unfinished")
    assert at.query_params["item"] == "sample-3"
    assert key_data(at, "annotate")["moves"]["unfinished"]["item"] == "sample-1"
    press(at, "annotate", "unfinished")
    assert at.query_params["item"] == "sample-1"
    # the page's data says where each key leads, with the passages and the cursor there
    moves = key_data(at, "annotate")["moves"]
    assert moves["next"] == {"item": "sample-2", "n": 3, "cursor": 1}
    assert "previous" not in moves


def test_a_page_load_whose_first_run_was_stopped_early_still_reads_its_link(app_db):
    """A page load's first run may be stopped before the page notes that it opened (the
    outbox asks for a rerun the moment it has told the server its tab; a busy server is
    still drawing the sidebar): the next run knows the tab but is no reconnection, so
    the link counts, not the tab's last place."""
    at = open_page("app_pages/annotate.py", annotator="ana", item="sample-1")
    as_tab(at)
    move(at, "annotate", "ground", "sample-3", cursor=2)  # the tab's place: sample-3
    again = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    again.session_state["annotator"] = "ana"
    again.switch_page("app_pages/annotate.py")
    again.query_params.update({"dataset": "ground", "item": "sample-2"})
    again.run()  # the reload's first run (no tab yet)...
    # ...as if stopped right after the sidebar's outbox: nothing of the page noted yet
    for key in ("nw-page", "nw-arrived", "nw-unplaced", "nw-nav-current|ground"):
        if key in again.session_state:
            del again.session_state[key]
    as_tab(again)  # the rerun the outbox asked for: it knows the tab
    assert again.query_params["item"] == "sample-2"
    assert positions.get(store.connect(), "", TAB, "annotate", "ground").item == "sample-2"


@pytest.mark.slow
def test_the_link_counts_when_the_page_opens_and_the_tab_stays_where_it_moved(app_db):
    """A session's first run (a reload, a restart, a link) opens where ``?item=`` says;
    the runs that follow draw where the server has the tab, whatever address their
    requests carry (they lag behind the keys); the page opened again from a link reads
    the link again."""
    at = open_page("app_pages/annotate.py", annotator="ana", item="sample-1")
    as_tab(at)
    move(at, "annotate", "ground", "sample-3", cursor=2)
    assert at.query_params["item"] == "sample-3"
    assert key_data(at, "annotate")["cursor"] == 2  # the cursor the move outlined
    for _ in range(3):  # requests sent before the browser had the new address
        at.query_params.update({"dataset": "ground", "item": "sample-1"})
        at.run()
        assert not at.exception, at.exception
        assert at.query_params["item"] == "sample-3"
    seq = key_data(at, "annotate")["seq"]
    at.switch_page("app_pages/data.py")  # another page, then a link back
    at.run()
    at.switch_page("app_pages/annotate.py")
    at.query_params.update({"dataset": "ground", "item": "sample-1"})
    at.run()
    assert at.query_params["item"] == "sample-1"
    assert key_data(at, "annotate")["seq"] > seq  # the page moved the tab: the script follows
    # another tab has a place of its own
    other = open_page("app_pages/annotate.py", annotator="ana", item="sample-2")
    as_tab(other, "apptest-tab-2")
    at.run()
    assert (at.query_params["item"], other.query_params["item"]) == ("sample-1", "sample-2")
    # a restarted server: the new session's first request already says which tab it is
    # (its address may lag behind the keys): where the server has the tab
    fresh = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    fresh.session_state["annotator"] = "ana"
    fresh.session_state["nw-outbox-tab"] = TAB
    fresh.switch_page("app_pages/annotate.py")
    fresh.query_params.update({"dataset": "ground", "item": "sample-3"})
    fresh.run()
    assert fresh.query_params["item"] == "sample-1"
    # a reload of this tab or Home's "Open ›", with no item (a first run cannot say which
    # tab it is): where the annotator left off, not the tab's last place; the tab goes there
    for n in (1, 2, 3):
        set_annotation(app_db, "ground", "sample-1", "ana", f"label:{n}", "UNKNOWN")
    set_annotation(app_db, "ground", "sample-1", "ana", "answer", "x [cite_1]")
    reload = open_page("app_pages/annotate.py", annotator="ana")
    as_tab(reload)
    assert reload.query_params["item"] == "sample-2"
    assert positions.get(store.connect(), "", TAB, "annotate", "ground").item == "sample-2"


def test_annotate_answer_checks_and_deflection(app_db):
    at = open_page("app_pages/annotate.py", annotator="ana")
    act(app_db, set_label("sample-1", 1, "irrelevant"))
    at.run()
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
    at.button(key="nw-deflect").click().run()
    assert get_value(app_db, "ground", "sample-1", "ana", "answer") == DEFLECTION
    assert get_value(app_db, "ground", "sample-1", "ana", "deflected") is True


def dim_buttons(at, mark: str) -> dict[int, list[int]]:
    """Dimension number (0-based, as the keys' Q1... less one) → the options of its buttons
    drawn with class ``mark`` (``nw-chosen``: the saved one, ``nw-file``: the file's)."""
    found: dict[int, list[int]] = {}
    for h in at.main.get("html"):
        for classes, dim, option in re.findall(
                r'<button type="button" class="(nw-dim-option[^"]*)" data-nw-dim="(\d+)" '
                r'data-nw-option="(\d+)"', h.proto.body):
            if mark in classes.split():
                found.setdefault(int(dim), []).append(int(option))
    return found


def set_dim(item: str, field: str, value: str | None) -> dict:
    return {"kind": "set", "item": item, "field": f"dim:{field}", "value": value}


def test_annotate_dimensions_categories_and_filters(app_db):
    at = open_page("app_pages/annotate.py", annotator="ana")
    # the file's own values are marked (YES, NO, YES, slow-changing, Simple, Tail), none chosen
    assert dim_buttons(at, "nw-file") == {0: [0], 1: [1], 2: [0], 3: [1], 4: [0], 5: [2]}
    assert dim_buttons(at, "nw-chosen") == {}
    # time sensitivity fast-changing: two fields, as the option button or Q 4 3 sends it
    act(app_db, set_dim("sample-1", "question_sensitive", "YES"),
        set_dim("sample-1", "question_type", "FAST-CHANGING"))
    at.run()
    assert get_value(app_db, "ground", "sample-1", "ana", "dim:question_type") == "FAST-CHANGING"
    assert get_value(app_db, "ground", "sample-1", "ana", "dim:question_sensitive") == "YES"
    act(app_db, set_dim("sample-1", "question_complexity", "Set"))
    at.run()
    assert get_value(app_db, "ground", "sample-1", "ana", "dim:question_complexity") == "Set"
    assert dim_buttons(at, "nw-chosen") == {3: [2], 4: [2]}
    act(app_db, set_dim("sample-1", "question_sensitive", "NO"))  # static, whatever the type
    at.run()
    assert dim_buttons(at, "nw-chosen") == {3: [0], 4: [2]}
    by_label(at.selectbox, "Category · Q7").set_value("Travel").run()
    assert get_value(app_db, "ground", "sample-1", "ana", "dim:question_category") == "Travel"
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
    # search jumps to the match (issue 18, point 13)
    assert len(by_label(at.selectbox, "Question").options) == 1
    assert at.query_params["item"] == "sample-2"
    assert any("1 of 3 questions match" in c.value for c in at.caption)
    as_tab(at)
    move(at, "annotate", "ground", "sample-3")  # a question the search does not keep
    assert at.query_params["item"] == "sample-3"
    assert len(by_label(at.selectbox, "Question").options) == 2  # + current (filtered out)
    assert any("filtered out" in c.value for c in at.caption)


def test_annotate_without_name_is_read_only(app_db):
    at = open_page("app_pages/annotate.py")
    assert any("Enter your name" in w.value for w in at.warning)
    assert at.button(key="nw-key-2").disabled


def test_annotate_other_kind_says_what_to_do(app_db):
    import_bytes(app_db, jsonl([{"id": "p1", "prompt": "p", "chosen": ["a"], "rejected": ["b"],
                                 "subset": "QA"}]), "pref.jsonl", format="lfrb")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.run()
    at.selectbox(key="dataset").set_value("pref").run()
    at.switch_page("app_pages/annotate.py")
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
    at = open_page("app_pages/agreement.py", annotator="rev")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Annotators who labeled"] == "2"
    assert metrics["Passages labeled by ≥ 2"] == "2"
    links = at.get("page_link")
    assert len(links) == 1 and "2\\. What does a ticket cost" in links[0].proto.label
    assert "item=sample-2" in str(links[0].proto)
    seg = by_label(at.segmented_control, "Final label of passage 2")
    seg.set_value("OUTDATED").run()
    assert get_value(disputed, "ground", "sample-2", "rev", "final:label:2") == "OUTDATED"
    assert not at.exception
    # the reviewer's note, which the annotators see with the decision (test_teams_blind)
    note = next(t for t in at.text_input if t.key and t.key.startswith("nw-final-note|ground|"))
    note.set_value("dated 2019: outdated").run()
    assert get_value(disputed, "ground", "sample-2", "rev", "final:note") == "dated 2019: outdated"
    at = open_page("app_pages/annotate.py", annotator="ana", item="sample-2")
    assert any("dated 2019: outdated" in h.proto.body for h in at.main.get("html"))


def test_agreement_attribution_tab(disputed):
    at = open_page("app_pages/agreement.py", annotator="rev")
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
    at = open_page("app_pages/agreement.py")
    assert not at.exception


def test_question_picker_opens_an_item(app_db):
    at = open_page("app_pages/annotate.py", annotator="ana")
    by_label(at.selectbox, "Question").set_value("sample-3").run()
    assert at.query_params["item"] == "sample-3"
    assert not at.exception



def test_flagged_skipped_and_commented_questions_are_a_filter_and_a_mark_in_the_picker(app_db):
    for item, field, value, who in (("sample-2", "flag", "flagged", "ana"),
                                    ("sample-3", "comment", "check the date", "ana"),
                                    ("sample-1", "skipped", "skipped", "bob")):  # not ana's
        set_annotation(app_db, "ground", item, who, field, value)
    at = open_page("app_pages/annotate.py", annotator="ana")
    picker = by_label(at.selectbox, "Question")
    marks = {o.split(". ")[0].split()[-1]: o for o in picker.options}
    assert marks["2"].endswith("🚩") and marks["3"].endswith("💬")
    assert not marks["1"].endswith(("🚩", "⏭", "💬"))
    at.multiselect(key="nw-nav-f-marks|ground").set_value(["flag", "comment"]).run()
    assert not at.exception
    assert len(by_label(at.selectbox, "Question").options) == 2
    assert any("2 of 3 questions match" in c.value for c in at.caption)
    at.multiselect(key="nw-nav-f-marks|ground").set_value(["skipped"]).run()
    assert any("0 of 3 questions match" in c.value for c in at.caption)
    # a flag set while the filter is on: the list follows
    set_annotation(app_db, "ground", "sample-1", "ana", "skipped", "skipped")
    at.run()
    assert any("1 of 3 questions match" in c.value for c in at.caption)
