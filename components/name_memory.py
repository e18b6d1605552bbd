"""The annotator's name, remembered by the browser in local mode.

Streamlit forgets the session's values on a reload and a new tab starts empty, so a
deep link opened from Home showed every card read-only until the name was typed
again. A tiny component keeps the name in the browser's storage (``js/name_memory.js``)
and hands it back to a session that has none; clearing the field clears it. Team
mode does not need it: the sign-in keeps the session.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

_MEMORY = st.components.v2.component(
    "needlework.name_memory", isolate_styles=False,
    js=(Path(__file__).parent / "js" / "name_memory.js").read_text(encoding="utf-8"))


_RESTORED = "nw-name-restored"


def _keep(_: Any = None) -> None:
    """The name state needs a change callback to be a state; nothing to do in it."""


def restore_name(key: str) -> None:
    """Give session state ``key`` the name this browser remembers, when it has none
    (call before the name's text input is drawn)."""
    current = (st.session_state.get(key) or "").strip()
    with st.container(key="nw-name-memory-box"):
        st.html("<style>.st-key-nw-name-memory-box{display:none}</style>")
        state = _MEMORY(key="nw-name-memory", data={"name": current}, on_name_change=_keep)
    remembered = state.get("name")
    if (not current and isinstance(remembered, str) and remembered.strip()
            and not st.session_state.get(_RESTORED)):
        st.session_state[_RESTORED] = True  # once per session: a name cleared stays cleared
        st.session_state[key] = remembered.strip()[:120]
        st.rerun()  # draw everything with the name
