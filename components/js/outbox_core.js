// @ts-check
// The browser's outbox: every key action waits here until the server acknowledges it.
//
// Actions are kept in localStorage (one key per tab, adopted by another tab when the
// tab that made them is gone), POSTed to the server's action route (the route's path
// comes with the outbox component's data), and dropped only when the response names
// their id as applied, unchanged or refused. A response then asks for a rerun through
// the outbox component's state (the tab's id and a redraw nonce): the rerun only draws
// what is saved, at the place the server holds for this tab (moves are actions too:
// needlework/actions/positions.py). A refused action is never shown as saved: the badge
// says why, in the server's sentence.
//
// One core per page (pageOutbox, js/per_page.js: window.__nwCore, which the browser
// tests read), made by createCore from its parts: this file keeps the queue and its
// storage; js/outbox_send.js sends it and reads the answers, js/outbox_redraw.js asks for
// the reruns, js/outbox_status.js says what is not saved yet and paints the badge; the
// tab's id is js/outbox_tab.js's, the POSTs js/outbox_pipe.js's. What it takes from the
// browser comes in a Host (js/host.js): tests/js/outbox_core.test.mjs runs it under node.
// Everything is written as text (textContent), never as HTML.
import {browserHost} from "./host.js";
import {makePipe} from "./outbox_pipe.js";
import {redrawing} from "./outbox_redraw.js";
import {sending} from "./outbox_send.js";
import {paintBadge, telling} from "./outbox_status.js";
import {randomId, tabId} from "./outbox_tab.js";
import {perPage} from "./per_page.js";
/** @typedef {import("./host.js").Host} Host */
/** @typedef {import("./outbox_pipe.js").Answer} Answer */

/**
 * An action: what a key did, as the action route takes it (needlework/actions/parse.py).
 * @typedef {{id: string, t: number, kind: string, [field: string]: any}} Action
 */
/**
 * What is not saved yet, as the badge says it.
 * @typedef {{n: number, text: string, kind: string, refused?: boolean}} Status
 */

/**
 * @typedef {object} Core
 * @property {Host} host
 * @property {Action[]} queue      pending, oldest first
 * @property {{action: Action, at: number}[]} settled  acknowledged, maybe not drawn yet
 * @property {string} tab          this tab's id: the server keeps its position
 * @property {number} nonce        the last redraw asked for (the outbox state's nonce)
 * @property {number} drawn        the last redraw a rerun answered
 * @property {((name: string, value: unknown) => void) | null} setState
 * @property {string | null} route the action route (from the outbox component's data)
 * @property {{at: number} | null} inFlight  the last POST not yet answered
 * @property {string | null} error "busy" | "full" | "failed" | ... from the last answer
 * @property {number} retryAt
 * @property {number} backoff
 * @property {string[]} refused    messages of refused actions, newest last
 * @property {number} refusedAt    when the last refusal came
 * @property {number} answeredAt
 * @property {Set<(s: Status) => void>} listeners
 * @property {Set<(u: {id: string, item?: string, field: string}) => void>} revertListeners
 * @property {Set<(m: {id: string, seq?: number}) => void>} moveListeners  seq 0: refused
 * @property {Set<string>} reverted
 * @property {Set<(t: {id: string, message: string}) => void>} tellListeners
 * @property {Set<() => number>} heldCounters  the page scripts' keys held
 * @property {Set<string>} told
 * @property {number} counter
 * @property {any} redrawTimer
 * @property {number} redrawPause
 * @property {number} toldTab
 * @property {number} lastPush
 * @property {import("./outbox_pipe.js").Pipe} pipe
 * @property {() => void} save
 * @property {() => void} adopt
 * @property {() => string} newId
 * @property {(action: Partial<Action> & {kind: string}) => Action} push
 * @property {(params: Record<string, unknown>) => void} link
 * @property {() => number} pending
 * @property {(el: Node, text: string) => void} setText
 * @property {() => string} remembered
 * @property {(predicate: (a: Action) => boolean) => Action[]} pendingFor
 * @property {(predicate: (a: Action) => boolean) => Action[]} overlay
 * @property {(seen: unknown) => void} forget
 * @property {(setState: (name: string, value: unknown) => void, data: any) => void} attach
 * @property {(pause?: number) => void} redrawSoon
 * @property {() => number} redraw
 * @property {() => number} redrawNonce
 * @property {(data: any) => void} answer
 * @property {(force?: boolean) => void} send
 * @property {(data: Answer) => void} received
 * @property {() => void} tick
 * @property {() => number} held
 * @property {() => Status} status
 * @property {() => void} notify
 */

const PREFIX = "nw-pending:";

/**
 * An outbox on `host`: its queue read back from the storage, no badge, no clock.
 * @param {Host} host
 * @returns {Core}
 */
export function createCore(host) {
  const tab = tabId(host);
  const mine = PREFIX + tab;
  /** @param {string} key */
  const read = (key) => {
    try { return JSON.parse(host.localStorage.getItem(key) || "null"); } catch (e) { return null; }
  };
  const state = {
    host,
    /** @type {Action[]} */
    queue: (read(mine) || {}).queue || [],
    /** @type {{action: Action, at: number}[]} */
    settled: [],
    tab, nonce: 0, drawn: 0,
    /** @type {((name: string, value: unknown) => void) | null} */
    setState: null,
    /** @type {string | null} */
    route: null,
    /** @type {{at: number} | null} */
    inFlight: null,
    /** @type {string | null} */
    error: null,
    retryAt: 0, backoff: 0,
    /** @type {string[]} */
    refused: [],
    refusedAt: 0,
    answeredAt: host.now(),
    listeners: new Set(), revertListeners: new Set(), moveListeners: new Set(),
    reverted: new Set(), tellListeners: new Set(), heldCounters: new Set(), told: new Set(),
    counter: 0,
    /** @type {any} */
    redrawTimer: null,
    redrawPause: 0, toldTab: 0, lastPush: 0,
  };
  const core = /** @type {Core} */ (/** @type {unknown} */ (state));
  Object.assign(core, {
    save() {
      try {
        if (core.queue.length) {
          host.localStorage.setItem(mine, JSON.stringify({at: host.now(), queue: core.queue}));
        } else {
          host.localStorage.removeItem(mine);
        }
      } catch (e) { /* storage full or off: the queue is still in memory */ }
    },
    adopt() {
      // actions left by a tab that is gone (its heartbeat is older than 20 s)
      /** @type {string[]} */
      let keys = [];
      try {
        const store = host.localStorage;
        for (let k = 0; k < store.length; k += 1) {
          const key = store.key(k);
          if (key !== null && key.startsWith(PREFIX) && key !== mine) keys.push(key);
        }
      } catch (e) { return; }
      const have = new Set(core.queue.map((a) => a.id));
      let changed = false;
      for (const key of keys) {
        const other = read(key);
        if (!other || host.now() - (other.at || 0) < 20000) continue;
        for (const a of other.queue || []) {
          if (!have.has(a.id)) { core.queue.push(a); have.add(a.id); changed = true; }
        }
        try { host.localStorage.removeItem(key); } catch (e) { /* ignore */ }
      }
      if (changed) {
        core.queue.sort((a, b) => (a.t || 0) - (b.t || 0));
        core.save();
      }
    },
    newId() {
      core.counter += 1;
      return `${host.now().toString(36)}-${tab.slice(0, 8)}-${core.counter}-${randomId(host).slice(0, 6)}`;
    },
    /** @param {Action} action */
    push(action) {
      action.id = action.id || core.newId();
      action.t = host.now();
      core.lastPush = action.t;
      core.queue.push(action);
      core.save();
      core.notify();
      core.send();
      return action;
    },
    /** @param {Record<string, unknown>} params */
    link(params) {
      // keep the address on where the tab is: a reload, or the address copied, opens there
      // (the server reads it only when a page opens)
      try {
        const {location, history} = host;
        if (!location || !history) return;
        const url = new URL(location.href);
        for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));
        history.replaceState(history.state, "", url.toString());
      } catch (e) { /* no history here */ }
    },
    pending() { return core.queue.length; },
    // an element's text, written only when it differs: the tick repaints every second, and
    // each write restyles the whole page
    /** @param {Node} el @param {string} text */
    setText(el, text) { if (el.textContent !== text) el.textContent = text; },
    // the name this browser remembers (js/name_memory.js, local mode): the key scripts
    // use it while the session has none for a moment (a server restart), so that keys
    // are neither lost nor typed into the name field; "" when the person emptied it
    remembered() {
      try { return (host.localStorage.getItem("nw-annotator") || "").trim(); } catch (e) { return ""; }
    },
    /** @param {(a: Action) => boolean} predicate */
    pendingFor(predicate) { return core.queue.filter(predicate); },
    // actions whose effect the page's data may not show yet: acknowledged ones until
    // data drawn after their acknowledgement arrives (forget), then the pending ones
    /** @param {(a: Action) => boolean} predicate */
    overlay(predicate) {
      return core.settled.map((s) => s.action).concat(core.queue).filter(predicate);
    },
    /** @param {unknown} seen */
    forget(seen) {
      const n = Number(seen) || 0;
      core.settled = core.settled.filter((s) => s.at > n);
    },
  }, redrawing(core), sending(core), telling(core));
  core.pipe = makePipe((data) => core.received(data), host);
  core.adopt();
  return core;
}

/**
 * The page's outbox (one per page, whichever component loads first): the browser's
 * host, the badge, the tick that resends and the adoption of a gone tab's actions.
 * @returns {Core}
 */
export function pageOutbox() {
  return perPage("__nwCore", () => {
    const core = createCore(browserHost());
    paintBadge(core);
    setInterval(() => core.tick(), 1000);
    setInterval(() => core.adopt(), 10000);
    return core;
  });
}
