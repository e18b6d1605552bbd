// @ts-check
// The review page's input interpreter: its page table for the one interpreter of input
// (js/input_core.js), the same as Annotate's.
//
//   step(state, event, view) -> {state, effects}
//
// `state`: the comparison the keys aim at (`at`: {item, i, j}, where the navigator put
// them), the reasons picked on a comparison with no verdict yet (`drafts`, by comparison),
// the comparison of the verdict just given (`after`: a reason key right after it goes with
// it, until another key comes) and the events waiting for the page (`waiting`). `view`:
// {data, who, overlay, known, note}: the page's data, the person, the actions not drawn yet,
// what is saved on the comparisons the data names (`known`: id -> {verdict, reasons}) and
// the note field as typed (`note`, null when the page does not show the comparison).
// Events: {type: "key", key} (a verdict, a reason, J / K / N, Z / Shift+Z, M, Y), {type:
// "click", what: "pick", item, i, j} (a comparison of the item's grid), {type: "arrive",
// target} (the navigator aims the keys at a comparison; null: at the page's data),
// {type: "data"}. Verdict, reason and move buttons are their keys. A blind annotator's
// verdict keys name positions (a-better, b-better): the server stores agree or flip.
// No DOM, no clock, no outbox here: tests/js/review_input.test.mjs runs it under node.
import {step as runStep} from "./input_core.js";
/** @typedef {import("./input_core.js").Runner} Runner */
/** @typedef {import("./input_core.js").View} View */
/** @typedef {import("./input_core.js").InputEvent} InputEvent */
/** @typedef {{item: string, i: number, j: number, [field: string]: any}} Place  a comparison */
/**
 * @typedef {object} ReviewState
 * @property {Place | null} at
 * @property {Record<string, string[]>} drafts
 * @property {Place | null} after
 * @property {InputEvent[]} waiting
 */
/** @typedef {ReviewState & {at: Place}} Aimed  a state whose keys aim at a comparison */

/** @type {Record<string, string>} */
export const SEEK = {j: "next", k: "previous", n: "unreviewed"};

/** @returns {ReviewState} */
export const initial = () => ({at: null, drafts: {}, after: null, waiting: []});

/** @param {Place} c */
export const idOf = (c) => `${c.item}\u0000${c.i}\u0000${c.j}`;
/** @param {Place | null} a @param {Place | null} b */
const same = (a, b) => !!a && !!b && a.item === b.item && a.i === b.i && a.j === b.j;
/** @param {View} view */
const keys = (view) => ((view.data && view.data.keys) || {});
/** @param {View} view @returns {Record<string, string>} */
const verdicts = (view) => keys(view).verdicts || {};
/** @param {View} view @returns {Record<string, string>} */
const reasonKeys = (view) => keys(view).reasons || {};
/** @param {ReviewState} state @param {{data: any}} view */
export const drawn = (state, view) => !!view.data && same(state.at, view.data);
/** @param {Place} c @returns {Place} */
const place = (c) => ({item: c.item, i: c.i, j: c.j});
/** @param {Place} c */
const on = (c) => (/** @type {any} */ a) => a.item === c.item && a.i === c.i && a.j === c.j;

/** @param {View} view @param {Place} c @returns {{verdict: string | null, reasons: string[]}} */
const savedOf = (view, c) => (view.known || {})[idOf(c)] || {verdict: null, reasons: []};
// the verdict on its way for comparison `c` (the last one sent), or null
/** @param {View} view @param {Place} c @returns {string | null} */
export const pendingVerdict = (view, c) => {
  let v = null;
  for (const a of view.overlay) if (a.kind === "verdict" && on(c)(a)) v = a.verdict;
  return v;
};
// a reason tag flipped in `reasons`, in the canonical order (the reason keys' order)
/** @param {View} view @param {string[]} reasons @param {string} tag */
const flipped = (view, reasons, tag) => {
  const now = new Set(reasons);
  if (now.has(tag)) now.delete(tag); else now.add(tag);
  return Object.values(reasonKeys(view)).filter((r) => now.has(r));
};
// the reasons comparison `c` shows: a draft, else what is saved with the flips on their way
/**
 * @param {ReviewState} state
 * @param {View} view
 * @param {Place | null} [c]
 * @returns {string[]}
 */
export function reasonsOf(state, view, c = state.at) {
  if (!c) return [];
  const draft = state.drafts[idOf(c)];
  if (draft) return draft;
  let reasons = savedOf(view, c).reasons || [];
  for (const a of view.overlay) {
    if (!((a.kind === "verdict" || a.kind === "reasons") && on(c)(a))) continue;
    if (a.flip) reasons = flipped(view, reasons, a.flip);
    else if (a.reasons) reasons = a.reasons;  // a verdict sent without them keeps them
  }
  return reasons;
}

/** @param {Record<string, string[]>} drafts @param {Place} c */
const without = (drafts, c) => {
  const out = Object.assign({}, drafts);
  delete out[idOf(c)];
  return out;
};

// a move away (J, K, N, a verdict that moves on, a click in the grid): reasons picked here
// with no verdict are not saved, and the page says so
/**
 * @param {Runner} r
 * @param {Aimed} s
 * @param {string | null} seek
 * @param {Place | null} [target]
 * @returns {ReviewState}
 */
function move(r, s, seek, target = null) {
  const view = r.v();
  const draft = s.at && s.drafts[idOf(s.at)];
  let next = s;
  if (draft && draft.length && !pendingVerdict(view, s.at)) {
    next = Object.assign({}, s, {drafts: without(s.drafts, s.at)});
    r.say(`not saved: ${draft.join(", ")} (reasons need a verdict on their comparison)`);
  }
  r.out.push({ask: seek, target});
  return next;
}

/** @param {Runner} r @param {Aimed} s @param {string} key @returns {ReviewState} */
function verdict(r, s, key) {
  const view = r.v();
  const draft = s.drafts[idOf(s.at)];
  // the reasons picked before the verdict go with it; otherwise the server keeps the
  // saved ones (flips still on their way included); the note as typed, when the page
  // shows this comparison
  r.push(s, {kind: "verdict", verdict: verdicts(view)[key],
             ...(draft ? {reasons: draft} : {}), note: drawn(s, view) ? view.note : null});
  const given = place(s.at);
  const dropped = Object.assign({}, s, {drafts: without(s.drafts, s.at)});
  const next = view.data.advance ? move(r, dropped, "unreviewed") : dropped;
  return Object.assign(next, {after: given});
}

/** @param {Runner} r @param {Aimed} s @returns {ReviewState} */
function accept(r, s) {
  const view = r.v();
  if (drawn(s, view) && !view.data.suggested) {
    r.say("no suggestion shown on this comparison");
    return s;
  }
  r.push(s, {kind: "accept"});
  r.say("accepting the suggested verdict…");
  return view.data.advance ? move(r, s, "unreviewed") : s;
}

/** @param {Runner} r @param {Aimed} s @param {string} key @returns {ReviewState} */
function reason(r, s, key) {
  const view = r.v();
  const tag = reasonKeys(view)[key];
  if (savedOf(view, s.at).verdict || pendingVerdict(view, s.at)) {
    // the server flips the reason on what is saved (right after Z the page may still
    // show the reasons the undo took back)
    r.push(s, {kind: "reasons", flip: tag});
    return Object.assign({}, s, {drafts: without(s.drafts, s.at)});
  }
  const drafts = Object.assign({}, s.drafts, {[idOf(s.at)]: flipped(view, reasonsOf(s, view), tag)});
  return Object.assign({}, s, {drafts});
}

// A reason key right after a verdict goes with that verdict, wherever the page has moved
// on to, until any other key comes: F then 1 is a flip for a factual error. Such a key is
// never held for a move (`holds`).
/** @param {ReviewState} s @param {InputEvent} event @param {View} view */
const withVerdict = (s, event, view) => event.type === "key" && !!s.after &&
  (event.key || "") in reasonKeys(view) && !!view.who;

/** @param {Runner} r @param {ReviewState} state @param {InputEvent} event @returns {ReviewState} */
function act(r, state, event) {
  const view = r.v();
  if (!state.at) return state;
  let s = /** @type {Aimed} */ (state);
  if (withVerdict(s, event, view)) {
    const tag = reasonKeys(view)[/** @type {string} */ (event.key)];
    r.push(Object.assign({}, s, {at: s.after}), {kind: "reasons", flip: tag});
    r.say(`${tag}: ${same(s.after, s.at) ? "with this verdict" : "with the verdict you just gave"}`);
    return s;
  }
  s = Object.assign({}, s, {after: null});
  if (event.type === "click") {
    // the comparison clicked, on the item the page showed when it was clicked
    return event.what === "pick" ? move(r, s, null, {item: event.item, i: event.i, j: event.j}) : s;
  }
  const key = /** @type {string} */ (event.key);
  if (key in SEEK) return move(r, s, SEEK[key]);
  if (!view.who) { r.out.push({focus: "name"}); return s; }  // nothing is saved without a name
  if (key === "z" || key === "Z") {
    r.push(s, {kind: key === "z" ? "undo" : "redo", scope: "review"}, true);
    r.say(key === "z" ? "undoing your last verdict change…" : "redoing…");
    return s;
  }
  if (key === "m") { r.out.push({focus: "note"}); return s; }
  if (key in verdicts(view)) return verdict(r, s, key);
  if (key === "y") return accept(r, s);
  if (key in reasonKeys(view)) return reason(r, s, key);
  return s;
}

/** @type {import("./input_core.js").PageTable<ReviewState>} */
const PAGE = {
  target: (state) => place(/** @type {Place} */ (state.at)),  // acts only while aimed
  needsPage: () => false,  // nothing here reads the drawn page but the note, as typed
  ready: drawn,
  typing: ["note"],
  act,
  other: (r, s, event) => {
    if (event.type !== "arrive") return s;
    const c = event.target || r.v().data;
    return Object.assign({}, s, {at: place(c)});
  },
};
/** @param {ReviewState} state @param {InputEvent} event @param {View} view */
export const step = (state, event, view) => runStep(PAGE, state, event, view);
// whether the navigator may hold `event` for a move (a reason right after a verdict: no)
/** @param {ReviewState} state @param {InputEvent} event @param {View} view */
export const holds = (state, event, view) => !withVerdict(state, event, view);
