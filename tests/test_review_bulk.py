"""One verdict for several comparisons (issue 18, point 22): needlework.actions.writes'
judge_all writes each comparison as one ordinary write with who and when and a
history row (undone one at a time by the review page's undo key), all or nothing, in
team mode as the signed-in reviewer; components.review.selection picks the next N
comparisons without the reviewer's verdict in the view's order."""

from __future__ import annotations

import json
import uuid

import pytest

from components.review.selection import upcoming
from needlework.actions.service import apply_actions
from needlework.actions.writes import judge_all
from needlework.review.queue import Comparison, make_pairs
from needlework.teams.assignment import assign_dataset
from needlework.teams.permissions import PermissionDenied
from store import pairs as pairs_store
from store.annotations import set_annotation
from store.grounding import last_change
from tests.teams_fixtures import preference, team


def _verdicts(db, dataset="p"):
    return {(k, a, f): (json.loads(v), u) for k, a, f, v, u in db.execute(
        "select item_key, annotator, field, value, updated_at from annotations "
        "where dataset = ? and field like 'verdict:%'", [dataset])}


def test_each_comparison_is_one_write_with_who_and_when_and_undone_one_at_a_time(db):
    preference(db, 3)
    picks = [Comparison(0, "q0", 0, j) for j in range(3)] + [Comparison(1, "q1", 0, 0)]
    assert judge_all(db, "p", picks, "both-bad", "ana", reasons=["verbose"]) == 4
    saved = _verdicts(db)
    assert set(saved) == {("q0", "ana", f"verdict:0:{j}") for j in range(3)} | {("q1", "ana", "verdict:0:0")}
    for value, stamp in saved.values():
        assert value == {"verdict": "both-bad", "reasons": ["verbose"], "note": ""}
        assert stamp.startswith("20")
    history = db.execute("select item_key, field, annotator, by from history where dataset = 'p' "
                         "order by id").fetchall()
    assert len(history) == 4 and {(a, b) for *_, a, b in history} == {("ana", "ana")}
    # the reviewer's progress follows (the triggers): q0 fully reviewed
    assert pairs_store.reviewed_by_item(db, "p", "ana", "all", ["q0", "q1"]) == {"q0": 3, "q1": 1}
    # the review page's undo key reverts the newest one, then the one before
    delivery = apply_actions(db, [{"id": f"undo-{uuid.uuid4().hex}", "kind": "undo", "dataset": "p", "annotator": "ana",
                                   "scope": "review"}])
    assert delivery.error is None and not delivery.rejected
    assert ("q1", "ana", "verdict:0:0") not in _verdicts(db)
    assert len(_verdicts(db)) == 3
    # the same verdict again changes nothing
    assert judge_all(db, "p", picks[:3], "both-bad", "ana", reasons=["verbose"]) == 0


@pytest.mark.parametrize("bad", [Comparison(0, "q0", 0, 3), Comparison(0, "q0", 1, 0),
                                 Comparison(9, "nope", 0, 0)])
def test_a_comparison_the_dataset_lacks_changes_nothing(db, bad):
    preference(db, 2)
    with pytest.raises(ValueError, match="no comparison chosen|no preference item"):
        judge_all(db, "p", [Comparison(1, "q1", 0, 0), bad], "agree", "ana")
    assert _verdicts(db) == {}


def test_unknown_verdict_or_reason_changes_nothing(db):
    preference(db, 1)
    with pytest.raises(ValueError, match="unknown verdict"):
        judge_all(db, "p", [Comparison(0, "q0", 0, 0)], "maybe", "ana")
    with pytest.raises(ValueError, match="unknown reason"):
        judge_all(db, "p", [Comparison(0, "q0", 0, 0)], "agree", "ana", reasons=["rude"])
    assert _verdicts(db) == {}


def test_team_mode_writes_as_the_signed_in_reviewer_and_refuses_all_or_nothing(db):
    people = team(db)
    preference(db, 4)
    assign_dataset(db, "p", ["ana", "bob"], actor=people["boss"])
    mine = [k for (k,) in db.execute("select item_key from assignments where dataset = 'p' and "
                                     "annotator = 'ana' order by item_key")]
    theirs = [k for (k,) in db.execute("select item_key from assignments where dataset = 'p' and "
                                       "annotator = 'bob' order by item_key")]
    assert mine and theirs
    own = [Comparison(0, k, 0, 0) for k in mine]
    with pytest.raises(PermissionDenied, match="not assigned"):
        judge_all(db, "p", own + [Comparison(0, theirs[0], 0, 0)], "agree", "ana",
                  actor=people["ana"])
    assert _verdicts(db) == {}
    with pytest.raises(PermissionDenied, match="signed in"):
        judge_all(db, "p", own, "agree", "bob", actor=people["ana"])
    assert judge_all(db, "p", own, "agree", "ana", actor=people["ana"]) == len(own)
    assert {a for _, a, _ in _verdicts(db)} == {"ana"}
    # a reviewer may judge any item, under their own name
    assert judge_all(db, "p", [Comparison(0, theirs[0], 0, 1)], "tie", "rita",
                     actor=people["rita"]) == 1


def test_upcoming_takes_the_next_ones_without_a_verdict_in_the_views_order(db):
    preference(db, 4)  # 4 items × 3 comparisons
    set_annotation(db, "p", "q1", "ana", "verdict:0:1", {"verdict": "agree", "reasons": [], "note": ""})
    set_annotation(db, "p", "q0", "bob", "verdict:0:2", {"verdict": "agree", "reasons": [], "note": ""})
    items = make_pairs(db, "p", "ana", pairs_store.PairQuery("ana"), last_change(db, "p"))
    start = Comparison(0, "q0", 0, 2)
    got = upcoming(db, items, start, 4)
    assert [(c.item, c.j) for c in got] == [("q0", 2), ("q1", 0), ("q1", 2), ("q2", 0)]
    # wraps around to the start, never twice the same
    assert len(upcoming(db, items, Comparison(3, "q3", 0, 0), 50)) == 11
    # a view sorted another way: its order
    keep = [(3, "q3", 1, 3), (0, "q0", 1, 3)]
    sorted_view = make_pairs(db, "p", "ana", pairs_store.PairQuery("ana"), 0, active=True,
                             keep=lambda _: list(keep), ordered=True)
    assert [(c.item, c.j) for c in upcoming(db, sorted_view, None, 5)] == [
        ("q3", 0), ("q3", 1), ("q3", 2), ("q0", 0), ("q0", 1)]
    judge_all(db, "p", upcoming(db, sorted_view, None, 6), "agree", "ana")
    assert upcoming(db, sorted_view, None, 6) == []
