// @ts-check
// The review page's DOM events, for its page script (js/review_keys.js): the verdict and
// reason keys, J / K / N, Z / Shift+Z (and Ctrl+Z / Ctrl+Y), M, Y and the clicks on those
// buttons and on the item's grid become events of the input interpreter (S.handle,
// S.dispatch); Esc leaves a text field; PageDown, Space and the arrows scroll the
// responses (js/review_scroll.js); W is the "Whole text" switch. A clicked switch or radio
// gives the focus back, so that the keys work right after it.
import {SEEK} from "./review_input.js";
import {SCROLLS, scroll} from "./review_scroll.js";
import {typing} from "./navigator_core.js";
import {nwDom} from "./st_dom.js";
/** @typedef {import("./review_keys.js").ReviewPage} ReviewPage */

/**
 * Listen to the document's events for the page object `S` (once per page).
 * @param {ReviewPage} S
 */
export function listen(S) {
  document.addEventListener("keydown", (e) => {
    if (!S.active() || !S.data) return;
    const t = /** @type {HTMLElement} */ (e.target);
    // typing in a field is typing (a select's input only while its list is open)
    const textField = typing(t, nwDom.SELECT);
    if (e.key === "Escape" && textField) { t.blur(); return; }
    if (textField || e.altKey || !e.key) return;
    const lower = e.key.toLowerCase();
    if (e.ctrlKey || e.metaKey) {  // Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y: our undo and redo
      if (lower !== "z" && lower !== "y") return;
      e.preventDefault(); e.stopPropagation();
      if (!e.repeat) S.handle(lower === "y" || e.shiftKey ? "Z" : "z");
      return;
    }
    if (e.key in SCROLLS && !(t && t.closest && t.closest(
        `${nwDom.SELECT},${nwDom.DATAFRAME},[role="slider"],[role="radiogroup"]`))) {
      e.preventDefault(); e.stopPropagation();
      scroll(e.key === " " && e.shiftKey ? -1 : SCROLLS[e.key]);
      return;
    }
    if (e.shiftKey && !/^[0-9]$/.test(e.key) && lower !== "z") return;
    if (lower === "w" && !(lower in S.verdictKeys || lower in S.reasonKeys)) {  // a view, nothing saved
      e.preventDefault(); e.stopPropagation();
      if (!e.repeat) S.whole();
      return;
    }
    const key = lower === "z" && e.shiftKey ? "Z" : lower;
    if (key.length !== 1 || !(key in S.verdictKeys || key in S.reasonKeys || key in SEEK ||
                              key === "z" || key === "Z" || key === "m" || key === "y")) return;
    e.preventDefault(); e.stopPropagation();
    if (e.repeat) return;
    S.handle(key);
  }, true);
  document.addEventListener("click", (e) => {
    const target = /** @type {Element} */ (e.target);
    if (!S.active() || !S.data || !target.closest || !target.closest("button")) return;
    const box = target.closest('[class*="st-key-rv_"]');
    const m = box && (box.className || "").match(/st-key-rv_(v_[a-z-]+|r_\d|prev|next_unreviewed|next|pick_\d+_\d+)\b/);
    if (!m) return;
    e.preventDefault(); e.stopPropagation();
    const what = m[1];
    if (what.startsWith("v_")) {
      const key = Object.keys(S.verdictKeys).find((k) => S.verdictKeys[k] === what.slice(2));
      if (key) S.handle(key);
    } else if (what.startsWith("r_")) S.handle(what.slice(2));
    else if (what === "prev") S.handle("k");
    else if (what === "next") S.handle("j");
    else if (what === "next_unreviewed") S.handle("n");
    else {  // a comparison of the item's grid, on the item the page shows
      const [, i, j] = what.split("_").map(Number);
      S.dispatch({type: "click", what: "pick", item: S.data.item, i, j});
    }
  }, true);
  // a clicked switch or radio keeps the focus, and the page ignores keys typed in any
  // input: give the focus back so the verdict keys work right after "Whole text"
  document.addEventListener("click", () => setTimeout(() => {
    const a = /** @type {HTMLInputElement | null} */ (document.activeElement);
    if (a && a.tagName === "INPUT" && (a.type === "checkbox" || a.type === "radio")) a.blur();
  }, 0), true);
}
