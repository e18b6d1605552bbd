// @ts-check
// The browser tab's id, which the server keeps the tab's place by (the outbox sends it
// with every redraw it asks for, and every move names it). Kept in the tab's session
// storage, so a reload keeps it, and made anew when another live page has it (a
// duplicated tab copies the session storage): each page beats "nw-live:ID" in the shared
// storage every second and clears it when it goes.
/** @typedef {import("./host.js").Host} Host */

const LIVE = "nw-live:";

/**
 * Random letters and digits (about 20).
 * @param {Host} host
 * @returns {string}
 */
export function randomId(host) {
  const a = new Uint32Array(3);
  host.random(a);
  return Array.from(a, (x) => x.toString(36)).join("");
}

/**
 * This page's tab id, its heartbeat started.
 * @param {Host} host
 * @returns {string}
 */
export function tabId(host) {
  const load = randomId(host);
  /** @param {string} id */
  const taken = (id) => {
    try {
      const v = JSON.parse(host.localStorage.getItem(LIVE + id) || "null");
      return !!v && v.load !== load && host.now() - (v.at || 0) < 2500;
    } catch (e) { return false; }
  };
  /** @type {string | null} */
  let tab = null;
  try { tab = host.sessionStorage.getItem("nw-tab"); } catch (e) { /* storage off */ }
  if (!tab || taken(tab)) {
    tab = randomId(host);
    try { host.sessionStorage.setItem("nw-tab", tab); } catch (e) { /* storage off */ }
  }
  const id = tab;
  const beat = () => {
    try { host.localStorage.setItem(LIVE + id, JSON.stringify({load, at: host.now()})); } catch (e) { /* */ }
  };
  beat();
  host.setInterval(beat, 1000);
  host.onPage("pagehide", () => {
    try { host.localStorage.removeItem(LIVE + id); } catch (e) { /* storage off */ }
  });
  return id;
}
