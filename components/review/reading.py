"""How a person reads Review's two responses, on the line above them: the view (Auto, Side
by side, Differences), the Markdown switch and **Whole text** (W).

The view and the Markdown switch are the person's (the signed-in name in team mode, the
annotator's name locally), kept in the database (:mod:`needlework.view.prefs`), so a page
load, a new tab or another browser keeps them; without a name they last for the session.
Whole text lives in the session: in the differences view it shows both texts whole or the
window around the difference in focus, side by side (Markdown too) both texts whole or
their first part (:mod:`components.review.long_text`)."""

from __future__ import annotations

import streamlit as st

from components.callbacks import uninterrupted
from components.state import annotator, get_db, signed_in
from components.text import label
from needlework.teams.permissions import PermissionDenied
from needlework.view.prefs import (
    REVIEW_VIEWS,
    review_markdown,
    review_view,
    set_review_markdown,
    set_review_view,
)

VIEW = "rv_view"
VIEWS = dict(zip(REVIEW_VIEWS, ("Auto", "Side by side", "Differences"), strict=True))
MARKDOWN_VIEW = "rv_markdown"  # the reader's choice: responses' Markdown as formatting (off: text)
WHOLE = "rv_whole"  # the key script presses it on W (js/review_keys.js)


def reader() -> str:
    """Whose choices these are: the signed-in name in team mode, else the annotator's
    name (``""``: nobody yet)."""
    user = signed_in()
    return user.name if user is not None else annotator()


@uninterrupted
def _keep(kind: str) -> None:
    """A switch's callback: keep the person's new choice under the name the session has
    when the click is handled (a run drawn before the name was known would otherwise
    drop it); without a name the session holds it."""
    who = reader()
    if not who:
        return
    try:
        if kind == VIEW:
            set_review_view(get_db(), who, st.session_state.get(VIEW) or "auto",
                            actor=signed_in())
        else:
            set_review_markdown(get_db(), who, bool(st.session_state.get(MARKDOWN_VIEW)),
                                actor=signed_in())
    except (PermissionDenied, ValueError) as e:
        st.toast(label(str(e), 300), icon=":material/block:")


def render_view(controls) -> str:
    """The view switch, drawn into ``controls`` as the person last chose it; returns the
    view (``auto``, ``side`` or ``diff``)."""
    who = reader()
    if who:
        st.session_state[VIEW] = review_view(get_db(), who)
    elif st.session_state.get(VIEW) not in VIEWS:
        st.session_state[VIEW] = "auto"
    return controls.segmented_control(
        "View", list(VIEWS), format_func=VIEWS.get, key=VIEW, label_visibility="collapsed",
        on_change=_keep, args=(VIEW,)) or "auto"


def render_markdown_switch(controls) -> bool:
    """The Markdown switch of the side-by-side view, as the person last chose it."""
    who = reader()
    if who:
        st.session_state[MARKDOWN_VIEW] = review_markdown(get_db(), who)
    return controls.toggle(
        "Markdown", key=MARKDOWN_VIEW, on_change=_keep, args=(MARKDOWN_VIEW,),
        help="Show the responses' Markdown (headings, bold, lists, tables, code) as "
             "formatting. HTML in a response stays visible as text, links show their "
             "address and are not clickable, images are not loaded. Off: the text as typed.")


def render_whole_switch(controls, diff: bool, cut: bool = True) -> bool:
    """**Whole text (W)**: in the differences view (``diff``) both texts whole or the
    window around the difference in focus; side by side both texts whole or their first
    part. ``cut``: whether the view cuts anything (side by side, two short texts are shown
    whole already: the switch is off and says so, and so does W)."""
    if diff:
        hint = "The whole of both texts, or only the window around the difference in focus (W)"
    elif cut:
        hint = "The whole of both texts, or only their first part (More and All add the rest) (W)"
    else:
        hint = "Both texts are shown whole already (W)"
    return controls.toggle("Whole text (W)", key=WHOLE, help=hint, disabled=not cut) and cut
