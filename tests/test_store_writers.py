"""The threads of one process take turns at SQLite's write lock (store/db.py's ``Store``):
a wait that outlasts the busy timeout still says ``database is locked``, and many threads
writing at once all get their turn."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

import store


def _db(path, busy_ms: int):
    db = store.connect(path)
    db.execute(f"pragma busy_timeout = {busy_ms}")
    db.execute("create table if not exists t (n integer)")
    return db


def test_a_wait_past_the_busy_timeout_says_locked(tmp_path):
    path = tmp_path / "w.db"
    holder, waiter = _db(path, 5000), _db(path, 300)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with holder.atomic():
            holder.execute("insert into t values (1)")
            held.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(10)
    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="locked"), waiter.atomic():
        waiter.execute("insert into t values (2)")
    waited = time.monotonic() - started
    release.set()
    t.join()
    assert 0.25 <= waited < 3, waited
    assert waiter.execute("select count(*) from t").fetchone()[0] == 1
    # the turn is given back: the waiter writes once the holder is done
    with waiter.atomic():
        waiter.execute("insert into t values (3)")
    assert waiter.execute("select count(*) from t").fetchone()[0] == 2
    assert waiter.execute("pragma busy_timeout").fetchone()[0] == 300


def test_many_threads_writing_at_once_all_get_their_turn(tmp_path):
    path = tmp_path / "w.db"
    _db(path, 5000)
    errors: list[BaseException] = []

    def write(k: int) -> None:
        db = _db(path, 5000)
        try:
            for n in range(25):
                with db.atomic():
                    db.execute("insert into t values (?)", [k * 100 + n])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            db.conn.close()

    threads = [threading.Thread(target=write, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    db = _db(path, 5000)
    assert db.execute("select count(*) from t").fetchone()[0] == 200


def test_nested_blocks_in_one_thread_do_not_wait_for_themselves(tmp_path):
    path = tmp_path / "w.db"
    a, b = _db(path, 300), _db(path, 300)
    with a.atomic():
        a.execute("insert into t values (1)")
        with a.atomic():  # a savepoint
            a.execute("insert into t values (2)")
    with b.atomic():
        b.execute("insert into t values (3)")
    assert b.execute("select count(*) from t").fetchone()[0] == 3
