"""The answer editor: a long-form answer with ``[cite_N]`` markers, live checks,
a citation helper, a literal preview and the standard deflection."""

from __future__ import annotations

import streamlit as st

from components.annotate.item import ItemContext, saved_text
from components.callbacks import uninterrupted
from components.state import get_db, signed_in
from components.text import label, render_marked_text, render_text
from needlework.actions.writes import save_answer
from needlework.formats.garage import DEFLECTION
from needlework.grounding import answer as ga
from needlework.grounding import keymap as km
from needlework.grounding import labels as gl
from needlework.teams.permissions import PermissionDenied
from store.annotations import get_value

DEFLECT_KEY = km.DEFLECT.upper()


def _version_key(ctx: ItemContext) -> str:
    return ctx.widget_key("answer-version")


def answer_key(ctx: ItemContext) -> str:
    """Key of this item's answer text area. Its version changes when the server
    rewrites the answer (deflection, inserted marker), so the area is drawn afresh
    and a value sent from an older run is never taken for an edit."""
    return ctx.widget_key(f"answer-v{st.session_state.get(_version_key(ctx), 0)}")


def _new_version(ctx: ItemContext) -> None:
    """Draw the answer box afresh (a new key) on this run: it shows the saved answer."""
    st.session_state[_version_key(ctx)] = st.session_state.get(_version_key(ctx), 0) + 1


def _rewrite(ctx: ItemContext, text: str) -> None:
    _store_answer(ctx, text)
    _new_version(ctx)


def _store_answer(ctx: ItemContext, text: str) -> None:
    """Save the answer (an empty one is removed) and the ``deflected`` flag (in team mode
    as the signed-in user, who may be refused: said in a toast)."""
    try:
        save_answer(get_db(), ctx.dataset, ctx.key, text, annotator=ctx.annotator,
                    actor=signed_in())
    except PermissionDenied as e:
        st.toast(label(str(e), 300), icon=":material/block:")


@uninterrupted
def _on_answer(ctx: ItemContext, key: str) -> None:
    if key == answer_key(ctx):  # not rewritten by the server in this same rerun
        _store_answer(ctx, st.session_state.get(key) or "")


@uninterrupted
def deflect(ctx: ItemContext) -> None:
    """Write the standard deflection (the ``deflected`` flag follows)."""
    _rewrite(ctx, DEFLECTION)


@uninterrupted
def _insert(ctx: ItemContext, picker: str) -> None:
    number = st.session_state.get(picker)
    if not isinstance(number, int) or not 1 <= number <= len(ctx.passages):
        return  # nothing picked (or a label from an older run)
    current = st.session_state.get(answer_key(ctx))
    if current is None:
        current = load_answer(ctx)
    _rewrite(ctx, ga.insert_marker(current, number))


def load_answer(ctx: ItemContext) -> str:
    """The saved answer, read now (the context may be from an older run)."""
    return get_value(get_db(), ctx.dataset, ctx.key, ctx.annotator, "answer") or ""


def _passage_choice(ctx: ItemContext, number: int) -> str:
    words = " ".join(ctx.passages[number - 1].text.split()[:10])
    return f"[cite_{number}] {words}…"


def render_answer(ctx: ItemContext) -> ga.AnswerCheck:
    """Draw the editor (saved on blur / Ctrl+Enter), its checks and preview; returns
    the checks of the saved answer."""
    key = answer_key(ctx)
    saved = ctx.value("answer") or ""
    held = st.session_state.get(key)
    if held is not None and held != saved:
        # saved by another way since this box last sent its text (D, an undo, another
        # tab, a refused save): the box shows what is saved, never its older copy
        _new_version(ctx)
        key = answer_key(ctx)
    with st.container(key="nw-answer"):
        st.text_area(
            "Answer with [cite_N] markers", saved,
            key=key, height=180, on_change=_on_answer, args=(ctx, key),
            disabled=not ctx.annotator,
            placeholder="Write the answer from the relevant passages only, a [cite_N] marker "
            "after each claim. Press A to start typing, Esc to leave (saves).",
            help="Saved when the field loses focus (Esc, Tab, a click elsewhere) or on "
            "Ctrl+Enter; every save is in the history.",
        )
    stamp = saved_text(ctx, "answer")
    text = st.session_state.get(key) or ""
    check = ga.check_answer(text, len(ctx.passages), ctx.labels)
    st.caption(("✓ " + stamp if stamp else "not saved yet")
               + (" · deflected" if check.deflection else ""))
    _render_tools(ctx, check, text)
    for message in check.errors:
        st.error(message, icon=":material/error:")
    for message in check.warnings:
        st.warning(message, icon=":material/warning:")
    if text.strip():
        _render_preview(ctx, text)
    return check


def _render_tools(ctx: ItemContext, check: ga.AnswerCheck, text: str) -> None:
    picker = ctx.widget_key("cite-pick")
    numbers = [p.number for p in ctx.passages]
    uncited = [n for n in numbers if n not in check.cited]
    with st.container(horizontal=True, vertical_alignment="bottom", gap="small"):
        st.selectbox("Cite passage", numbers, index=None, key=picker,
                     format_func=lambda n: _passage_choice(ctx, n),
                     placeholder=f"cite passage… ({len(uncited)} not cited)",
                     label_visibility="collapsed", disabled=not ctx.annotator, width=330)
        st.button("Insert marker", key=ctx.widget_key("cite-go"), on_click=_insert,
                  args=(ctx, picker), disabled=not ctx.annotator,
                  help="Adds [cite_N] at the end of the answer (before a final full stop).")
        empty = not text.strip()
        st.button("Deflect" if empty or check.deflection else "Replace with deflection",
                  key="nw-deflect", on_click=deflect, args=(ctx,), disabled=not ctx.annotator,
                  help=f"Writes “{DEFLECTION}” and marks the item deflected "
                  f"(key {DEFLECT_KEY} when the answer is empty).")


def _render_preview(ctx: ItemContext, text: str) -> None:
    with st.expander("Preview with the cited passages", expanded=True):
        render_marked_text(ga.preview_segments(text, len(ctx.passages)), key="nw-preview")
        for number in ga.cited_numbers(text):
            if 1 <= number <= len(ctx.passages):
                label = ctx.labels.get(number)
                render_marked_text([(f"[cite_{number}]", "nw-cite", None),
                                    (f" {gl.SHORT.get(label or '', 'unlabeled')}", None, None)],
                                   key=f"nw-preview-head-{number}")
                render_text(ctx.passages[number - 1].text, box=True, max_height=110,
                            key=f"nw-preview-{number}")
            else:
                render_marked_text([(f"[cite_{number}]", "nw-bad", None),
                                    (" points to no passage", None, None)],
                                   key=f"nw-preview-bad-{number}")
