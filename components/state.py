"""Per-session access to the database and the annotator's name."""

from __future__ import annotations

import importlib
import threading

import streamlit as st
from sqlite_utils import Database

import store

ANNOTATOR_KEY = "annotator"
DATASET_KEY = "dataset"


@st.cache_resource(show_spinner=False)
def _migrated(path: str) -> bool:
    """Open once per process so migrations run once; later opens are cheap."""
    store.connect(path).conn.close()
    return True


@st.cache_resource(show_spinner=False)
def _warm_up() -> threading.Thread:
    """Import the reward engine (PyTorch, transformers: seconds) in the background, once
    per server process, so that the first visit to the Reward model or Needle lab page
    after the app opens does not show a blank page while they load."""
    thread = threading.Thread(target=importlib.import_module, args=("needlework.rewards.session",),
                              daemon=True, name="needlework-warm-up")
    thread.start()
    return thread


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
