// @ts-check
// The key scripts' navigator: where a tab's keys aim, and how they get there before the
// page has drawn it. One for Annotate's questions and Review's comparisons alike.
//
// A move (N, J, a click in a list) is an action like the labels: it goes through the
// outbox (js/outbox_core.js) in order with them, and the server keeps where the tab is
// (needlework/actions/positions.py). The navigator moves at once to a place the page's data
// names (`moves`, or along the `line` of places ahead and behind the drawn one) and
// aims the next keys there. A move whose target is not in sight while the page has not
// drawn the last one sets a barrier: the keys pressed meanwhile are held (and kept in
// the tab's session storage, so a reload asks again) until the page catches up, then
// the move is asked again from there and the held keys follow it. Once the server has
// applied a move, the page must reach that move's seq; a page that does not within
// RETRY_MS (a lost rerun) is asked to redraw again.
//
// A page's script makes one with create(core, spec): `core` is the outbox core (its host
// gives the clock and the session storage: tests/js/navigator_core.test.mjs hands it
// fakes), `spec` what differs between the pages (NavSpec below).
// No data is ever put into HTML here.
/** @typedef {import("./outbox_core.js").Core} Core */

/**
 * A place the keys aim at: a question ({item, n, cursor}) or a comparison ({item, i, j}).
 * @typedef {{item: string, [field: string]: any}} Place
 */
/**
 * What differs between the pages.
 * @typedef {object} NavSpec
 * @property {string} page              "annotate" | "review": the move action's page
 * @property {string} storage           the session storage key of held keys
 * @property {() => any} data           the page's data
 * @property {() => string} who         the person
 * @property {() => Place | null} here  where the keys aim (null before the first data)
 * @property {() => boolean} drawn      whether the page shows here()
 * @property {(a: Place, b: Place) => boolean} same  two places are one
 * @property {(place: Place) => Record<string, unknown>} fields  the move action's fields
 * @property {(place: Place) => Record<string, unknown>} link    the address's parameters
 * @property {(place: Place | null) => void} arrive  aim the keys at a move's place, or
 *   (null) at the page's own data
 * @property {() => void} paint
 * @property {(text: string) => void} say
 * @property {(key: any) => void} handle  a held key (or event)
 * @property {Record<string, string>} done  what a move past the end says per seek (else
 *   the page's data's `done` says it)
 * @property {string} other  what a held key was for when the page opened another place
 * @property {(seek: string, k: number) => Place | null} [beyond]  where a seek other than
 *   next / previous leads from line[k] (null: the server decides, the keys are held)
 */
/**
 * @typedef {object} Navigator
 * @property {{seek: string, target: Place | null, from: Place | null, dataset: string} | null} barrier
 *   a move asked for, keys held for it
 * @property {any[]} held
 * @property {string | null} moveId   our last move's id
 * @property {number | null} waitSeq  null: nothing to wait for; Infinity: our move is on
 *   its way; else the seq the page's data must reach to show it
 * @property {number} ackedAt
 * @property {Place[]} line  the places around the drawn one, in the list's order
 * @property {() => void} save
 * @property {() => void} clear
 * @property {(data: any) => boolean} caughtUp
 * @property {(key: any) => boolean} hold
 * @property {(place: Place) => void} go
 * @property {(seek: string) => Place | null} ahead
 * @property {(seek: string, target?: Place | null) => void} ask
 * @property {(data: any, line: {here: Place, ahead?: Place[], behind?: Place[]} | null) => boolean} receive
 * @property {(data: any) => void} release
 * @property {() => number} heldCount
 * @property {(m: {id: string, seq?: number}) => void} moved
 * @property {() => void} retry
 */

export const RETRY_MS = 3000;
// keys held until the asked-for place is shown count as not saved yet (moves do not)
export const MOVES = new Set(["j", "k", "n", "p", "u", "l", "arrowup", "arrowdown", "arrowleft",
                              "arrowright", "escape", "tab", "pageup", "pagedown", "home", "end"]);

/**
 * A page's navigator.
 * @param {Core} core
 * @param {NavSpec} spec
 * @returns {Navigator}
 */
export function create(core, spec) {
  const host = core.host;
  const session = () => {
    try { return host.sessionStorage || null; } catch (e) { return null; }
  };
  /** @type {Navigator} */
  const nav = {
    barrier: null,
    held: [],
    moveId: null,
    waitSeq: null,
    ackedAt: 0,
    line: [],

    save() {
      const s = session();
      if (!s) return;
      try {
        if (nav.barrier) s.setItem(spec.storage, JSON.stringify({barrier: nav.barrier, held: nav.held}));
        else s.removeItem(spec.storage);
      } catch (e) { /* ignore */ }
    },
    clear() { nav.barrier = null; nav.held = []; nav.save(); },

    // the page shows our last move (or we made none): its data is where we are
    caughtUp: (data) => nav.waitSeq === null ||
      (nav.waitSeq !== Infinity && (data.seq || 0) >= nav.waitSeq),

    // a key pressed while a move waits for the page: kept for it (true), or acted on (false)
    hold(key) {
      if (!nav.barrier) return false;
      nav.held.push(key);
      nav.save();
      core.notify();
      return true;
    },

    // go to a place the page's data knows: aim the keys there now, tell the server (an
    // action, in order with the keys), keep the address on it
    go(place) {
      spec.arrive(place);
      const here = /** @type {Place} */ (spec.here());
      const a = core.push(Object.assign({kind: "move", tab: core.tab, page: spec.page,
                                         dataset: spec.data().dataset}, spec.fields(here),
                                        {annotator: spec.who() || ""}));
      nav.moveId = a.id;
      nav.waitSeq = Infinity;
      core.link(spec.link(here));
      spec.paint();
    },

    // where a seek leads from a place the page has not drawn yet, along the line
    ahead(seek) {
      const here = spec.here();
      const k = here ? nav.line.findIndex((c) => spec.same(c, here)) : -1;
      if (k < 0) return null;
      if (seek === "next") return nav.line[k + 1] || null;
      if (seek === "previous") return k > 0 ? nav.line[k - 1] : null;
      return spec.beyond ? spec.beyond(seek, k) : null;
    },

    // a move: `seek` ("next", ...) from where the keys aim, or straight to `target`
    ask(seek, target) {
      const data = spec.data();
      if (nav.waitSeq !== null || !spec.drawn()) {
        const found = target ? null : nav.ahead(seek);
        if (found) { nav.go(found); return; }
        // the page has not drawn our last move yet, and where this one leads is not in
        // sight: hold the keys until it has, then go on from there
        nav.barrier = {seek, target: target || null, from: spec.here(), dataset: data.dataset};
        nav.held = [];
        nav.save();
        spec.paint();
        return;
      }
      const found = target || (data.moves || {})[seek];
      if (found) nav.go(found);
      else spec.say(spec.done[seek] || (data.done || {})[seek] || "");
    },

    // the page's data came (spec.data() is it): follow the server's place when the page
    // has caught up with our moves, then go on with a move held for it
    receive(data, line) {
      if (line) {
        nav.line = [...(line.behind || []).slice().reverse(), line.here, ...(line.ahead || [])];
      }
      core.forget(data.seen);
      if (nav.barrier && nav.barrier.dataset !== data.dataset) nav.clear();  // another dataset
      const caughtUp = nav.caughtUp(data);
      const here = spec.here();
      if (caughtUp || !here) {  // where the server has this tab (ours, or the page's)
        nav.waitSeq = null;
        spec.arrive(null);
      } else if (!spec.drawn()) {
        // a run that began before our move has just put its own place in the address:
        // the address stays on our move (a reload, or the address copied, opens there)
        core.link(spec.link(here));
      }
      if (caughtUp && nav.barrier) nav.release(data);
      return caughtUp;
    },

    release(data) {
      if (!nav.barrier) return;
      const {seek, target, from} = nav.barrier;
      const held = nav.held;
      nav.clear();
      if (from && spec.same(from, data)) {
        nav.ask(seek, target);
        for (const key of held) spec.handle(key);
      } else if (held.length) {
        spec.say(spec.other);
      }
    },

    heldCount: () => nav.held.filter((k) => !MOVES.has(
      String(typeof k === "string" ? k : (k && k.key) || "").toLowerCase())).length,
    moved(m) {  // the server applied our move: the page must reach its seq
      if (m.id !== nav.moveId) return;
      nav.waitSeq = m.seq || 0;
      nav.ackedAt = host.now();
    },
    // our move is saved but the page has not drawn it in RETRY_MS (a lost rerun): ask again
    retry() {
      if (spec.data() && nav.waitSeq !== null && nav.waitSeq !== Infinity &&
          host.now() - (nav.ackedAt || 0) > RETRY_MS) {
        nav.ackedAt = host.now();
        core.redraw();
      }
    },
  };
  try {  // a reload while a place was being asked for: ask again, then the held keys
    const s = session();
    const saved = JSON.parse((s && s.getItem(spec.storage)) || "null");
    if (saved && saved.barrier) { nav.barrier = saved.barrier; nav.held = saved.held || []; }
  } catch (e) { /* ignore */ }
  core.heldCounters.add(nav.heldCount);
  core.moveListeners.add(nav.moved);
  host.setInterval(nav.retry, 1000);
  return nav;
}

// Whether a key pressed on `t` is typing, not a command: a text area, a text input or
// editable text. A select's own input (`select`: its CSS) takes typing only while its
// list is open (typing filters the list); closed, after a choice, the keys act again.
const TEXT_INPUTS = ["text", "search", "password", "email", ""];
/**
 * @param {any} t  the event's target
 * @param {string} select
 * @returns {boolean}
 */
export function typing(t, select) {
  if (!t) return false;
  if (t.isContentEditable) return true;
  const tag = t.tagName;
  if (tag === "TEXTAREA") return true;
  if (tag !== "INPUT" || !TEXT_INPUTS.includes(t.type || "")) return false;
  const inSelect = select && t.closest && t.closest(select);
  return !inSelect || t.getAttribute("aria-expanded") === "true";
}
