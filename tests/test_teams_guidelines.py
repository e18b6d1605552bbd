"""Guidelines per dataset: Markdown written by an admin, read by everyone, kept when the
dataset is replaced, gone with it when it is deleted."""

from __future__ import annotations

import pytest

from needlework.datasets.transfer import delete_dataset, import_bytes
from needlework.teams.guidelines import GuidelinesError, get_guidelines, set_guidelines
from needlework.teams.permissions import PermissionDenied
from tests.conftest import garage_records, jsonl
from tests.teams_fixtures import grounding, team

TEXT = "# Labelling\n\n- **ANSWER**: the passage answers the question *today*.\n"


def test_an_admin_writes_guidelines_everyone_reads(db):
    people = team(db)
    grounding(db, 2)
    assert get_guidelines(db, "g") is None
    saved = set_guidelines(db, "g", TEXT, actor=people["boss"])
    assert (saved.text, saved.updated_by) == (TEXT, "boss")
    assert get_guidelines(db, "g").text == TEXT  # read without any role
    for who in ("rita", "ana"):
        with pytest.raises(PermissionDenied, match=f"{who} is an? \\w+ and may not write "
                                                   "guidelines in dataset 'g'"):
            set_guidelines(db, "g", "# changed", actor=people[who])
    assert get_guidelines(db, "g").text == TEXT
    set_guidelines(db, "g", "   ", actor=people["boss"])  # empty text removes them
    assert get_guidelines(db, "g") is None


def test_guidelines_are_checked_and_follow_the_dataset(db):
    grounding(db, 2)
    with pytest.raises(GuidelinesError, match="no dataset named 'nope'"):
        set_guidelines(db, "nope", TEXT)
    with pytest.raises(GuidelinesError, match="at most 100000"):
        set_guidelines(db, "g", "x" * 100_001)
    set_guidelines(db, "g", TEXT)
    import_bytes(db, jsonl(garage_records(3)), "g.jsonl", dataset="g", replace=True)
    assert get_guidelines(db, "g").text == TEXT  # a new version of the same dataset keeps them
    delete_dataset(db, "g")
    assert get_guidelines(db, "g") is None
    grounding(db, 1)  # a new dataset of that name starts without
    assert get_guidelines(db, "g") is None
