"""The annotate page's keyboard: a key log the browser sends, applied in order.

Streamlit button shortcuts drop presses that arrive while the page reruns, so a
small fixed script (no data goes into it) records each key press as ``SEQ:KEY`` in
a hidden text field and commits it; the server applies every entry it has not seen
yet, in order (:func:`needlework.grounding.keymap.parse_key_log`). The buttons keep
their shortcuts (the hints, and the fallback when the script is not running).
The script also puts the cursor in the answer on ``A``, leaves text fields on
``Esc`` (which saves them), commits the answer draft 1.5 s after typing pauses,
and scrolls the current passage card into view.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from sqlite_utils import Database

from components.answer import deflect
from components.grounding import load_context
from components.passages import label_current, move
from components.question_list import Nav, current_item, go, tracked_progress
from needlework.grounding import keymap as km
from needlework.grounding import progress as gp
from store.datasets import get_item

LOG_KEY = "nw-keylog"
SEEN_KEY = "nw-keylog-seen"


@dataclass
class KeyActions:
    """What each key does, against this session's current item and cursor."""

    db: Database
    dataset: str
    annotator: str
    nav: Nav

    def _context(self):
        key = current_item(self.dataset) or self.nav.current
        item = get_item(self.db, self.dataset, key)
        return load_context(self.db, self.dataset, item, self.annotator) if item else None

    def apply(self, key: str) -> None:
        """Apply one key press."""
        current = current_item(self.dataset) or self.nav.current
        if key in (km.NEXT_ITEM, km.PREVIOUS_ITEM):
            step = 1 if key == km.NEXT_ITEM else -1
            go(self.dataset, gp.step(self.nav.keys, current, step, self.nav.order))
            return
        if key == km.NEXT_UNFINISHED:
            status, _ = tracked_progress(self.db, self.dataset, self.nav.created_at,
                                         self.annotator)
            go(self.dataset, gp.next_unfinished(self.nav.keys, current, self.nav.summaries, status))
            return
        ctx = self._context()
        if ctx is None:
            return
        if key in (km.NEXT_PASSAGE, km.PREVIOUS_PASSAGE):
            move(ctx, 1 if key == km.NEXT_PASSAGE else -1)
        elif key in km.LABEL_FOR_KEY:
            label_current(ctx, km.LABEL_FOR_KEY[key])
        elif key == km.CLEAR:
            label_current(ctx, None)
        elif key == km.DEFLECT and ctx.annotator and not (ctx.value("answer") or "").strip():
            deflect(ctx)


def _on_keys(actions: KeyActions) -> None:
    seen = int(st.session_state.get(SEEN_KEY, 0))
    for seq, key in km.parse_key_log(st.session_state.get(LOG_KEY) or "", seen):
        actions.apply(key)
        seen = seq
    st.session_state[SEEN_KEY] = seen


_SCRIPT = """
<script>
(() => {
  const SERVER_KEYS = new Set(__KEYS__);
  if (!window.__nwAnnotateKeys) {
    window.__nwAnnotateKeys = true;
    window.__nwSeq = Date.now() * 10;
    window.__nwLog = [];
    const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
    document.addEventListener("keydown", (e) => {
      const t = e.target;
      const tag = t && t.tagName;
      const textField = tag === "TEXTAREA" || (tag === "INPUT" &&
        ["text", "search", "password", "email", ""].includes(t.type || "") &&
        !t.closest('[data-baseweb="select"]'));
      if (!document.querySelector(".st-key-nw-toolbar")) return;  // not the annotate page
      if (e.key === "Escape" && textField) { t.blur(); return; }
      // Shift is allowed: digits need it on some layouts (AZERTY)
      if (textField || (t && t.isContentEditable) || e.ctrlKey || e.metaKey || e.altKey ||
          !e.key) return;
      const key = e.key.toLowerCase();
      if (key === "a") {
        const box = document.querySelector(".st-key-nw-answer textarea");
        if (box && !box.disabled) {
          e.preventDefault(); e.stopPropagation();
          box.focus();
          box.setSelectionRange(box.value.length, box.value.length);
        }
        return;
      }
      if (!SERVER_KEYS.has(key)) return;
      e.preventDefault(); e.stopPropagation();
      if (e.repeat) return;
      window.__nwSeq += 1;
      window.__nwLog = window.__nwLog.concat([window.__nwSeq + ":" + key]).slice(-40);
      send(0);
    }, true);
    // Write the whole log into the hidden field and commit it (Enter). While the page
    // redraws the field may be missing for a moment: try again shortly.
    const send = (tries, again) => {
      const input = document.querySelector(".st-key-nw-keylog input");
      if (!input) { if (tries < 400) setTimeout(() => send(tries + 1, again), 50); return; }
      window.__nwSentAt = Date.now();
      // a resend must differ from the last value or the field would not commit it;
      // the "r..." token is not an entry and is ignored by the server
      setValue.call(input, window.__nwLog.join(" ") + (again ? " r" + Date.now() : ""));
      input.dispatchEvent(new Event("input", {bubbles: true}));
      input.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", code: "Enter",
        bubbles: true, cancelable: true}));
    };
    // At-least-once: the page reports the last entry it applied; if a press is still
    // unapplied 2 s after it was sent, send the log again (entries apply only once).
    window.__nwSeen = 0;
    let resent = {seq: 0, times: 0};
    setInterval(() => {
      if (!window.__nwLog.length || !document.querySelector(".st-key-nw-toolbar")) return;
      const last = parseInt(window.__nwLog[window.__nwLog.length - 1], 10);
      if (last <= window.__nwSeen || Date.now() - (window.__nwSentAt || 0) < 2000) return;
      if (resent.seq !== last) resent = {seq: last, times: 0};
      if (resent.times++ < 5) send(0, true);  // a few tries, never a loop
    }, 1000);
    let draftTimer = null;
    document.addEventListener("input", (e) => {
      const t = e.target;
      if (!t || t.tagName !== "TEXTAREA" || !t.closest(".st-key-nw-answer")) return;
      clearTimeout(draftTimer);
      draftTimer = setTimeout(() => {
        if (document.activeElement !== t) return;  // a blur already saved it
        t.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", code: "Enter",
          ctrlKey: true, bubbles: true, cancelable: true}));
      }, 1500);
    }, true);
  }
  window.__nwSeen = Math.max(window.__nwSeen || 0, __SEEN__);
  const cursor = __CURSOR__;
  setTimeout(() => {
    const card = document.querySelector(".st-key-nw-card-" + cursor);
    if (!card) return;
    const r = card.getBoundingClientRect();
    const bar = document.querySelector(".st-key-nw-top");  // the sticky label toolbar
    const below = bar ? bar.getBoundingClientRect().bottom + 8 : 170;
    if (r.top < below || r.top > window.innerHeight - 140) {
      card.style.scrollMarginTop = below + "px";  // land just under the toolbar, not beneath it
      card.scrollIntoView({block: "start", behavior: "instant"});
    }
  }, 120);
})();
</script>
"""

_STYLE = """
<style>
[data-testid="stLayoutWrapper"]:has(> .st-key-nw-top){position:sticky;top:3.75rem;z-index:90;
  background:var(--nw-bg,#fff);padding:.3rem 0 .45rem 0;
  box-shadow:0 -3.75rem 0 0 var(--nw-bg,#fff);
  border-bottom:1px solid rgba(128,128,128,.3)}
.stMainBlockContainer{padding-top:3.2rem;padding-left:2.2rem;padding-right:2.2rem}
.st-key-nw-toolbar button{padding-left:.6rem;padding-right:.6rem;min-height:2.2rem}
[data-testid="stLayoutWrapper"]:has(> .st-key-nw-keylog-box),.st-key-nw-keylog-box{display:none}
</style>
"""


def render_keyboard(actions: KeyActions, cursor: int) -> None:
    """The hidden key log field, the page style and the key script; scrolls passage
    ``cursor`` into view when it changes."""
    st.html(_STYLE)
    keys = "[" + ", ".join(f'"{k}"' for k in km.SERVER_KEYS) + "]"
    marker = sum(map(ord, actions.nav.current)) % 100003  # per item, so the script reruns
    with st.container(key="nw-keylog-box"):  # hidden; scripts run there all the same
        st.text_input("Key log", key=LOG_KEY, on_change=_on_keys, args=(actions,),
                      label_visibility="collapsed")
        script = (_SCRIPT.replace("__KEYS__", keys)
                  .replace("__SEEN__", str(int(st.session_state.get(SEEN_KEY, 0))))
                  .replace("__CURSOR__", f"{int(cursor)}; /* {marker} */"))
        st.html(script, unsafe_allow_javascript=True)
