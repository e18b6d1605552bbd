"""Issue 50: a page opened with no item (Home's Open, a new tab) resumes at the question
or comparison this person last worked on, not at the list's first one not done."""

from __future__ import annotations

import store
from needlework.actions import positions
from needlework.verdicts import make_value
from store.annotations import set_annotation
from tests.page_keys import TAB, as_tab, key_data, move
from tests.test_grounding_pages import (
    app_db,  # noqa: F401 - the fixture
    open_page,
)
from tests.test_review_page import app_db as review_db  # noqa: F401 - the fixture
from tests.test_review_page import open_review


def test_annotate_opened_without_an_item_returns_to_the_question_last_worked_on(app_db):  # noqa: F811
    # ana flagged question 1 (so it is not done) and then worked on question 3
    set_annotation(app_db, "ground", "sample-1", "ana", "flag", True)
    set_annotation(app_db, "ground", "sample-3", "ana", "label:1", "irrelevant")
    at = open_page("app_pages/annotate.py", annotator="ana")  # a new tab, Home's Open
    as_tab(at)
    assert at.query_params["item"] == "sample-3"
    assert key_data(at, "annotate")["item"] == "sample-3"
    db = store.connect()
    assert positions.get(db, "", TAB, "annotate", "ground").item == "sample-3"
    # where the tab moved after that counts too (the sidebar back to Annotate)
    move(at, "annotate", "ground", "sample-2")
    at.switch_page("app_pages/data.py")
    at.run()
    at.switch_page("app_pages/annotate.py")
    at.query_params.pop("item", None)
    at.run()
    assert at.query_params["item"] == "sample-2"
    # another person's work is not theirs: bo starts at his first question not done
    other = open_page("app_pages/annotate.py", annotator="bo")
    assert other.query_params["item"] == "sample-1"


def test_review_opened_without_a_link_returns_to_the_last_comparison_worked_on(review_db):  # noqa: F811
    db = store.connect(review_db)
    set_annotation(db, "lf", "RAG_2", "ana", "verdict:0:0", make_value("tie"))
    db.conn.close()
    at = open_review("lf", "ana")
    as_tab(at)
    data = key_data(at, "review")
    # the comparison after the one last given a verdict, not QA_1's first
    assert (data["item"], data["i"], data["j"]) == ("RAG_2", 0, 1)
    assert (at.query_params["item"], at.query_params["i"], at.query_params["j"]) == (
        "RAG_2", "1", "2")
    fresh = open_review("lf", "bo")
    assert key_data(fresh, "review")["item"] == "QA_1"
