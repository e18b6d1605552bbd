// @ts-check
// One of a thing per browser page, whichever component's code asks first.
//
// Streamlit loads each component's code as a module of its own (components/scripts.py
// joins a script and its imports into it), so a module's top level runs once per
// component: the outbox's code, the courier's and each page's key script all carry the
// outbox core and the mail. What must be one per page (the outbox, the mail between
// components, a key script's state) is kept on `window` under a `__nw` name, and only
// through this function; the browser tests read some of them (window.__nwCore,
// __nwAnnotate, __nwReview, __nwName, __nwSlide). Under node (no window) each call
// makes a new one.

/**
 * The page's `name` thing: made by `make` the first time it is asked for.
 * @template T
 * @param {string} name
 * @param {() => T} make
 * @returns {T}
 */
export function perPage(name, make) {
  if (typeof window === "undefined") return make();
  const root = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (window));
  if (!(name in root)) root[name] = make();
  return /** @type {T} */ (root[name]);
}
