"""Team mode's Home for each role (issue 26, point 6): with every dataset kind present
(grounding, preference, needle) Home opens without an error for an annotator, a reviewer
and an admin; it links only to pages the role has; an annotator sees the datasets assigned
to them and their own work, never another annotator's."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from needlework.datasets.transfer import import_bytes
from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset
from tests.conftest import jsonl
from tests.teams_fixtures import finish_grounding, grounding, open_as, preference, team_mode_db
from tests.test_home_page import NEEDLE


@pytest.fixture
def team_db(tmp_path, monkeypatch):
    """Team mode; a grounding set assigned to ana and bob (each item to both), a second
    grounding set assigned to bob only, a preference set and a needle set; bob finished
    one item, ana another."""
    db = team_mode_db(tmp_path, monkeypatch)
    users = {name: accounts.get_user(db, name) for name in ("ana", "bob")}
    keys = grounding(db, 3, "g")
    bobs = grounding(db, 2, "bobs-only")
    preference(db, 2, "prefs")
    import_bytes(db, jsonl([dict(NEEDLE, id=f"n{i}") for i in range(3)]), "needles.jsonl",
                 format="needle", dataset="needles")
    assign_dataset(db, "g", ["ana", "bob"], per_item=2)
    assign_dataset(db, "bobs-only", ["bob"], per_item=1)
    finish_grounding(db, "g", keys[0], users["bob"])
    finish_grounding(db, "bobs-only", bobs[0], users["bob"])
    finish_grounding(db, "g", keys[1], users["ana"])
    return db


def home(db, who: str) -> AppTest:
    return open_as(db, who)


def text_of(at: AppTest) -> str:
    return "\n".join([c.value for c in at.caption] + [m.value for m in at.markdown]
                     + [str(t.value) for t in at.text] + [h.proto.body for h in at.get("html")])


def links(at: AppTest) -> list[str]:
    """The page of every page link drawn."""
    return [pl.proto.page for pl in at.get("page_link")]


@pytest.mark.parametrize("who", ["ana", "rita", "lead"])
def test_home_opens_for_every_role_with_every_kind_present(team_db, who) -> None:
    at = home(team_db, who)
    pages = set(links(at))
    if who in ("lead", "rita"):  # the needle lab: reviewers and admins ([pages] needle_lab)
        assert any(p.endswith("needle") for p in pages)
    else:  # not an annotator's page: no link to it
        assert not any(p.endswith("needle") for p in pages), pages


def test_an_annotator_sees_their_datasets_and_their_own_work_only(team_db) -> None:
    at = home(team_db, "ana")
    text = text_of(at)
    assert "bobs-only" not in text and "prefs" not in text and "needles" not in text
    assert "ana labeled passage 1 as Answer" in text and ">g</div>" in text
    assert "by bob" not in text and "bob " not in text, text
    assert "1 of 3 items done by ana" in text
    assert "Your recent activity" in [s.value for s in at.subheader]
    assert not [t for t in at.dataframe if "assignments done" in t.value.columns]


def test_a_reviewer_sees_everyones_work(team_db) -> None:
    text = text_of(home(team_db, "rita"))
    assert "by bob" in text and "by ana" in text and "bobs-only" in text
