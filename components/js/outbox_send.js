// @ts-check
// The outbox's sending (js/outbox_core.js): the queue goes to the action route through
// the pipe (js/outbox_pipe.js), 200 actions at most a POST; an answer drops what it
// acknowledges (a refused action is forgotten, never shown as saved), tells the page's
// listeners what was undone, moved or said, and sets the wait before the next try: a
// growing back-off after an error, a shorter one while the server does not answer at all.
// The tick resends what is pending and never gives up.
import {MOVE_PAUSE_MS, QUIET_MS} from "./outbox_redraw.js";
/** @typedef {import("./outbox_core.js").Core} Core */

/**
 * The core's sending methods.
 * @param {Core} core
 * @returns {Pick<Core, "send" | "received" | "tick">}
 */
export function sending(core) {
  const host = core.host;
  return {
    send(force) {
      if (!core.route || !core.queue.length) return;
      const now = host.now();
      if (core.inFlight && !force) {                  // the pipe sends them after its answer
        core.pipe.offer(core.route, core.queue.slice(0, 200), false);
        return;
      }
      if (now < core.retryAt && !force) return;        // busy/full/offline: wait a little
      core.inFlight = {at: now};
      core.pipe.offer(core.route, core.queue.slice(0, 200), !!force);
    },
    received(data) {
      // the pipe may have sent the next actions already (`sending`): one is in flight
      core.inFlight = data.sending ? {at: host.now()} : null;
      const acked = new Set(data.acks || []);
      const refusedIds = new Set((data.rejected || []).map((r) => r.id));
      let redraw = false;
      const moves = new Set((data.moved || []).map((m) => m.id));
      // when the last key pressed was a move that is now saved: nothing to wait for
      const lastWasMove = moves.size > 0 && !core.queue.some((a) => !acked.has(a.id)) &&
        core.queue.some((a) => moves.has(a.id) && a.t === core.lastPush);
      if (acked.size) {
        const at = core.redrawNonce();
        // a refused action is forgotten, never shown as saved
        for (const a of core.queue) {
          if (acked.has(a.id) && !refusedIds.has(a.id)) core.settled.push({action: a, at});
        }
        core.settled = core.settled.slice(-500);
        core.queue = core.queue.filter((a) => !acked.has(a.id));
        core.save();
        redraw = true;
      }
      for (const r of data.rejected || []) {
        core.refused.push(String(r.message || "refused"));
        core.refusedAt = host.now();
      }
      core.refused = core.refused.slice(-5);
      for (const u of data.undone || []) {  // what an undo or redo reverted (once per id)
        if (core.reverted.has(u.id)) continue;
        core.reverted.add(u.id);
        for (const fn of core.revertListeners) { try { fn(u); } catch (e) { /* ignore */ } }
      }
      for (const m of data.moved || []) {
        for (const fn of core.moveListeners) { try { fn(m); } catch (e) { /* ignore */ } }
      }
      for (const t of data.told || []) {
        if (core.told.has(t.id)) continue;
        core.told.add(t.id);
        for (const fn of core.tellListeners) { try { fn(t); } catch (e) { /* ignore */ } }
      }
      core.error = data.error || null;
      if (core.error === "offline") {  // no answer at all: the server is down or restarting
        core.error = null;
        core.backoff = Math.min(2000, core.backoff ? core.backoff * 2 : 250);
        core.retryAt = host.now() + core.backoff;
      } else {
        core.answeredAt = host.now();
        if (core.error) {
          core.backoff = Math.min(10000, core.backoff ? core.backoff * 2 : 500);
          core.retryAt = host.now() + core.backoff;
        } else {
          core.backoff = 0;
          core.retryAt = 0;
        }
      }
      // after a move the page draws the new place at once (the annotator has to read it),
      // or MOVE_PAUSE_MS after the keys that came after it; else once the keys pause
      if (redraw && lastWasMove) core.redraw();
      else if (redraw) core.redrawSoon(moves.size ? MOVE_PAUSE_MS : QUIET_MS);
      core.notify();
      if (core.queue.length && !core.error && host.now() >= core.retryAt) core.send();
    },
    tick() {
      // resend what is pending: the last send got no answer in 3 s (a frozen server: the
      // request is aborted at 2.5 s), or a wait after an error is over. Never gives up.
      const now = host.now();
      if (core.inFlight && now - core.inFlight.at > 3000) core.inFlight = null;
      if (core.queue.length && !core.inFlight && now >= core.retryAt) core.send(true);
      if (core.queue.length) core.save();  // heartbeat: this tab still owns its queue
      core.notify();
    },
  };
}
