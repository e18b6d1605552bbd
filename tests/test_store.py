"""Store: migrations, WAL, datasets, annotations with history and undo."""

from __future__ import annotations

import sqlite3
import threading

import pytest
from sqlite_utils import Database

import store
from store import annotations as ann
from store import datasets as ds


def make(db, name="d", n=3):
    items = [ds.NewItem(f"k{i}", {"id": f"k{i}", "x": i}, "s", f"title {i}") for i in range(n)]
    return ds.create_dataset(db, name, "preference", "lfrb", items, source="d.jsonl")


def test_file_database_is_wal_and_migrated(db_path):
    db = store.connect(db_path)
    assert db.execute("pragma journal_mode").fetchone()[0] == "wal"
    assert {"datasets", "items", "annotations", "history"} <= set(db.table_names())
    applied = [r[0] for r in db.execute("select name from _sqlite_migrations").fetchall()]
    assert applied[:2] == ["m001_datasets_items", "m002_annotations_history"]
    store.connect(db_path)  # reopening applies nothing twice
    assert db.execute("select count(*) from _sqlite_migrations").fetchone()[0] == len(applied)


def _read_then_write_while_another_writes(db, other, tag: str) -> list[str]:
    """``db`` reads inside an atomic block, ``other`` commits a write meanwhile, then ``db``
    writes: the errors either side met."""
    read, errors = threading.Event(), []

    def first():
        try:
            with db.atomic():
                db.execute("select count(*) from datasets").fetchone()
                read.set()
                threading.Event().wait(0.3)
                db["datasets"].update("a", {"source": f"first {tag}"})
        except sqlite3.OperationalError as exc:
            errors.append(f"first: {exc}")
        finally:
            read.set()

    def second():
        read.wait()
        try:
            other["datasets"].update("b", {"source": f"second {tag}"})
            other.conn.commit()
        except sqlite3.OperationalError as exc:
            errors.append(f"second: {exc}")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return errors


def test_write_blocks_wait_for_each_other_instead_of_failing(db_path):
    """Two connections (a scoring thread and the app): a block that reads, then writes
    while the other one committed, must not fail with 'database is locked'."""
    db, other = store.connect(db_path), store.connect(db_path)
    make(db, "a")
    make(db, "b")
    assert _read_then_write_while_another_writes(db, other, "1") == []
    assert [r[0] for r in db.execute("select source from datasets order by name")] == ["first 1", "second 1"]
    plain = Database(sqlite3.connect(db_path, check_same_thread=False, timeout=30))  # deferred BEGIN
    assert _read_then_write_while_another_writes(plain, other, "2") == ["first: database is locked"]


def test_env_var_sets_default_path(monkeypatch, tmp_path):
    monkeypatch.setenv("NEEDLEWORK_DB", str(tmp_path / "x.db"))
    assert store.default_path() == tmp_path / "x.db"


def test_create_list_get(db):
    assert make(db) == 3
    assert [(r["name"], r["items"]) for r in ds.list_datasets(db)] == [("d", 3)]
    assert ds.get_item(db, "d", "k1")["record"] == {"id": "k1", "x": 1}
    assert [i["key"] for i in ds.iter_items(db, "d")] == ["k0", "k1", "k2"]


def test_create_is_all_or_nothing(db):
    bad = [ds.NewItem("a", {}), ds.NewItem("a", {})]  # duplicate key violates the unique index
    with pytest.raises(sqlite3.IntegrityError):
        ds.create_dataset(db, "d", "preference", "lfrb", bad)
    assert ds.list_datasets(db) == []
    assert db.execute("select count(*) from items").fetchone()[0] == 0


def test_existing_name_refused_unless_replace(db):
    make(db)
    with pytest.raises(ds.DatasetExists):
        make(db)
    ds.create_dataset(db, "d", "preference", "lfrb", [ds.NewItem("y", {})], replace=True)
    assert [i["key"] for i in ds.iter_items(db, "d")] == ["y"]


def test_replace_refuses_while_annotations_exist_unless_dropped(db):
    """Replacing keeps the annotation history unless told to drop it (issue 11 point 6)."""
    make(db)
    ann.set_annotation(db, "d", "k0", "ana", "verdict:0:0", "agree")
    ann.set_annotation(db, "d", "k1", "bo", "verdict:0:0", "flip")
    with pytest.raises(ds.AnnotationsExist, match=r"2 annotation\(s\) by ana, bo and 2 change") as info:
        ds.create_dataset(db, "d", "preference", "lfrb", [ds.NewItem("z", {})], replace=True)
    assert (info.value.work.annotations, info.value.work.history) == (2, 2)
    assert [i["key"] for i in ds.iter_items(db, "d")] == ["k0", "k1", "k2"]
    assert len(ann.dataset_annotations(db, "d")) == 2
    ds.create_dataset(db, "d", "preference", "lfrb", [ds.NewItem("z", {})], replace=True,
                      drop_annotations=True)
    assert [i["key"] for i in ds.iter_items(db, "d")] == ["z"]
    assert ann.dataset_annotations(db, "d") == []
    assert ann.history(db, dataset="d") == []


def test_annotation_write_is_committed_with_who_and_when(db_path):
    db = store.connect(db_path)
    make(db)
    ann.set_annotation(db, "d", "k0", "ana", "label:cite_1", "OUTDATED")
    other = sqlite3.connect(db_path)  # another connection sees it: committed
    row = other.execute("select annotator, field, value, updated_at from annotations").fetchone()
    assert row[:3] == ("ana", "label:cite_1", '"OUTDATED"') and row[3].startswith("20")


def test_annotator_required(db):
    with pytest.raises(ann.AnnotatorRequired):
        ann.set_annotation(db, "d", "k0", "  ", "f", 1)


def test_history_and_undo(db):
    make(db)
    h1 = ann.set_annotation(db, "d", "k0", "ana", "f", "A")
    h2 = ann.set_annotation(db, "d", "k0", "ana", "f", "B")
    assert ann.set_annotation(db, "d", "k0", "ana", "f", "B") is None  # unchanged: not logged
    log = ann.history(db, dataset="d")
    assert [(e["id"], e["old_value"], e["new_value"]) for e in log] == [(h2, "A", "B"), (h1, None, "A")]
    h3 = ann.undo(db, h2, "rev")
    assert ann.get_value(db, "d", "k0", "ana", "f") == "A"
    entry = ann.history(db, limit=1)[0]
    assert (entry["id"], entry["action"], entry["undoes"], entry["by"], entry["annotator"]) == (
        h3, "undo", h2, "rev", "ana")
    ann.undo(db, h1, "ana")
    assert ann.get_value(db, "d", "k0", "ana", "f") is None
    assert ann.item_annotations(db, "d", "k0") == {}


def test_annotations_kept_per_annotator(db):
    make(db)
    ann.set_annotation(db, "d", "k0", "ana", "label:cite_1", "UNKNOWN")
    ann.set_annotation(db, "d", "k0", "ben", "label:cite_1", "OUTDATED")
    ann.set_annotation(db, "d", "k0", "ben", "dim:x", "YES")
    assert ann.item_annotations(db, "d", "k0") == {
        "ana": {"label:cite_1": "UNKNOWN"},
        "ben": {"label:cite_1": "OUTDATED", "dim:x": "YES"},
    }
    assert ann.item_annotations(db, "d", "k0", "ben", prefix="label:") == {"label:cite_1": "OUTDATED"}
    assert ann.annotators(db, "d") == ["ana", "ben"]
    assert ds.annotated_items_by_annotator(db, "d") == {"ana": 1, "ben": 1}
