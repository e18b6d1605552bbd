"""Passage cards and the keyboard toolbar of the annotate page.

A cursor (kept in the browser by the key script, :mod:`components.annotate.keyboard`) marks the
current passage; keys and the card buttons label passages through the outbox. Every
label is written the moment it arrives and the card shows when and by whom.
"""

from __future__ import annotations

import streamlit as st

from components.annotate.item import ItemContext, hide_imported, local_time
from components.annotate.keyboard import render_view_switches
from components.text import render_marked_text, render_text
from needlework.grounding import keymap as km
from needlework.grounding import labels as gl

MOVE_KEYS = {"next": km.NEXT_PASSAGE.upper(), "previous": km.PREVIOUS_PASSAGE.upper()}
CLEAR_KEY = km.CLEAR
_AGE_NOTES = {
    "derived": " (derived from dates)",
    "after question": " · dated after the question: age unknown",
    "unknown": " · no date: age unknown",
}


def render_passage_keys(ctx: ItemContext) -> None:
    """Key buttons (with their shortcut hints): K/J move the cursor, 1-5 set a label, 0
    clears it. The key script handles both the keys and clicks on these buttons."""
    disabled = not ctx.annotator or not ctx.passages
    st.button("", key="nw-key-prev", shortcut=MOVE_KEYS["previous"], icon=":material/north:",
              help="Previous passage", disabled=not ctx.passages)
    st.button("", key="nw-key-next", shortcut=MOVE_KEYS["next"], icon=":material/south:",
              help="Next passage", disabled=not ctx.passages)
    for label in gl.LABELS:
        st.button(gl.SHORT[label], key=f"nw-key-{gl.LABEL_KEYS[label]}",
                  shortcut=gl.LABEL_KEYS[label],
                  help=f"**{label}**: {gl.DEFINITIONS[label]}", disabled=disabled)
    st.button("", key="nw-key-clear", shortcut=CLEAR_KEY, icon=":material/backspace:",
              help="Clear your label of the current passage", disabled=disabled)


def _badge(label: str | None) -> str | None:
    return f"background:{gl.COLOURS[label]}" if label in gl.COLOURS else None


def _header(ctx: ItemContext, passage) -> list[tuple[str, str | None, str | None]]:
    meta = " · ".join(x for x in (passage.provider or "provider ?", passage.date or "no date",
                                  passage.age and f"age {passage.age}") if x)
    head = [(f" {passage.number} ", "nw-cite", None),  # the key script marks the current one
            (f"  {meta}{_AGE_NOTES.get(passage.age_note, '')}", None, None)]
    if hide_imported(ctx):
        return head
    imported = gl.imported_label(ctx.record, passage.number)
    return head + [("   file's label: ", None, "background:none;color:#666"),
                   (gl.imported_text(ctx.record, passage.number), None, _badge(imported))]


def _stamp(ctx: ItemContext, number: int) -> list[tuple[str, str | None, str | None]]:
    entry = ctx.fields.get(gl.label_field(number))
    if not ctx.annotator:
        return [("read-only: enter your name to label", None, None)]
    if not entry:
        return [("not labeled yet", None, "color:#9a3412;background:#fff7ed")]
    return [(f"✓ saved {local_time(entry[1], ctx.zone)} by {ctx.annotator}", None,
             "background:#dcfce7;color:#166534")]


def _render_label_buttons(ctx: ItemContext, number: int, value: str | None) -> None:
    """Five label buttons, the saved one highlighted (clicking it again clears it).
    A click is an action like a key press (the key script aims it at this passage and
    the outbox delivers it), never a server callback that could run twice."""
    for label in gl.LABELS:
        chosen = label == value
        st.button(gl.SHORT[label], key=f"nw-card-{number}-{gl.LABEL_KEYS[label]}",
                  type="primary" if chosen else "secondary", disabled=not ctx.annotator,
                  help=("Click again to clear. " if chosen else "")
                  + f"{label}: {gl.DEFINITIONS[label]}")


def render_passage_card(ctx: ItemContext, passage) -> None:
    """One passage: number, provider, date, age, imported label, the literal text, and
    the annotator's label buttons with the saved stamp."""
    value = ctx.value(gl.label_field(passage.number))
    with st.container(border=True, key=f"nw-card-{passage.number}", gap="small"):
        render_marked_text(_header(ctx, passage), key=f"nw-head-{passage.number}")
        render_text(passage.text or "(empty passage)", box=True, max_height=200,
                    key=f"nw-passage-{passage.number}")
        with st.container(horizontal=True, vertical_alignment="center", gap="xxsmall",
                          key=f"nw-labels-{passage.number}"):
            _render_label_buttons(ctx, passage.number, value)
            render_marked_text(_stamp(ctx, passage.number), key=f"nw-stamp-{passage.number}")


def render_passages(ctx: ItemContext) -> None:
    """Every passage card; the key script outlines the one under the cursor."""
    render_view_switches(ctx.file_labels)
    if not ctx.passages:
        st.info("This question has no grounding passages.")
    with st.container(key="nw-cards", gap="small"):
        for passage in ctx.passages:
            render_passage_card(ctx, passage)


def render_definitions() -> None:
    """The label definitions (GaRAGe appendix A.2) and the keyboard map, in a popover."""
    with st.container(key="nw-keymap", width="content"), st.popover(
            "", icon=":material/keyboard:", help="Label definitions and keys (?)"):
        for label in gl.LABELS:
            st.markdown(f"**{gl.LABEL_KEYS[label]} · {label}**: {gl.DEFINITIONS[label]}")
        st.markdown("**Keys** (they act only when no text field has focus)\n\n"
                    + "\n".join(f"- `{keys}`: {what}" for keys, what in km.KEYMAP))
