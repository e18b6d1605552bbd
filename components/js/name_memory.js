// Remember the annotator's name in this browser (local mode): a reload, a new tab or a
// deep link opened from Home gets it back instead of a read-only page. `data.name` is
// the name the server has for this session (our own field, shown only as a value).
//
// The name goes back into the Annotator field the way a person would put it there: typed
// into the field and committed with Enter, in the browser. (Setting it on the server
// raced with the browser: a rerun the page had already asked for sent the empty field
// back and the name was lost on a new page, 3 times in 6.)
const KEY = "nw-annotator";
const FIELD = ".st-key-annotator input";
const TRIES = 50;  // the field is drawn just after this component: wait up to ~5 s for it

function typeInto(input, text) {
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
  setter.call(input, text);  // React's own setter, so that its change handler sees it
  input.dispatchEvent(new Event("input", {bubbles: true}));
  input.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", code: "Enter", bubbles: true}));
}

function restore(stored, tries) {
  const input = document.querySelector(FIELD);
  if (!input) {
    if (tries > 0) setTimeout(() => restore(stored, tries - 1), 100);
    return;
  }
  if (input.value || document.activeElement === input) return;  // the person got there first
  typeInto(input, stored);
}

export default function (component) {
  const {data} = component;
  const name = (data && data.name) || "";
  let stored = null;
  try { stored = localStorage.getItem(KEY); } catch (e) { return; }
  const page = window.__nwName || (window.__nwName = {asked: false, shown: false});
  if (name) {
    page.shown = true;  // the session has a name: remember it
    if (stored !== name) { try { localStorage.setItem(KEY, name); } catch (e) { /* full */ } }
  } else if (!page.asked && !page.shown && stored) {
    page.asked = true;  // once per page: type the remembered name into the field
    restore(stored, TRIES);
  } else if (page.shown && stored) {
    try { localStorage.removeItem(KEY); } catch (e) { /* ignore */ }  // cleared on purpose
  }
}
