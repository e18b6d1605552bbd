// @ts-check
// The key pages' input interpreter: one pure function, for Annotate and Review alike, turns
// every key and every click that changes data or the cursor into actions.
//
//   step(page, state, event, view) -> {state, effects}
//
// `page` is a page's table (js/annotate_input.js, js/review_input.js): what its events do
// (`act`), which of them read the drawn page and so wait for it (`needsPage`, `ready`), what
// a redraw or an arrival does (`other`), and the fields every action of it names
// (`target`). `state` is all of the page's input state, `waiting` (the events that wait for
// the page, in order) among it: no redraw, rerun or widget makes a new one. `view` is what
// the page knows and may not change ({data, who, overlay, ...}: the overlay is the actions
// sent but not drawn yet). Effects are plain objects the page script carries out in order:
//   {push: action}   {ask: seek, target}   {say: text}   {focus: name}   {click: name}
//   {scroll: true}   {replay: events}: events that waited, to come again after a move
//   {text: typed}: characters typed while a text box was opening, for the box ("\b": a
//   Backspace)   {blur: true}: leave the box
// No DOM, no clock, no outbox here: tests/js/*_input.test.mjs run it under node.

/** @typedef {{type: string, key?: string, text?: string, [field: string]: any}} InputEvent */
/** @typedef {{[effect: string]: any}} Effect */
/**
 * What the page knows and may not change: its data, the person, the actions sent but not
 * drawn yet, and what a page adds (Annotate: settled; Review: known, note).
 * @typedef {{data: any, who: string, overlay: any[], [field: string]: any}} View
 */
/** @typedef {{waiting: InputEvent[], [field: string]: any}} InputState */
/**
 * One step's run: its effects, the actions pushed in it, the view with them, and helpers.
 * @typedef {object} Runner
 * @property {Effect[]} out
 * @property {any[]} sent
 * @property {() => View} v
 * @property {(state: InputState, action: Record<string, unknown>, whole?: boolean) => void} push
 * @property {(text: string) => void} say
 */
/**
 * A page's table: what its events do.
 * @template {InputState} S
 * @typedef {object} PageTable
 * @property {(state: S) => Record<string, unknown>} target  the fields every action names
 * @property {(state: S, event: InputEvent, view: View) => boolean} needsPage
 * @property {(state: S, view: View) => boolean} ready
 * @property {string[]} [typing]     focus effects that open a text box
 * @property {string[]} [multiline]  those that take Enter as a new line
 * @property {(r: Runner, state: S, event: InputEvent) => S} act
 * @property {(r: Runner, state: S, event: InputEvent) => S} other  a redraw, an arrival
 */

// One run: `out` collects the effects, `sent` the actions pushed in this step (the events
// after them in the same step see them, as the page would).
/**
 * @param {PageTable<any>} page
 * @param {View} view
 * @returns {Runner}
 */
function runner(page, view) {
  /** @type {Effect[]} */
  const out = [];
  /** @type {any[]} */
  const sent = [];
  const v = () => Object.assign({}, view, {overlay: view.overlay.concat(sent)});
  // an action on the place the keys aim at (`whole`: of the person's work, no place)
  const push = (state, action, whole = false) => {
    const a = Object.assign({dataset: view.data.dataset, annotator: view.who},
                            whole ? {} : page.target(state), action);
    sent.push(a);
    out.push({push: a});
  };
  return {out, sent, v, push, say: (text) => { out.push({say: text}); }};
}

const isInput = (/** @type {InputEvent} */ event) => event.type === "key" || event.type === "click";

// an input event: acted on, or kept to wait for the page (behind any that already wait)
/**
 * @param {PageTable<any>} page
 * @param {Runner} r
 * @param {InputState} s
 * @param {InputEvent} event
 * @returns {InputState}
 */
function input(page, r, s, event) {
  const view = r.v();
  if (!view.data) return s;
  if (s.waiting.length) return Object.assign({}, s, {waiting: s.waiting.concat([event])});
  if (page.needsPage(s, event, view) && !page.ready(s, view)) {
    return Object.assign({}, s, {waiting: [event]});
  }
  return page.act(r, s, event);
}

// the events that waited, once the page is ready: in order, until one waits again, or one
// moves (the events after a move are given back, {replay}, to come again once the move is
// made: they aim where it leads), or one puts the focus in a text box: what was typed
// after it was meant for the box and goes into it ({text}), up to an Esc or a click,
// which leave the box ({blur}); the events after those act as events again
/**
 * @param {PageTable<any>} page
 * @param {Runner} r
 * @param {InputState} s
 * @returns {InputState}
 */
function flush(page, r, s) {
  /** @type {InputState} */
  let state = Object.assign({}, s, {waiting: []});
  const queue = s.waiting;
  let k = 0;
  while (k < queue.length) {
    if (state.waiting.length) {
      state = Object.assign({}, state, {waiting: state.waiting.concat(queue.slice(k))});
      break;
    }
    const before = r.out.length;
    state = input(page, r, state, queue[k]);
    const made = r.out.slice(before);
    k += 1;
    if (k >= queue.length) break;
    if (made.some((e) => e.ask)) {
      r.out.push({replay: queue.slice(k)});
      break;
    }
    const box = made.map((e) => e.focus).find((f) => (page.typing || []).includes(f));
    if (box) {
      const ahead = typedAhead(queue, k, (page.multiline || []).includes(box));
      if (ahead.text) r.out.push({text: ahead.text});
      k = ahead.end;
      if (k >= queue.length) break;
      r.out.push({blur: true});
      if (queue[k].type === "key" && queue[k].key === "escape") k += 1;
    }
  }
  return state;
}

// the text typed into a box that was opening, from queue[k]: the characters as typed,
// Enter as a new line in a text area (a one-line field keeps the focus on Enter), "\b"
// for Backspace; `end`: the first event that is not typing (Esc, a click, a key with
// Ctrl)
/**
 * @param {InputEvent[]} queue
 * @param {number} k
 * @param {boolean} multiline
 */
function typedAhead(queue, k, multiline) {
  let text = "";
  let end = k;
  for (; end < queue.length; end += 1) {
    const e = queue[end];
    if (e.type !== "key") break;
    if (typeof e.text === "string" && e.text.length === 1) text += e.text;
    else if (e.key === "enter") text += multiline ? "\n" : "";
    else if (e.key === "backspace") text += "\b";
    else break;
  }
  return {text, end};
}

/**
 * One event through a page's table.
 * @template {InputState} S
 * @param {PageTable<S>} page
 * @param {S} state
 * @param {InputEvent} event
 * @param {View} view
 * @returns {{state: S, effects: Effect[]}}
 */
export function step(page, state, event, view) {
  /** @type {PageTable<any>} */
  const table = page;
  const r = runner(table, view);
  /** @type {InputState} */
  let s = state;
  if (isInput(event)) s = input(table, r, s, event);
  else s = table.other(r, s, event);
  if (s.waiting.length && !isInput(event) && table.ready(s, r.v())) s = flush(table, r, s);
  return {state: /** @type {S} */ (s), effects: r.out};
}
