"""Review's reading switches (issue 59, point 11): the view (Auto, Side by side,
Differences) and Markdown are each person's, kept in the database like the other view
choices, so a page load keeps them; Whole text (W) draws both texts whole side by side
too; the sidebar names the item the verdict is for."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.datasets.transfer import import_bytes
from needlework.teams.permissions import PermissionDenied
from needlework.view.prefs import review_markdown
from store.audit import iter_events
from tests.conftest import ROOT, jsonl
from tests.teams_fixtures import team
from tests.test_review_page import LFRB, html, markdown, open_review


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    path = tmp_path / "review.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, jsonl(LFRB), "lf.jsonl", dataset="lf")
    yield path
    db.conn.close()


def open_at(who: str, item: str, j: int) -> AppTest:
    """Review of ``lf`` as ``who`` from a link to chosen 1 vs rejected ``j`` (from 1)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["dataset"] = "lf"
    at.session_state["annotator"] = who
    at.query_params.update(item=item, i="1", j=str(j))
    at.run()
    at.switch_page("app_pages/review.py")
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_view_and_markdown_are_each_persons_and_survive_a_page_load(app_db):
    at = open_review("lf", "ana")
    assert at.segmented_control(key="rv_view").value == "auto"
    at.segmented_control(key="rv_view").set_value("side").run()
    at.toggle(key="rv_markdown").set_value(True).run()
    assert not at.exception, at.exception
    again = open_review("lf", "ana")  # a new session: a reload, a new tab, another browser
    assert again.segmented_control(key="rv_view").value == "side"
    assert again.toggle(key="rv_markdown").value is True
    other = open_at("bob", "QA_1", 2)  # the choice is ana's (side by side here by Auto)
    assert other.segmented_control(key="rv_view").value == "auto"
    assert other.toggle(key="rv_markdown").value is False
    # the differences view, kept too; Auto again, kept as Auto
    again.segmented_control(key="rv_view").set_value("diff").run()
    assert open_review("lf", "ana").segmented_control(key="rv_view").value == "diff"
    again.segmented_control(key="rv_view").set_value("auto").run()
    assert open_review("lf", "ana").segmented_control(key="rv_view").value == "auto"


def test_without_a_name_the_view_lasts_for_the_session(app_db):
    at = open_review("lf")
    at.segmented_control(key="rv_view").set_value("side").run()
    at.run()
    assert at.segmented_control(key="rv_view").value == "side"
    assert not at.exception, at.exception



def test_a_switch_clicked_on_a_run_drawn_before_the_name_is_kept_under_the_name(app_db):
    """After a server restart a page's first run may not know the name yet; the name comes
    back with the next click (js/name_memory.js). The click is kept under the name the
    session has when it is handled, not under the empty name its run was drawn with."""
    at = open_review("lf", "")
    at.segmented_control(key="rv_view").set_value("side").run()  # the session's, no name
    at.session_state["annotator"] = "ana"
    at.toggle(key="rv_markdown").set_value(True).run()
    assert not at.exception, at.exception
    assert review_markdown(store.connect(app_db), "ana") is True

def test_whole_text_draws_both_texts_whole_side_by_side(app_db):
    at = open_review("lf", "ana", item="RAG_2")
    at.segmented_control(key="rv_view").set_value("side").run()
    whole = at.toggle(key="rv_whole")
    assert not whole.disabled and whole.value is False
    assert "Paragraph 199" not in html(at)  # the first part of each
    whole.set_value(True).run()
    assert not at.exception, at.exception
    assert html(at).count("Paragraph 199") == 2  # both texts, whole
    assert "W shows the first part" in "\n".join(c.value for c in at.caption)
    at.toggle(key="rv_whole").set_value(False).run()
    assert "Paragraph 199" not in html(at)


def test_two_short_texts_are_whole_already_and_the_switch_says_so(app_db):
    at = open_at("ana", "QA_1", 2)  # two short texts, side by side by Auto
    whole = at.toggle(key="rv_whole")
    assert whole.disabled and "whole already" in whole.help


def test_the_sidebar_names_the_item_the_verdict_is_for(app_db):
    at = open_review("lf", "ana", item="QA_1")
    assert "**Verdict** on item QA\\_1 · chosen vs rejected 1" in markdown(at)


def test_view_prefs_refuse_an_unknown_view_and_another_persons_choice(tmp_path):
    from needlework.view.prefs import (  # noqa: PLC0415
        review_markdown,
        review_view,
        set_review_markdown,
        set_review_view,
    )

    db = store.connect(tmp_path / "p.db")
    assert review_view(db, "ana") == "auto" and review_markdown(db, "ana") is False
    assert review_view(db, "") == "auto"
    assert set_review_view(db, "ana", "side", actor=None) == "auto"
    assert set_review_markdown(db, "ana", True, actor=None) is False
    assert review_view(db, "ana") == "side" and review_markdown(db, "ana") is True
    with pytest.raises(ValueError, match="unknown view"):
        set_review_view(db, "ana", "sideways", actor=None)
    with pytest.raises(ValueError, match="a name is needed"):
        set_review_view(db, " ", "diff", actor=None)
    people = team(db, annotators=("ana", "bo"))
    with pytest.raises(PermissionDenied):
        set_review_view(db, "ana", "diff", actor=people["bo"])
    set_review_view(db, "bo", "diff", actor=people["bo"])
    assert review_view(db, "bo") == "diff" and review_view(db, "ana") == "side"
    # a reading choice decides nothing the server records: no audit event
    assert not [e for e in iter_events(db) if str(e["target"]).startswith("review_")]
