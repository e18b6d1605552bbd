"""Passage cards and the keyboard toolbar of the annotate page.

A cursor (kept in the browser by the key script, :mod:`components.annotate.keyboard`) marks the
current passage; keys and the card buttons label passages through the outbox. Every
label is written the moment it arrives and the card shows when and by whom.
"""

from __future__ import annotations

import streamlit as st

from components.annotate.item import (
    ItemContext,
    hide_imported,
    local_time,
    offers_suggestions,
    suggested,
)
from components.annotate.keyboard import render_view_switches
from components.text import TEXT_STYLE, block, escape, marked_html
from needlework.grounding import keymap as km
from needlework.grounding import labels as gl
from needlework.suggest.data import sure_text
from needlework.teams.blind import AFTER, against_yours

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
    head: list[tuple[str, str | None, str | None]] = [
        (f" {passage.number} ", "nw-cite", None),  # the key script marks the current one
        (f"  {meta}{_AGE_NOTES.get(passage.age_note, '')}", None, None)]
    if not hide_imported(ctx):
        imported = gl.imported_label(ctx.record, passage.number)
        head += [("   file's label: ", None, "background:none;color:#666"),
                 (gl.imported_text(ctx.record, passage.number), None, _badge(imported))]
    offered = suggested(ctx, passage.number)  # apart from the file's labels (H hides both)
    if offered:
        after = ctx.timing == AFTER  # shown once your label is saved: say how it compares
        head.append(("   model: " if after else "   suggested: ", None,
                     f"background:none;color:{SUGGESTED}"))
        head.append((", ".join(_offer(ctx, row) for row in offered), None,
                     f"background:none;color:{SUGGESTED};font-weight:600"))
        if after:
            head.append(_comparison(ctx.value(gl.label_field(passage.number)), offered))
    return head


def _offer(ctx: ItemContext, row: dict) -> str:
    """One suggestion in a card's header: its label, source and how sure the source is
    (the compact layout leaves the source to the label button's hover text)."""
    short = gl.SHORT.get(row["value"], row["value"])
    return f"{short}{_score(row)}" if ctx.compact else f"{short} ({row['source']}{_score(row)})"


def _comparison(mine: str | None, offered: list[dict]) -> tuple[str, str | None, str | None]:
    """`` — differs from yours`` (marked) or `` — same as yours`` beside a suggestion."""
    words = against_yours(mine, [row["value"] for row in offered])
    style = (f"background:none;color:{SUGGESTED}" if words == "same as yours"
             else "background:#fef3c7;color:#92400e;font-weight:600")
    return (f" — {words}", None, style)


SUGGESTED = "#6d28d9"  # suggestions are violet: never a saved label's blue or green


def _score(row: dict) -> str:
    """The source's confidence (or score) beside its suggestion (:func:`sure_text`)."""
    return sure_text(row)





def _stamp(ctx: ItemContext, number: int) -> list[tuple[str, str | None, str | None]]:
    entry = ctx.fields.get(gl.label_field(number))
    if not ctx.annotator:
        return [("read-only: enter your name to label", None, None)]
    if not entry:
        return [("not labeled yet", None, "color:#9a3412;background:#fff7ed")]
    return [(f"✓ saved {local_time(entry[1], ctx.zone)} by {ctx.annotator}", None,
             "background:#dcfce7;color:#166534")]


_CARD_STYLE = """<style>
.nw-labels{display:flex;flex-wrap:wrap;align-items:center;gap:.25rem}
.nw-labels button{font:inherit;font-size:.9rem;line-height:1.4;min-height:2.1rem;
  padding:.2rem .7rem;border-radius:.5rem;border:1px solid rgba(49,51,63,.2);
  background:var(--nw-bg,#fff);color:rgb(49,51,63);cursor:pointer}
.nw-labels button:hover:not(:disabled):not(.nw-chosen){border-color:#1f6feb;color:#1f6feb}
.nw-labels button.nw-chosen:hover{background:#1a5fd0}
.nw-labels button:focus-visible{outline:2px solid #1f6feb;outline-offset:1px}
.nw-labels button.nw-chosen{background:#1f6feb;border-color:#1f6feb;color:#fff}
.nw-labels button:disabled{cursor:not-allowed;opacity:.55}
.nw-labels .nw-text{display:inline;margin:0 0 0 .3rem}
.nw-labels button.nw-suggested{border:2px dashed #6d28d9}
</style>"""


def label_buttons_html(ctx: ItemContext, number: int, value: str | None) -> str:
    """Five label buttons as plain HTML, the saved one marked ``nw-chosen`` (clicking it
    again clears it). The key script turns a click into an action aimed at this passage,
    delivered like a key press; no server callback runs."""
    disabled = "" if ctx.annotator else " disabled"
    by_value: dict[str, list[str]] = {}
    for row in suggested(ctx, number):
        by_value.setdefault(row["value"], []).append(f"{row['source']}{_score(row)}")
    buttons = []
    for label in gl.LABELS:
        chosen = label == value
        hint = ("Click again to clear. " if chosen else "") + f"{label}: {gl.DEFINITIONS[label]}"
        if label in by_value:
            hint += f" Suggested by {', '.join(by_value[label])}."
        classes = "nw-label-button" + (" nw-chosen" if chosen else "") + (
            " nw-suggested" if label in by_value else "")
        buttons.append(
            f'<button type="button" class="{classes}" '
            f'data-nw-passage="{number}" data-nw-label="{gl.LABEL_KEYS[label]}" '
            f'aria-pressed="{"true" if chosen else "false"}" title="{escape(hint)}"{disabled}>'
            f"{escape(gl.SHORT[label])}</button>")
    return "".join(buttons)


def render_passage_card(ctx: ItemContext, passage) -> None:
    """One passage in a bordered card of two HTML elements (a label changes only the
    second, so the text box keeps its scroll): number, provider, date, age, imported
    label and the literal text; then the label buttons and the saved stamp."""
    number = passage.number
    text = block(escape(passage.text or "(empty passage)"), box=True,
                 max_height=None if ctx.compact else 200, key=f"nw-passage-{number}")
    if ctx.compact:  # folded to two lines, whole under the cursor (js/annotate_paint.js)
        text = f'<div class="{FOLD}">{text}</div>'
    with st.container(border=True, key=f"nw-card-{number}", gap="small"):
        st.html(TEXT_STYLE
                + block(marked_html(_header(ctx, passage)), key=f"nw-head-{number}") + text)
        value = ctx.value(gl.label_field(number))
        st.html(_CARD_STYLE + f'<div class="nw-labels">{label_buttons_html(ctx, number, value)}'
                + block(marked_html(_stamp(ctx, number)), key=f"nw-stamp-{number}") + "</div>")


#: The compact layout's passage box (``nw-fold``): two lines of each passage, the
#: outlined one whole (the key script's cursor style opens it, up to half the window,
#: :file:`components/js/annotate_paint.js`), so that five passages' label buttons and the
#: dimensions fit the first screen at 1440x900.
FOLD = "nw-fold"
#: The compact layout: tighter cards, smaller text and buttons, the header on one line.
_COMPACT_STYLE = """<style>
.st-key-nw-cards{gap:.25rem!important}
.st-key-nw-cards [class*="st-key-nw-card-"]{padding:.25rem .6rem!important;gap:.2rem!important}
.st-key-nw-cards [id^="nw-head-"]{font-size:.8rem;line-height:1.3;margin:0 0 .1rem 0}
.st-key-nw-cards .nw-fold > [id^="nw-passage-"]{font-size:.86rem;line-height:1.35;
  padding:.15rem .5rem;margin:0;max-height:calc(2.7em + .3rem + 2px)}
.st-key-nw-cards .nw-labels button{font-size:.8rem;min-height:1.6rem;padding:.05rem .5rem}
.st-key-nw-cards .nw-labels [id^="nw-stamp-"]{font-size:.78rem}
.st-key-nw-item-side .nw-dims{gap:.15rem .5rem}
.st-key-nw-item-side .nw-dims button{min-height:1.6rem;padding:.05rem .45rem;font-size:.78rem}
</style>"""


def render_passages(ctx: ItemContext) -> None:
    """The view switch (H; in the compact layout it is on the progress line), then every
    passage card (tighter in the compact layout); the key script outlines the one under
    the cursor."""
    if ctx.compact:  # the switches are on the progress line (components.annotate.item)
        st.html(_COMPACT_STYLE)
    else:
        render_view_switches(ctx)
    if ctx.timing == AFTER and not ctx.hidden and offers_suggestions(ctx):
        st.caption("A model's suggestion shows on a passage once you have saved your own "
                   "label, with whether it differs from yours.")
    if not ctx.passages:
        st.info("This question has no grounding passages.")
    with st.container(key="nw-cards", gap="small"):
        for passage in ctx.passages:
            render_passage_card(ctx, passage)


def render_definitions(blind: bool = False) -> None:
    """The label definitions (GaRAGe appendix A.2) and the keyboard map, in a popover
    (``blind``: the lead keeps the file's values from this person: no key that takes them,
    :func:`needlework.grounding.keymap.keymap`)."""
    with st.container(key="nw-keymap", width="content"), st.popover(
            "", icon=":material/keyboard:", help="Label definitions and keys (?)"):
        for label in gl.LABELS:
            st.markdown(f"**{gl.LABEL_KEYS[label]} · {label}**: {gl.DEFINITIONS[label]}")
        st.markdown("**Keys** (they act only when no text field has focus)\n\n"
                    + "\n".join(f"- `{keys}`: {what}" for keys, what in km.keymap(blind)))
