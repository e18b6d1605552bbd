"""A dataset's annotation guidelines: shown beside the task, edited by an admin.

Guidelines are Markdown written by an admin (:mod:`needlework.teams.guidelines`) and are
rendered as Markdown: trusted text, unlike the data, which is always shown literally
(:mod:`components.text`). Raw HTML in them is not rendered (``st.markdown`` escapes it).
"""

from __future__ import annotations

import streamlit as st
from sqlite_utils import Database

from components.callbacks import uninterrupted
from components.state import get_db, signed_in
from components.text import label
from needlework.teams.guidelines import MAX_CHARS, GuidelinesError, get_guidelines, set_guidelines
from needlework.teams.permissions import PermissionDenied

FLASH = "nw-guidelines-flash"


def render_guidelines_panel(db: Database, dataset: str | None, *, expanded: bool = False) -> bool:
    """An expander with the guidelines of ``dataset`` (nothing when it has none);
    returns whether there were any."""
    found = get_guidelines(db, dataset) if dataset else None
    if found is None or not found.text.strip():
        return False
    with st.expander("Guidelines", icon=":material/menu_book:", expanded=expanded):
        st.markdown(found.text)
        st.caption(f"Updated {found.updated_at[:10]} by {label(found.updated_by or 'an admin', 40)}")
    return True


@uninterrupted
def _save(dataset: str, widget: str) -> None:
    text = st.session_state.get(widget) or ""
    try:
        set_guidelines(get_db(), dataset, text, actor=signed_in())
    except (GuidelinesError, PermissionDenied) as e:
        st.session_state[FLASH] = ("error", str(e))
        return
    st.session_state[FLASH] = ("ok", "Guidelines saved." if text.strip() else
                               "Guidelines removed.")


def render_guidelines_editor(db: Database, dataset: str) -> None:
    """The admin's editor: Markdown on the left, how annotators will see it on the right."""
    found = get_guidelines(db, dataset)
    saved = found.text if found else ""
    widget = f"nw-guidelines-text|{dataset}|{found.updated_at if found else ''}"
    flash = st.session_state.pop(FLASH, None)
    if flash:
        (st.success if flash[0] == "ok" else st.error)(label(flash[1], 400))
    write, preview = st.columns(2, gap="medium")
    with write:
        st.text_area("Guidelines (Markdown)", saved, key=widget, height=420, max_chars=MAX_CHARS,
                     placeholder="# What to label\n\nExplain each label with an example…",
                     help="Shown beside the task on the annotate and review pages, rendered as "
                     "Markdown. Empty text removes them.")
        st.button("Save guidelines", key="nw-guidelines-save", type="primary", on_click=_save,
                  args=(dataset, widget), icon=":material/save:")
        if found:
            st.caption(f"Last saved {found.updated_at[:16].replace('T', ' ')} UTC by "
                       f"{label(found.updated_by or '?', 40)}")
    with preview:
        st.markdown("**Preview** (as annotators see it)")
        text = st.session_state.get(widget, saved)
        with st.container(border=True, height=460):
            if text.strip():
                st.markdown(text)
            else:
                st.caption("No guidelines yet.")
