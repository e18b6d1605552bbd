"""Quality control: gold items mixed into every queue without a mark, accuracy on gold,
agreement per annotator (Cohen's kappa by sklearn, as in grounding.agreement), active
time from the change log (pauses do not count), the reviewer's rankings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sklearn.metrics import cohen_kappa_score

from needlework.actions import writes
from needlework.teams.assignment import QueueEntry, assign_dataset, queue
from needlework.teams.permissions import PermissionDenied
from needlework.teams.quality import (
    GoldError,
    active_seconds,
    default_answers,
    gold_items,
    mark_gold,
    quality_report,
    rank_annotators,
    rank_items,
    unmark_gold,
)
from tests.teams_fixtures import LABELS3, finish_grounding, grounding, preference, team, verdict

IMPORTED = {"label:1": "ANSWER-THE-QUESTION", "label:2": "irrelevant",
            "label:3": "RELATED-INFORMATION"}  # what tests.conftest's record says


def test_gold_items_join_every_queue_without_a_mark(db):
    people = team(db)
    grounding(db, 7)
    rita, boss = people["rita"], people["boss"]
    assert mark_gold(db, "g", "sample-5", actor=rita) == IMPORTED  # from the record
    summary = assign_dataset(db, "g", ["ana", "bob", "cy"], actor=boss)
    assert (summary.items, summary.gold_items, summary.assignments) == (6, 1, 6 + 3)
    for who in ("ana", "bob", "cy"):
        entries = queue(db, "g", who, actor=people[who])
        assert "sample-5" in [e.key for e in entries]
        assert all(type(e) is QueueEntry for e in entries)  # key, done, started: nothing else
        assert len(entries) == 3
    # marked after assigning: it joins every queue too
    mark_gold(db, "g", "sample-2", {"label:1": "OUTDATED"}, actor=rita)
    assert all("sample-2" in [e.key for e in queue(db, "g", w)] for w in ("ana", "bob", "cy"))
    # annotators are never told which items are gold
    with pytest.raises(PermissionDenied, match="ana is an annotator"):
        gold_items(db, "g", actor=people["ana"])
    assert [g["item_key"] for g in gold_items(db, "g", actor=rita)] == ["sample-2", "sample-5"]
    # unmarking takes it out of the queues it was added to, unless already done there
    holder = next(w for w in ("ana", "bob", "cy") if db.execute(
        "select source from assignments where item_key='sample-2' and annotator=?",
        [w]).fetchone()[0] == "gold")
    finish_grounding(db, "g", "sample-2", people[holder])
    assert unmark_gold(db, "g", "sample-2", actor=rita) is True
    left = [r[0] for r in db.execute(
        "select annotator from assignments where item_key='sample-2' and source='gold'")]
    assert holder in left
    assert db.execute("select max(gold) from assignments where item_key='sample-2'").fetchone()[0] == 0


def test_gold_answers_default_to_adjudications_and_are_checked(db):
    people = team(db)
    grounding(db, 2)
    writes.adjudicate(db, "g", "sample-1", "final:label:2", "OUTDATED", actor=people["rita"])
    writes.adjudicate(db, "g", "sample-1", "final:dim:question_type", "STATIC",
                      actor=people["rita"])
    assert default_answers(db, "g", "sample-1") == {**IMPORTED, "label:2": "OUTDATED",
                                                    "dim:question_type": "STATIC"}
    for answers, message in (({"label:4": "irrelevant"}, "label:4: the item has 3 passages"),
                             ({"label:1": "maybe"}, "label:1: 'maybe' is not a passage label"),
                             ({"dim:question_type": "X"}, "not a value of question_type"),
                             ({"answer": "x"}, "answer: gold answers of a grounding item"),
                             ({}, "non-empty")):
        with pytest.raises(GoldError, match=message):
            mark_gold(db, "g", "sample-1", answers, actor=people["rita"])
    with pytest.raises(GoldError, match="item 'nope' is not in dataset 'g'"):
        mark_gold(db, "g", "nope", actor=people["rita"])
    assert gold_items(db, "g", actor=people["rita"]) == []
    preference(db, 1)
    assert mark_gold(db, "p", "q0", actor=people["rita"]) == {
        "verdict:0:0": "agree", "verdict:0:1": "agree", "verdict:0:2": "agree"}
    with pytest.raises(GoldError, match="skip is no answer"):
        mark_gold(db, "p", "q0", {"verdict:0:0": "skip"}, actor=people["rita"])
    with pytest.raises(GoldError, match="verdict:1:0: not a comparison"):
        mark_gold(db, "p", "q0", {"verdict:1:0": "flip"}, actor=people["rita"])


def test_accuracy_on_gold(db):
    people = team(db)
    grounding(db, 4)
    mark_gold(db, "g", "sample-1", actor=people["rita"])
    mark_gold(db, "g", "sample-2", {"label:1": "OUTDATED", "label:2": "irrelevant"},
              actor=people["rita"])
    assign_dataset(db, "g", ["ana", "bob", "cy"], actor=people["boss"])
    finish_grounding(db, "g", "sample-1", people["ana"])  # all three right
    finish_grounding(db, "g", "sample-2", people["ana"])  # label:1 wrong, label:2 right
    finish_grounding(db, "g", "sample-1", people["bob"],
                     labels=("irrelevant", "irrelevant", "UNKNOWN"))  # 1 of 3 right
    report = quality_report(db, "g", actor=people["rita"])
    rows = {r.annotator: r for r in report.annotators}
    assert (rows["ana"].gold_items, rows["ana"].gold_fields) == (2, 5)
    assert rows["ana"].gold_accuracy == pytest.approx(4 / 5)
    assert rows["bob"].gold_accuracy == pytest.approx(1 / 3)
    assert rows["cy"].gold_accuracy is None and rows["cy"].gold_fields == 0
    # worst first, unknown last
    assert [r.annotator for r in report.annotators] == ["bob", "ana", "cy"]
    items = {i.item_key: i for i in report.items}
    assert (items["sample-1"].gold, items["sample-1"].gold_errors) == (True, 2)
    assert (items["sample-2"].gold_errors, items["sample-3"].gold) == (1, False)


def test_preference_gold_compares_verdicts_and_skips_do_not_count(db):
    people = team(db, annotators=("ana", "bob"))
    preference(db, 2)
    mark_gold(db, "p", "q0", {"verdict:0:0": "agree", "verdict:0:1": "flip"}, actor=people["rita"])
    assign_dataset(db, "p", ["ana", "bob"], actor=people["boss"])
    for field, value in (("verdict:0:0", "agree"), ("verdict:0:1", "skip"), ("verdict:0:2", "tie")):
        writes.write_annotation(db, "p", "q0", field, verdict(value), actor=people["ana"])
    for field, value in (("verdict:0:0", "flip"), ("verdict:0:1", "flip")):
        writes.write_annotation(db, "p", "q0", field, verdict(value), actor=people["bob"])
    rows = {r.annotator: r for r in quality_report(db, "p", actor=people["rita"]).annotators}
    assert (rows["ana"].gold_fields, rows["ana"].gold_accuracy) == (1, 1.0)
    assert (rows["bob"].gold_fields, rows["bob"].gold_accuracy) == (2, 0.5)
    # agreement on verdict units, skips left out: q0 0:0 differs, 0:1 only bob, 0:2 only ana
    assert rows["ana"].shared_units == 1 and rows["ana"].agreement == 0.0


def test_agreement_per_annotator_is_cohens_kappa_weighted_by_shared_units(db):
    people = team(db)
    keys = grounding(db, 6)
    assign_dataset(db, "g", ["ana", "bob", "cy"], per_item=2, actor=people["boss"])
    choices = ["ANSWER-THE-QUESTION", "irrelevant", "RELATED-INFORMATION", "OUTDATED"]
    given: dict[str, dict[tuple[str, int], str]] = {"ana": {}, "bob": {}, "cy": {}}
    for n, key in enumerate(keys):
        for who in ("ana", "bob", "cy"):
            if key not in [e.key for e in queue(db, "g", who)]:
                continue
            labels = tuple(choices[(n + p + (who == "cy") * (p % 2)) % 4] for p in range(3))
            finish_grounding(db, "g", key, people[who], labels=labels)
            given[who].update({(key, p + 1): lab for p, lab in enumerate(labels)})
    rows = {r.annotator: r for r in quality_report(db, "g", actor=people["rita"]).annotators}

    def pair(a, b):
        shared = sorted(set(given[a]) & set(given[b]))
        left, right = [given[a][u] for u in shared], [given[b][u] for u in shared]
        return cohen_kappa_score(left, right), len(shared), sum(x == y for x, y in zip(left, right, strict=True))

    for who in ("ana", "bob", "cy"):
        pairs = [pair(who, other) for other in ("ana", "bob", "cy") if other != who]
        pairs = [p for p in pairs if p[1]]
        units = sum(n for _, n, _ in pairs)
        assert rows[who].shared_units == units
        assert rows[who].kappa == pytest.approx(sum(k * n for k, n, _ in pairs) / units)
        assert rows[who].agreement == pytest.approx(sum(eq for _, _, eq in pairs) / units)
    # the cy labels differ on passage 2 only: cy agrees least
    assert min(rows.values(), key=lambda r: r.agreement).annotator == "cy"


def test_active_time_counts_gaps_up_to_the_idle_limit():
    t0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

    def at(seconds):
        return (t0 + timedelta(seconds=seconds)).isoformat(timespec="milliseconds")

    events = [(at(0), "g", "a"), (at(30), "g", "a"), (at(100), "g", "b"),  # 30 on a, 70 on b
              (at(400), "g", "b"),  # a 300 s pause: nothing
              (at(410), "other", "x"),  # 10 s spent in another dataset
              (at(450), "g", "c"), (at(450), "g", "c")]  # 40 s on c, a same-time change adds 0
    assert active_seconds(events, idle=120) == {("g", "a"): 30.0, ("g", "b"): 70.0,
                                                ("other", "x"): 10.0, ("g", "c"): 40.0}
    assert active_seconds(events, idle=400)[("g", "b")] == 370.0
    assert active_seconds([]) == {}


def test_active_time_and_rankings_from_the_change_log(db):
    people = team(db, annotators=("ana", "bob"))
    keys = grounding(db, 4)
    assign_dataset(db, "g", ["ana", "bob"], per_item=2, actor=people["boss"])
    for who in ("ana", "bob"):
        for key in keys[:2]:
            finish_grounding(db, "g", key, people[who])
    # place the changes in time: ana 20 s between changes, bob 50 s, with a long pause
    t0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    for who, step in (("ana", 20), ("bob", 50)):
        ids = [r[0] for r in db.execute("select id from history where by = ? order by id", [who])]
        for n, hid in enumerate(ids):
            pause = 3600 if n >= 4 else 0
            db.execute("update history set at = ? where id = ?",
                       [(t0 + timedelta(seconds=n * step + pause)).isoformat(), hid])
    db.conn.commit()
    report = quality_report(db, "g", actor=people["rita"])
    rows = {r.annotator: r for r in report.annotators}
    # 4 changes per item (3 labels, the answer; the deflected flag only when deflected):
    # ana: item 1 gets 3 gaps (60 s), item 2 gets 3 gaps after the pause (60 s)
    assert rows["ana"].active_seconds == pytest.approx(120.0)
    assert rows["bob"].active_seconds == pytest.approx(300.0)
    assert (rows["ana"].median_item_seconds, rows["bob"].median_item_seconds) == (60.0, 150.0)
    slowest = rank_annotators(report.annotators, by="median_item_seconds")
    assert [r.annotator for r in slowest] == ["bob", "ana"]
    items = rank_items(report.items, by="median_seconds")
    assert [i.item_key for i in items][:2] == keys[:2] and items[2].median_seconds is None
    with pytest.raises(ValueError, match="sort items by one of"):
        rank_items(report.items, by="colour")


def test_items_rank_by_disagreement(db):
    people = team(db, annotators=("ana", "bob"))
    keys = grounding(db, 3)
    assign_dataset(db, "g", ["ana", "bob"], per_item=2, actor=people["boss"])
    finish_grounding(db, "g", keys[0], people["ana"])
    finish_grounding(db, "g", keys[0], people["bob"], labels=("OUTDATED",) + LABELS3[1:])
    finish_grounding(db, "g", keys[1], people["ana"])
    finish_grounding(db, "g", keys[1], people["bob"], labels=("OUTDATED", "OUTDATED", "OUTDATED"))
    finish_grounding(db, "g", keys[2], people["ana"])
    report = quality_report(db, "g", actor=people["rita"])
    assert [(i.item_key, i.disputed_units, i.units) for i in report.items] == [
        (keys[1], 3, 3), (keys[0], 1, 3), (keys[2], 0, 0)]
    assert report.items[0].disagreement == 1.0 and report.items[2].disagreement is None
    assert report.alpha.units == 6
