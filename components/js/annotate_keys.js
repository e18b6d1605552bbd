// @ts-check
// The annotate page's keyboard: the page script around the input interpreter.
//
// Every key and every click that changes data or the cursor is an event of one pure
// function, step (js/annotate_input.js), which holds all the page's input state (where the
// keys aim, the passage cursor, the Q / W prefix, the keys waiting for a question to be
// drawn) and answers with effects: actions for the outbox (js/outbox_core.js), moves for
// the navigator (js/navigator_core.js: N / P / U, keys held for a question not in sight),
// notes, focus. A redraw is an event too: it gives the interpreter the page's new data,
// never a new state. This script makes the page object S (one per page: window.__nwAnnotate,
// which the browser tests read), carries out the effects and gives the page's data to the
// interpreter; js/annotate_events.js turns DOM events into events, js/annotate_paint.js
// paints. `data` is the page's (components/annotate/keyboard.py's key_data): {dataset,
// annotator, item, n, cursor, labels, dimValues, answered, seq, moves, line, keys, dims}.
// No data is ever put into HTML here.
import {listen} from "./annotate_events.js";
import * as I from "./annotate_input.js";
import {annotatePaint} from "./annotate_paint.js";
import {nwMail} from "./mail.js";
import {create as createNavigator} from "./navigator_core.js";
import {pageOutbox} from "./outbox_core.js";
import {perPage} from "./per_page.js";
import {nwDom} from "./st_dom.js";
/** @typedef {import("./annotate_view.js").AnnotateState} AnnotateState */
/** @typedef {import("./annotate_view.js").Dim} Dim */

/**
 * The page object: the interpreter's state and the page's data, what the painting, the
 * events and the tests read, and what they call.
 * @typedef {object} AnnotatePage
 * @property {any} data              the page's data (null before the first)
 * @property {AnnotateState} input   the interpreter's state
 * @property {Record<string, string>} labels  key -> label (the page's data)
 * @property {Record<string, string>} short   label -> its short name
 * @property {string | null} item    (from input) where the keys aim
 * @property {number} n
 * @property {number} cursor
 * @property {AnnotateState["prefix"]} prefix
 * @property {string | null} cursorFor
 * @property {import("./navigator_core.js").Navigator} nav
 * @property {import("./navigator_core.js").Navigator["barrier"]} barrier  (from nav)
 * @property {any[]} held
 * @property {number | null} waitSeq
 * @property {string | null} moveId
 * @property {string | null} [scrolledTo]  the question last scrolled to
 * @property {number} [panelTries]
 * @property {any} [sayTimer]
 * @property {() => boolean} active  the page has the toolbar
 * @property {() => string} who
 * @property {() => import("./input_core.js").View} view
 * @property {(seek: string, k: number) => any} unfinishedAfter
 * @property {(num: number) => string | null} labelOf
 * @property {() => Dim[]} dims
 * @property {(d: Dim) => any[]} dimActions
 * @property {(k: number) => number | null} dimChoice
 * @property {() => string} prefixText
 * @property {(c: number) => string} cursorCss
 * @property {() => Map<number, boolean>} touched
 * @property {(touched: Map<number, boolean>) => string} labelCss
 * @property {() => string} dimCss
 * @property {(drawn: boolean) => void} counter
 * @property {() => void} paint
 * @property {(text: string) => void} say
 * @property {() => void} scroll
 * @property {(event: import("./input_core.js").InputEvent) => void} dispatch
 * @property {(key: string) => void} handle
 * @property {(data: any) => void} receive
 */

const BARRIER = "nw-annotate-barrier";

/** @returns {AnnotatePage} */
function makePage() {
  const core = pageOutbox();
  const S = /** @type {AnnotatePage} */ (/** @type {unknown} */ ({
    data: null, input: I.initial(), labels: {}, short: {},
    active: () => !!document.querySelector(nwDom.key("nw-toolbar")),
  }));
  // what the painting, the navigator and the tests read: the interpreter's state
  for (const name of ["item", "n", "cursor", "prefix", "cursorFor"]) {
    Object.defineProperty(S, name, {get: () => S.input[name], enumerable: true});
  }
  // who makes the changes: the session's annotator, or for a moment after a server
  // restart (the session has no name yet) the name this browser remembers
  S.who = () => (S.data && S.data.annotator) || core.remembered();
  S.view = () => ({data: S.data, who: S.who(), overlay: core.overlay(() => true),
                   settled: !nwDom.running()});
  // a run of the page ended: keys that waited for its boxes go on
  const app = document.querySelector(nwDom.APP);
  if (app) {
    new MutationObserver(() => {
      if (S.input.waiting.length && !nwDom.running()) S.dispatch({type: "settled"});
    }).observe(app, {attributes: true, attributeFilter: ["data-test-script-state"]});
  }

  const nav = createNavigator(core, {
    page: "annotate", storage: BARRIER,
    data: () => S.data, who: () => S.who(), paint: () => S.paint(), say: (t) => S.say(t),
    handle: (event) => S.dispatch(typeof event === "string" ? {type: "key", key: event} : event),
    here: () => (S.item === null ? null : {item: S.item, n: S.n, cursor: S.cursor}),
    drawn: () => !!S.data && S.data.item === S.item,
    same: (a, b) => a.item === b.item,
    fields: (at) => ({item: at.item, cursor: at.cursor}),
    link: (at) => ({item: at.item}),
    arrive: (target) => S.dispatch({type: "arrive", target: target || null}),
    beyond: (seek, k) => S.unfinishedAfter(seek, k),
    done: {next: "this is the last question in the list",
           previous: "this is the first question in the list",
           unfinished: "no unfinished question after this one"},
    other: "the page opened another question: the keys held for the next one were not applied",
  });
  S.nav = nav;
  for (const name of ["barrier", "held", "waitSeq", "moveId"]) {
    Object.defineProperty(S, name, {get: () => nav[name], enumerable: true});
  }
  // keys waiting for their question to be drawn count as not saved yet
  core.heldCounters.add(() => S.input.waiting.length);
  const style = document.createElement("style");
  style.id = "nw-cursor-style";
  document.head.appendChild(style);

  // U along the line: the first question after line[k] the annotator had finished when
  // the page was drawn and has not touched since (a label typed there may finish it, and
  // which does is the server's rule); null: the server finds it (its list wraps around)
  S.unfinishedAfter = (seek, k) => {
    if (seek !== "unfinished") return null;
    const touched = new Set(core.overlay((a) => a.kind !== "move").map((a) => (
      ["set", "accept", "rest", "deflect"].includes(a.kind) ? a.item : "*")));  // "*": an undo
    if (touched.has("*")) return null;
    for (const c of nav.line.slice(k + 1)) {
      if (touched.has(c.item) || c.done === undefined) return null;
      if (!c.done) return c;
    }
    return null;
  };

  // the interpreter's answers the painting reads
  S.labelOf = (num) => I.labelOf(S.input, S.view(), num);
  S.dims = () => (S.data && S.data.dims) || [];
  S.dimActions = (d) => I.dimActions(S.input, S.view(), d);
  S.dimChoice = (k) => I.dimChoice(S.input, S.view(), k);
  S.prefixText = () => I.prefixText(S.input, S.view());
  annotatePaint(S, style);  // the cards' saved chips, the counter, notes (js/annotate_paint.js)

  const focus = (/** @type {string} */ selector, end = true) => {
    const box = /** @type {HTMLInputElement | null} */ (document.querySelector(selector));
    if (!box || box.disabled) return false;
    box.focus();
    if (end && box.setSelectionRange) box.setSelectionRange(box.value.length, box.value.length);
    return true;
  };
  /** @type {Record<string, () => unknown>} */
  const FOCUS = {
    answer: () => focus(".st-key-nw-answer textarea"),
    comment: () => focus(".st-key-nw-comment input"),
    name: () => {
      const field = /** @type {HTMLInputElement | null} */ (document.querySelector(nwDom.NAME_FIELD));
      if (field) { field.focus(); field.scrollIntoView({block: "center"}); }
    },
    category: () => {  // Q 7: open the category list (type to filter, Enter chooses)
      const box = /** @type {HTMLInputElement | null} */ (
        document.querySelector(`${nwDom.key("nw-category")} input`));
      if (!box || box.disabled) return;
      box.scrollIntoView({block: "center"});
      box.focus();
      const open = /** @type {HTMLElement | null} */ (
        document.querySelector(`${nwDom.key("nw-category")} ${nwDom.SELECT_OPEN}`));
      // after the key's own events (react-aria opens the list on a press of its button)
      setTimeout(() => { if (open) open.click(); else box.click(); }, 0);
    },
  };
  // characters typed while the box was opening, into the box that has the focus now, as
  // the browser types them (a text field's own input events: the field takes them as typed)
  const typeIn = (/** @type {string} */ text) => {
    const box = document.activeElement;
    if (!box || !(box.tagName === "TEXTAREA" || box.tagName === "INPUT")) {
      S.say(`${text.length} character(s) typed for a box that did not open were not applied`);
      return;
    }
    for (const part of text.split(/(\x08)/)) {
      if (part === "\x08") document.execCommand("delete", false);
      else if (part) document.execCommand("insertText", false, part);
    }
  };
  /** @type {Record<string, string>} */
  const CLICK = {keymap: ".st-key-nw-keymap button", hide: ".st-key-nw-hide-imported input"};
  const run = (/** @type {import("./input_core.js").Effect} */ effect) => {
    if (effect.push) core.push(effect.push);
    else if (effect.ask) nav.ask(effect.ask);
    else if (effect.say) S.say(effect.say);
    else if (effect.focus) FOCUS[effect.focus]();
    else if (effect.click) {
      const el = /** @type {HTMLElement | null} */ (document.querySelector(CLICK[effect.click]));
      if (el) el.click();
    }
    else if (effect.scroll) setTimeout(S.scroll, 30);
    else if (effect.replay) for (const event of effect.replay) S.dispatch(event);
    else if (effect.text) typeIn(effect.text);
    else if (effect.blur) {
      const active = /** @type {HTMLElement | null} */ (document.activeElement);
      if (active && active.blur) active.blur();
    }
  };

  // one event through the interpreter: its state first, then its effects in order (an
  // effect may dispatch again: a move aims the keys at once)
  S.dispatch = (event) => {
    if (!S.data) return;
    const plain = event.type === "key" && event.text === undefined;  // a key, kept by its name
    if ((event.type === "key" || event.type === "click") && nav.hold(plain ? event.key : event)) return;
    const {state, effects} = I.step(S.input, event, S.view());
    S.input = state;
    for (const effect of effects) run(effect);
    S.paint();
  };
  S.handle = (key) => S.dispatch({type: "key", key});

  S.receive = (data) => {
    S.data = data;
    if (data.keys) { S.labels = data.keys.labels || {}; S.short = data.keys.short || {}; }
    const line = data.line || {ahead: [], behind: []};
    nav.receive(data, {here: {item: data.item, n: data.n, cursor: data.cursor},
                       ahead: line.ahead, behind: line.behind});
    S.dispatch({type: "data"});
    // bring the cursor's card into view once a question is drawn; later reruns of the
    // same question (a dimension, the comment) leave the page where the annotator is
    if (S.scrolledTo !== S.item) setTimeout(S.scroll, 120);
  };

  listen(S);  // keys, clicks and typing (js/annotate_events.js)
  core.listeners.add(() => S.paint());
  core.revertListeners.add((u) => {  // an undo or redo came back: show what it reverted
    const label = u.field.startsWith("label:") ? `passage ${u.field.slice(6)}'s label` :
      u.field.startsWith("dim:") ? "a dimension" : u.field;
    S.say(u.item === S.item ? `reverted ${label}` : `reverted ${label} of another question`);
  });
  core.tellListeners.add((t) => S.say(t.message));  // R: how many it marked; F: on or off
  return S;
}

// the code is loaded once by its own component; the page's data comes every run by the
// courier drawn in the toolbar (components/annotate/keyboard.py), whose element holds the
// cursor's position and the notes
/**
 * @param {unknown} data
 * @param {Element | null} holder
 */
function receiveAnnotate(data, holder) {
  const S = perPage("__nwAnnotate", makePage);
  if (holder && !holder.querySelector(".nw-cursor-pos")) {
    const span = document.createElement("span");
    span.className = "nw-cursor-pos";
    span.title = "The current passage (outlined): the label keys act on it.";
    span.style.cssText = "display:inline-block;font-weight:600;font-size:.82rem;line-height:1.15;" +
      "white-space:pre;text-align:center";
    holder.appendChild(span);
    const note = document.createElement("span");
    note.className = "nw-key-note";
    note.setAttribute("role", "status");
    note.style.cssText = "position:absolute;left:0;top:2.6rem;z-index:95;white-space:nowrap;" +
      "font-size:.8rem;padding:2px 8px;border-radius:9px;background:#eef4ff;color:#1e3a8a;" +
      "box-shadow:0 1px 3px rgba(0,0,0,.15);opacity:0;transition:opacity .3s;pointer-events:none";
    /** @type {HTMLElement} */ (holder).style.position = "relative";
    holder.appendChild(note);
  }
  S.receive(data);
}

export default function () {
  nwMail.listen("annotate_keys", receiveAnnotate);
}
