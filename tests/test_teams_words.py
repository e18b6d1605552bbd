"""Words a blind annotator should not read, and counts that agree (issue 57, point 3): her
dimension help and key map name no file's value; Annotate's header counts her own queue
as the list does; Review says a preference set is not assigned to her yet (not that none
exists); Quality and Agreement say whom they count; the suggestion figures say what they
count."""

from __future__ import annotations

import re

import pytest

from needlework.teams.assignment import assign_dataset
from tests.teams_fixtures import grounding, open_as, preference, team_mode_db
from tests.test_teams_blind import shown


@pytest.fixture
def team_db(tmp_path, monkeypatch):
    db = team_mode_db(tmp_path, monkeypatch)
    grounding(db, 16, "g")
    preference(db, 2, "p")  # not assigned to anyone yet
    assign_dataset(db, "g", ["ana", "bob"], per_item=1)  # 8 questions each
    return db


@pytest.mark.slow
def test_a_blind_annotators_annotate_page_names_no_files_value_and_counts_her_queue(team_db):
    at = open_as(team_db, "ana", "app_pages/annotate.py", "g")
    text = shown(at)
    assert "questions in your queue" in text
    assert not re.search(r"the file's value|V takes|Dashed: the file", text), text
    queue = int(re.search(r"(\d+) questions in your queue", text).group(1))
    assert queue == 8
    # the header counts the same queue: "Q4 · 2 of 8 in your queue", never "Q4/16"
    assert re.search(rf"Q\d+ · \d+ of {queue} in your queue", text), text
    assert not re.search(r"Q\d+/16", text), text
    # the key map (the ⌨ popover) has no V and no Enter for the file's value
    keymap = "\n".join(m.value for m in at.markdown if "**Keys**" in m.value)
    assert "`W, then a digit per dimension`" in keymap and "`V`" not in keymap, keymap
    assert "the file's value" not in keymap and "the file came with" not in keymap


@pytest.mark.slow
def test_the_lead_still_reads_the_files_values_and_the_whole_dataset(team_db):
    at = open_as(team_db, "lead", "app_pages/annotate.py", "g")
    text = shown(at)
    assert "V takes the file's value" in text
    assert re.search(r"Q\d+/16", text), text


@pytest.mark.slow
def test_review_tells_an_annotator_nothing_is_assigned_to_her_yet(team_db):
    at = open_as(team_db, "ana", "app_pages/review.py")
    infos = " ".join(i.value for i in at.info)
    assert "No preference dataset is assigned to you yet" in infos, infos
    assert "No preference datasets yet" not in infos


@pytest.mark.slow
def test_quality_and_agreement_say_whom_they_count(team_db):
    quality = open_as(team_db, "lead", "app_pages/quality.py", "g")
    labels = [m.label for m in quality.metric]
    assert "Annotators assigned" in labels and "Annotators" not in labels, labels
