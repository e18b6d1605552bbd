// @ts-check
// The annotate page's input interpreter: its page table for the one interpreter of input
// (js/input_core.js), which turns every key and every click that changes data or the
// cursor into actions.
//
//   step(state, event, view) -> {state, effects}
//
// `state` holds every piece of the page's input state (AnnotateState, js/annotate_view.js):
// where the keys aim (item, its passage count n, the passage cursor), who the cursor was
// placed for, whether the person has acted on this question in this tab, the Q / W prefix,
// and the events that wait for the question to be drawn. A redraw is an event like a key
// (`data`): it gives the interpreter new data, never a new state. `view` is what the page
// knows and may not change: {data, who, overlay, settled} (the page's data, the person, the
// actions sent but not drawn yet, whether the page's run has ended). `effects` are plain
// objects the page script carries out in order:
//   {push: action} an action for the outbox   {ask: seek}  a move (the navigator)
//   {say: text}    a short note               {focus: "answer" | "comment" | "name" | "category"}
//   {click: "keymap" | "hide"}                 {scroll: true} the cursor's card into view
//   {replay: events} events that waited, to come again in order after a move
//   {text: typed}  typed for a box that opened after keys waited   {blur: true} leave it
// Events: {type: "key", key, text?} (one character, or "enter", " ", "escape", "backspace";
// `text`: the character as typed, sent for every key while keys wait), {type: "click",
// what: "label", item, passage, digit}, {type: "click", what: "dim", item, dim, option},
// {type: "arrive", target} (the navigator aims the keys at a place; null: at the page's
// data), {type: "data"} (a redraw: view.data is new), {type: "settled"} (a run of the page
// ended: view.settled). Nothing the server answers moves the cursor (an undo says which
// passage it reverted, and the cursor stays where the keys left it), so where a key lands
// never depends on how fast an answer came. The keys of the passages and of the question
// as a whole are here; the dimensions' (Q, W, V) in js/annotate_dims.js; what the page
// shows (a passage's label, a dimension's option) in js/annotate_view.js, also exported
// here for the page script and the tests.
// No DOM, no clock, no outbox here: tests/js/annotate_input.test.mjs runs it under node.
import {dimKey, setDim, takeFile, walkKey} from "./annotate_dims.js";
import {
  dimActions, dimChoice, dims, digitOf, drawn, fileChoice, labelOf, labelsOf, prefixText, ready,
} from "./annotate_view.js";
import {step as runStep} from "./input_core.js";
/** @typedef {import("./annotate_view.js").AnnotateState} AnnotateState */
/** @typedef {import("./input_core.js").Runner} Runner */
/** @typedef {import("./input_core.js").View} View */
/** @typedef {import("./input_core.js").InputEvent} InputEvent */

/** @type {Record<string, string>} */
export const SEEK = {n: "next", p: "previous", u: "unfinished", l: "later"};
// keys handled besides labels and digits; the page script captures only these
export const KEYS = "jk0dzsfmrhwvy?qanpulZ";

/** @returns {AnnotateState} */
export const initial = () => ({item: null, n: 0, cursor: 1, cursorFor: null, acted: null,
                               prefix: null, waiting: []});

/** @param {number} c @param {number} n */
const clamp = (c, n) => Math.max(1, Math.min(c, Math.max(1, n)));

/**
 * Whether an event reads the question's page (its boxes, the file's values, what a
 * dimension holds): until the page is ready it waits, and every event after it waits
 * behind it, in order.
 * @param {AnnotateState} state
 * @param {InputEvent} event
 * @param {View} view
 * @returns {boolean}
 */
function needsPage(state, event, view) {
  if (event.type === "click") return event.what === "dim";
  const key = event.key || "";
  const p = state.prefix;
  if (!p) return key === "a" || key === "m" || key === "v";
  if (p.walk !== undefined) {
    if (key === "enter") return true;
    // any other key but a digit or Space ends the walk, then acts as itself
    if (digitOf(key) !== null || key === " " || key === "escape") return false;
    return needsPage(Object.assign({}, state, {prefix: null}), event, view);
  }
  return p.dim === undefined && digitOf(key) === dims(view).length + 1;
}

/**
 * @param {Runner} r
 * @param {AnnotateState} s
 * @param {number} num
 * @param {string | null} value
 * @returns {AnnotateState}
 */
function label(r, s, num, value) {
  r.push(s, {kind: "set", field: "label:" + num, value, toggle: false});
  r.out.push({scroll: true});
  return Object.assign({}, s, {acted: s.item});
}

/**
 * A key, on the state `s`.
 * @param {Runner} r
 * @param {AnnotateState} s
 * @param {string} key
 * @returns {AnnotateState}
 */
function keyStep(r, s, key) {
  const view = r.v();
  const data = view.data;
  const who = view.who;
  if (key === "escape") return s.prefix ? Object.assign({}, s, {prefix: null}) : s;
  if (s.prefix && s.prefix.walk !== undefined) {
    // any key but a digit, Enter or Space stops the walk, then acts as itself
    return walkKey(r, s, key) || keyStep(r, Object.assign({}, s, {prefix: null}), key);
  }
  if (s.prefix) return dimKey(r, s, key);
  if (key === "enter" || key === " ") return s;
  const named = (/** @type {() => AnnotateState} */ fn) => { if (!who) { r.out.push({focus: "name"}); return s; } return fn(); };
  // keys that save nothing by themselves: prefixes, moves, the cursor, the view
  if (key === "q") return named(() => Object.assign({}, s, {prefix: {}}));
  if (key === "w") return named(() => Object.assign({}, s, {prefix: {walk: 0}}));
  if (key === "v") return named(() => { takeFile(r, s); return s; });
  if (key in SEEK) { r.out.push({ask: SEEK[key]}); return s; }
  if (key === "?") { r.out.push({click: "keymap"}); return s; }
  if (key === "a") { r.out.push({focus: "answer"}); return s; }
  if (key === "h") {
    if (!who) { r.out.push({click: "hide"}); return s; }
    const pressed = view.overlay.filter((a) => a.kind === "view" && a.field === "hide_suggestions");
    const now = pressed.length ? pressed[pressed.length - 1].value : !!data.hidden;
    r.push(s, {kind: "view", field: "hide_suggestions", value: !now});
    r.say(now ? "H: the suggestions and the file's own values shown again"
              : "H: the suggestions and the file's own values hidden");
    return s;
  }
  if (key === "j" || key === "k") {
    r.out.push({scroll: true});
    return Object.assign({}, s, {cursor: clamp(s.cursor + (key === "j" ? 1 : -1), s.n),
                                 acted: s.item});
  }
  if (!who) { r.out.push({focus: "name"}); return s; }
  // keys of the question as a whole
  if (key === "z" || key === "Z") {
    r.push(s, {kind: key === "z" ? "undo" : "redo", scope: "annotate"}, true);
    r.say(key === "z" ? "undoing your last change…" : "redoing…");
    return s;
  }
  if (key === "m") { r.out.push({focus: "comment"}); return s; }
  if (key === "f") {  // a toggle the server decides (the page may not show an undo yet)
    r.push(s, {kind: "set", field: "flag", value: "flagged", toggle: true});
    return s;
  }
  if (key === "s") {
    r.push(s, {kind: "set", field: "skipped", value: "skipped"});
    r.say("skipped");
    r.out.push({ask: "next"});
    return s;
  }
  if (key === "d") {
    if (data.answered && ready(s, view)) {
      r.say("the answer is not empty: D writes the deflection into an empty answer only");
    } else {
      r.push(s, {kind: "deflect"});
      r.say("deflection written in the answer");
    }
    return s;
  }
  // keys of the passages
  if (!s.n) return s;
  const labels = labelsOf(view);
  if (key in labels) {
    const next = label(r, s, s.cursor, labels[key]);
    return Object.assign(next, {cursor: clamp(s.cursor + 1, s.n)});
  }
  if (key === "0") return label(r, s, s.cursor, null);
  if (key === "y") {
    // one action: the server gives each passage still unlabeled its suggestion (on a
    // question still being opened it goes too: the server decides)
    if (ready(s, view) && !Object.keys(data.suggested || {}).length) {
      r.say("no suggestions shown on this question");
      return s;
    }
    r.push(s, {kind: "accept"});
    r.say("accepting the suggestions for the unlabeled passages…");
    return s;
  }
  if (key === "r") {  // the server labels what is unlabeled when it applies it
    r.push(s, {kind: "rest"});
    r.say("marking the unlabeled passages irrelevant…");
    return s;
  }
  return s;
}

// a card's label button: labels that passage and moves the cursor past it, as the key
// does (a click on the label the passage shows clears it: the server decides, on what
// is saved, and the cursor moves past it all the same)
/**
 * @param {Runner} r
 * @param {AnnotateState} s
 * @param {InputEvent} event
 * @returns {AnnotateState}
 */
function clickStep(r, s, event) {
  const view = r.v();
  if (event.item !== s.item) return s;  // a card of a question the keys have left
  if (!view.who) { r.out.push({focus: "name"}); return s; }
  if (event.what === "label") {
    const value = labelsOf(view)[event.digit];
    const num = event.passage;
    if (!value || !(num >= 1 && num <= s.n)) return s;
    r.push(s, {kind: "set", field: "label:" + num, value, toggle: true});
    r.out.push({scroll: true});
    return Object.assign({}, s, {acted: s.item, cursor: clamp(num + 1, s.n)});
  }
  if (event.what === "dim") {
    const k = event.dim;
    const d = dims(view)[k];
    if (!d || !(event.option >= 0 && event.option < d.options.length)) return s;
    setDim(r, s, d, dimChoice(s, view, k) === event.option ? null : event.option);
    const walk = s.prefix && s.prefix.walk;
    if (walk !== k) return s;
    // the walk's dimension, clicked: the walk moves past it, as its key does
    return Object.assign({}, s, {prefix: k + 1 >= dims(view).length ? null : {walk: k + 1}});
  }
  return s;
}

// the page's table for the interpreter (js/input_core.js)
/** @type {import("./input_core.js").PageTable<AnnotateState>} */
const PAGE = {
  target: (state) => ({item: state.item}),
  needsPage, ready, typing: ["answer", "comment"], multiline: ["answer"],
  act: (r, s, event) => (event.type === "key" ? keyStep(r, s, /** @type {string} */ (event.key))
    : clickStep(r, s, event)),
  other: (r, s, event) => {
    if (event.type === "arrive") return arrive(s, event.target, r.v());
    if (event.type === "data") return Object.assign({}, s, {cursor: clamp(s.cursor, s.n)});
    return s;
  },
};
/**
 * One event: the next state and the effects to carry out.
 * @param {AnnotateState} state
 * @param {InputEvent} event
 * @param {View} view
 */
export const step = (state, event, view) => runStep(PAGE, state, event, view);

// Where the keys aim. A move's target names the question, its passage count and where
// the cursor starts. Without one, the page's data: another question than the keys aim
// at takes its cursor from the data; on the same one, the data's cursor counts when it
// was worked out for another person than the one the cursor was placed for (a name
// typed, or the session's name coming back after a page drawn for nobody), and only
// before this person has acted on the question here: a redraw never takes back a cursor
// a key or a click moved. `cursorFor`: whom the page's data placed the cursor for.
/**
 * @param {AnnotateState} s
 * @param {{item: string, n: number, cursor?: number} | null} target
 * @param {View} view
 * @returns {AnnotateState}
 */
function arrive(s, target, view) {
  const whose = (view.data && view.data.annotator) || null;
  if (target) {
    return Object.assign({}, s, {item: target.item, n: target.n,
                                 cursor: clamp(target.cursor || 1, target.n),
                                 cursorFor: whose, acted: null, prefix: null});
  }
  const data = view.data;
  if (s.item !== data.item) {
    return Object.assign({}, s, {item: data.item, n: data.n, cursor: clamp(data.cursor || 1, data.n),
                                 cursorFor: whose, acted: null, prefix: null});
  }
  const next = Object.assign({}, s, {n: data.n});
  if (whose && s.cursorFor !== whose) {
    next.cursorFor = whose;
    if (s.acted !== s.item) next.cursor = clamp(data.cursor || 1, data.n);
  }
  return next;
}

export {dimActions, dimChoice, drawn, fileChoice, labelOf, prefixText, ready};
