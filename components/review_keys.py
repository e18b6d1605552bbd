"""What Streamlit shortcuts cannot do on the review page: ``Esc`` leaves a text
field (the note; leaving saves it) and a clicked switch gives the focus back, so
the verdict keys work again; and the difference in focus (``mark.nw-current``)
is scrolled into view inside its scrolling box. The script is fixed code; no
data goes into it."""

from __future__ import annotations

import streamlit as st

_SCRIPT = """
<script>
(() => {
  if (!window.__nwReviewKeys) {
    window.__nwReviewKeys = true;
    document.addEventListener("keydown", (e) => {
      const t = e.target;
      const tag = t && t.tagName;
      const textField = tag === "TEXTAREA" || (tag === "INPUT" &&
        ["text", "search", "password", "email", ""].includes(t.type || "") &&
        !t.closest('[data-baseweb="select"]'));
      if (e.key === "Escape" && textField) { t.blur(); }
    }, true);
    // a clicked switch or radio keeps the focus, and shortcuts ignore keys typed in any
    // input: give the focus back so D, A, F... work right after "Whole text" and the like
    document.addEventListener("click", () => setTimeout(() => {
      const a = document.activeElement;
      if (a && a.tagName === "INPUT" && (a.type === "checkbox" || a.type === "radio")) a.blur();
    }, 0), true);
  }
  const focus = () => document.querySelectorAll(".nw-box mark.nw-current").forEach((m) => {
    const box = m.closest(".nw-box");
    if (!box || box.scrollHeight <= box.clientHeight) return;
    const offset = m.getBoundingClientRect().top - box.getBoundingClientRect().top;
    if (offset < 0 || offset > box.clientHeight - 40) {
      box.scrollTop = Math.max(0, box.scrollTop + offset - box.clientHeight / 3);
    }
  });
  [120, 450, 1200].forEach((ms) => setTimeout(focus, ms));
})();
</script>
"""


def render_review_keys(marker: str = "", where=None) -> None:
    """Install the Esc handler once; scroll the focused difference into view.
    ``marker`` (numbers or our own label, never data) makes the script run again;
    ``where`` is a placeholder to draw into (default: the page)."""
    safe = "".join(ch for ch in marker if ch.isalnum() or ch in "-_:")
    (where or st).html(_SCRIPT.replace("<script>", f"<script>/* {safe} */", 1),
                       unsafe_allow_javascript=True)
