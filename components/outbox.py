"""The outbox: key actions from the browser, delivered on every page and applied once.

Two invisible components, mounted in the shared sidebar on every run:

- the *outbox* carries, as its state, the browser's pending actions (kept in the
  browser's storage until acknowledged; see ``js/outbox_core.js``) and the page's
  *view* (where the browser's keyboard cursor is, or which question it asks for next);
- the *answer*, drawn right after the actions were applied, tells the browser which
  action ids it may forget (applied, unchanged or refused) or that the database was
  busy or full (then it keeps them and sends them again).

The actions themselves are applied by :func:`needlework.actions.apply_actions`, to the
targets they name; a page reads the view with :func:`view_for`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st
from sqlite_utils import Database

from components.state import signed_in
from needlework.action_parse import Action
from needlework.actions import Delivery, apply_actions

_JS = Path(__file__).parent / "js"
CORE = (_JS / "outbox_core.js").read_text(encoding="utf-8")

_OUTBOX = st.components.v2.component(
    "needlework.outbox", isolate_styles=False,
    js=CORE + "\nexport default function (c) { nwCore.attach(c.setStateValue); }\n")
_ANSWER = st.components.v2.component(
    "needlework.outbox_answer", isolate_styles=False,
    js=CORE + "\nexport default function (c) { nwCore.answer(c.data); }\n")

VIEW = "nw-outbox-view"
SEEN = "nw-outbox-seen"
NONCE = "nw-outbox-nonce"
#: How long a URL the page wrote, or left to follow the keyboard, counts as an echo (a
#: request sent before the browser had the new URL), not as a link to follow.
ECHO_SECONDS = 5.0
_HIDE = ("<style>.st-key-nw-outbox-box,[data-testid=stLayoutWrapper]:has(> .st-key-nw-outbox-box)"
         "{display:none}</style>")


def module(name: str) -> str:
    """An ES module: the outbox core followed by ``js/NAME`` (for page key scripts)."""
    return CORE + "\n" + (_JS / name).read_text(encoding="utf-8")


def _keep(_: Any = None) -> None:
    """The outbox state needs a change callback to be a state; nothing to do in it."""


def deliver(db: Database, allowed: Callable[[Action], str | None] | None = None) -> Delivery:
    """Apply the actions the browser sent with this run and answer it (call once per
    run, before the page draws, so the page shows what was just saved). In team mode
    they are applied as the signed-in user: an action that user may not make is
    refused with the reason."""
    with st.container(key="nw-outbox-box"):
        st.html(_HIDE)
        state = _OUTBOX(key="nw-outbox", on_outbox_change=_keep)
        payload = state.get("outbox") or {}
        if not isinstance(payload, dict):
            payload = {}
        actions = payload.get("actions") or []
        delivery = apply_actions(db, actions if isinstance(actions, list) else [], allowed,
                                 actor=signed_in())
        view = payload.get("view")
        if isinstance(view, dict):
            st.session_state[VIEW] = view
        nonce = payload.get("nonce")
        nonce = nonce if isinstance(nonce, (int, float)) else 0
        if delivery.error is None:
            st.session_state[NONCE] = nonce
        _ANSWER(key="nw-outbox-answer", data={
            "seen": nonce,
            "acks": delivery.acked,
            "rejected": [{"id": o.id, "message": o.message} for o in delivery.rejected],
            "undone": [{"id": o.id, "item": o.item, "field": o.field} for o in delivery.outcomes
                       if o.item and o.status == "applied"],
            "told": [{"id": o.id, "message": o.message} for o in delivery.outcomes if o.tell],
            "error": delivery.error,
        })
    return delivery


def view_for(page: str, dataset: str) -> dict[str, Any] | None:
    """The browser's view for ``page`` on ``dataset`` if it is newer than the last one
    this session followed, else ``None``. The page marks it followed with
    :func:`followed` once it is on the place the view asks for.

    A view is ``{"page", "dataset", "item", "rev", ...}``; ``rev`` grows with every
    move the browser makes, so an old view resent after a reconnect is not followed
    again (a server that restarted follows it once: it is where the browser is)."""
    view = st.session_state.get(VIEW)
    if not view or view.get("page") != page or view.get("dataset") != dataset:
        return None
    rev = view.get("rev")
    if not isinstance(rev, (int, float)) or rev <= st.session_state.get(SEEN, 0):
        return None
    return view


def followed(view: dict[str, Any] | None) -> None:
    """Mark ``view`` (from :func:`view_for`) followed: the key scripts take the page's
    position as theirs from now on (:func:`seen_rev`).

    Call it right after the session's position was set from the view, with nothing
    drawn in between: drawing is where Streamlit stops a run that a newer rerun request
    replaces, and a view marked followed in a run stopped before it moved would leave
    the page where it was while the browser took that place for the one it asked for
    (its next keys then went to the wrong question)."""
    if view is not None:
        st.session_state[SEEN] = max(view["rev"], st.session_state.get(SEEN, 0))


def applied_through() -> float:
    """The newest outbox delivery whose actions this run's page shows (the key scripts
    keep showing actions acknowledged after it from their own record)."""
    return st.session_state.get(NONCE, 0)


def seen_rev() -> float:
    """The newest browser view this session followed (the key scripts compare it with
    their own to know whether the server has caught up with them)."""
    return st.session_state.get(SEEN, 0)
