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


def get_db() -> Database:
    """This browser session's connection to the database (``$NEEDLEWORK_DB``); the first
    call in a process also starts the reward engine's import in the background."""
    _warm_up()
    path = str(store.default_path())
    db = st.session_state.get("_nw_db")
    if db is None or st.session_state.get("_nw_db_path") != path:
        _migrated(path)
        db = store.connect(path)
        st.session_state["_nw_db"] = db
        st.session_state["_nw_db_path"] = path
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
