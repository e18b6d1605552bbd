"""Questions left for later come back (issue 59, point 12): L opens the next question the
annotator flagged, or skipped and has not finished since, wrapping around, along the
(filtered) list, through the navigator like N / P / U; the guide says where a page opens
as the code decides it; Home's Open › says the same rule."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from needlework.actions.positions import Place, Worked, resume
from needlework.grounding import keymap as km
from needlework.grounding import progress as gp
from store.annotations import set_annotation
from tests.page_keys import key_data, press
from tests.test_grounding_pages import app_db, open_page  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parents[1]


def _finish(db, key: str, who: str = "ana") -> None:
    for n in (1, 2, 3):
        set_annotation(db, "ground", key, who, f"label:{n}", "UNKNOWN")
    set_annotation(db, "ground", key, who, "answer", "x [cite_1]")


@pytest.fixture
def later(app_db):  # noqa: F811 - the fixture, imported above
    """sample-1 flagged; sample-3 skipped, not finished; sample-2 skipped then finished
    (nothing to come back to)."""
    set_annotation(app_db, "ground", "sample-1", "ana", "flag", "flagged")
    set_annotation(app_db, "ground", "sample-3", "ana", "skipped", "skipped")
    set_annotation(app_db, "ground", "sample-2", "ana", "skipped", "skipped")
    _finish(app_db, "sample-2")
    return app_db


def test_the_next_question_left_for_later_wraps_and_leaves_the_current_one_out(later):
    items = gp.make_list(later, "ground", "ana", gp.ItemFilter(), 0)
    assert items.next_for_later(later, "sample-1", 0) == "sample-3"
    assert items.next_for_later(later, "sample-2", 1) == "sample-3"
    assert items.next_for_later(later, "sample-3", 2) == "sample-1"  # around the end
    # a finished question skipped once is not brought back; a flag stays until unflagged
    _finish(later, "sample-3")
    assert items.next_for_later(later, "sample-1", 0) is None  # only itself is left
    assert items.next_for_later(later, "sample-2", 1) == "sample-1"
    _finish(later, "sample-1")
    assert items.next_for_later(later, "sample-2", 1) == "sample-1"
    assert gp.make_list(later, "ground", "bob", gp.ItemFilter(), 0).next_for_later(
        later, "sample-1", 0) is None  # the marks are ana's


def test_a_filtered_list_and_a_queue_bring_back_only_their_own(later):
    shown = gp.make_list(later, "ground", "ana", gp.ItemFilter(text="sample-3"), 0)
    assert shown.keys == ["sample-3"]
    assert shown.next_for_later(later, "sample-1", 0) == "sample-3"
    assert shown.next_for_later(later, "sample-3", 2) is None
    queue = gp.make_list(later, "ground", "ana", gp.ItemFilter(), 0,
                         queue=["sample-3", "sample-2", "sample-1"])
    assert queue.next_for_later(later, "sample-3", 2) == "sample-1"
    assert queue.next_for_later(later, "sample-1", 0) == "sample-3"  # the queue's order


def test_l_on_the_page_goes_through_the_navigator_like_u(later):
    at = open_page("app_pages/annotate.py", annotator="ana", item="sample-2")
    data = key_data(at, "annotate")
    assert data["moves"]["later"] == {"item": "sample-3", "n": 3, "cursor": 1}
    assert "none flagged" in data["done"]["later"]  # what L says when it leads nowhere
    later_button = at.button(key=f"nw-key-{km.NEXT_LATER}")
    assert not later_button.disabled and "left for later" in later_button.help
    assert press(at, "annotate", "later")["item"] == "sample-3"
    assert at.query_params["item"] == "sample-3"
    assert press(at, "annotate", "later")["item"] == "sample-1"
    assert at.query_params["item"] == "sample-1"
    # nothing else left for later: the button is off and the data names no move
    set_annotation(later, "ground", "sample-1", "ana", "flag", None)
    _finish(later, "sample-3")
    at.run()
    assert "later" not in key_data(at, "annotate")["moves"]
    assert at.button(key=f"nw-key-{km.NEXT_LATER}").disabled


def test_the_key_is_in_the_key_map_the_guide_and_the_key_script():
    assert ("L", next(what for keys, what in km.KEYMAP if keys == "L")) in km.KEYMAP
    taken = [keys for keys, _ in km.KEYMAP]
    assert taken.count("L") == 1
    script = (ROOT / "components" / "js" / "annotate_input.js").read_text(encoding="utf-8")
    assert re.search(r'const SEEK = \{[^}]*\bl: "later"', script)
    assert re.search(r'const KEYS = "[^"]*l[^"]*"', script)


def test_the_guide_says_where_a_page_opens_as_resume_decides_it():
    """A page opened with no link resumes where the person last worked (a later question
    than the first unfinished one, here), not at the first unfinished question."""

    class Ground:
        def allows(self, item): return True
        def exists(self, place): return True
        def finished(self, place): return place.item == "q2"
        def next_open(self, after):
            return Place("q1") if after is None else Place("q4")
        def keeps(self, place): return True
        def first(self): return Place("q1")

    worked = [Worked(Place("q3"), "2026-01-02T00:00:00", saved=True)]
    assert resume(worked, Ground())[0] == Place("q3")  # where you last worked, not q1
    finishing = [Worked(Place("q2"), "2026-01-02T00:00:00", saved=True)]
    assert resume(finishing, Ground())[0] == Place("q4")  # the next one not finished
    assert resume([], Ground())[0] == Place("q1")  # the first time: the first unfinished
    guide = " ".join((ROOT / "docs" / "annotation.md").read_text(encoding="utf-8").split())
    assert "opens the dataset at your first unfinished question" not in guide
    assert "else at your first unfinished question" not in guide
    for words in ("the page opens where you last worked",
                  "when that save finished the question, the next question after it you "
                  "have not finished; the first time, your first unfinished question",
                  "Home's **Open ›** opens the dataset where you last worked on it"):
        assert words in guide, words


def test_homes_open_link_says_the_same_rule(app_db):  # noqa: F811 - the fixture
    at = open_page("app_pages/home.py", annotator="ana")
    links = [e.proto for e in at.main.get("page_link") if e.proto.label == "Open ›"]
    assert links and all("last worked" in link.help and "first unfinished" in link.help
                         for link in links), [link.help for link in links]
