"""Key actions: applied once, to the target they name, in order; busy and full databases
apply nothing and acknowledge nothing."""

from __future__ import annotations

import json
import sqlite3
import threading

import pytest

import store
from needlework.actions import writes
from needlework.actions.service import apply_actions, submit
from needlework.datasets.transfer import import_bytes
from store.annotations import get_value, history
from tests.conftest import garage_records, jsonl

WHO = "ana"


@pytest.fixture
def grounding(db):
    import_bytes(db, jsonl(garage_records(2)), "g.jsonl", dataset="g")
    return db


def label(action_id: str, item: str, number: int, value: str | None, who: str = WHO) -> dict:
    return {"id": action_id, "kind": "set", "dataset": "g", "item": item, "annotator": who,
            "field": f"label:{number}", "value": value}


def test_an_action_sent_twice_changes_the_database_once(grounding):
    first = apply_actions(grounding, [label("act-00000001", "sample-1", 2, "OUTDATED")])
    assert [o.status for o in first.outcomes] == ["applied"]
    again = apply_actions(grounding, [label("act-00000001", "sample-1", 2, "OUTDATED"),
                                      label("act-00000001", "sample-1", 2, "OUTDATED")])
    assert again.acked == ["act-00000001"] and again.error is None
    assert len(history(grounding, "g")) == 1
    # a later action on the same field applies, and a resend of the first does not undo it
    apply_actions(grounding, [label("act-00000002", "sample-1", 2, "UNKNOWN")])
    apply_actions(grounding, [label("act-00000001", "sample-1", 2, "OUTDATED")])
    assert get_value(grounding, "g", "sample-1", WHO, "label:2") == "UNKNOWN"
    assert len(history(grounding, "g")) == 2


def test_a_batch_applies_in_order_to_the_items_it_names(grounding):
    batch = [label("b-0000001", "sample-1", 1, "irrelevant"),
             label("b-0000002", "sample-2", 1, "ANSWER-THE-QUESTION"),
             label("b-0000003", "sample-1", 1, "RELATED-INFORMATION"),
             label("b-0000004", "sample-1", 3, None)]
    delivery = apply_actions(grounding, batch)
    assert delivery.acked == [a["id"] for a in batch]
    assert [o.status for o in delivery.outcomes] == ["applied", "applied", "applied", "unchanged"]
    assert get_value(grounding, "g", "sample-1", WHO, "label:1") == "RELATED-INFORMATION"
    assert get_value(grounding, "g", "sample-2", WHO, "label:1") == "ANSWER-THE-QUESTION"


@pytest.mark.parametrize(("change", "why"), [
    ({"item": "nope"}, "item 'nope' is not in dataset 'g'"),
    ({"dataset": "missing"}, "dataset 'missing' does not exist"),
    ({"field": "label:4"}, "field label:4: the item has 3 passages"),
    ({"field": "label:0"}, "field label:0: the item has 3 passages"),
    ({"value": "MAYBE"}, "value 'MAYBE': not a passage label"),
    ({"field": "answer"}, "keys set passage labels, dimensions, the flag"),
    ({"field": "flag", "value": "maybe"}, "value 'maybe': not a value of flag"),
    ({"annotator": "  "}, "annotator: expected a non-empty string"),
    ({"kind": "drop"}, "kind: expected one of"),
])
def test_an_action_that_cannot_apply_is_rejected_with_its_reason_and_changes_nothing(
        grounding, change, why):
    delivery = apply_actions(grounding, [dict(label("rej-00001", "sample-1", 1, "OUTDATED"),
                                              **change)])
    (outcome,) = delivery.outcomes
    assert outcome.status == "rejected" and why in outcome.message
    assert history(grounding) == []
    # recorded: sent again, it is acknowledged without being checked again
    assert apply_actions(grounding, [label("rej-00001", "sample-1", 1, "OUTDATED")]).outcomes[0] \
        .status == "rejected"


def test_a_malformed_id_is_acknowledged_as_rejected(grounding):
    delivery = apply_actions(grounding, [label("x", "sample-1", 1, "OUTDATED"), "junk"])
    assert [o.status for o in delivery.outcomes] == ["rejected", "rejected"]
    assert history(grounding) == []


def test_deflect_writes_the_deflection_only_when_the_answer_is_empty(grounding):
    deflect = {"id": "def-00001", "kind": "deflect", "dataset": "g", "item": "sample-1",
               "annotator": WHO}
    assert apply_actions(grounding, [deflect]).outcomes[0].status == "applied"
    assert get_value(grounding, "g", "sample-1", WHO, "deflected") is True
    store.annotations.set_annotation(grounding, "g", "sample-2", WHO, "answer", "Mine [cite_1].")
    other = dict(deflect, id="def-00002", item="sample-2")
    assert apply_actions(grounding, [other]).outcomes[0].status == "unchanged"
    assert get_value(grounding, "g", "sample-2", WHO, "answer") == "Mine [cite_1]."


def test_rest_labels_what_is_unlabeled_when_it_applies_after_an_undo_before_it(grounding):
    """R right after Z: the browser's copy may still show the label the undo took back;
    the server decides which passages are unlabeled, in the order the actions came."""
    rest = {"id": "rest-0001", "kind": "rest", "dataset": "g", "item": "sample-1",
            "annotator": WHO}
    undo = {"id": "undo-0001", "kind": "undo", "dataset": "g", "annotator": WHO,
            "scope": "annotate"}
    apply_actions(grounding, [label("s-0000001", "sample-1", 1, "ANSWER-THE-QUESTION"),
                              label("s-0000002", "sample-1", 2, "OUTDATED")])
    delivery = apply_actions(grounding, [undo, rest])
    assert [o.status for o in delivery.outcomes] == ["applied", "applied"]
    assert delivery.outcomes[1].tell
    assert delivery.outcomes[1].message == "2 unlabeled passage(s) marked irrelevant"
    labels = [get_value(grounding, "g", "sample-1", WHO, f"label:{n}") for n in (1, 2, 3)]
    assert labels == ["ANSWER-THE-QUESTION", "irrelevant", "irrelevant"]
    # another annotator's labels are theirs: R marks only the presser's own
    assert get_value(grounding, "g", "sample-1", "bo", "label:3") is None
    # every passage labeled: nothing changes, and the outcome says so
    again = apply_actions(grounding, [dict(rest, id="rest-0002")])
    assert again.outcomes[0].status == "unchanged"
    assert again.outcomes[0].message == "every passage has a label"
    # one change per passage: undo takes the marks back one at a time
    apply_actions(grounding, [dict(undo, id="undo-0002")])
    labels = [get_value(grounding, "g", "sample-1", WHO, f"label:{n}") for n in (1, 2, 3)]
    assert labels == ["ANSWER-THE-QUESTION", "irrelevant", None]
    # an unknown item is rejected and changes nothing
    before = len(history(grounding, "g"))
    # sent again after a restart: applied once (undone mark stays undone)
    apply_actions(grounding, [dict(rest, id="rest-0001")])
    assert get_value(grounding, "g", "sample-1", WHO, "label:3") is None
    bad = apply_actions(grounding, [dict(rest, id="rest-0003", item="nope")])
    assert bad.outcomes[0].status == "rejected" and len(history(grounding, "g")) == before


def test_a_toggle_is_decided_on_what_is_saved_when_it_applies(grounding):
    """A click on the label a passage shows clears it, and F flips the flag; right after
    an undo the page may still show the undone value, so the server decides."""
    undo = {"id": "undo-1001", "kind": "undo", "dataset": "g", "annotator": WHO,
            "scope": "annotate"}

    def toggle(action_id: str, field: str, value: str) -> dict:
        return {"id": action_id, "kind": "set", "dataset": "g", "item": "sample-1",
                "annotator": WHO, "field": field, "value": value, "toggle": True}

    apply_actions(grounding, [label("t-0000001", "sample-1", 2, "OUTDATED")])
    # Z, then a click on "Outdated" the page still shows: the label comes back
    apply_actions(grounding, [undo, toggle("t-0000002", "label:2", "OUTDATED")])
    assert get_value(grounding, "g", "sample-1", WHO, "label:2") == "OUTDATED"
    apply_actions(grounding, [toggle("t-0000003", "label:2", "OUTDATED")])  # clicked again
    assert get_value(grounding, "g", "sample-1", WHO, "label:2") is None
    # sent again (a restart, a lost acknowledgement): applied once, so it does not flip back
    apply_actions(grounding, [toggle("t-0000003", "label:2", "OUTDATED")])
    assert get_value(grounding, "g", "sample-1", WHO, "label:2") is None
    # F on, Z, F: on again (the page showed it on), and the outcome says which
    on = apply_actions(grounding, [toggle("t-0000004", "flag", "flagged")]).outcomes[0]
    assert (on.tell, on.message) == (True, "flagged for later")
    again = apply_actions(grounding, [dict(undo, id="undo-1002"),
                                      toggle("t-0000005", "flag", "flagged")]).outcomes[1]
    assert again.message == "flagged for later"
    assert get_value(grounding, "g", "sample-1", WHO, "flag") == "flagged"
    off = apply_actions(grounding, [toggle("t-0000006", "flag", "flagged")]).outcomes[0]
    assert off.message == "flag removed"
    assert get_value(grounding, "g", "sample-1", WHO, "flag") is None
    bad = apply_actions(grounding, [dict(toggle("t-0000007", "flag", "flagged"), toggle="yes")])
    assert "toggle: expected true or false" in bad.outcomes[0].message


def test_verdicts_and_reasons_name_their_comparison(db):
    record = {"id": "p1", "subset": "QA", "prompt": "Q", "chosen": ["good"],
              "rejected": ["bad", "worse", "worst"]}
    import_bytes(db, (json.dumps(record) + "\n").encode(), "p.jsonl", dataset="p")
    base = {"dataset": "p", "item": "p1", "annotator": WHO, "i": 0, "j": 2}
    reasons_first = dict(base, id="r-000001", kind="reasons", reasons=["verbose"])
    assert apply_actions(db, [reasons_first]).outcomes[0].status == "unchanged"
    batch = [dict(base, id="v-000001", kind="verdict", verdict="flip", reasons=["unsafe"],
                  note="see line 2"),
             dict(base, id="r-000002", kind="reasons", reasons=["verbose", "unsafe"])]
    assert [o.status for o in apply_actions(db, batch).outcomes] == ["applied", "applied"]
    assert get_value(db, "p", "p1", WHO, "verdict:0:2") == {
        "verdict": "flip", "reasons": ["unsafe", "verbose"], "note": "see line 2"}
    # a verdict without a note keeps the saved note
    apply_actions(db, [dict(base, id="v-000002", kind="verdict", verdict="tie", reasons=[])])
    assert get_value(db, "p", "p1", WHO, "verdict:0:2")["note"] == "see line 2"
    out = apply_actions(db, [dict(base, id="v-000003", kind="verdict", verdict="tie", j=3)])
    assert "the item has 1 chosen and 3 rejected" in out.outcomes[0].message


def test_a_reason_key_flips_one_reason_on_what_is_saved_when_it_applies(db):
    """1-7 on Review add or remove one reason; right after Z the page may still show the
    reasons the undo took back, so the server flips the reason on what is saved."""
    record = {"id": "p1", "subset": "QA", "prompt": "Q", "chosen": ["good"], "rejected": ["bad"]}
    import_bytes(db, (json.dumps(record) + "\n").encode(), "p.jsonl", dataset="p")
    base = {"dataset": "p", "item": "p1", "annotator": WHO, "i": 0, "j": 0}

    def flip(action_id: str, reason: str) -> dict:
        return dict(base, id=action_id, kind="reasons", flip=reason)

    undo = {"id": "undo-2001", "kind": "undo", "dataset": "p", "annotator": WHO, "scope": "review"}
    assert apply_actions(db, [flip("f-000000", "unsafe")]).outcomes[0].status == "unchanged"
    apply_actions(db, [dict(base, id="v-000001", kind="verdict", verdict="flip",
                            reasons=["factual error"], note="n")])
    apply_actions(db, [flip("f-000001", "unsafe")])
    assert get_value(db, "p", "p1", WHO, "verdict:0:0")["reasons"] == ["factual error", "unsafe"]
    # Z takes "unsafe" back; the key pressed before the page shows it adds "incomplete" only
    apply_actions(db, [undo, flip("f-000002", "incomplete")])
    assert get_value(db, "p", "p1", WHO, "verdict:0:0") == {
        "verdict": "flip", "reasons": ["factual error", "incomplete"], "note": "n"}
    apply_actions(db, [flip("f-000003", "factual error")])  # pressed again: removed
    apply_actions(db, [flip("f-000003", "factual error")])  # sent again: applied once
    assert get_value(db, "p", "p1", WHO, "verdict:0:0")["reasons"] == ["incomplete"]
    bad = apply_actions(db, [flip("f-000004", "rude"),
                             dict(flip("f-000005", "unsafe"), reasons=["verbose"])]).outcomes
    assert "flip: expected one of" in bad[0].message
    assert "not both" in bad[1].message
    assert get_value(db, "p", "p1", WHO, "verdict:0:0")["reasons"] == ["incomplete"]


def test_a_verdict_sent_without_reasons_keeps_what_the_flips_before_it_left(db):
    """K back to a comparison with a verdict, 1 1 (factual error on, then off), then B:
    the verdict is sent without reasons and keeps what the flips left on the server,
    whatever the page showed when B was pressed; reasons sent with it replace them."""
    record = {"id": "p1", "subset": "QA", "prompt": "Q", "chosen": ["good"], "rejected": ["bad"]}
    import_bytes(db, (json.dumps(record) + "\n").encode(), "p.jsonl", dataset="p")
    base = {"dataset": "p", "item": "p1", "annotator": WHO, "i": 0, "j": 0}
    apply_actions(db, [dict(base, id="v-000001", kind="verdict", verdict="flip", note="n")])
    assert get_value(db, "p", "p1", WHO, "verdict:0:0") == {"verdict": "flip", "reasons": [],
                                                             "note": "n"}
    apply_actions(db, [dict(base, id="f-000001", kind="reasons", flip="factual error")])
    apply_actions(db, [dict(base, id="f-000002", kind="reasons", flip="factual error"),
                       dict(base, id="v-000002", kind="verdict", verdict="both-bad",
                            reasons=None, note=None)])
    assert get_value(db, "p", "p1", WHO, "verdict:0:0") == {"verdict": "both-bad", "reasons": [],
                                                             "note": "n"}
    apply_actions(db, [dict(base, id="f-000003", kind="reasons", flip="unsafe"),
                       dict(base, id="v-000003", kind="verdict", verdict="tie")])
    assert get_value(db, "p", "p1", WHO, "verdict:0:0")["reasons"] == ["unsafe"]
    apply_actions(db, [dict(base, id="v-000004", kind="verdict", verdict="tie", reasons=["verbose"])])
    assert get_value(db, "p", "p1", WHO, "verdict:0:0")["reasons"] == ["verbose"]


def test_a_refused_annotator_is_rejected(grounding):
    delivery = apply_actions(grounding, [label("who-00001", "sample-1", 1, "OUTDATED", who="bo")],
                             allowed=lambda a: None if a.annotator == WHO else "not signed in as bo")
    assert delivery.outcomes[0].message == "not signed in as bo"
    assert history(grounding) == []


@pytest.mark.slow
def test_a_busy_database_applies_nothing_acknowledges_nothing_then_delivers(tmp_path):
    path = tmp_path / "n.db"
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(1)), "g.jsonl", dataset="g")
    holder = sqlite3.connect(path, timeout=1)
    holder.execute("begin immediate")  # another process holds the write lock
    batch = [label("busy-0001", "sample-1", 1, "OUTDATED"),
             label("busy-0002", "sample-1", 2, "UNKNOWN")]
    delivery = apply_actions(db, batch)
    assert delivery.error == "busy" and delivery.acked == []
    holder.rollback()
    holder.close()
    delivery = apply_actions(db, batch)
    assert delivery.error is None and delivery.acked == ["busy-0001", "busy-0002"]
    assert get_value(db, "g", "sample-1", WHO, "label:2") == "UNKNOWN"


def test_a_full_database_applies_nothing_then_delivers_when_space_returns(tmp_path):
    path = tmp_path / "n.db"
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(1)), "g.jsonl", dataset="g")
    pages = db.execute("pragma page_count").fetchone()[0]
    db.execute(f"pragma max_page_count = {pages}")  # SQLITE_FULL on the next new page
    big = [label(f"full-{n:05d}", "sample-1", 1 + n % 3, "OUTDATED" if n % 2 else "UNKNOWN")
           for n in range(400)]
    delivery = apply_actions(db, big)
    assert delivery.error == "full" and delivery.acked == []
    assert history(db) == []
    db.execute("pragma max_page_count = 1073741823")
    assert apply_actions(db, big).error is None
    assert len(store.actions.applied(db, [a["id"] for a in big])) == 400


def test_two_runs_delivering_the_same_batch_at_once_apply_it_once(tmp_path):
    path = tmp_path / "n.db"
    store.connect(path).conn.close()
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(1)), "g.jsonl", dataset="g")
    batch = [label(f"race-{n:04d}", "sample-1", 1 + n % 3, ("OUTDATED", "UNKNOWN")[n % 2])
             for n in range(60)]
    results = []

    def deliver():
        own = store.connect(path)
        results.append(apply_actions(own, batch))
        own.conn.close()

    threads = [threading.Thread(target=deliver) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r.error is None and len(r.acked) == 60 for r in results)
    assert len(history(db, "g", limit=1000)) == 60


def undo_key(action_id: str, kind: str = "undo", scope: str = "annotate") -> dict:
    return {"id": action_id, "kind": kind, "dataset": "g", "annotator": WHO, "scope": scope}


def test_undo_and_redo_revert_my_own_changes_in_order_once_each(grounding):
    apply_actions(grounding, [label("u-000001", "sample-1", 1, "OUTDATED"),
                              label("u-000002", "sample-2", 3, "UNKNOWN"),
                              {"id": "u-000003", "kind": "set", "dataset": "g", "item": "sample-2",
                               "annotator": WHO, "field": "flag", "value": "flagged"}])
    store.annotations.set_annotation(grounding, "g", "sample-1", "bo", "label:1", "UNKNOWN")
    first = apply_actions(grounding, [undo_key("z-000001"), undo_key("z-000001")])
    (outcome,) = first.outcomes
    assert (outcome.status, outcome.item, outcome.field) == ("applied", "sample-2", "flag")
    assert get_value(grounding, "g", "sample-2", WHO, "flag") is None
    apply_actions(grounding, [undo_key("z-000002")])  # the label of sample-2 goes too
    assert get_value(grounding, "g", "sample-2", WHO, "label:3") is None
    apply_actions(grounding, [undo_key("z-000003")])
    assert get_value(grounding, "g", "sample-1", WHO, "label:1") is None
    assert get_value(grounding, "g", "sample-1", "bo", "label:1") == "UNKNOWN"  # not mine
    assert apply_actions(grounding, [undo_key("z-000004")]).outcomes[0].message == "nothing to undo"
    apply_actions(grounding, [undo_key("y-000001", "redo")])
    assert get_value(grounding, "g", "sample-1", WHO, "label:1") == "OUTDATED"
    # a new change ends what can be redone
    apply_actions(grounding, [label("u-000004", "sample-1", 2, "irrelevant")])
    assert apply_actions(grounding, [undo_key("y-000002", "redo")]).outcomes[0].message == \
        "nothing to redo"
    apply_actions(grounding, [undo_key("z-000005")])  # undoes the new change, then the redo
    apply_actions(grounding, [undo_key("z-000006")])
    assert get_value(grounding, "g", "sample-1", WHO, "label:1") is None
    assert get_value(grounding, "g", "sample-1", WHO, "label:2") is None


def test_undo_of_a_deflection_restores_the_answer_and_its_flag(grounding):
    apply_actions(grounding, [{"id": "d-000001", "kind": "deflect", "dataset": "g",
                               "item": "sample-1", "annotator": WHO}])
    assert get_value(grounding, "g", "sample-1", WHO, "deflected") is True
    apply_actions(grounding, [undo_key("z-000010")])
    assert get_value(grounding, "g", "sample-1", WHO, "answer") is None
    assert get_value(grounding, "g", "sample-1", WHO, "deflected") is None


def test_review_undo_reverts_verdicts_only(db):
    record = {"id": "p1", "subset": "QA", "prompt": "Q", "chosen": ["a"], "rejected": ["b"]}
    import_bytes(db, (json.dumps(record) + "\n").encode(), "p.jsonl", dataset="p")
    apply_actions(db, [{"id": "v-000010", "kind": "verdict", "dataset": "p", "item": "p1",
                        "annotator": WHO, "i": 0, "j": 0, "verdict": "tie"}])
    out = apply_actions(db, [dict(undo_key("z-000020", scope="review"), dataset="p")])
    assert out.outcomes[0].field == "verdict:0:0"
    assert get_value(db, "p", "p1", WHO, "verdict:0:0") is None
    wrong = apply_actions(db, [dict(undo_key("z-000021", scope="annotate"), dataset="p")])
    assert "is a preference dataset" in wrong.outcomes[0].message


def test_the_key_route_accepts_only_the_kinds_the_key_scripts_send(grounding):
    """Answers, adjudications and reverts are widget writes: an action naming them from
    the browser is rejected by kind, before anything is read."""
    for kind in ("answer", "final", "revert", "note", "teleport"):
        raw = {"id": f"kind-{kind}-01", "kind": kind, "dataset": "g", "item": "sample-1",
               "annotator": WHO, "value": "x", "field": "final:label:1"}
        outcome = apply_actions(grounding, [raw]).outcomes[0]
        assert outcome.status == "rejected" and outcome.message.startswith("kind: expected one of")
    assert history(grounding, "g") == []


def test_widget_writes_and_key_actions_share_one_service(grounding):
    """The answer box, the comment, a dimension and an adjudication go through
    ``actions.submit``: recorded in the action log with the same checks as keys."""
    hid = writes.save_answer(grounding, "g", "sample-1", "I cannot answer this.", annotator=WHO)
    assert hid is not None
    assert get_value(grounding, "g", "sample-1", WHO, "answer") == "I cannot answer this."
    writes.write_annotation(grounding, "g", "sample-1", "comment", "odd one", annotator=WHO)
    with pytest.raises(ValueError, match="not a passage label"):
        writes.write_annotation(grounding, "g", "sample-1", "label:1", "MAYBE", annotator=WHO)
    with pytest.raises(ValueError, match="not a field an annotator writes"):
        writes.write_annotation(grounding, "g", "sample-1", "secret", "x", annotator=WHO)
    writes.adjudicate(grounding, "g", "sample-1", "final:label:1", "OUTDATED", reviewer="rita")
    kinds = [r[0] for r in grounding.execute("select kind from applied_actions order by rowid")]
    assert kinds == ["answer", "set", "set", "final"]  # the refused label recorded as rejected
    with pytest.raises(ValueError, match="annotator: expected a non-empty string"):
        submit(grounding, {"kind": "set", "dataset": "g", "item": "sample-1", "annotator": " ",
                           "field": "flag", "value": "flagged"})
    assert get_value(grounding, "g", "sample-1", WHO, "label:1") is None


def test_revert_checks_the_history_entry_it_names(grounding):
    hid = writes.write_annotation(grounding, "g", "sample-1", "label:2", "UNKNOWN", annotator=WHO)
    forged = {"kind": "revert", "dataset": "g", "item": "sample-2", "field": "label:2",
              "owner": WHO, "history": hid, "annotator": WHO}
    with pytest.raises(ValueError, match=f"history: no entry {hid}"):
        submit(grounding, forged)
    assert writes.undo_change(grounding, hid, who=WHO) is not None
    assert get_value(grounding, "g", "sample-1", WHO, "label:2") is None
