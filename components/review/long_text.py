"""Long responses: the first screen at once, the rest in paragraph chunks on demand.

Each panel is a fragment, so "Show more" and "Show all" redraw only that panel.
Text is drawn literally through :mod:`components.text`.
"""

from __future__ import annotations

import streamlit as st

from components.callbacks import uninterrupted
from components.text import render_markdown, render_marked_text, render_text
from needlework.review.chunks import chunk_bounds
from needlework.review.diff import Segment

BOX_HEIGHT = 640


def _state_key(key: str) -> str:
    return f"rv_lt|{key}"


def slice_segments(segments: list[Segment], end: int) -> list[Segment]:
    """The marked segments covering the first ``end`` characters."""
    out: list[Segment] = []
    pos = 0
    for text, css, style in segments:
        if pos >= end:
            break
        take = text[: end - pos]
        if take or css:
            out.append((take, css, style))
        pos += len(text)
    return out


@uninterrupted
def _show(key: str, n: int) -> None:
    st.session_state[_state_key(key)] = n


def _needed(bounds: list[tuple[int, int]], reveal: int | None) -> int:
    """How many chunks must be shown for character ``reveal`` to be on screen."""
    if reveal is None:
        return 1
    return next((k + 1 for k, (_, end) in enumerate(bounds) if reveal < end), len(bounds))


def cuts(text: str) -> bool:
    """Whether a panel shows only the first part of ``text`` until asked for more."""
    return len(chunk_bounds(text)) > 1


@st.fragment
def _panel(
    text: str, segments: list[Segment] | None, key: str, max_height: int, reveal: int | None,
    markdown: bool = False, whole: bool = False,
) -> None:
    bounds = chunk_bounds(text)
    wanted = max(st.session_state.get(_state_key(key), 1), _needed(bounds, reveal))
    shown = len(bounds) if whole else max(1, min(wanted, len(bounds)))
    end = bounds[shown - 1][1]
    if segments is None and markdown:
        render_markdown(text[:end], box=True, max_height=max_height, key=key)
    elif segments is None:
        render_text(text[:end], box=True, max_height=max_height, key=key)
    else:
        render_marked_text(slice_segments(segments, end), box=True, max_height=max_height, key=key)
    if len(bounds) == 1:
        return
    if whole:  # the page's Whole text (W) is on: no More / Collapse of this one's own
        st.caption(f"All {len(text):,} characters shown (Whole text: W shows the first part).")
        return
    row = st.container(horizontal=True, vertical_alignment="center")
    if shown < len(bounds):
        row.caption(f"{end:,} of {len(text):,} characters")
        row.button("More", key=f"{key}-more", icon="⬇️", on_click=_show, args=(key, shown + 1),
                   help=f"Show part {shown + 1} of {len(bounds)}")
        row.button("All", key=f"{key}-all", icon="⏬", on_click=_show, args=(key, len(bounds)),
                   help="Show the whole response (expand all)")
    else:
        row.caption(f"All {len(text):,} characters shown.")
        row.button("Collapse", key=f"{key}-less", icon="⏫", on_click=_show, args=(key, 1))


def render_long_text(
    text: str,
    key: str,
    segments: list[Segment] | None = None,
    max_height: int = BOX_HEIGHT,
    reveal: int | None = None,
    markdown: bool = False,
    whole: bool = False,
) -> None:
    """Draw ``text`` (or its marked ``segments``, which must cover it exactly) in a
    scrolling box: the first chunk now, later chunks when asked; with ``reveal``,
    enough chunks that character ``reveal`` is shown; ``whole``: every chunk (the page's
    Whole text, W). ``markdown`` (plain ``text`` only): its Markdown drawn as formatting,
    HTML off (:func:`components.text.render_markdown`)."""
    _panel(text, segments, key, max_height, reveal, markdown, whole)
