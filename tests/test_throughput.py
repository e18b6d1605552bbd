"""Throughput for the lead: work finished per annotator per day, the rate and the end."""

from __future__ import annotations

from datetime import date

import pytest

from needlework.teams import accounts
from needlework.teams.permissions import PermissionDenied
from needlework.teams.throughput import forecast, throughput
from tests.teams_fixtures import (
    finish_grounding,
    grounding,
    open_as,
    preference,
    team_mode_db,
    verdict,
)

TODAY = date(2026, 11, 26)


def test_the_rate_is_the_last_weeks_work_a_day_and_the_end_follows_from_it():
    daily = [("ana", "2026-11-26", 3), ("bob", "2026-11-25", 4), ("ana", "2026-11-20", 7),
             ("ana", "2026-11-19", 100)]  # the 19th is outside the last 7 days
    rate, end = forecast(daily, 20, TODAY)
    assert rate == pytest.approx(14 / 7)
    assert end == date(2026, 12, 6)  # 20 left at 2 a day: 10 days
    assert forecast(daily, 0, TODAY)[1] == TODAY
    assert forecast([("ana", "2026-11-01", 5)], 3, TODAY) == (0.0, None)


@pytest.fixture
def team_db(tmp_path, monkeypatch):
    db = team_mode_db(tmp_path, monkeypatch)
    grounding(db, 4, "g")
    preference(db, 2, "p")
    return db


def test_items_done_per_annotator_per_day_from_the_database(team_db):
    from needlework.teams.assignment import assign_dataset  # noqa: PLC0415

    assign_dataset(team_db, "g", ["ana", "bob"], per_item=1)
    lead = accounts.get_user(team_db, "lead")
    mine = [r[0] for r in team_db.execute(
        "select item_key from assignments where dataset = 'g' and annotator = 'ana'")]
    finish_grounding(team_db, "g", mine[0], accounts.get_user(team_db, "ana"))
    tp = throughput(team_db, "g", date.today(), actor=lead)
    assert tp.unit == "items" and [(w, n) for w, _, n in tp.daily] == [("ana", 1)]
    assert tp.left == 3 and tp.rate == pytest.approx(1 / 7) and tp.end is not None
    with pytest.raises(PermissionDenied):
        throughput(team_db, "g", date.today(), actor=accounts.get_user(team_db, "ana"))


def test_comparisons_reviewed_per_day_for_a_preference_dataset(team_db):
    from needlework.actions.writes import write_annotation  # noqa: PLC0415
    from needlework.teams.assignment import assign_dataset  # noqa: PLC0415

    assign_dataset(team_db, "p", ["bob"], per_item=1)
    write_annotation(team_db, "p", "q0", "verdict:0:0", verdict("agree"),
                     actor=accounts.get_user(team_db, "bob"))
    write_annotation(team_db, "p", "q0", "verdict:0:1", verdict("flip"),
                     actor=accounts.get_user(team_db, "bob"))
    tp = throughput(team_db, "p", date.today(), actor=accounts.get_user(team_db, "lead"))
    assert tp.unit == "comparisons" and [(w, n) for w, _, n in tp.daily] == [("bob", 2)]
    assert tp.left == 2 * 3 - 2


@pytest.mark.slow
def test_the_quality_page_shows_the_throughput(team_db):
    at = open_as(team_db, "lead", "app_pages/quality.py", "g")
    assert any("a day over the last 7 days" in c.value for c in at.caption)
    assert not at.exception
