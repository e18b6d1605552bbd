"""Passage cards and the keyboard toolbar of the annotate page.

A cursor marks the current passage; keys move it and label it (Streamlit button
shortcuts, which do not fire while a text field has focus, so typing is safe).
Every label is written the moment it is set and the card shows when and by whom.
"""

from __future__ import annotations

import streamlit as st

from components.grounding import ItemContext, local_time, save
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


def cursor_key(ctx: ItemContext) -> str:
    """Session-state key of this item's current-passage cursor."""
    return ctx.widget_key("cursor")


def current_passage(ctx: ItemContext) -> int:
    """The current passage number (first unlabeled passage when the item opens)."""
    key, count = cursor_key(ctx), max(1, len(ctx.passages))
    if key not in st.session_state:
        labels = ctx.labels
        st.session_state[key] = next((n for n, v in labels.items() if v is None), 1)
    return max(1, min(int(st.session_state[key]), count))


def move(ctx: ItemContext, offset: int) -> None:
    current = current_passage(ctx)
    st.session_state[cursor_key(ctx)] = max(1, min(current + offset, max(1, len(ctx.passages))))


def label_current(ctx: ItemContext, label: str | None) -> None:
    """Label the current passage (``None`` clears it) and move to the next one."""
    if not ctx.annotator or not ctx.passages:
        return
    number = current_passage(ctx)
    save(ctx, gl.label_field(number), label)
    if label is not None:
        move(ctx, 1)


def render_passage_keys(ctx: ItemContext) -> None:
    """Buttons with shortcuts: K/J move the cursor, 1-5 set a label, 0 clears it."""
    disabled = not ctx.annotator or not ctx.passages
    st.markdown(f"**#{current_passage(ctx)}**/{len(ctx.passages)}", width="content",
                help="The current passage (outlined): the label keys act on it.")
    st.button("", key="nw-key-prev", shortcut=MOVE_KEYS["previous"], icon=":material/north:",
              on_click=move, args=(ctx, -1), help="Previous passage",
              disabled=not ctx.passages)
    st.button("", key="nw-key-next", shortcut=MOVE_KEYS["next"], icon=":material/south:",
              on_click=move, args=(ctx, 1), help="Next passage", disabled=not ctx.passages)
    for label in gl.LABELS:
        st.button(gl.SHORT[label], key=f"nw-key-{gl.LABEL_KEYS[label]}",
                  shortcut=gl.LABEL_KEYS[label], on_click=label_current, args=(ctx, label),
                  help=f"**{label}**: {gl.DEFINITIONS[label]}", disabled=disabled)
    st.button("", key="nw-key-clear", shortcut=CLEAR_KEY, icon=":material/backspace:",
              on_click=label_current, args=(ctx, None),
              help="Clear your label of the current passage", disabled=disabled)


def _on_card_click(ctx: ItemContext, number: int, label: str | None) -> None:
    """A label button on a card: label (or clear) that passage and make it current."""
    save(ctx, gl.label_field(number), label)
    st.session_state[cursor_key(ctx)] = number


def _badge(label: str | None) -> str | None:
    return f"background:{gl.COLOURS[label]}" if label in gl.COLOURS else None


def _header(ctx: ItemContext, passage, current: bool) -> list[tuple[str, str | None, str | None]]:
    meta = " · ".join(x for x in (passage.provider or "provider ?", passage.date or "no date",
                                  passage.age and f"age {passage.age}") if x)
    imported = gl.imported_label(ctx.record, passage.number)
    return [(f" {passage.number} ", "nw-current" if current else "nw-cite", None),
            (f"  {meta}{_AGE_NOTES.get(passage.age_note, '')}", None, None),
            ("   imported: ", None, "background:none;color:#666"),
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
    Buttons, not a selection widget: a click is sent once, so a press made while the
    page reruns can never be replayed as a stale selection."""
    for label in gl.LABELS:
        chosen = label == value
        st.button(gl.SHORT[label], key=f"nw-card-{number}-{gl.LABEL_KEYS[label]}",
                  type="primary" if chosen else "secondary", disabled=not ctx.annotator,
                  on_click=_on_card_click, args=(ctx, number, None if chosen else label),
                  help=("Click again to clear. " if chosen else "")
                  + f"{label}: {gl.DEFINITIONS[label]}")


def render_passage_card(ctx: ItemContext, passage, current: bool) -> None:
    """One passage: number, provider, date, age, imported label, the literal text, and
    the annotator's label buttons with the saved stamp."""
    value = ctx.value(gl.label_field(passage.number))
    with st.container(border=True, key=f"nw-card-{passage.number}", gap="small"):
        render_marked_text(_header(ctx, passage, current), key=f"nw-head-{passage.number}")
        render_text(passage.text or "(empty passage)", box=True, max_height=200,
                    key=f"nw-passage-{passage.number}")
        with st.container(horizontal=True, vertical_alignment="center", gap="xxsmall",
                          key=f"nw-labels-{passage.number}"):
            _render_label_buttons(ctx, passage.number, value)
            render_marked_text(_stamp(ctx, passage.number), key=f"nw-stamp-{passage.number}")


def render_passages(ctx: ItemContext) -> int:
    """Every passage card, the current one outlined; returns the current number."""
    current = current_passage(ctx)
    st.html(f"<style>.st-key-nw-card-{current}{{box-shadow:0 0 0 3px #1f6feb;"
            "border-radius:.6rem}}</style>")
    if not ctx.passages:
        st.info("This question has no grounding passages.")
    for passage in ctx.passages:
        render_passage_card(ctx, passage, passage.number == current)
    return current


def render_definitions() -> None:
    """The label definitions (GaRAGe appendix A.2) and the keyboard map, in a popover."""
    with st.popover("", icon=":material/keyboard:", help="Label definitions and keys"):
        for label in gl.LABELS:
            st.markdown(f"**{gl.LABEL_KEYS[label]} · {label}**: {gl.DEFINITIONS[label]}")
        st.markdown("**Keys** (they act only when no text field has focus)\n\n"
                    + "\n".join(f"- `{keys}`: {what}" for keys, what in km.KEYMAP))
