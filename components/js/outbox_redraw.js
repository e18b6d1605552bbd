// @ts-check
// The outbox's reruns (js/outbox_core.js): after an acknowledgement the page is asked to
// redraw what is saved, through the outbox component's state ({tab, nonce, named}); the
// rerun answers which redraw it is (`answer`), and the key scripts stop showing the
// actions drawn by then (core.forget). A rerun waits until the keys pause, so that reruns
// (the server's and the browser's heaviest work) do not slow the next keys.
import {nwDom} from "./st_dom.js";
/** @typedef {import("./outbox_core.js").Core} Core */

// an acknowledged action is shown saved at once (the key scripts paint it from
// `settled`); the page's rerun that draws it waits until the keys pause this long
export const QUIET_MS = 300;
// after a move followed by more keys, the rerun waits this long after the last of them
export const MOVE_PAUSE_MS = 100;

/**
 * The core's redraw methods.
 * @param {Core} core
 * @returns {Pick<Core, "attach" | "redrawSoon" | "redraw" | "redrawNonce" | "answer">}
 */
export function redrawing(core) {
  const host = core.host;
  // the focus is in a select box's input (typing filters its list)
  const choosing = () => {
    const a = host.document.activeElement;
    return !!(a && a.tagName === "INPUT" && a.closest && a.closest(nwDom.SELECTBOX));
  };
  return {
    attach(setState, data) {
      core.setState = setState;
      if (data && data.route) core.route = data.route;
      // the server does not know this tab yet (a new page, a restarted server): tell it
      if (data && data.tab !== core.tab && host.now() - core.toldTab > 2000) {
        core.toldTab = host.now();
        core.redraw();
      }
      if (core.queue.length) core.send(true);
    },
    redrawSoon(pause = QUIET_MS) {
      // a rerun once the keys pause (`pause` ms with no new action and none in flight),
      // and no select box is being typed into: a rerun that redraws it takes its focus
      // (V then Q 7: the category list would lose the letters typed to filter it, and
      // they would act as keys)
      core.redrawPause = Math.min(pause, core.redrawTimer ? core.redrawPause : pause);
      if (core.redrawTimer) return;
      const wait = () => {
        const quiet = host.now() - core.lastPush;
        const sending = core.queue.length && !core.error && host.now() >= core.retryAt;
        if (sending || core.inFlight || quiet < core.redrawPause || choosing()) {
          core.redrawTimer = host.setTimeout(wait, Math.max(20, core.redrawPause - quiet));
          return;
        }
        core.redrawTimer = null;
        core.redraw();
      };
      core.redrawTimer = host.setTimeout(wait, 0);  // wait() measures the pause itself
    },
    redraw() {
      // ask for a rerun: the page draws what is saved, where the server has this tab
      if (core.redrawTimer) { host.clearTimeout(core.redrawTimer); core.redrawTimer = null; }
      if (!core.setState) return core.nonce;
      core.nonce = Math.max(core.nonce + 1, host.now());
      // named: this browser remembers an annotator name (local mode), which the name
      // memory types into the session: a page opening waits for it to resume
      try {
        core.setState("outbox", {tab: core.tab, nonce: core.nonce, named: !!core.remembered()});
      } catch (e) { /* */ }
      return core.nonce;
    },
    redrawNonce() {
      // the nonce the next redraw will carry: data drawn for it includes these actions
      return Math.max(core.nonce + 1, host.now());
    },
    answer(data) {
      // the rerun says which redraw it is (nothing to acknowledge: the route does that)
      if (data && data.seen) core.drawn = Math.max(core.drawn || 0, Number(data.seen) || 0);
    },
  };
}
