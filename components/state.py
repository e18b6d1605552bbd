"""Per-session access to the database and the annotator's name."""

from __future__ import annotations

from typing import Any

import streamlit as st
from sqlite_utils import Database

import store
from components.boot import start_warm_up, wait_for_engine

ANNOTATOR_KEY = "annotator"
DATASET_KEY = "dataset"


def engine() -> None:
    """Wait until the reward engine and the components that use it are imported (call
    before importing engine components): the warm-up thread, started by the first
    :func:`get_db` of the process, imports them (:mod:`components.boot`)."""
    wait_for_engine()


def get_db() -> Database:
    """A database connection (``$NEEDLEWORK_DB``) of the calling thread
    (:func:`store.db.thread_connection`); the first call in a process also starts the
    reward engine's import in the background.

    Each script run has its own thread, and Streamlit starts a new run while an older
    one of the same session may still be finishing (a key press during a rerun): a
    connection kept per session would be used by both at once (``no such savepoint``).
    One connection per thread never is. Call it where the connection is used (inside
    a callback, a deferred download too) rather than keeping one from an earlier run.
    """
    start_warm_up()
    return store.thread_connection()


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


SIGNED_IN = "nw-signed-in"


def signed_in() -> Any:
    """The signed-in account (a ``needlework.teams.permissions.User``) in team mode;
    ``None`` in local mode, where nobody signs in. The team sign-in gate sets it."""
    return st.session_state.get(SIGNED_IN)


def current_dataset() -> str | None:
    """The dataset chosen in the sidebar picker."""
    return st.session_state.get(DATASET_KEY)
