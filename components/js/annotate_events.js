// @ts-check
// The annotate page's DOM events, for its page script (js/annotate_keys.js): keys, clicks
// on the cards' label buttons, the dimensions' options and the toolbar's key buttons
// become events of the input interpreter (S.dispatch, S.handle); Esc leaves a text field,
// Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y are our undo and redo outside one; the answer draft is
// committed 1.5 s after typing pauses. While keys wait for the page every character waits
// with them (what it means is decided in order: js/input_core.js).
import {KEYS} from "./annotate_input.js";
import {typing} from "./navigator_core.js";
import {nwDom} from "./st_dom.js";
/** @typedef {import("./annotate_keys.js").AnnotatePage} AnnotatePage */

/**
 * Listen to the document's events for the page object `S` (once per page).
 * @param {AnnotatePage} S
 */
export function listen(S) {
  const keyOf = (/** @type {Element} */ el) => {
    const m = (el.className || "").match(/st-key-nw-key-([a-z0-9-]+)/);
    return m ? m[1] : null;
  };
  // the keys the interpreter takes: the labels', its own, and digits and Enter / Space
  // while a prefix is on or keys wait for the page (their meaning is decided in order)
  const taken = (/** @type {string} */ key) => key.length === 1 && (key in S.labels || KEYS.includes(key) ||
    ((S.prefix || S.input.waiting.length) && /^[0-9 ]$/.test(key)));
  document.addEventListener("keydown", (e) => {
    if (!S.active() || !S.data) return;
    const t = /** @type {HTMLElement} */ (e.target);
    // typing in a field is typing (a select's input only while its list is open)
    const textField = typing(t, nwDom.SELECT);
    if (e.key === "Escape" && textField) { t.blur(); return; }
    if (e.key === "Escape" && (S.prefix || S.input.waiting.length)) { S.handle("escape"); return; }
    if (textField || e.altKey || !e.key) return;
    const lower = e.key.toLowerCase();
    if (e.ctrlKey || e.metaKey) {
      // Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y outside a text field: our undo and redo (the
      // browser's own would undo the last text typed, e.g. blank the name field)
      if (lower !== "z" && lower !== "y") return;
      e.preventDefault(); e.stopPropagation();
      if (!e.repeat) S.handle(lower === "y" || e.shiftKey ? "Z" : "z");
      return;
    }
    if (e.key === "Enter" && (S.prefix || S.input.waiting.length)) {
      e.preventDefault(); e.stopPropagation();
      if (!e.repeat) S.handle("enter");
      return;
    }
    // Shift is allowed: digits need it on some layouts (AZERTY); Shift+Z is redo
    const key = lower === "z" && e.shiftKey ? "Z" : e.key === "?" ? "?" : lower;
    if ((S.input.waiting.length || S.nav.barrier) && (e.key.length === 1 || e.key === "Backspace")) {
      // while keys wait for the page, every character waits with them: what it means (a
      // key, or text for a box opened before it) is decided in order (js/input_core.js)
      e.preventDefault(); e.stopPropagation();
      if (e.repeat) return;
      if (e.key === "Backspace") S.dispatch({type: "key", key: "backspace"});
      else S.dispatch({type: "key", key, text: e.key});
      return;
    }
    if (!taken(key)) return;
    if (key === "a" && !S.prefix) {
      // the answer box takes the focus (and the keys after it) only where there is one
      const box = /** @type {HTMLTextAreaElement | null} */ (
        document.querySelector(".st-key-nw-answer textarea"));
      if (S.data.item === S.item && (!box || box.disabled)) return;
    }
    e.preventDefault(); e.stopPropagation();
    if (e.repeat) return;  // a key held down acts once
    S.handle(key);
  }, true);

  // label buttons on the cards, dimension options and the toolbar's key buttons are
  // events of the same interpreter as the keys
  // (the button gives the focus back: Enter or Space after a click must not press it again)
  document.addEventListener("click", (e) => {
    if (!S.active() || !S.data) return;
    const target = /** @type {Element} */ (e.target);
    const button = target.closest && target.closest("button");
    if (!button) return;
    if (button.dataset.nwLabel && button.dataset.nwPassage) {  // a card's label button
      e.preventDefault(); e.stopPropagation();
      button.blur();
      if (button.disabled) return;
      S.dispatch({type: "click", what: "label", item: S.data.item,
                  passage: parseInt(button.dataset.nwPassage, 10), digit: button.dataset.nwLabel});
      return;
    }
    if (button.dataset.nwDim !== undefined && button.dataset.nwOption !== undefined) {
      e.preventDefault(); e.stopPropagation();
      button.blur();
      if (button.disabled) return;
      S.dispatch({type: "click", what: "dim", item: S.data.item,
                  dim: parseInt(button.dataset.nwDim, 10),
                  option: parseInt(button.dataset.nwOption, 10)});
      return;
    }
    const box = button.closest('[class*="st-key-nw-key-"]');
    const key = box && keyOf(box);
    if (!key) return;
    e.preventDefault(); e.stopPropagation();
    button.blur();
    const map = {"prev": "k", "next": "j", "clear": "0", "item-prev": "p", "item-next": "n",
                 "item-unfinished": "u", "deflect": "d"};
    S.handle(map[key] || key);
  }, true);

  // the answer draft is committed 1.5 s after typing pauses (Ctrl+Enter commits a text area)
  /** @type {any} */
  let draftTimer = null;
  document.addEventListener("input", (e) => {
    const t = /** @type {HTMLTextAreaElement} */ (e.target);
    if (!t || t.tagName !== "TEXTAREA" || !t.closest(".st-key-nw-answer")) return;
    clearTimeout(draftTimer);
    draftTimer = setTimeout(() => {
      if (document.activeElement !== t) return;  // a blur already saved it
      t.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", code: "Enter",
        ctrlKey: true, bubbles: true, cancelable: true}));
    }, 1500);
  }, true);
}
