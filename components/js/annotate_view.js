// @ts-check
// What Annotate's page shows the keys, for its input interpreter (js/annotate_input.js)
// and its painting (js/annotate_paint.js): whether the question the keys aim at is drawn
// and ready, the label a passage shows, the option a dimension holds, the file's own
// values, and what the next key does while a prefix is on. Each reads the interpreter's
// state and the view ({data, who, overlay, settled}: the page's data, the person, the
// actions sent but not drawn yet, whether the run that drew the page has ended) and
// changes nothing. No DOM here: tests/js/annotate_input.test.mjs runs it under node.
/** @typedef {import("./input_core.js").View} View */

/**
 * Annotate's input state: where the keys aim (item, its passage count n, the passage
 * cursor), who the cursor was placed for, whether the person has acted on this question in
 * this tab, the Q / W prefix, and the events that wait for the question to be drawn.
 * @typedef {object} AnnotateState
 * @property {string | null} item
 * @property {number} n
 * @property {number} cursor
 * @property {string | null} cursorFor
 * @property {string | null} acted
 * @property {{walk?: number, dim?: number} | null} prefix
 * @property {import("./input_core.js").InputEvent[]} waiting
 */
/**
 * A dimension of the keymap (needlework.grounding.keymap.dimension_keys).
 * @typedef {{title: string, fields: string[], options: string[], values: string[][]}} Dim
 */

/** @param {AnnotateState} state @param {View} view */
export const drawn = (state, view) => !!view.data && view.data.item === state.item;
// actions whose outcome the server decides on what is saved: until a redraw shows it,
// the page's copy of the question may be out of date
const DECIDED = new Set(["undo", "redo", "view", "accept", "rest", "deflect"]);
// the page shows the question the keys aim at, and everything sent for it, and the run
// that drew it has ended (`settled`: its boxes show what it drew; a box typed into before
// would be drawn over)
/** @param {AnnotateState} state @param {View} view */
export const ready = (state, view) => drawn(state, view) && view.settled !== false &&
  !view.overlay.some((a) => DECIDED.has(a.kind));
/** @param {View} view @returns {Record<string, string>} */
export const labelsOf = (view) => ((view.data && view.data.keys) || {}).labels || {};
/** @param {View} view @returns {Dim[]} */
export const dims = (view) => (view.data && view.data.dims) || [];
/** @param {string | null} value @param {{toggle?: boolean, value: string | null}} a */
const toggled = (value, a) => (a.toggle && value === a.value ? null : a.value);
/** @param {string} key */
export const digitOf = (key) => (/^[0-9]$/.test(key) ? parseInt(key, 10) : null);

/**
 * What a passage shows until the page is redrawn (the server decides R and Y).
 * @param {AnnotateState} state
 * @param {View} view
 * @param {number} num
 * @returns {string | null}
 */
export function labelOf(state, view, num) {
  const d = view.data;
  const here = drawn(state, view);
  let value = here ? (d.labels || {})[String(num)] || null : null;
  const offered = here ? (d.suggested || {})[String(num)] || null : null;
  for (const a of view.overlay) {
    if (a.item !== state.item || !(a.kind === "rest" || a.kind === "accept" ||
        (a.kind === "set" && a.field === "label:" + num))) continue;
    value = a.kind === "rest" ? value || "irrelevant" :
      a.kind === "accept" ? value || offered : toggled(value, a);
  }
  return value;
}

/**
 * A dimension's actions the page's data may not show yet, in order.
 * @param {AnnotateState} state
 * @param {View} view
 * @param {Dim} d
 * @returns {any[]}
 */
export const dimActions = (state, view, d) => view.overlay.filter((a) => a.kind === "set" &&
  a.item === state.item && view.data && a.dataset === view.data.dataset &&
  d.fields.some((f) => a.field === "dim:" + f));
/** @param {Dim} d @param {(string | null)[]} got */
const optionOf = (d, got) => {
  const found = d.values.findIndex((want) => want.every((w, i) => w === "" || w === got[i]));
  return found < 0 ? null : found;
};

/**
 * The option a dimension holds: the saved values, then the actions not drawn yet (an
 * option's "" matches any value of its field, as needlework.grounding.keymap.choice_of).
 * @param {AnnotateState} state
 * @param {View} view
 * @param {number} k
 * @returns {number | null}
 */
export function dimChoice(state, view, k) {
  const d = dims(view)[k];
  if (!d || !view.data) return null;
  const saved = drawn(state, view) ? view.data.dimValues || {} : {};
  const got = d.fields.map((f) => (("dim:" + f) in saved ? saved["dim:" + f] : null));
  for (const a of dimActions(state, view, d)) {
    const i = d.fields.indexOf(a.field.slice(4));
    got[i] = toggled(got[i], a);
  }
  return optionOf(d, got);
}

/**
 * The option the file's own values amount to (only when the page may show them).
 * @param {AnnotateState} state
 * @param {View} view
 * @param {number} k
 * @returns {number | null}
 */
export function fileChoice(state, view, k) {
  const d = dims(view)[k];
  if (!d || !drawn(state, view)) return null;
  const file = view.data.fileDims || {};
  const got = d.fields.map((f) => file["dim:" + f] || null);
  if (got.every((v) => v === null)) return null;
  return optionOf(d, got);
}

/**
 * What the next key does while a prefix is on (shown under the toolbar).
 * @param {AnnotateState} state
 * @param {View} view
 * @returns {string}
 */
export function prefixText(state, view) {
  const p = state.prefix;
  const all = dims(view);
  if (!p) return "";
  if (p.walk !== undefined) {
    const d = all[p.walk];
    const file = fileChoice(state, view, p.walk);
    return `${d.title} (${p.walk + 1}/${all.length}): ` +
      d.options.map((o, i) => `${i + 1} ${o}`).join(" · ") +
      (file === null ? "" : ` · Enter: the file's (${d.options[file]})`) +
      " · Space: leave · 0 clear · Esc";
  }
  if (p.dim === undefined) {
    return "Q: " + all.map((d, i) => `${i + 1} ${d.title}`).join(" · ") +
      ` · ${all.length + 1} Category · Esc`;
  }
  const d = all[p.dim];
  return `${d.title}: ` + d.options.map((o, i) => `${i + 1} ${o}`).join(" · ") + " · 0 clear";
}
