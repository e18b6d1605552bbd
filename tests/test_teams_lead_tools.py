"""The lead's tools (issue 57, point 4), in AppTest: the Audit page's dates apply as typed;
after a reload the reassign's kept items and their button are still there, named by number
and text; a gold item's leaving says why; counts in the singular; the Users page shows a
paused account's status whole, and Unlock lifts it. tests/browser/test_teams_lead_tools.py
drives the same in Chromium."""

from __future__ import annotations

import pytest

from needlework.teams import accounts
from needlework.teams.accounts import SignInRefused
from needlework.teams.assignment import ReassignSummary, assign_dataset, reassign_unfinished
from tests.teams_fixtures import grounding, open_as, team_mode_db


def plain(text: str) -> str:
    """A label's text without its Markdown escapes."""
    return text.replace("\\", "")


@pytest.fixture
def team_db(tmp_path, monkeypatch):
    return team_mode_db(tmp_path, monkeypatch)


def test_a_typed_date_filters_the_events_and_a_wrong_one_is_said(team_db):
    at = open_as(team_db, "lead", "app_pages/audit.py")

    def count() -> str:
        return plain(next(m.value for m in at.markdown if " match" in m.value))

    assert "events match" in count()  # the fixture's accounts and lead's sign-in
    at.text_input(key="nw-audit-since").input("2099-11-30").run()
    assert not at.exception, at.exception
    assert count() == "**0** events match from 2099-11-30 (UTC)"
    at.text_input(key="nw-audit-since").input("2026-11-31").run()
    assert [plain(w.value) for w in at.warning] == [
        "From: '2026-11-31' is not a date: write YYYY-MM-DD (or YYYY-MM-DDTHH:MM), in UTC. "
        "It is not applied."]
    assert "events match" in count() and "from" not in count()
    at.text_input(key="nw-audit-since").input("2000-01-01").run()
    at.text_input(key="nw-audit-until").input("2000-01-02").run()
    assert count() == "**0** events match from 2000-01-01 to 2000-01-02 (UTC)"


def test_after_a_reload_the_kept_items_and_their_button_are_still_there(team_db):
    lead = accounts.get_user(team_db, "lead")
    grounding(team_db, 4)
    assign_dataset(team_db, "g", ["ana", "bob"], per_item=2, actor=lead)
    done = reassign_unfinished(team_db, "g", "bob", actor=lead)  # ana has them all
    assert len(done.kept) == 4
    at = open_as(team_db, "lead", "app_pages/assign.py", "g")  # a new session: a reload
    assert at.selectbox(key="nw-reassign-from").value == "bob"  # not the first holder, ana
    assert at.button(key="nw-reassign-drop").label == "Take these 4 items out of bob's queue"
    kept = [plain(c.value) for c in at.caption if plain(c.value).startswith("1. ")]
    assert kept == ["; ".join(f"{k}. What does a ticket cost at the Lakeside Museum?"
                              for k in range(1, 5))]
    at.button(key="nw-reassign-drop").click().run()
    assert any(plain(s.value) == "4 items taken out of bob's queue; every annotation on them "
               "stays." for s in at.success)


def test_one_kept_item_is_said_in_the_singular(team_db):
    lead = accounts.get_user(team_db, "lead")
    grounding(team_db, 1)
    assign_dataset(team_db, "g", ["ana", "bob"], per_item=2, actor=lead)
    reassign_unfinished(team_db, "g", "bob", actor=lead)
    at = open_as(team_db, "lead", "app_pages/assign.py", "g")
    assert at.button(key="nw-reassign-drop").label == "Take this item out of bob's queue"
    at.button(key="nw-reassign-drop").click().run()
    assert any(plain(s.value) == "1 item taken out of bob's queue; every annotation on it "
               "stays." for s in at.success)


def test_gold_items_leaving_say_why_in_the_singular():
    assert ReassignSummary({"ana": 1}, 1, []).sentence("cy") == (
        "1 unfinished item of cy moved: 1 to ana. 1 gold item left cy's queue instead of "
        "moving: gold items are in every annotator's queue already.")
    assert ReassignSummary({}, 2, ["k"]).sentence("cy") == (
        "No unfinished item of cy moved. 1 item kept in cy's queue: everyone else already "
        "has it. 2 gold items left cy's queue instead of moving: gold items are in every "
        "annotator's queue already.")


def test_a_paused_accounts_status_is_whole_and_unlock_lifts_it(tmp_path, monkeypatch):
    db = team_mode_db(tmp_path, monkeypatch, people={"lead": "admin", "rita": "admin"})
    for _ in range(5):
        with pytest.raises(SignInRefused):
            accounts.sign_in(db, "lead", "wrong-password-1")
    until = accounts.get_user(db, "lead").locked_until
    at = open_as(db, "rita", "app_pages/users.py")
    [table] = [d.value for d in at.dataframe if "status" in d.value.columns]
    assert dict(zip(table["name"], table["status"], strict=True)) == {
        "lead": "active, paused", "rita": "active"}
    assert list(table.columns[:2]) == ["name", "status"]  # seen without scrolling
    assert f"lead: active; sign-in paused in some browsers until {until[11:16]} UTC (Paused " \
           "sign-ins, below)." in [plain(c.value) for c in at.caption]
    at.selectbox(key="nw-user-pick").set_value("lead").run()
    assert not at.button(key="nw-user-unlock").disabled
    at.button(key="nw-user-unlock").click().run()
    assert accounts.get_user(db, "lead").locked_until is None
    [table] = [d.value for d in at.dataframe if "status" in d.value.columns]
    assert set(table["status"]) == {"active"}
    assert at.button(key="nw-user-unlock").disabled
