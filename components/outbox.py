"""The outbox: key actions from the browser, committed through the action route.

The key scripts' actions never travel with a rerun: the browser's outbox
(``js/outbox_core.js``, which this component's code ``js/outbox.js`` makes) keeps them in
its storage and POSTs them to the server's action route (:mod:`needlework.actions.route`),
which commits them and acknowledges them in its response. After an acknowledgement the
outbox asks for a rerun so the page draws what is saved: its state carries the browser
tab's id (the server keeps each tab's place: :mod:`components.position`) and a *nonce*,
the browser's count of that redraw. A page
passes the nonce back to its key script (:func:`applied_through`) so that the script
stops showing acknowledged actions once the page's own data includes them.

Two invisible components, mounted in the shared sidebar on every run
(:func:`receive_view`): the *outbox* (its state: tab and nonce; its data: where the
action route is, and which tab the server knows) and the *answer*, drawn right after,
which tells the browser which redraw this run is.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from components import st_dom
from components.scripts import bundle
from needlework.actions.parse import TAB as TAB_ID
from needlework.actions.route import ROUTE

_OUTBOX = st.components.v2.component("needlework.outbox", isolate_styles=False,
                                     js=bundle("outbox.js"))


def courier(name: str) -> Any:
    """A component that carries data only: drawn with ``data=``, its script
    (``js/courier.js``, the same for every courier) posts the data and its element to the
    code listening under ``name`` (``js/mail.js``), which it reads from the component's
    name. Its element is small, so the data, new every run, no longer carries a script
    with it."""
    return st.components.v2.component(f"needlework.{name}_data", isolate_styles=False,
                                      js=bundle("courier.js"))


def draw_code(component: Any, key: str) -> None:
    """Draw ``component``, a script's code with no data, in a box that takes no room: its
    element is the same on every run, so Streamlit sends it once per tab and then only a
    reference to it (an element of 10 KB or more is cached by the browser)."""
    with st.container(key=f"{key}-box"):
        st.html(f"<style>{st_dom.hidden(f'{key}-box')}</style>")
        component(key=key)


_ANSWER = courier("outbox_answer")

TAB = "nw-outbox-tab"
NONCE = "nw-outbox-nonce"
#: How this session began: "reconnect" when its first view already knew the browser's tab
#: (only a restarted server's new session gets the component state on its first run),
#: else "load". Noted where the state is read, so that a rerun the outbox itself asks for
#: (it tells the server its tab at once) cannot stop the run before it is noted.
BEGAN = "nw-outbox-began"
NAMED = "nw-outbox-named"
# the outbox takes no room; the saved badge (fixed, bottom right) never covers the page's
# last lines: the page can scroll them above it
_HIDE = (f"<style>{st_dom.hidden('nw-outbox-box')}"
         f"{st_dom.SELECTORS['MAIN_BLOCK'].css}{{padding-bottom:4.5rem}}</style>")


def _keep(_: Any = None) -> None:
    """The outbox state needs a change callback to be a state; nothing to do in it."""


def action_route() -> str:
    """The action route under the server's base URL path."""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return (f"/{base}" if base else "") + ROUTE


def receive_view() -> None:
    """Read the browser tab's id and redraw count from the outbox (call once per run,
    before the page draws) and answer which redraw this run is."""
    with st.container(key="nw-outbox-box"):
        st.html(_HIDE)
        state = _OUTBOX(key="nw-outbox", data={"route": action_route(), "tab": tab()},
                        on_outbox_change=_keep)
        payload = state.get("outbox") or {}
        if not isinstance(payload, dict):
            payload = {}
        name = payload.get("tab")
        if isinstance(name, str) and TAB_ID.match(name):
            st.session_state[TAB] = name
            st.session_state[NAMED] = payload.get("named") is True
        if BEGAN not in st.session_state:  # the session's first view (see BEGAN)
            st.session_state[BEGAN] = "reconnect" if tab() else "load"
        nonce = payload.get("nonce")
        nonce = nonce if isinstance(nonce, (int, float)) else 0
        st.session_state[NONCE] = nonce
        _ANSWER(key="nw-outbox-answer", data={"seen": nonce})


def began() -> str:
    """How this session began: ``"reconnect"`` (a restarted server's new session, its first
    run already told the browser's tab) or ``"load"`` (a page load, a new tab)."""
    return st.session_state.get(BEGAN, "load")


def name_coming() -> bool:
    """Whether the browser may still give this session an annotator name: it has not said
    which tab it is yet (a session's first run), or it remembers a name (local mode's name
    memory types it in on its own run)."""
    return tab() is None or bool(st.session_state.get(NAMED))


def tab() -> str | None:
    """The browser tab's id (``None`` until the outbox has said it: a session's first run)."""
    return st.session_state.get(TAB)


def applied_through() -> float:
    """The browser's redraw this run answers: every action acknowledged before the browser
    asked for it is in this run's data (the key scripts keep showing actions
    acknowledged after it from their own record)."""
    return st.session_state.get(NONCE, 0)
