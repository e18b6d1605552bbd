"""Reassigning a leaver's items says what moved and what it kept (and why), and a lead
takes the kept items out of the leaver's queue: the function, the Assignment page and
the CLI."""

from __future__ import annotations

import json

import pytest

from needlework.teams import accounts
from needlework.teams.assignment import (
    AssignmentError,
    assign_dataset,
    drop_unfinished,
    queue,
    reassign_unfinished,
    unfinished_items,
)
from needlework.teams.permissions import PermissionDenied
from store.audit import iter_events
from tests.cli_here import run
from tests.teams_fixtures import (
    PASSWORDS,
    finish_grounding,
    grounding,
    open_as,
    team,
    team_mode_db,
)


def test_the_summary_says_what_moved_and_what_was_kept(db):
    people = team(db, annotators=("ana", "bob", "cy"))
    grounding(db, 6)
    assign_dataset(db, "g", ["ana", "bob", "cy"], per_item=2, actor=people["boss"])
    done = reassign_unfinished(db, "g", "cy", to=["ana"], actor=people["boss"])
    moved = done.moved.get("ana", 0)
    assert moved + len(done.kept) == 4  # cy had 4 items: ana took those she lacked
    text = done.sentence("cy")
    assert text.startswith(f"{moved} unfinished item{'s' if moved != 1 else ''} of cy moved: "
                           f"{moved} to ana.")
    assert f"{len(done.kept)} item" in text and "everyone else already has" in text
    assert sorted(unfinished_items(db, "g", "cy")) == sorted(done.kept)
    (event,) = [e for e in iter_events(db) if e["action"] == "assignment.reassigned"]
    assert json.loads(event["after"])["kept"] == done.kept


def test_the_lead_takes_kept_items_out_of_the_leavers_queue(db):
    people = team(db, annotators=("ana", "bob"))
    grounding(db, 3)
    assign_dataset(db, "g", ["ana", "bob"], per_item=2, actor=people["boss"])
    finish_grounding(db, "g", "sample-1", people["ana"])  # finished: stays hers
    from needlework.actions import writes  # noqa: PLC0415
    writes.write_annotation(db, "g", "sample-2", "label:1", "OUTDATED", actor=people["ana"])
    done = reassign_unfinished(db, "g", "ana", actor=people["boss"])
    assert done.kept == ["sample-2", "sample-3"]  # bob has them all
    with pytest.raises(PermissionDenied):
        drop_unfinished(db, "g", "ana", done.kept, actor=people["rita"])
    with pytest.raises(AssignmentError, match='"1. What does a ticket cost at the Lakeside '
                       'Museum[?]" is not an unfinished item of ana'):  # as the picker names it
        drop_unfinished(db, "g", "ana", ["sample-1", "sample-2"], actor=people["boss"])
    assert [e.key for e in queue(db, "g", "ana")] == ["sample-1", "sample-2", "sample-3"]
    assert drop_unfinished(db, "g", "ana", done.kept, actor=people["boss"]) == done.kept
    assert [e.key for e in queue(db, "g", "ana")] == ["sample-1"]
    assert [e.key for e in queue(db, "g", "bob")] == ["sample-1", "sample-2", "sample-3"]
    # her label on sample-2 stays
    assert db.execute("select count(*) from annotations where annotator = 'ana' and "
                      "item_key = 'sample-2'").fetchone()[0] == 1
    (event,) = [e for e in iter_events(db) if e["action"] == "assignment.dropped"]
    assert (event["by"], event["target"], event["about_dataset"]) == ("boss", "ana", "g")
    assert json.loads(event["before"]) == {"items": ["sample-2", "sample-3"]}
    with pytest.raises(AssignmentError, match="no unfinished item"):
        drop_unfinished(db, "g", "ana", actor=people["boss"])


@pytest.fixture
def team_db(tmp_path, monkeypatch):
    db = team_mode_db(tmp_path, monkeypatch)
    grounding(db, 4)
    assign_dataset(db, "g", ["ana", "bob"], per_item=2, actor=accounts.get_user(db, "lead"))
    return db


def plain(text: str) -> str:
    """A label's text without its Markdown escapes."""
    return text.replace("\\", "")


def test_the_page_shows_what_moved_lists_the_kept_items_and_drops_them(team_db):
    at = open_as(team_db, "lead", "app_pages/assign.py", "g")
    at.selectbox(key="nw-reassign-from").set_value("ana").run()
    at.button(key="nw-reassign-go").click().run()
    assert not at.exception, at.exception
    said = [plain(s.value) for s in at.success]
    assert any("No unfinished item of ana moved. 4 items kept in ana's queue: everyone else "
               "already has them." in s for s in said), said
    assert any(plain(c.value).startswith("1. What does a ticket cost at the Lakeside Museum?; 2. ")
               for c in at.caption)  # by number and text, as the pickers name items
    at.button(key="nw-reassign-drop").click().run()
    assert not at.exception, at.exception
    assert any("4 items taken out of ana's queue; every annotation on them stays."
               in plain(s.value) for s in at.success)
    assert queue(team_db, "g", "ana") == []
    assert not [b for b in at.button if b.key == "nw-reassign-drop"]


def test_the_cli_lists_the_kept_items_and_drops_them(team_db, monkeypatch):
    monkeypatch.setenv("NEEDLEWORK_PASSWORD", PASSWORDS["lead"])
    done = run(["reassign", "--dataset", "g", "--from", "ana", "--drop-kept", "--as", "lead"])
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[0] == ("No unfinished item of ana moved. 4 items kept in ana's queue: everyone "
                      "else already has them.")
    assert [line.split(" (")[0] for line in out[1:5]] == [f"  kept: sample-{k}"
                                                          for k in range(1, 5)]
    assert out[1].endswith(" (1. What does a ticket cost at the Lakeside Museum?)")
    assert out[5] == "4 kept items taken out of ana's queue; their annotations stay"
    assert queue(team_db, "g", "ana") == []
