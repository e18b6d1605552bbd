"""The annotate page in team mode: a signed-in annotator moves through their own queue
(needlework.teams.assignment's queue and next_item), a reviewer without one through the
whole list; local mode keeps the whole list."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset, queue
from store.annotations import set_annotation
from tests.page_keys import press
from tests.teams_fixtures import grounding, open_as, team_mode_db


@pytest.fixture
def team_db(tmp_path, monkeypatch):
    db = team_mode_db(tmp_path, monkeypatch)
    grounding(db, 8, "g")
    assign_dataset(db, "g", ["ana", "bob"], per_item=1, actor=accounts.get_user(db, "lead"))
    return db


def annotate(db, who: str) -> AppTest:
    return open_as(db, who, "app_pages/annotate.py", "g")


def ask(at: AppTest, db, who: str, seek: str) -> str:
    """N / P / U as the key script sends them (a move, as the signed-in user); returns
    the item the page then shows."""
    press(at, "annotate", seek, actor=accounts.get_user(db, who))
    assert not at.exception, at.exception
    return at.query_params["item"]


def test_an_annotator_moves_through_their_own_queue(team_db):
    mine = [e.key for e in queue(team_db, "g", "ana")]
    theirs = [e.key for e in queue(team_db, "g", "bob")]
    assert mine and theirs and not set(mine) & set(theirs)
    at = annotate(team_db, "ana")
    assert at.query_params["item"] == mine[0]  # where ana starts: her first unfinished
    assert any(f"{len(mine)} questions in your queue" in c.value for c in at.caption)
    assert ask(at, team_db, "ana", "next") == mine[1]
    assert ask(at, team_db, "ana", "previous") == mine[0]
    for n in (1, 2, 3):  # ana finishes her second item: U skips it
        set_annotation(team_db, "g", mine[1], "ana", f"label:{n}", "UNKNOWN")
    set_annotation(team_db, "g", mine[1], "ana", "answer", "Yes [cite_1].")
    at.run()
    assert ask(at, team_db, "ana", "unfinished") == mine[2]
    while at.query_params["item"] != mine[-1]:
        ask(at, team_db, "ana", "next")
    assert ask(at, team_db, "ana", "next") == mine[-1]  # the end of her queue: stays
    (picker,) = [w for w in at.selectbox if w.label == "Question"]
    shown = {int(option.split(" ", 2)[1].rstrip(".")) for option in picker.options}
    assert shown == {int(key.split("-")[1]) for key in mine}  # numbered as in the dataset


@pytest.mark.slow
def test_a_reviewer_without_a_queue_sees_the_whole_list(team_db):
    at = annotate(team_db, "rita")
    assert any("8 questions" in c.value for c in at.caption)
    assert ask(at, team_db, "rita", "next") == "sample-2"
