"""Team mode: an annotator opens only the items assigned to them unless the lead lets
them open any (needlework.teams.access), and their Annotate page goes along and counts
their own queue."""

from __future__ import annotations

import copy
import json
import uuid

import pytest
from streamlit.testing.v1 import AppTest

from needlework.actions.service import apply_actions
from needlework.datasets.transfer import import_bytes
from needlework.teams import accounts
from needlework.teams.access import OPEN_ANY, may_open, open_any, own_queue, set_open_any
from needlework.teams.assignment import assign_dataset, queue, queue_progress
from needlework.teams.permissions import PermissionDenied
from store.audit import iter_events
from tests.conftest import GARAGE_RECORD, jsonl
from tests.page_keys import TAB, as_tab, key_data, messages, press
from tests.teams_fixtures import finish_grounding, open_as, team_mode_db


def secret_grounding(db, n: int, name: str = "g") -> list[str]:
    """A grounding dataset whose questions differ: ``Question of sample-N?``."""
    records = []
    for k in range(1, n + 1):
        r = copy.deepcopy(GARAGE_RECORD)
        r["sample_id"] = f"sample-{k}"
        r["question"] = f"Question of sample-{k}?"
        records.append(r)
    import_bytes(db, jsonl(records), f"{name}.jsonl", dataset=name)
    return [f"sample-{k}" for k in range(1, n + 1)]


def refused_move(db, page: str, dataset: str, item: str, actor) -> None:
    """The key script's move to ``item`` from the tab :func:`as_tab` made, sent by hand:
    the server refuses it with the access sentence and keeps no place there."""
    raw = {"id": f"move-{uuid.uuid4().hex}", "kind": "move", "tab": TAB, "page": page,
           "dataset": dataset, "item": item, "annotator": ""}
    raw.update({"i": 0, "j": 0} if page == "review" else {"cursor": 1})
    delivery = apply_actions(db, [raw], actor=actor)
    [outcome] = delivery.outcomes
    assert (outcome.status, outcome.refused, outcome.seq) == ("rejected", True, 0), outcome
    assert "is not assigned to ana" in outcome.message
    assert not db.execute("select 1 from tab_positions where item_key = ?", [item]).fetchall()


@pytest.fixture
def team_db(tmp_path, monkeypatch):
    db = team_mode_db(tmp_path, monkeypatch)
    secret_grounding(db, 8)
    assign_dataset(db, "g", ["ana", "bob"], per_item=1, actor=accounts.get_user(db, "lead"))
    return db


def texts(at: AppTest) -> str:
    """Every element's content on the page, as one string."""
    return "\n".join(str(node.proto) for node in messages(at))


def shown_questions(at: AppTest, keys: list[str]) -> set[str]:
    page = texts(at)
    return {k for k in keys if f"Question of {k}?" in page}


def test_the_setting_is_the_leads_and_audited(team_db):
    lead, ana = accounts.get_user(team_db, "lead"), accounts.get_user(team_db, "ana")
    bob_item = queue(team_db, "g", "bob")[0].key
    assert not open_any(team_db, "g")
    assert not may_open(team_db, "g", bob_item, ana)
    assert may_open(team_db, "g", bob_item, accounts.get_user(team_db, "rita"))
    assert may_open(team_db, "g", bob_item, None)  # local mode
    with pytest.raises(PermissionDenied, match="assign items"):
        set_open_any(team_db, "g", True, actor=accounts.get_user(team_db, "rita"))
    assert not open_any(team_db, "g")
    assert set_open_any(team_db, "g", True, actor=lead) is False
    assert open_any(team_db, "g") and may_open(team_db, "g", bob_item, ana)
    (event,) = [e for e in iter_events(team_db) if e["target"] == OPEN_ANY]
    assert (event["by"], event["action"], event["about_dataset"]) == ("lead", "dataset.setting", "g")
    assert (json.loads(event["before"]), json.loads(event["after"])) == \
        ({OPEN_ANY: False}, {OPEN_ANY: True})


def test_own_queue_by_role(team_db):
    ana, rita = accounts.get_user(team_db, "ana"), accounts.get_user(team_db, "rita")
    assert own_queue(team_db, "g", ana) == [e.key for e in queue(team_db, "g", "ana")]
    assert own_queue(team_db, "g", rita) is None  # no queue: the whole dataset
    assert own_queue(team_db, "g", None) is None
    assign_dataset(team_db, "g", ["bob"], replace=True, actor=accounts.get_user(team_db, "lead"))
    assert own_queue(team_db, "g", ana) == []  # nothing assigned: nothing to open
    set_open_any(team_db, "g", True, actor=accounts.get_user(team_db, "lead"))
    assert own_queue(team_db, "g", ana) == []  # may open others' items, never lists them


def test_progress_counts_the_annotators_own_queue(team_db):
    ana = accounts.get_user(team_db, "ana")
    mine = [e.key for e in queue(team_db, "g", "ana")]
    finish_grounding(team_db, "g", mine[0], ana)
    at = open_as(team_db, "ana", "app_pages/annotate.py", "g")
    assert queue_progress(team_db, "g", "ana") == (1, 1, 4)
    bars = [p.proto.text for p in at.get("progress")]
    assert any("1 of 4 items done by ana" in t for t in bars), bars  # not "of 8"


@pytest.mark.slow
def test_home_counts_each_person_against_their_queue(team_db):
    ana = accounts.get_user(team_db, "ana")
    finish_grounding(team_db, "g", queue(team_db, "g", "ana")[0].key, ana)
    at = open_as(team_db, "ana")
    captions = [c.value for c in at.caption]
    assert any("1 of 4 items done by ana" in c for c in captions), captions
    at = open_as(team_db, "lead")
    assert any("1 of 4 items done by ana" in c.value for c in at.caption)


def test_an_annotator_never_sees_another_persons_item(team_db):
    keys = [f"sample-{k}" for k in range(1, 9)]
    mine = [e.key for e in queue(team_db, "g", "ana")]
    theirs = [e.key for e in queue(team_db, "g", "bob")]
    at = open_as(team_db, "ana", "app_pages/annotate.py", "g")
    assert shown_questions(at, keys) <= set(mine)
    # a link to bob's item: ana's own item instead, and the caption says why
    at = open_as(team_db, "ana")
    at.query_params["item"] = theirs[0]
    at.switch_page("app_pages/annotate.py")
    at.query_params["dataset"] = "g"
    at.query_params["item"] = theirs[0]
    at.run()
    assert not at.exception, at.exception
    assert at.query_params["item"] in mine
    assert not shown_questions(at, keys) & set(theirs)
    assert any("the item the link named is not assigned to you" in c.value for c in at.caption)
    # a move (the key script's N, crafted) to bob's item is refused, and the page stays in
    # her queue
    as_tab(at)
    refused_move(team_db, "annotate", "g", theirs[1], accounts.get_user(team_db, "ana"))
    at.run()
    assert at.query_params["item"] in mine
    assert not shown_questions(at, keys) & set(theirs)
    (picker,) = [w for w in at.selectbox if w.label == "Question"]
    assert {o.split(" ", 2)[1].rstrip(".") for o in picker.options} == \
        {k.split("-")[1] for k in mine}


def test_the_lead_may_let_annotators_open_any_item(team_db):
    theirs = [e.key for e in queue(team_db, "g", "bob")]
    set_open_any(team_db, "g", True, actor=accounts.get_user(team_db, "lead"))
    at = open_as(team_db, "ana")
    at.switch_page("app_pages/annotate.py")
    at.query_params["dataset"] = "g"
    at.query_params["item"] = theirs[0]
    at.run()
    assert not at.exception, at.exception
    assert at.query_params["item"] == theirs[0]
    assert f"Question of {theirs[0]}?" in texts(at)
    assert any("this one is not in your queue" in c.value for c in at.caption)


def test_nothing_assigned_shows_nothing(team_db):
    assign_dataset(team_db, "g", ["bob"], replace=True, actor=accounts.get_user(team_db, "lead"))
    at = open_as(team_db, "ana", "app_pages/annotate.py", "g")
    assert not shown_questions(at, [f"sample-{k}" for k in range(1, 9)])
    # the sidebar offers her no such dataset; the page itself would say nothing is hers
    assert [i.value for i in at.info] == ["Pick a grounding dataset (GaRAGe) in the sidebar "
                                          "to annotate it."]


# --- Review: an annotator's list, counts and moves go along her own comparisons -------------


@pytest.fixture
def pref_db(tmp_path, monkeypatch):
    db = team_mode_db(tmp_path, monkeypatch)
    records = [{"id": f"q{k}", "subset": "QA", "prompt": f"Prompt of q{k}?",
                "chosen": [f"A careful answer {k}."],
                "rejected": [f"Wrong {k}.", f"Also wrong {k}.", f"No answer {k}."]}
               for k in range(8)]
    import_bytes(db, jsonl(records), "p.jsonl", dataset="p", format="lfrb")
    assign_dataset(db, "p", ["ana", "bob"], per_item=1, actor=accounts.get_user(db, "lead"))
    return db


def review_caption(at: AppTest) -> str:
    lines = [c.value for c in at.caption if "in this view" in c.value]
    assert lines, [c.value for c in at.caption]
    return lines[0]


@pytest.mark.slow
def test_review_goes_along_the_annotators_own_comparisons(pref_db):
    mine = [e.key for e in queue(pref_db, "p", "ana")]
    theirs = [e.key for e in queue(pref_db, "p", "bob")]
    assert len(mine) == 4
    at = as_tab(open_as(pref_db, "ana", "app_pages/review.py", "p"))
    assert at.query_params["item"] == mine[0]
    caption = review_caption(at)
    assert "4 items in your queue" in caption and "comparison 1 of 12 in this view" in caption
    assert "12 not reviewed by you" in caption
    data = key_data(at, "review")
    assert {c["item"] for c in data["line"]["ahead"]} == set(mine)  # the line: hers only
    assert len(data["line"]["ahead"]) == 11
    assert all(m["item"] in mine for m in data["moves"].values())
    seen = {at.query_params["item"]}
    for _ in range(13):  # J to the end of her list, N around it: never another's item
        if press(at, "review", "next", actor=accounts.get_user(pref_db, "ana")) is None:
            break
        seen.add(at.query_params["item"])
        assert f"Prompt of {at.query_params['item']}?" in texts(at)
    assert seen == set(mine)
    press(at, "review", "unreviewed", actor=accounts.get_user(pref_db, "ana"))
    assert at.query_params["item"] in mine
    assert not {k for k in theirs if f"Prompt of {k}?" in texts(at)}


def test_review_refuses_a_link_to_another_persons_item(pref_db):
    mine = [e.key for e in queue(pref_db, "p", "ana")]
    theirs = [e.key for e in queue(pref_db, "p", "bob")]
    at = open_as(pref_db, "ana")
    at.switch_page("app_pages/review.py")
    at.query_params["dataset"] = "p"
    at.query_params["item"] = theirs[1]
    at.run()
    assert not at.exception, at.exception
    assert at.query_params["item"] in mine
    assert not {k for k in theirs if f"Prompt of {k}?" in texts(at)}
    assert "the item the link named is not assigned to you" in review_caption(at)
    as_tab(at)  # a crafted move to bob's item is refused: the page stays on hers
    refused_move(pref_db, "review", "p", theirs[2], accounts.get_user(pref_db, "ana"))
    at.run()
    assert at.query_params["item"] in mine
    assert not {k for k in theirs if f"Prompt of {k}?" in texts(at)}


def test_a_reviewer_reviews_the_whole_dataset(pref_db):
    at = open_as(pref_db, "rita", "app_pages/review.py", "p")
    caption = review_caption(at)
    assert caption.startswith("8 items") and "of 24 in this view" in caption


def test_the_assignment_page_has_the_checkbox(team_db):
    at = open_as(team_db, "lead", "app_pages/assign.py", "g")
    (box,) = [c for c in at.checkbox if c.key.startswith("nw-open-any|g|")]
    assert box.value is False
    box.check().run()
    assert not at.exception, at.exception
    assert open_any(team_db, "g")
    assert any("may now open any item" in s.value for s in at.success)
    (box,) = [c for c in at.checkbox if c.key.startswith("nw-open-any|g|")]
    assert box.value is True
    box.uncheck().run()
    assert not open_any(team_db, "g")
    changes = [json.loads(e["after"]) for e in iter_events(team_db) if e["target"] == OPEN_ANY]
    assert changes == [{OPEN_ANY: True}, {OPEN_ANY: False}]
