// @ts-check
// Annotate's dimension keys, for its input interpreter (js/annotate_input.js): Q, then a
// dimension, then its option; W, one key per dimension in order (Enter: the file's value,
// Space: leave it, 0: clear); V, the file's value of every dimension not set yet. A click
// on a dimension's option sets it likewise (setDim). Each answers the next state and
// leaves its actions and notes in the step's run (js/input_core.js's Runner).
import {dimChoice, dims, digitOf, fileChoice} from "./annotate_view.js";
/** @typedef {import("./annotate_view.js").AnnotateState} AnnotateState */
/** @typedef {import("./annotate_view.js").Dim} Dim */
/** @typedef {import("./input_core.js").Runner} Runner */

/**
 * Set dimension `d` to `option` (null: clear it).
 * @param {Runner} r
 * @param {AnnotateState} state
 * @param {Dim} d
 * @param {number | null} option
 * @param {boolean} [quiet]  no note
 */
export function setDim(r, state, d, option, quiet = false) {
  const values = option === null ? d.fields.map(() => null) : d.values[option];
  d.fields.forEach((f, k) => r.push(state, {kind: "set", field: "dim:" + f, value: values[k]}));
  if (!quiet) r.say(`${d.title}: ${option === null ? "cleared" : d.options[option]}`);
}

/**
 * V: the file's value of every dimension not set yet, and its category.
 * @param {Runner} r
 * @param {AnnotateState} s
 */
export function takeFile(r, s) {
  const view = r.v();
  let n = 0;
  dims(view).forEach((d, k) => {
    const file = fileChoice(s, r.v(), k);
    if (file !== null && dimChoice(s, r.v(), k) === null) { setDim(r, s, d, file, true); n += 1; }
  });
  const field = "dim:question_category";
  const file = (view.data.fileDims || {})[field];
  const mine = (view.data.dimValues || {})[field] ||
    view.overlay.some((a) => a.kind === "set" && a.item === s.item && a.field === field);
  if (file && !mine) { r.push(s, {kind: "set", field, value: file}); n += 1; }
  r.say(Object.keys(view.data.fileDims || {}).length ?
    `took the file's value of ${n} dimension(s) you had not set` :
    "the file's values are hidden or absent here: nothing taken");
}

/**
 * W: one key per dimension, in order. Null for any other key: it stops the walk, then
 * acts as itself (the interpreter's keys).
 * @param {Runner} r
 * @param {AnnotateState} s  a walk is on (s.prefix.walk)
 * @param {string} key
 * @returns {AnnotateState | null}
 */
export function walkKey(r, s, key) {
  const all = dims(r.v());
  const k = /** @type {number} */ (s.prefix && s.prefix.walk);
  const d = all[k];
  const digit = digitOf(key);
  if (digit === null && key !== "enter" && key !== " ") return null;
  if (digit === 0) setDim(r, s, d, null);
  else if (digit && digit <= d.options.length) setDim(r, s, d, digit - 1);
  else if (key === "enter" && fileChoice(s, r.v(), k) !== null) setDim(r, s, d, fileChoice(s, r.v(), k));
  else if (digit) { r.say(`${d.title} has ${d.options.length} options`); return s; }
  const next = k + 1;
  if (next >= all.length) { r.say("dimensions done"); return Object.assign({}, s, {prefix: null}); }
  return Object.assign({}, s, {prefix: {walk: next}});
}

/**
 * Q, then a dimension, then its option (the dimensions' count + 1: the category list).
 * @param {Runner} r
 * @param {AnnotateState} s  a Q prefix is on
 * @param {string} key
 * @returns {AnnotateState}
 */
export function dimKey(r, s, key) {
  const all = dims(r.v());
  const digit = digitOf(key);
  const p = s.prefix || {};
  if (p.dim === undefined) {
    if (digit && digit <= all.length) return Object.assign({}, s, {prefix: {dim: digit - 1}});
    if (digit === all.length + 1) r.out.push({focus: "category"});
    return Object.assign({}, s, {prefix: null});
  }
  const d = all[p.dim];
  if (digit === 0) setDim(r, s, d, null);
  else if (digit && digit <= d.options.length) setDim(r, s, d, digit - 1);
  return Object.assign({}, s, {prefix: null});
}
