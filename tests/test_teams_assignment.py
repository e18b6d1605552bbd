"""Assignment: overlap (k per item, or a double-annotated share), even loads, each
annotator's queue and next item, reassigning a leaver's unfinished items in one call,
progress per annotator and per dataset (SQL aggregates)."""

from __future__ import annotations

from collections import Counter

import pytest

from needlework.actions import writes
from needlework.datasets.transfer import import_bytes
from needlework.teams import accounts
from needlework.teams.assignment import (
    AssignmentError,
    QueueEntry,
    annotator_progress,
    assign_dataset,
    dataset_progress,
    distribute,
    next_item,
    queue,
    reassign_unfinished,
)
from needlework.teams.permissions import PermissionDenied
from tests.conftest import garage_records, jsonl
from tests.teams_fixtures import finish_grounding, grounding, preference, team, verdict


@pytest.mark.parametrize("n_items", [1, 7, 100])
@pytest.mark.parametrize("n_people", [1, 2, 3, 5])
def test_every_item_gets_k_distinct_annotators_and_loads_differ_by_at_most_one(n_items, n_people):
    keys = [f"k{i}" for i in range(n_items)]
    people = [f"p{j}" for j in range(n_people)]
    for k in range(1, n_people + 1):
        plan = distribute(keys, people, per_item=k)
        assert list(plan) == keys
        assert all(len(set(who)) == len(who) == k for who in plan.values())
        loads = Counter(a for who in plan.values() for a in who)
        assert sum(loads.values()) == n_items * k
        assert max(loads.values()) - min(loads[p] for p in people) <= 1


def test_a_double_annotated_share_is_picked_by_the_seed():
    keys = [f"k{i}" for i in range(100)]
    plan = distribute(keys, ["a", "b", "c", "d"], double_share=0.3, seed=7)
    doubled = {k for k, who in plan.items() if len(who) == 2}
    assert len(doubled) == 30 and all(len(w) in (1, 2) for w in plan.values())
    loads = Counter(a for who in plan.values() for a in who)
    assert sum(loads.values()) == 130 and max(loads.values()) - min(loads.values()) <= 1
    assert distribute(keys, ["a", "b", "c", "d"], double_share=0.3, seed=7) == plan
    other = distribute(keys, ["a", "b", "c", "d"], double_share=0.3, seed=8)
    assert {k for k, w in other.items() if len(w) == 2} != doubled
    # the pairs vary: not always the same two people together
    assert len({tuple(w) for w in plan.values() if len(w) == 2}) >= 4


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"annotators": []}, "choose at least one annotator"),
    ({"annotators": ["a", "a"]}, "chosen twice"),
    ({"per_item": 3}, "3 annotators per item, but only 2 chosen"),
    ({"per_item": 0}, "whole number from 1"),
    ({"double_share": 1.5}, "between 0 and 1"),
    ({"per_item": 2, "double_share": 0.2}, "not both"),
    ({"annotators": ["a"], "double_share": 0.2}, "at least two annotators"),
])
def test_impossible_settings_are_refused_in_one_sentence(kwargs, message):
    args = {"annotators": ["a", "b"], **kwargs}
    with pytest.raises(AssignmentError, match=message):
        distribute(["x", "y"], args.pop("annotators"), **args)


def test_overlap_two_over_three_annotators_and_each_queue_in_dataset_order(db):
    people = team(db)
    keys = grounding(db, 6)
    summary = assign_dataset(db, "g", ["ana", "bob", "cy"], per_item=2, actor=people["boss"])
    assert (summary.items, summary.assignments, summary.per_annotator) == (
        6, 12, {"ana": 4, "bob": 4, "cy": 4})
    per_item = Counter(r[0] for r in db.execute("select item_key from assignments"))
    assert set(per_item.values()) == {2} and set(per_item) == set(keys)
    ana_queue = [e.key for e in queue(db, "g", "ana", actor=people["ana"])]
    assert ana_queue == [k for k in keys if k in ana_queue]  # dataset order
    assert next_item(db, "g", "ana", actor=people["ana"]) == ana_queue[0]
    finish_grounding(db, "g", ana_queue[0], people["ana"])
    assert next_item(db, "g", "ana") == ana_queue[1]
    # after an item, the next unfinished one after it, wrapping round to the start
    assert next_item(db, "g", "ana", after=ana_queue[2]) == ana_queue[3]
    assert next_item(db, "g", "ana", after=ana_queue[3]) == ana_queue[1]
    for key in ana_queue[1:]:
        finish_grounding(db, "g", key, people["ana"])
    assert next_item(db, "g", "ana") is None
    assert [e.done for e in queue(db, "g", "ana")] == [True] * 4
    # an annotator reads only their own queue; reviewers read anyone's
    with pytest.raises(PermissionDenied, match="may not see other annotators' work"):
        queue(db, "g", "bob", actor=people["ana"])
    assert len(queue(db, "g", "bob", actor=people["rita"])) == 4


def test_assigning_again_needs_replace_and_accounts_must_exist(db):
    people = team(db)
    grounding(db, 4)
    assign_dataset(db, "g", ["ana", "bob"], actor=people["boss"])
    with pytest.raises(AssignmentError, match="already assigned .4 assignments.: replace it"):
        assign_dataset(db, "g", ["ana", "bob"], actor=people["boss"])
    with pytest.raises(AssignmentError, match="no account named 'zoe'"):
        assign_dataset(db, "g", ["ana", "zoe"], replace=True, actor=people["boss"])
    accounts.set_disabled(db, "cy", actor=people["boss"])
    with pytest.raises(AssignmentError, match="the account 'cy' is disabled"):
        assign_dataset(db, "g", ["ana", "cy"], replace=True, actor=people["boss"])
    with pytest.raises(AssignmentError, match="no dataset named 'nope'"):
        assign_dataset(db, "nope", ["ana"], actor=people["boss"])
    again = assign_dataset(db, "g", ["ana", "bob"], per_item=2, replace=True, actor=people["boss"])
    assert again.assignments == 8


def test_done_means_every_unit_answered(db):
    people = team(db)
    grounding(db, 1)
    preference(db, 1)
    for name in ("g", "p"):
        assign_dataset(db, name, ["ana"], actor=people["boss"])
    ana = people["ana"]
    for number in (1, 2, 3):
        writes.write_annotation(db, "g", "sample-1", f"label:{number}", "irrelevant", actor=ana)
    assert queue(db, "g", "ana") == [QueueEntry("sample-1", done=False, started=True)]
    writes.save_answer(db, "g", "sample-1", "   ", actor=ana)  # an empty answer is no answer
    assert not queue(db, "g", "ana")[0].done
    writes.save_answer(db, "g", "sample-1", "Adults pay $5 [cite_1].", actor=ana)
    assert queue(db, "g", "ana")[0].done
    for j in (0, 1):
        writes.write_annotation(db, "p", "q0", f"verdict:0:{j}", verdict("agree"), actor=ana)
    assert not queue(db, "p", "ana")[0].done  # 1 chosen x 3 rejected: 3 verdicts
    writes.write_annotation(db, "p", "q0", "verdict:0:2", verdict("skip"), actor=ana)
    assert queue(db, "p", "ana")[0].done


def test_reassigning_a_leavers_unfinished_items_is_one_call(db):
    people = team(db, annotators=("ana", "bob", "cy", "dee"))
    keys = grounding(db, 9)
    assign_dataset(db, "g", ["ana", "bob", "cy"], per_item=2, actor=people["boss"])
    cy_items = [e.key for e in queue(db, "g", "cy")]
    finish_grounding(db, "g", cy_items[0], people["cy"])
    writes.write_annotation(db, "g", cy_items[1], "label:1", "OUTDATED", actor=people["cy"])
    accounts.set_disabled(db, "cy", actor=people["boss"])
    moved = reassign_unfinished(db, "g", "cy", actor=people["boss"])
    # each unfinished item of cy goes to the one of ana/bob who does not have it yet
    assert sum(moved.moved.values()) == len(cy_items) - 1 and moved.kept == []
    assert [e.key for e in queue(db, "g", "cy")] == [cy_items[0]]  # the finished one stays
    per_item = Counter(r[0] for r in db.execute("select item_key from assignments"))
    assert set(per_item.values()) == {2} and set(per_item) == set(keys)
    assert db.execute("select count(*) from assignments where item_key = ? and annotator "
                      "in ('ana','bob')", [cy_items[1]]).fetchone()[0] == 2
    # cy's own work on it stays in the annotations (and the history)
    assert db.execute("select count(*) from annotations where annotator = 'cy'").fetchone()[0] > 0
    # a newcomer takes over: to= names them
    moved = reassign_unfinished(db, "g", "bob", to=["dee"], actor=people["boss"])
    assert set(moved.moved) == {"dee"}
    assert [e.key for e in queue(db, "g", "bob")] == []
    with pytest.raises(PermissionDenied):
        reassign_unfinished(db, "g", "ana", actor=people["rita"])


def test_items_nobody_else_can_take_are_kept_and_said(db):
    people = team(db, annotators=("ana", "bob"))
    grounding(db, 3)
    assign_dataset(db, "g", ["ana", "bob"], per_item=2, actor=people["boss"])
    done = reassign_unfinished(db, "g", "ana", actor=people["boss"])
    assert done.moved == {} and sorted(done.kept) == ["sample-1", "sample-2", "sample-3"]
    with pytest.raises(AssignmentError, match="nobody to give"):
        reassign_unfinished(db, "g", "ana", to=["ana"], actor=people["boss"])


def test_progress_per_annotator_and_per_dataset(db):
    people = team(db)
    grounding(db, 6)
    import_bytes(db, jsonl(garage_records(2)), "other.jsonl", dataset="other")
    assign_dataset(db, "g", ["ana", "bob", "cy"], per_item=2, actor=people["boss"])
    ana_items = [e.key for e in queue(db, "g", "ana")]
    bob_items = [e.key for e in queue(db, "g", "bob")]
    for key in ana_items[:3]:
        finish_grounding(db, "g", key, people["ana"])
    writes.write_annotation(db, "g", ana_items[3], "label:1", "OUTDATED", actor=people["ana"])
    finish_grounding(db, "g", bob_items[0], people["bob"])
    rows = {p.annotator: p for p in annotator_progress(db, "g", actor=people["rita"])}
    assert (rows["ana"].assigned, rows["ana"].done, rows["ana"].started,
            rows["ana"].remaining) == (4, 3, 1, 1)
    assert (rows["bob"].done, rows["cy"].done, rows["cy"].started) == (1, 0, 0)
    assert rows["ana"].share_done == 0.75
    assert [p.annotator for p in annotator_progress(db, "g", actor=people["ana"])] == ["ana"]
    [g] = dataset_progress(db)  # "other" has no assignment: not listed
    complete = sum(1 for k in set(ana_items) | set(bob_items)
                   if all(k in done for done in _done_sets(db, k)))
    assert (g.dataset, g.items, g.assigned_items, g.assignments, g.done, g.annotators) == (
        "g", 6, 6, 12, 4, 3)
    assert g.complete_items == complete
    assert dataset_progress(db, "other") == []


def _done_sets(db, key):
    """For each assignee of ``key``: the items they finished (the check by hand)."""
    out = []
    for (who,) in db.execute("select annotator from assignments where item_key = ?", [key]):
        out.append({e.key for e in queue(db, "g", who) if e.done})
    return out
