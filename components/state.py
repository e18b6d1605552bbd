"""Per-session access to the database and the annotator's name."""

from __future__ import annotations

import threading

import streamlit as st
from sqlite_utils import Database

import store
from components.boot import import_engine

ANNOTATOR_KEY = "annotator"
DATASET_KEY = "dataset"


@st.cache_resource(show_spinner=False)
def _migrated(path: str) -> bool:
    """Open once per process so migrations run once; later opens are cheap."""
    store.connect(path).conn.close()
    return True


_WARM_UP: list[threading.Thread] = []
_WARM_UP_LOCK = threading.Lock()


def _warm_up() -> threading.Thread:
    """Import the reward engine (PyTorch, transformers: seconds) in the background, once
    per server process, so that the first visit to the Reward model or Needle lab page
    after the app opens does not show a blank page while they load. It starts after
    every other module of the app was imported (:mod:`components.boot`), and pages
    that need the engine wait for it (:func:`engine`): no module is ever imported by two
    threads at once. One per process (not a Streamlit cache: caches can be cleared)."""
    with _WARM_UP_LOCK:
        if not _WARM_UP:
            thread = threading.Thread(target=import_engine, daemon=True,
                                      name="needlework-warm-up")
            thread.start()
            _WARM_UP.append(thread)
        return _WARM_UP[0]


def engine() -> None:
    """Wait until the reward engine is imported (call before importing engine components)."""
    _warm_up().join()


def engine_imported() -> bool:
    """True once the reward engine is fully imported (its modules are then safe to use
    from ``sys.modules``; before, one may be half initialised by the warm-up thread)."""
    return not _warm_up().is_alive()


_CONNECTIONS = threading.local()


def get_db() -> Database:
    """A database connection (``$NEEDLEWORK_DB``) of the calling thread; the first call
    in a process also starts the reward engine's import in the background.

    Each script run has its own thread, and Streamlit starts a new run while an older
    one of the same session may still be finishing (a key press during a rerun): a
    connection kept per session would be used by both at once (``no such savepoint``).
    One connection per thread never is. Call it where the connection is used (inside
    a callback too) rather than keeping one from an earlier run.
    """
    _warm_up()
    path = str(store.default_path())
    db = getattr(_CONNECTIONS, "db", None)
    if db is None or getattr(_CONNECTIONS, "path", None) != path:
        _migrated(path)
        db = store.connect(path, migrate=False)
        _CONNECTIONS.db, _CONNECTIONS.path = db, path
    return db


def annotator() -> str:
    """The annotator name entered in the sidebar ('' when none)."""
    return (st.session_state.get(ANNOTATOR_KEY) or "").strip()


def require_annotator() -> str | None:
    """The annotator name, or ``None`` after showing a warning that one is needed."""
    name = annotator()
    if not name:
        st.warning("Enter your name in the sidebar (Annotator) before making changes.", icon="✍️")
        return None
    return name


def current_dataset() -> str | None:
    """The dataset chosen in the sidebar picker."""
    return st.session_state.get(DATASET_KEY)
