"""The review page's keyboard, and the scroll to the difference in focus.

The key script (``js/review_keys.js``) turns verdict and reason keys (and clicks on
those buttons) into actions aimed at the comparison on screen, which the outbox
delivers (:mod:`components.outbox`); J / K / N ask the server for another comparison
and hold the keys pressed meanwhile for it. It also leaves a text field on ``Esc`` (the
note; leaving saves it) and gives the focus back after a switch is clicked. A second,
fixed script scrolls the difference in focus (``mark.nw-current``) into view inside
its scrolling box. No data goes into either script: the server's view reaches the key
script as the component's data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from components.outbox import applied_through, courier, draw_code
from components.scripts import bundle
from needlework.review.sides import Sides, sides_for
from needlework.teams.permissions import User
from needlework.verdicts import key_map

#: the key script's code (sent once per tab) and the courier of its data (every run)
_CODE = st.components.v2.component("needlework.review_keys", isolate_styles=False,
                                   js=bundle("review_keys.js"))
_KEYS = courier("review_keys")

_SCRIPT = """
<script>
(() => {
  // MARKER: "K-COMPARISON-WHOLE" in the diff view. When only K changed (D / Shift+D on
  // the same comparison), the page itself scrolls too, so the difference is in the
  // window and not under the sticky verdict bar.
  const marker = "MARKER";
  const parts = marker.split("-");
  const last = window.__nwDiffMarker || "";
  window.__nwDiffMarker = marker;
  const moved = parts.length === 3 && last.split("-")[1] === parts[1] && last !== marker;
  const focus = (page) => document.querySelectorAll(".nw-box mark.nw-current").forEach((m, n) => {
    const box = m.closest(".nw-box");
    if (box && box.scrollHeight > box.clientHeight) {
      const offset = m.getBoundingClientRect().top - box.getBoundingClientRect().top;
      if (offset < 0 || offset > box.clientHeight - 40) {
        box.scrollTop = Math.max(0, box.scrollTop + offset - box.clientHeight / 3);
      }
    }
    if (!page || n > 0) return;
    const bar = document.querySelector(".st-key-rv-bar");
    const limit = bar ? bar.getBoundingClientRect().top - 12 : window.innerHeight - 40;
    const r = m.getBoundingClientRect();
    if (r.top < 110 || r.bottom > limit) m.scrollIntoView({block: "center", behavior: "instant"});
  });
  [120, 450, 1200].forEach((ms) => setTimeout(() => focus(moved), ms));
})();
</script>
"""


def render_review_keys(marker: str = "", where=None) -> None:
    """Install the Esc handler once; scroll the focused difference into view.
    ``marker`` (numbers or our own label, never data) makes the script run again;
    ``where`` is a placeholder to draw into (default: the page)."""
    safe = "".join(ch for ch in marker if ch.isalnum() or ch in "-_:")
    (where or st).html(_SCRIPT.replace("MARKER", safe), unsafe_allow_javascript=True)


def render_review_keyboard(dataset: str, me: str, ident: tuple[str, int, int],
                           mine: dict[str, Any] | None, advance: bool, seq: int = 0,
                           moves: dict[str, dict[str, Any]] | None = None,
                           item_verdicts: list[dict[str, Any]] | None = None,
                           suggested: str | None = None,
                           line: dict[str, list[dict[str, Any]]] | None = None,
                           keys: dict[str, dict[str, str]] | None = None,
                           shown: Callable[[str, str | None], str | None] | None = None
                           ) -> None:
    """The key script, with what it needs to aim keys at comparison ``ident``: ``seq``,
    the tab's position as drawn, ``moves``, where J, K and N lead
    (:func:`components.review.position.move_targets`), and ``item_verdicts``, my
    verdicts on the item's comparisons (a click in the grid goes to one of them);
    ``suggested``: the verdict Y accepts on this comparison (``None``: no suggestion shown);
    ``line``: the comparisons ahead of and behind this one in the list
    (:func:`components.review.position.line_around`), where moves made before the page
    has drawn the last one lead; ``keys``: what each key means (default
    :func:`needlework.verdicts.key_map`; a blind annotator's from
    :meth:`needlework.review.sides.Sides.keys`); ``shown``: ``(item, verdict) -> verdict``
    as a blind annotator's page names it (:meth:`needlework.review.sides.Sides.shown`, a
    position, never agree or flip): every verdict in the data goes through it, so nothing
    the page sends follows the file's sides."""
    def as_shown(item: str, verdict: str | None) -> str | None:
        return verdict if shown is None else shown(item, verdict)

    def place(c: dict[str, Any]) -> dict[str, Any]:
        return {**c, "verdict": as_shown(c["item"], c.get("verdict"))}

    around = line or {"ahead": [], "behind": []}
    draw_code(_CODE, "nw-review-code")
    _KEYS(key="nw-review-keys", width="content", data={
        "dataset": dataset, "annotator": me, "item": ident[0], "i": ident[1], "j": ident[2],
        "verdict": as_shown(ident[0], (mine or {}).get("verdict")),
        "reasons": list((mine or {}).get("reasons") or []),
        "advance": advance, "seq": seq, "seen": applied_through(), "blind": shown is not None,
        "moves": {seek: place(c) for seek, c in (moves or {}).items()},
        "grid": [{"item": ident[0], "i": v["i"], "j": v["j"],
                  "verdict": as_shown(ident[0], v["verdict"]),
                  "reasons": list(v.get("reasons") or [])} for v in item_verdicts or []],
        "keys": keys or key_map(), "suggested": as_shown(ident[0], suggested),
        "line": {side: [place(c) for c in around.get(side, [])] for side in ("ahead", "behind")}})


def blind_view(sides: Sides, user: User | None) -> Callable[[str, str | None], str | None] | None:
    """For a blind annotator (neutral ``sides``), how their page names each item's stored
    verdicts (by position, :meth:`needlework.review.sides.Sides.shown`); ``None`` for
    everyone else, whose pages name them as stored."""
    if not sides.neutral or user is None:
        return None
    name = user.name
    return lambda item, verdict: sides_for(True, name, item).shown(verdict)
