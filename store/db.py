"""Opening the one SQLite file the app and the CLI share."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from sqlite_utils import Database

from store.migrations import migrations

DEFAULT_DB = Path("data") / "needlework.db"


_WRITERS: dict[str, threading.RLock] = {}
_WRITERS_GUARD = threading.Lock()


def _writers(path: Path) -> threading.RLock:
    """The lock this process's threads take, in turn, before they ask SQLite for the write
    lock of the file at ``path``."""
    key = os.path.realpath(path)
    with _WRITERS_GUARD:
        return _WRITERS.setdefault(key, threading.RLock())


class Store(Database):
    """A sqlite-utils ``Database`` whose ``atomic()`` blocks take the write lock at once.

    sqlite-utils opens them with a plain (deferred) ``BEGIN``: a block that reads before it
    writes then holds a read snapshot, and if another connection (a scoring job's thread,
    a second browser tab) commits meanwhile, its first write fails at once with
    ``database is locked``: SQLite cannot wait that conflict out. ``BEGIN IMMEDIATE`` waits
    for the lock (up to the busy timeout) before reading, so the block never has to upgrade.
    Nested blocks are savepoints, as in sqlite-utils.

    The threads of one process (a server's script runs, its action route, a job) queue for
    the write lock on a lock of the process first (``writers``, one per file), within the
    same busy timeout: SQLite's own wait polls with sleeps, so among many waiters the lock
    went to whoever polled at the right moment and some waited many times over. Then only
    one thread per process waits on SQLite.
    """

    writers: threading.RLock | None = None

    @contextlib.contextmanager
    def atomic(self) -> Iterator[Database]:
        if self.conn.in_transaction:
            with super().atomic() as db:
                yield db
            return
        with self._turn():
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self
            except BaseException:
                self.conn.rollback()
                raise
            else:
                try:
                    self.conn.execute("COMMIT")
                except BaseException:
                    self.conn.rollback()
                    raise

    @contextlib.contextmanager
    def _turn(self) -> Iterator[None]:
        """This thread's turn at the write lock: the process's lock taken within the busy
        timeout (else ``database is locked``), and SQLite's wait given what is left of it."""
        lock = self.writers
        if lock is None:
            yield
            return
        budget = int(self.conn.execute("PRAGMA busy_timeout").fetchone()[0])
        started = time.monotonic()
        if not lock.acquire(timeout=max(budget, 1) / 1000):
            raise sqlite3.OperationalError("database is locked (another thread of this "
                                           "process held the write lock for the busy timeout)")
        try:
            waited = int((time.monotonic() - started) * 1000)
            if waited:
                self.conn.execute(f"PRAGMA busy_timeout = {max(1, budget - waited)}")
            try:
                yield
            finally:
                if waited:
                    self.conn.execute(f"PRAGMA busy_timeout = {budget}")
        finally:
            lock.release()


def default_path() -> Path:
    """The database path: ``$NEEDLEWORK_DB`` if set, else ``data/needlework.db``."""
    return Path(os.environ.get("NEEDLEWORK_DB") or DEFAULT_DB)


def connect(path: str | Path | None = None, *, migrate: bool = True) -> Database:
    """Open (creating if needed) the database at ``path`` in WAL mode, migrated.

    ``":memory:"`` gives an in-memory database (tests). The connection may be used
    from any thread, one at a time. ``migrate=False`` skips the migrations check
    (a caller that already migrated this file in this process).
    """
    if path is None:
        path = default_path()
    if str(path) == ":memory:":
        conn = sqlite3.connect(":memory:", check_same_thread=False)
    else:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
    conn.execute("PRAGMA busy_timeout = 30000")
    conn.execute("PRAGMA foreign_keys = ON")
    db = Store(conn)
    if str(path) != ":memory:":
        db.writers = _writers(Path(path))
        _while_locked(db.enable_wal)
        conn.execute("PRAGMA synchronous = NORMAL")
    if migrate:
        _while_locked(lambda: migrate_once(db))
    return db


def _while_locked(action: Callable[[], None], attempts: int = 4) -> None:
    """``action()``, tried again while SQLite answers ``database is locked``: processes
    opening a new file together (a server's workers started at once) on a loaded machine,
    where switching it to WAL, or waiting for another process's migrations, can outlast
    the busy timeout or be refused without waiting."""
    for attempt in range(attempts):
        try:
            action()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.2 * (attempt + 1))


def migrate_once(db: Database) -> None:
    """Apply the pending migrations, once however many processes open the file at once
    (server processes started together behind a proxy, a CLI beside them).

    sqlite-utils reads what is pending, then applies each migration in its own
    transaction: two processes opening a new file both found every migration pending and
    the second failed (``table datasets already exists``). Here the check and every
    migration run in one ``BEGIN IMMEDIATE`` transaction (each migration a savepoint), so a
    second process waits for the first and then finds nothing left. Nothing pending (the
    usual case) is a read and takes no lock.
    """
    if not migrations.pending(db):
        return
    with db.atomic():
        migrations.apply(db)


_MIGRATED: set[str] = set()
_MIGRATED_LOCK = threading.Lock()
_THREAD = threading.local()


def thread_connection(path: str | Path | None = None) -> Database:
    """The calling thread's connection to ``path`` (default :func:`default_path`), opened
    on first use; migrations run once per file and process.

    For a server that runs many threads at once (each Streamlit script run, a deferred
    download): a connection shared by two threads can be used by both at once (``no such
    savepoint``); one per thread never is. Call it where the connection is used rather
    than keeping one from another thread.
    """
    key = str(path if path is not None else default_path())
    db = getattr(_THREAD, "db", None)
    if db is not None and getattr(_THREAD, "path", None) == key:
        return db
    with _MIGRATED_LOCK:
        migrate = key not in _MIGRATED or not Path(key).exists()
        db = connect(key, migrate=migrate)
        _MIGRATED.add(key)
    _THREAD.db, _THREAD.path = db, key
    return db
