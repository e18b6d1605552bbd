"""Agreement kept by SQL triggers (store.migrations m010) against the figures computed
from every annotation row (krippendorff, sklearn): after random labels, dimensions,
changes, clears and undos by four annotators, and after the migration fills the
tables of an existing database."""

from __future__ import annotations

import random

import pytest

import store
from needlework.datasets import import_bytes
from needlework.grounding import agreement as ag
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
    expected, got = ag.report(rows), ag.figures(db, dataset)
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
