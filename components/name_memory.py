"""The annotator's name, remembered by the browser in local mode.

Streamlit forgets the session's values on a reload and a new tab starts empty, so a
deep link opened from Home showed every card read-only until the name was typed
again. A tiny component keeps the name in the browser's storage (``js/name_memory.js``)
and hands it back to a session that has none; clearing the field clears it. Team
mode does not need it: the sign-in keeps the session.

The name lives in session state under its own key (:data:`components.state.ANNOTATOR_KEY`),
not in the text field's state: the field (:func:`field_key`) only edits it. When the name
is restored, the field is drawn anew under a new key. Setting a text field's own state from
the server raced with the browser: any rerun the browser asked for before it had drawn the
restored name (the key script's, this component's) sent the field's old empty value back,
which blanked the name again for the rest of the session (1 opening in 2 seen in tests).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

_MEMORY = st.components.v2.component(
    "needlework.name_memory", isolate_styles=False,
    js=(Path(__file__).parent / "js" / "name_memory.js").read_text(encoding="utf-8"))


_CLEARED = "nw-name-cleared"
_GENERATION = "nw-name-field-generation"


def field_key() -> str:
    """The session-state key of the name's text field now (it changes when the name is
    set by the server, so that no value the browser still holds for the old field is
    taken for a new one)."""
    return f"nw-annotator-field-{st.session_state.get(_GENERATION, 0)}"


def redraw_field() -> None:
    """Draw the name's field anew (under a new key) on the next run: after the name was
    set by the server rather than typed."""
    st.session_state[_GENERATION] = st.session_state.get(_GENERATION, 0) + 1


def typed(key: str, value: str) -> None:
    """The annotator typed ``value`` into the field: it becomes the session's name, and an
    empty one is a name cleared on purpose (the browser forgets it, nothing restores it)."""
    st.session_state[key] = value
    st.session_state[_CLEARED] = not value.strip()


def _keep(_: Any = None) -> None:
    """The name state needs a change callback to be a state; nothing to do in it."""


def restore_name(key: str) -> None:
    """Give session state ``key`` the name this browser remembers, when it has none and
    the annotator did not clear it (call before the name's text input is drawn). A new
    session after a server restart gets it back the same way: the browser sends the
    remembered name with its first run."""
    current = (st.session_state.get(key) or "").strip()
    cleared = bool(st.session_state.get(_CLEARED))
    with st.container(key="nw-name-memory-box"):
        st.html("<style>.st-key-nw-name-memory-box{display:none}</style>")
        state = _MEMORY(key="nw-name-memory", data={"name": current, "cleared": cleared},
                        on_name_change=_keep)
    remembered = state.get("name")
    if not current and not cleared and isinstance(remembered, str) and remembered.strip():
        st.session_state[key] = remembered.strip()[:120]
        redraw_field()
        st.rerun()  # draw everything with the name
