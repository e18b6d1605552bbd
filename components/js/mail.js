// @ts-check
// The mail between a page's components. A key script's code is loaded by a component of
// its own whose element never changes (Streamlit sends an element it sent before by
// reference, so the code crosses the wire once per tab); the page's data, new every run,
// travels in a small courier component drawn where the script works (js/courier.js),
// which posts it here. One mail per page (js/per_page.js).
//   nwMail.post(name, data, element)   the courier: the latest data and its element
//   nwMail.listen(name, fn)            the code: fn(data, element) now, if data came before
//                                      it loaded, and for every later post
import {perPage} from "./per_page.js";

/** @typedef {(data: any, element: Element | null) => void} Listener */

/**
 * @typedef {object} Mail
 * @property {(name: string, data: unknown, element: Element | null) => void} post
 * @property {(name: string, fn: Listener) => void} listen
 */

/** @returns {Mail} */
function makeMail() {
  /** @type {Record<string, {data: unknown, element: Element | null, to: Listener | null}>} */
  const boxes = {};
  const box = (/** @type {string} */ name) =>
    boxes[name] || (boxes[name] = {data: undefined, element: null, to: null});
  return {
    post(name, data, element) {
      const b = box(name);
      b.data = data;
      b.element = element;
      if (b.to) b.to(data, element);
    },
    listen(name, fn) {
      const b = box(name);
      b.to = fn;
      if (b.data !== undefined) fn(b.data, b.element);
    },
  };
}

/** the page's mail */
export const nwMail = perPage("__nwMail", makeMail);

/**
 * Where a courier's data goes: its component is named `needlework.NAME_data`
 * (components/outbox.py's courier), its data goes to NAME.
 * @param {string} component
 * @returns {string}
 */
export function mailbox(component) {
  return component.replace(/^needlework\./, "").replace(/_data$/, "");
}
