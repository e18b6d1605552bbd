"""The annotator's name, remembered by the browser in local mode.

Streamlit forgets the session's values on a reload and a new tab starts empty, so a
deep link opened from Home showed every card read-only until the name was typed
again. A tiny component keeps the name in the browser's storage (``js/name_memory.js``)
and, in a session that has none, types it back into the field in the browser (never
set from the server, which raced with reruns the page had already asked for); clearing
the field clears it. Team mode does not need it: the sign-in keeps the session.
"""

from __future__ import annotations

import streamlit as st

from components import st_dom
from components.scripts import bundle

_MEMORY = st.components.v2.component("needlework.name_memory", isolate_styles=False,
                                     js=bundle("name_memory.js"))


def restore_name(key: str) -> None:
    """Draw the (hidden) name memory for session state ``key``: it stores the session's
    name in the browser, and in a session that has none it types the remembered name
    into the Annotator field and commits it, in the browser, as a person would (call
    before the field is drawn)."""
    current = (st.session_state.get(key) or "").strip()
    with st.container(key="nw-name-memory-box"):
        st.html(f"<style>{st_dom.key('nw-name-memory-box')}{{display:none}}</style>")
        _MEMORY(key="nw-name-memory", data={"name": current})
