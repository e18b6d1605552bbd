"""One key takes every suggestion of a question, dimensions included, and one undo takes
the whole accept back (issue 50, point 2), the category included (issue 56): the accept's changes are one group in the
history; a redo brings the group back whole, and a later single change is undone alone."""

from __future__ import annotations

import json
import uuid

import pytest

from needlework.actions.service import apply_actions
from needlework.datasets.transfer import import_bytes
from needlework.suggest.data import import_suggestions
from store.annotations import item_annotations
from tests.conftest import garage_records, jsonl

WHO = "ana"


def lines(*objects) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objects).encode()


@pytest.fixture
def grounding(db):
    import_bytes(db, jsonl(garage_records(2)), "g.jsonl", dataset="g")  # 3 passages each
    rows = [{"item": "sample-1", "field": f"label:{n}", "value": v, "source": "judge:a"}
            for n, v in ((1, "OUTDATED"), (2, "UNKNOWN"), (3, "irrelevant"))]
    rows += [{"item": "sample-1", "field": f"dim:{f}", "value": v, "source": "judge:a"}
             for f, v in (("question_valid", "YES"), ("question_sensitive", "YES"),
                          ("question_type", "FAST-CHANGING"), ("question_complexity", "Set"),
                          ("question_popularity", "Tail"),
                          ("question_category", "Travel"))]
    # a second source on the time sensitivity: the first by name gives both its fields
    rows += [{"item": "sample-1", "field": "dim:question_sensitive", "value": "NO",
              "source": "judge:b"}]
    import_suggestions(db, lines(*rows), "s.jsonl", "g", by="lena")
    return db


def act(db, **action):
    delivery = apply_actions(db, [{"id": f"t-{uuid.uuid4().hex}", "dataset": "g",
                                   "annotator": WHO, **action}])
    assert delivery.error is None, delivery
    [outcome] = delivery.outcomes
    return outcome


def saved(db) -> dict:
    return item_annotations(db, "g", "sample-1", WHO)


ALL = {"label:1": "OUTDATED", "label:2": "UNKNOWN", "label:3": "irrelevant",
       "dim:question_valid": "YES", "dim:question_sensitive": "YES",
       "dim:question_type": "FAST-CHANGING", "dim:question_complexity": "Set",
       "dim:question_popularity": "Tail", "dim:question_category": "Travel"}


def test_accept_takes_every_label_and_dimension_the_annotator_has_none_of(grounding):
    # a dimension of the annotator's own stays theirs, and so does a label
    act(grounding, kind="set", item="sample-1", field="dim:question_complexity", value="Simple")
    act(grounding, kind="set", item="sample-1", field="label:2", value="OUTDATED")
    outcome = act(grounding, kind="accept", item="sample-1")
    assert (outcome.status, outcome.message) == ("applied", "7 suggestion(s) accepted")
    assert saved(grounding) == {**ALL, "dim:question_complexity": "Simple", "label:2": "OUTDATED"}
    via = dict(grounding.execute("select field, via from annotations where annotator = ? and "
                                 "field like 'dim:%'", [WHO]).fetchall())
    assert json.loads(via["dim:question_type"]) == {"how": "accepted", "source": "judge:a",
                                                    "score": None}
    assert json.loads(via["dim:question_complexity"])["how"] == "changed"  # typed over "Set"
    again = act(grounding, kind="accept", item="sample-1")
    assert (again.status, again.message) == (
        "unchanged", "every suggested passage and dimension has your value")


def test_one_undo_takes_the_whole_accept_back_and_one_redo_brings_it_again(grounding):
    act(grounding, kind="set", item="sample-2", field="label:1", value="OUTDATED")  # before
    outcome = act(grounding, kind="accept", item="sample-1")
    assert outcome.message == "9 suggestion(s) accepted" and saved(grounding) == ALL
    undo = act(grounding, kind="undo", scope="annotate")
    assert (undo.status, undo.tell, undo.item, undo.field) == ("applied", True, "sample-1",
                                                               "label:1")
    assert undo.message == "undone: 9 changes made together"
    assert saved(grounding) == {}  # every field of the accept, one key
    # the change before the accept is still there: the next undo takes it alone
    assert item_annotations(grounding, "g", "sample-2", WHO) == {"label:1": "OUTDATED"}
    redo = act(grounding, kind="redo", scope="annotate")
    assert redo.message == "redone: 9 changes made together" and saved(grounding) == ALL
    act(grounding, kind="undo", scope="annotate")
    assert saved(grounding) == {}
    act(grounding, kind="undo", scope="annotate")
    assert item_annotations(grounding, "g", "sample-2", WHO) == {}


def test_a_single_change_after_an_accept_is_undone_alone(grounding):
    act(grounding, kind="accept", item="sample-1")
    act(grounding, kind="set", item="sample-1", field="label:3", value="OUTDATED")
    undo = act(grounding, kind="undo", scope="annotate")
    assert (undo.field, undo.tell) == ("label:3", False)
    assert saved(grounding) == ALL
    act(grounding, kind="undo", scope="annotate")
    assert saved(grounding) == {}
    # the history keeps one row per field; the accept's rows and their undos are groups
    groups = grounding.execute("select action, count(*), count(distinct grp) from history "
                               "where grp is not null group by action order by action").fetchall()
    assert groups == [("set", 9, 1), ("undo", 9, 1)]
