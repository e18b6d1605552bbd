// @ts-check
// The review page's keyboard: the page script around the input interpreter.
//
// Every key and click that changes data or where the keys aim (the verdicts A F T B S,
// the reasons 1-7, J / K / N, Z, Y, M, a comparison clicked in the item's grid) is an event
// of the one interpreter of input (js/input_core.js, Review's table js/review_input.js),
// which holds the page's input state: the comparison the keys aim at, the reasons picked
// before a verdict, the verdict a reason right after it goes with, and the keys waiting for
// the page. A redraw gives it new data, never a new state. This script makes the page
// object S (one per page: window.__nwReview, which the browser tests read) and carries out
// the effects: actions for the outbox (js/outbox_core.js), moves for the navigator
// (js/navigator_core.js: keys held for a comparison not in sight), notes, focus; W shows
// the whole text or the window around the difference (the "Whole text" switch): a view,
// not data. js/review_events.js turns DOM events into events; js/review_scroll.js scrolls
// the responses. `data` is the page's (components/review/keys.py): {dataset, annotator,
// item, i, j, verdict, reasons, advance, seq, moves, line, keys, blind}. No data is ever
// put into HTML here.
import {nwMail} from "./mail.js";
import {create as createNavigator} from "./navigator_core.js";
import {pageOutbox} from "./outbox_core.js";
import {perPage} from "./per_page.js";
import {listen} from "./review_events.js";
import * as I from "./review_input.js";
import {fit} from "./review_scroll.js";
import {nwDom} from "./st_dom.js";
/** @typedef {import("./review_input.js").Place} Place */
/** @typedef {import("./navigator_core.js").Place} NavPlace */

/**
 * The page object: the interpreter's state and the page's data, what the events and the
 * tests read, and what they call.
 * @typedef {object} ReviewPage
 * @property {any} data             the page's data (null before the first)
 * @property {import("./review_input.js").ReviewState} input
 * @property {Record<string, {verdict: string | null, reasons: string[]}>} known  what is
 *   saved on the comparisons the data named, by id
 * @property {string} [knownFor]     whose `known` is
 * @property {Record<string, string>} verdictKeys  key -> verdict (the page's data)
 * @property {Record<string, string>} reasonKeys   key -> reason
 * @property {Place | null} at       (from input) the comparison the keys aim at
 * @property {import("./navigator_core.js").Navigator} nav
 * @property {import("./navigator_core.js").Navigator["barrier"]} barrier  (from nav)
 * @property {any[]} held
 * @property {number | null} waitSeq
 * @property {string | null} moveId
 * @property {Place[]} line
 * @property {string} [fitFor]       the comparison last fitted
 * @property {() => void} fit         the responses' fit (js/review_scroll.js), called
 *   through S: the browser tests wrap it
 * @property {any} [sayTimer]
 * @property {() => boolean} active  the page has the verdict buttons
 * @property {() => string} who
 * @property {(at: NavPlace) => {verdict: string | null, reasons: string[]}} savedOf
 * @property {() => import("./input_core.js").View} view
 * @property {() => string[]} reasons
 * @property {() => void} paint
 * @property {() => boolean} drawn
 * @property {(text: string) => void} say
 * @property {(seek: string, k: number) => NavPlace | null} unreviewedAfter
 * @property {() => void} whole
 * @property {(event: import("./input_core.js").InputEvent) => void} dispatch
 * @property {(key: string) => void} handle
 * @property {(data: any) => void} receive
 */

const BARRIER = "nw-review-barrier";


/** @returns {ReviewPage} */
function makePage() {
  const core = pageOutbox();
  const S = /** @type {ReviewPage} */ (/** @type {unknown} */ ({
    data: null, input: I.initial(), known: {}, verdictKeys: {}, reasonKeys: {}, fit,
    active: () => !!document.querySelector(".st-key-rv-verdicts")}));
  Object.defineProperty(S, "at", {get: () => S.input.at, enumerable: true});
  const sameAt = (/** @type {NavPlace} */ a, /** @type {NavPlace} */ b) => a.item === b.item && a.i === b.i && a.j === b.j;
  const nav = createNavigator(core, {
    page: "review", storage: BARRIER,
    data: () => S.data, who: () => S.who(), paint: () => S.paint(), say: (t) => S.say(t),
    handle: (event) => S.dispatch(typeof event === "string" ? {type: "key", key: event} : event),
    here: () => S.at, drawn: () => S.drawn(), same: sameAt,
    fields: (at) => ({item: at.item, i: at.i, j: at.j}),
    link: (at) => ({item: at.item, i: at.i + 1, j: at.j + 1}),
    arrive: (target) => S.dispatch({type: "arrive", target: target || null}),
    beyond: (seek, k) => S.unreviewedAfter(seek, k),
    done: {next: "This is the last comparison in this view.",
           previous: "This is the first comparison in this view.",
           unreviewed: "Every comparison in this view is reviewed."},
    other: "the page opened another comparison: the keys held for the next one were not applied",
  });
  S.nav = nav;
  // what the tests and the page read: the navigator's state
  for (const name of ["barrier", "held", "waitSeq", "moveId"]) {
    Object.defineProperty(S, name, {get: () => nav[name], enumerable: true});
  }
  Object.defineProperty(S, "line", {get: () => nav.line, enumerable: true});
  // keys waiting for the page count as not saved yet
  core.heldCounters.add(() => S.input.waiting.length);
  const style = document.createElement("style");
  style.id = "nw-review-style";
  document.head.appendChild(style);

  // who gives the verdicts: the session's annotator, or for a moment after a server
  // restart (the session has no name yet) the name this browser remembers
  S.who = () => (S.data && S.data.annotator) || core.remembered();
  // my verdict and reasons saved on the comparisons the page's data names (the one on
  // screen, where J / K / N lead, the item's grid): a key pressed on one of them before
  // the page has drawn it still knows what is saved there
  S.savedOf = (at) => S.known[I.idOf(/** @type {Place} */ (at))] || {verdict: null, reasons: []};
  const noteValue = () => {
    const field = /** @type {HTMLInputElement | null} */ (document.querySelector(nwDom.NOTE_FIELD));
    return field ? field.value : null;
  };
  S.view = () => ({data: S.data, who: S.who(), overlay: core.overlay(() => true),
                   known: S.known, note: S.drawn() ? noteValue() : null});
  S.reasons = () => I.reasonsOf(S.input, S.view());
  S.paint = () => {
    if (!S.data || !S.at) return;
    let css = "";
    const reasons = new Set(S.reasons());
    for (const [key, tag] of Object.entries(S.reasonKeys)) {
      const on = reasons.has(tag);
      css += `.st-key-rv_r_${key} button{` + (on
        ? "background:#1f6feb;color:#fff;border-color:#1f6feb}"
        : "background:inherit;color:inherit;border-color:rgba(128,128,128,.4)}");
    }
    const at = S.at;
    const pending = core.pendingFor((a) => a.kind === "verdict" && a.item === at.item &&
                                      a.i === at.i && a.j === at.j).map((a) => a.verdict).pop();
    if (pending) {
      const key = Object.keys(S.verdictKeys).find((k) => S.verdictKeys[k] === pending);
      css += `.st-key-rv_v_${pending} button{outline:2px dashed #1f6feb;outline-offset:1px}` +
        `.st-key-rv-verdicts::after{content:"saving: ${/** @type {string} */ (key).toUpperCase()}…";font-size:.75rem;` +
        "color:#9a3412}";
    }
    if (S.barrier || !S.drawn()) css += `${nwDom.MAIN} ${nwDom.key("rv-responses")}{opacity:.45}`;
    core.setText(style, css);
  };

  S.drawn = () => !!(S.data && S.at && S.data.item === S.at.item && S.data.i === S.at.i &&
                     S.data.j === S.at.j);
  S.say = (text) => {  // a short note under the verdict buttons (our own words)
    const box = document.querySelector(".st-key-rv-verdicts");
    if (!box) return;
    let note = /** @type {HTMLElement | null} */ (box.querySelector(".nw-review-note"));
    if (!note) {
      note = document.createElement("div");
      note.className = "nw-review-note";
      note.setAttribute("role", "status");
      note.style.cssText = "font-size:.8rem;color:#1e3a8a;transition:opacity .3s";
      box.appendChild(note);
    }
    note.textContent = text;
    note.style.opacity = "1";
    clearTimeout(S.sayTimer);
    S.sayTimer = setTimeout(() => { note.style.opacity = "0"; }, 3500);
  };

  // where N leads from line[k], a comparison the page has not drawn yet: the first one
  // after it with no verdict of mine, saved or on its way (null: the server decides)
  S.unreviewedAfter = (seek, k) => {
    if (seek !== "unreviewed") return null;
    // which verdicts an undo, a redo or an accept leaves is for the server to say
    if (core.overlay((a) => a.kind === "undo" || a.kind === "redo" || a.kind === "accept").length) {
      return null;
    }
    for (const c of nav.line.slice(k + 1)) {
      const given = core.overlay((a) => a.kind === "verdict" && a.item === c.item &&
                                   a.i === c.i && a.j === c.j).length;
      if (!given && !S.savedOf(c).verdict) return c;
    }
    return null;  // none in sight: the server finds it (its list wraps around)
  };
  // W: the "Whole text" switch (the whole of both texts, or the window around the
  // difference in focus; side by side, or their first part); where it cannot change
  // anything, the page says why
  S.whole = () => {
    const box = /** @type {HTMLInputElement | null} */ (document.querySelector(".st-key-rv_whole input"));
    if (box && !box.disabled) box.click();
    else S.say(box ? "W: both texts are shown whole already" : "W: this view has no whole text to show");
  };
  /** @type {Record<string, () => void>} */
  const FOCUS = {
    name: () => {
      const field = /** @type {HTMLInputElement | null} */ (document.querySelector(nwDom.NAME_FIELD));
      if (field) { field.focus(); field.scrollIntoView({block: "center"}); }
    },
    note: () => {  // the note of this comparison (Enter saves, Esc leaves)
      const field = /** @type {HTMLInputElement | null} */ (document.querySelector(nwDom.NOTE_FIELD));
      if (field) {
        field.scrollIntoView({block: "center"});
        field.focus();
        field.setSelectionRange(field.value.length, field.value.length);
      }
    },
  };
  const run = (/** @type {import("./input_core.js").Effect} */ effect) => {
    if (effect.push) core.push(effect.push);
    else if (effect.ask !== undefined) nav.ask(effect.ask, effect.target || undefined);
    else if (effect.say) S.say(effect.say);
    else if (effect.focus) FOCUS[effect.focus]();
    else if (effect.replay) for (const event of effect.replay) S.dispatch(event);
  };
  // one event through the interpreter: its state first, then its effects in order (a move
  // aims the keys at once); a key the interpreter says goes with the verdict just given is
  // never held for a move
  S.dispatch = (event) => {
    if (!S.data) return;
    const input = event.type === "key" || event.type === "click";
    if (input && (!S.at || (I.holds(S.input, event, S.view()) &&
                            nav.hold(event.type === "key" ? event.key : event)))) return;
    const {state, effects} = I.step(S.input, event, S.view());
    S.input = state;
    for (const effect of effects) run(effect);
    S.paint();
  };
  S.handle = (key) => S.dispatch({type: "key", key});

  S.receive = (data) => {
    S.data = data;
    const shown = `${data.item}\u0000${data.i}\u0000${data.j}`;
    if (S.fitFor !== shown) {  // a comparison drawn for the first time in this tab
      S.fitFor = shown;
      [60, 300, 900].forEach((ms) => setTimeout(S.fit, ms));
    }
    const line = data.line || {ahead: [], behind: []};
    const here = {item: data.item, i: data.i, j: data.j, verdict: data.verdict,
                  reasons: data.reasons};
    const around = [...(line.behind || []).slice().reverse(), here, ...(line.ahead || [])];
    // what is saved is the named reviewer's: a run drawn while the session has no name
    // for a moment (a server restart) says nothing of it, and another name starts anew
    if (data.annotator) {
      if (S.knownFor !== data.annotator) { S.known = {}; S.knownFor = data.annotator; }
      for (const c of [...Object.values(data.moves || {}), ...(data.grid || []), ...around]) {
        S.known[I.idOf(c)] = {verdict: c.verdict || null, reasons: c.reasons || []};
      }
    }
    const ids = Object.keys(S.known);
    if (ids.length > 5000) S.known = Object.fromEntries(ids.slice(-1000).map((k) => [k, S.known[k]]));
    if (data.keys) { S.verdictKeys = data.keys.verdicts || {}; S.reasonKeys = data.keys.reasons || {}; }
    nav.receive(data, {here, ahead: line.ahead, behind: line.behind});
    S.dispatch({type: "data"});
  };

  listen(S);  // keys and clicks (js/review_events.js)
  core.listeners.add(() => S.paint());
  // an undo or redo came back: say which comparison it changed, above all one not on screen
  core.revertListeners.add((u) => {
    const m = /^verdict:(\d+):(\d+)$/.exec(u.field || "");
    if (!m) return;
    const here = S.at && u.item === S.at.item && Number(m[1]) === S.at.i && Number(m[2]) === S.at.j;
    // a blind annotator's page never names the sides (chosen i vs rejected j would)
    const which = S.data && S.data.blind ? "" :
      `, chosen ${Number(m[1]) + 1} vs rejected ${Number(m[2]) + 1}`;
    S.say(here ? "reverted this comparison's verdict" :
      `reverted your verdict on item ${u.item}${which} (not the one on screen)`);
  });
  return S;
}

// the code is loaded once by its own component; the page's data comes every run by the
// courier (components/review/keys.py)
export default function () {
  nwMail.listen("review_keys", (data) => perPage("__nwReview", makePage).receive(data));
}
