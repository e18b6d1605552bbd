"""What an annotator notes about a question besides labels and the answer: a comment,
the flag for later (key F) and the skip mark (key S). The comment saves when it is
committed (Enter, leaving the field); the flag and the skip come from the key script."""

from __future__ import annotations

import streamlit as st

from components.annotate.item import ItemContext, save, saved_text
from components.callbacks import uninterrupted


@uninterrupted
def _on_comment(ctx: ItemContext, widget: str) -> None:
    text = (st.session_state.get(widget) or "").strip()
    save(ctx, "comment", text or None)


def render_item_extras(ctx: ItemContext) -> None:
    """The flag and skip marks and the comment field (key M puts the cursor there)."""
    marks = [text for field, text in (("flag", "🚩 flagged for later (F)"),
                                       ("skipped", "⏭ skipped (S)")) if ctx.value(field)]
    if marks:
        st.caption(" · ".join(marks))
    saved = ctx.value("comment") or ""
    widget = ctx.widget_key(f"comment-{hash(saved) & 0xFFFF}")  # keyed by the saved value
    with st.container(key="nw-comment"):
        st.text_input("Comment on this question", saved, key=widget, max_chars=2000,
                      on_change=_on_comment, args=(ctx, widget), disabled=not ctx.annotator,
                      placeholder="optional · M to type here · Enter saves · Esc leaves")
    stamp = saved_text(ctx, "comment")
    if stamp:
        st.caption("✓ comment " + stamp)
