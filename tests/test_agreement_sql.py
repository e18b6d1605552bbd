"""Agreement kept by SQL triggers (store.migrations m010) against the figures computed
from every annotation row (krippendorff, sklearn): after random labels, dimensions,
changes, clears and undos by four annotators, and after the migration fills the
tables of an existing database."""

from __future__ import annotations

import random

import pytest

import store
from needlework.datasets.transfer import import_bytes
from needlework.grounding import agreement as ag
from store import assignments as store_assignments
from store import grounding as sg
from store.annotations import dataset_annotations, set_annotation, undo
from tests.conftest import garage_records, jsonl

LABELS = ["irrelevant", "ANSWER-THE-QUESTION", "RELATED-INFORMATION", "OUTDATED"]
DIMS = {"question_complexity": ["Simple", "Set"], "question_valid": ["YES", "NO"]}


def _work(db, dataset: str, steps: int, seed: int) -> None:
    rng = random.Random(seed)
    done = []
    for _ in range(steps):
        who = rng.choice(["ana", "bo", "cy", "dee"])
        key = f"sample-{rng.randint(1, 40)}"
        roll = rng.random()
        if roll < 0.6:
            field, value = f"label:{rng.randint(1, 3)}", rng.choice(LABELS + [None])
        elif roll < 0.85:
            name = rng.choice(list(DIMS))
            field, value = f"dim:{name}", rng.choice(DIMS[name] + [None])
        elif roll < 0.95:
            field, value = f"final:label:{rng.randint(1, 3)}", rng.choice(LABELS)
        else:
            field, value = "answer", "Yes [cite_1]."
        hid = set_annotation(db, dataset, key, who, field, value)
        if hid:
            done.append(hid)
        if done and rng.random() < 0.08:
            undo(db, rng.choice(done), "rev")


def _same(db, dataset: str) -> None:
    rows = dataset_annotations(db, dataset)
    expected = ag.report(rows, store_assignments.assignees_by_item(db, dataset))
    got = ag.figures(db, dataset)
    assert got.annotators == expected.annotators
    for mine, theirs in [(got.labels, expected.labels)] + [
            (got.dims[n], expected.dims[n]) for n in got.dims]:
        assert mine.units == theirs.units and mine.note == theirs.note
        assert mine.value == pytest.approx(theirs.value) if theirs.value is not None \
            else mine.value is None
    assert [(k.a, k.b, k.units) for k in got.kappas] == [(k.a, k.b, k.units) for k in expected.kappas]
    for mine, theirs in zip(got.kappas, expected.kappas, strict=True):
        assert mine.agreement == pytest.approx(theirs.agreement) if theirs.agreement is not None \
            else mine.agreement is None
        assert mine.value == pytest.approx(theirs.value) if theirs.value is not None \
            else mine.value is None
    disputed = {d.item_key: d for d in expected.disagreements}
    listed = sg.disputed_items(db, dataset, limit=1000)
    assert {r["key"] for r in listed} == set(disputed)
    assert sg.disputed_count(db, dataset) == len(disputed)
    for r in listed:
        d = disputed[r["key"]]
        assert r["units"] == len(d.passages) + len(d.dims)
    assert [d.item_key for d in ag.disputes_of(db, dataset, [r["key"] for r in listed])] == \
        [r["key"] for r in listed]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_figures_kept_by_sql_equal_those_from_every_row(seed):
    db = store.connect(":memory:")
    import_bytes(db, jsonl(garage_records(40)), "ground.jsonl")
    for checkpoint in range(4):
        _work(db, "ground", 300, seed * 10 + checkpoint)
        _same(db, "ground")


def test_hand_computed_case_and_nothing_overlapping_yet(db):
    import_bytes(db, jsonl(garage_records(2)), "ground.jsonl")
    set_annotation(db, "ground", "sample-1", "ana", "label:1", "irrelevant")
    alone = ag.figures(db, "ground")
    assert alone.annotators == ["ana"] and not alone.overlap
    assert alone.labels.value is None and alone.labels.note == "no unit has two annotators"
    units = [("sample-1", 1), ("sample-1", 2), ("sample-1", 3), ("sample-2", 1), ("sample-2", 2)]
    irr, ans, rel = "irrelevant", "ANSWER-THE-QUESTION", "RELATED-INFORMATION"
    for who, values in (("ana", [irr, irr, ans, ans, rel]), ("bo", [irr, ans, ans, ans, rel])):
        for (key, n), value in zip(units, values, strict=True):
            set_annotation(db, "ground", key, who, f"label:{n}", value)
    got = ag.figures(db, "ground")
    assert got.overlap and got.labels.units == 5
    assert got.labels.value == pytest.approx(22 / 31)  # as in tests/test_agreement.py
    (kappa,) = got.kappas
    assert kappa.value == pytest.approx(11 / 16) and kappa.agreement == pytest.approx(0.8)


def test_the_migration_fills_the_agreement_tables_of_an_existing_database(tmp_path):
    path = tmp_path / "old.db"
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(40)), "ground.jsonl")
    _work(db, "ground", 400, 7)
    tables = ("agreement_pairs", "agreement_confusion", "unit_disputes", "item_disputes")
    before = {t: db.execute(f"select * from {t} where n <> 0 order by 1, 2, 3, 4, 5"
                            if t.startswith("agreement") else f"select * from {t} order by 1, 2, 3")
              .fetchall() for t in tables}
    for trigger in ("insert", "delete", "update"):
        db.execute(f"drop trigger agreement_{trigger}")
    for t in tables:
        db.execute(f"drop table {t}")
    db.execute("delete from _sqlite_migrations where name = 'm010_agreement_kept_by_sql'")
    db.conn.commit()
    db.conn.close()
    db = store.connect(path)
    after = {t: db.execute(f"select * from {t} where n <> 0 order by 1, 2, 3, 4, 5"
                           if t.startswith("agreement") else f"select * from {t} order by 1, 2, 3")
             .fetchall() for t in tables}
    assert after == before
    _same(db, "ground")


def _reassign(db, dataset: str, seed: int) -> None:
    """Random changes of who is assigned what: items assigned to two or three of the
    four (the others' labels stop counting), moved, dropped, unassigned."""
    rng = random.Random(seed)
    people = ["ana", "bo", "cy", "dee"]
    for _ in range(12):
        key = f"sample-{rng.randint(1, 40)}"
        have = store_assignments.assignees(db, dataset, key)
        roll = rng.random()
        if roll < 0.4 or not have:
            rows = [store_assignments.Row(key, who, rng.random(), 3, False, "plan")
                    for who in rng.sample(people, rng.choice([1, 2, 3]))]
            store_assignments.add(db, dataset, rows, at="2026-01-01T00:00:00", by="lead")
        elif roll < 0.7:
            free = [p for p in people if p not in have]
            if free:
                store_assignments.move(db, dataset, key, rng.choice(have), rng.choice(free),
                                       at="2026-01-01T00:00:00", by="lead")
        else:
            store_assignments.remove(db, dataset, key, rng.choice(have))


@pytest.mark.parametrize("seed", [4, 5])
def test_only_the_assignment_counts_as_it_changes(seed):
    """Issue 26, point 6: on an assigned item only its assignees are coders; labels go
    on while items are assigned, moved and dropped, and the kept sums always equal the
    figures from every row with the same rule."""
    db = store.connect(":memory:")
    import_bytes(db, jsonl(garage_records(40)), "ground.jsonl")
    for checkpoint in range(4):
        _work(db, "ground", 250, seed * 10 + checkpoint)
        _reassign(db, "ground", seed * 100 + checkpoint)
        _same(db, "ground")
        assert store_assignments.count(db, "ground") > 0


def test_a_reviewers_stray_label_is_not_a_third_coder():
    db = store.connect(":memory:")
    import_bytes(db, jsonl(garage_records(4)), "ground.jsonl")
    rows = [store_assignments.Row(f"sample-{i}", who, float(i), 3, False, "plan")
            for i in (1, 2, 3, 4) for who in ("ana", "bo")]
    store_assignments.replace_plan(db, "ground", rows, annotators=["ana", "bo"], overlap=2,
                                   double_share=1.0, seed=0, at="2026-01-01T00:00:00", by="lead")
    for i in (1, 2, 3, 4):
        for n in (1, 2, 3):
            set_annotation(db, "ground", f"sample-{i}", "ana", f"label:{n}", LABELS[(i + n) % 4])
            set_annotation(db, "ground", f"sample-{i}", "bo", f"label:{n}", LABELS[(i + n) % 4])
    before = ag.figures(db, "ground")
    assert before.annotators == ["ana", "bo"] and before.labels.value == pytest.approx(1.0)
    set_annotation(db, "ground", "sample-1", "rita", "label:1", "UNKNOWN")  # a reviewer's
    after = ag.figures(db, "ground")
    assert after.annotators == ["ana", "bo"]
    assert after.labels.value == pytest.approx(before.labels.value)
    assert after.labels.units == before.labels.units
    assert sg.disputed_count(db, "ground") == 0
    # the lead assigns her the item: now she counts, and disagrees
    store_assignments.add(db, "ground", [store_assignments.Row("sample-1", "rita", 9.0, 3,
                                                               False, "plan")],
                          at="2026-01-01T00:00:00", by="lead")
    counted = ag.figures(db, "ground")
    assert counted.annotators == ["ana", "bo", "rita"]
    assert counted.labels.value < before.labels.value
    assert sg.disputed_count(db, "ground") == 1
    _same(db, "ground")
