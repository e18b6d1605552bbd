"""The outbox: key actions from the browser, committed through the action route.

The key scripts' actions never travel with a rerun: the browser's outbox
(``js/outbox_core.js``) keeps them in its storage and POSTs them to the server's action
route (:mod:`needlework.action_route`), which commits them and acknowledges them in its
response. After an acknowledgement the outbox asks for a rerun so the page draws what is
saved: its state carries the page's *view* (where the browser's keyboard cursor is, or
which question it asks for next) and a *nonce*, the browser's count of that redraw. A
page passes the nonce back to its key script (:func:`applied_through`) so that the
script stops showing acknowledged actions once the page's own data includes them.

Two invisible components, mounted in the shared sidebar on every run
(:func:`receive_view`): the *outbox* (its state: view and nonce; its data: where the
action route is) and the *answer*, drawn right after, which tells the browser which
redraw this run is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from needlework.action_route import ROUTE

_JS = Path(__file__).parent / "js"
CORE = (_JS / "outbox_core.js").read_text(encoding="utf-8")

_OUTBOX = st.components.v2.component(
    "needlework.outbox", isolate_styles=False,
    js=CORE + "\nexport default function (c) { nwCore.attach(c.setStateValue, c.data); }\n")
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


def action_route() -> str:
    """The action route under the server's base URL path."""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return (f"/{base}" if base else "") + ROUTE


def receive_view() -> None:
    """Read the browser's view and redraw count from the outbox (call once per run, before
    the page draws) and answer which redraw this run is."""
    with st.container(key="nw-outbox-box"):
        st.html(_HIDE)
        state = _OUTBOX(key="nw-outbox", data={"route": action_route()},
                        on_outbox_change=_keep)
        payload = state.get("outbox") or {}
        if not isinstance(payload, dict):
            payload = {}
        view = payload.get("view")
        if isinstance(view, dict):
            st.session_state[VIEW] = view
        nonce = payload.get("nonce")
        nonce = nonce if isinstance(nonce, (int, float)) else 0
        st.session_state[NONCE] = nonce
        _ANSWER(key="nw-outbox-answer", data={"seen": nonce})


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
    """The browser's redraw this run answers: every action acknowledged before the browser
    asked for it is in this run's data (the key scripts keep showing actions
    acknowledged after it from their own record)."""
    return st.session_state.get(NONCE, 0)


def seen_rev() -> float:
    """The newest browser view this session followed (the key scripts compare it with
    their own to know whether the server has caught up with them)."""
    return st.session_state.get(SEEN, 0)
