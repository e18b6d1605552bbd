"""Diff mode: word-level differences of a near-identical pair, side by side.

The difference in focus is marked ``nw-current`` and the view is cut around it
(context either side) so it is on screen without scrolling; "whole text" shows
every difference in the full responses instead.
"""

from __future__ import annotations

import streamlit as st

from components.review.long_text import render_long_text
from components.text import render_marked_text
from needlework.review.diff import TextDiff

CONTEXT_CHARS = 700
MAX_WINDOW = 6_000  # a difference longer than this is cut too (see "Whole text")


def _cut_note(chars: int, where: str) -> None:
    if chars > 0:
        st.caption(f"… {chars:,} characters {where} (switch on “Whole text” to see them)")


def _side(diff: TextDiff, side: str, current: int, key: str) -> None:
    text = diff.a_text if side == "a" else diff.b_text
    start, end = diff.window(side, current, CONTEXT_CHARS)
    if end - start > MAX_WINDOW:
        cut = text.rfind(" ", start, start + MAX_WINDOW)
        end = cut if cut > start else start + MAX_WINDOW
    _cut_note(start, "above")
    render_marked_text(diff.segments(side, current, start, end), box=True, key=key)
    _cut_note(len(text) - end, "below")


def render_diff(
    diff: TextDiff, current: int, headers: tuple[str, str], key: str, whole: bool = False
) -> None:
    """Both sides with their differences marked; ``current`` is the one in focus.

    ``headers`` are plain-text captions for the two columns (no data in them
    unless passed through :func:`components.text.label`).
    """
    left, right = st.columns(2, gap="medium")
    if not diff.differences:
        st.info("No word differences: the two responses have the same words "
                "(they may differ in spacing only).", icon="🟰")
    for col, side, header in ((left, "a", headers[0]), (right, "b", headers[1])):
        with col:
            st.markdown(header)
            if whole or not diff.differences:
                text = diff.a_text if side == "a" else diff.b_text
                focus = current if diff.differences else None
                reveal = getattr(diff.differences[current], side)[0] if focus is not None else None
                render_long_text(text, f"{key}-{side}-whole", segments=diff.segments(side, focus),
                                 reveal=reveal)
            else:
                _side(diff, side, current, f"{key}-{side}")
