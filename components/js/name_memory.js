// @ts-check
// Remember the annotator's name in this browser (local mode): a reload, a new tab, a
// deep link opened from Home or a server restart gets it back instead of a read-only
// page. `data.name` is the name the server has for this session (our own field, shown
// only as a value).
//
// The name goes back into the Annotator field the way a person would put it there: typed
// into the field and committed with Enter, in the browser, whenever the session has no
// name and the person did not empty the field themselves. (Setting it on the server
// raced with the browser: a rerun the page had already asked for sent the empty field
// back and the name was lost on a new page, 3 times in 6. After a server restart the
// browser may also send the field's default, "", for a moment: it is typed back then.)
import {perPage} from "./per_page.js";
import {nwDom} from "./st_dom.js";

const KEY = "nw-annotator";
const FIELD = nwDom.key("annotator") + " input";
const TRIES = 50;  // the field is drawn just after this component: wait up to ~5 s for it
const AGAIN_MS = 2500;  // the session still has no name this long after typing it: again

/** @param {HTMLInputElement} input @param {string} text */
function typeInto(input, text) {
  const setter = /** @type {PropertyDescriptor} */ (
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")).set;
  /** @type {(v: string) => void} */ (setter).call(input, text);  // React's own setter, so that its change handler sees it
  input.dispatchEvent(new Event("input", {bubbles: true}));
  input.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", code: "Enter", bubbles: true}));
}

/** @param {string} stored @param {number} tries */
function restore(stored, tries) {
  const input = /** @type {HTMLInputElement | null} */ (document.querySelector(FIELD));
  if (!input) {
    if (tries > 0) setTimeout(() => restore(stored, tries - 1), 100);
    return;
  }
  if (document.activeElement === input) return;  // the person is typing there
  if (input.value && input.value !== stored) return;  // a name of their own, not sent yet
  typeInto(input, stored);
}

/** @param {{data: {name?: string} | null}} component */
export default function (component) {
  const {data} = component;
  const name = (data && data.name) || "";
  let stored = null;
  try { stored = localStorage.getItem(KEY); } catch (e) { return; }
  // one per page (the browser tests read window.__nwName)
  const page = perPage("__nwName", () => ({typedAt: 0, listening: false, seen: ""}));
  page.seen = name;  // what the session had at its last redraw
  if (!page.listening) {
    page.listening = true;
    // a person emptying the field means "no name": forget it (our own typing, an
    // untrusted event, never empties it; a restart that blanks the field sends none)
    document.addEventListener("input", (e) => {
      const t = /** @type {HTMLInputElement} */ (e.target);
      if (e.isTrusted && t && t.matches && t.matches(FIELD) && !t.value.trim()) {
        try { localStorage.removeItem(KEY); } catch (err) { /* ignore */ }
      }
    }, true);
  }
  if (name) {
    if (stored !== name) { try { localStorage.setItem(KEY, name); } catch (e) { /* full */ } }
  } else if (stored && Date.now() - page.typedAt > AGAIN_MS) {
    page.typedAt = Date.now();  // type the remembered name into the field
    restore(stored, TRIES);
    // under load the typed Enter can be lost: the field shows the name, the session has
    // none and no redraw comes to call us again. Look again a few times; type it again
    // while the session still has no name
    const check = (/** @type {number} */ left) => setTimeout(() => {
      if (page.seen || left <= 0) return;
      let still = null;
      try { still = localStorage.getItem(KEY); } catch (e) { return; }
      if (still !== stored) return;  // the person changed or emptied it meanwhile
      page.typedAt = Date.now();
      restore(stored, TRIES);
      check(left - 1);
    }, AGAIN_MS);
    check(3);
  }
}
