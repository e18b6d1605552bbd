// @ts-check
// What the outbox says (js/outbox_core.js): how many actions are not saved yet (the keys
// the page scripts hold count too, a move on its way does not), why, or the last refusal
// for REFUSAL_MS; and the badge that shows it, bottom right on every page, our own text
// only: "all saved" fades out.
/** @typedef {import("./outbox_core.js").Core} Core */
/** @typedef {import("./outbox_core.js").Status} Status */

const REFUSAL_MS = 10000;
/** @type {Record<string, string>} */
const WHY = {busy: "the database is busy, retrying", full: "the disk is full, retrying",
             failed: "the server could not save, retrying",
             signin: "sign in again to save them",
             noroute: "this server takes no key actions: start it with `make run`"};

/**
 * The core's status methods.
 * @param {Core} core
 * @returns {Pick<Core, "held" | "status" | "notify">}
 */
export function telling(core) {
  const host = core.host;
  return {
    held() {
      let n = 0;
      for (const fn of core.heldCounters) { try { n += fn() || 0; } catch (e) { /* ignore */ } }
      return n;
    },
    status() {
      // what is not saved yet: the labels, verdicts... pending and the keys held (a move
      // on its way is no unsaved work: it is sent like them, but not counted)
      const n = core.queue.filter((a) => a.kind !== "move").length + core.held();
      if (!n && core.refused.length && host.now() - core.refusedAt < REFUSAL_MS) {
        const last = core.refused[core.refused.length - 1];
        const text = `✕ not saved: ${last.length > 160 ? last.slice(0, 159) + "…" : last}`;
        return {n, text, kind: "error", refused: true};
      }
      if (!n) return {n, text: "✓ all saved", kind: "ok"};
      const now = host.now();  // an action waiting 5 s with no answer from the server
      const silent = core.queue.length > 0 && now - core.answeredAt > 5000 &&
        now - (core.queue[0].t || now) > 5000;
      const why = WHY[core.error || ""] || (silent ? "waiting for the server" : "");
      const text = `⏳ ${n} not saved yet` + (why ? ` · ${why}` : "");
      return {n, text, kind: core.error || silent ? "error" : "pending"};
    },
    notify() {
      for (const fn of core.listeners) { try { fn(core.status()); } catch (e) { /* ignore */ } }
    },
  };
}

/** @type {Record<string, string>} */
const BACKGROUND = {ok: "#dcfce7", pending: "#fff7ed", error: "#fee2e2"};
/** @type {Record<string, string>} */
const COLOUR = {ok: "#166534", pending: "#9a3412", error: "#991b1b"};

/**
 * The badge: bottom right, on every page, painted on every status the core tells.
 * @param {Core} core
 */
export function paintBadge(core) {
  const badge = document.createElement("div");
  badge.id = "nw-save-status";
  badge.setAttribute("role", "status");
  badge.setAttribute("aria-live", "polite");
  badge.style.cssText = "position:fixed;right:14px;bottom:12px;z-index:999990;padding:4px 10px;" +
    "border-radius:12px;font:13px/1.4 system-ui,sans-serif;box-shadow:0 1px 4px rgba(0,0,0,.15);" +
    "pointer-events:none;transition:opacity .3s;max-width:min(60vw,640px)";
  document.body.appendChild(badge);
  const fade = document.createElement("style");
  fade.textContent = "@keyframes nw-badge-fade{to{opacity:0}}";
  document.head.appendChild(fade);
  let shown = "";
  /** @param {Status} s */
  const paint = (s) => {
    // the tick calls this every second: write only a change (each write restyles the page)
    const now = [s.text, s.n, s.refused ? 1 : 0, s.kind].join("\n");
    if (now === shown) return;
    shown = now;
    badge.textContent = s.text;
    badge.dataset.pending = String(s.n);
    badge.dataset.refused = s.refused ? "1" : "";
    badge.style.background = BACKGROUND[s.kind];
    badge.style.color = COLOUR[s.kind];
    badge.style.opacity = s.kind === "ok" ? "0.75" : "1";
    // "all saved" fades after a moment (a CSS animation: the page is not written to
    // again), so the badge covers no text of the page while nothing is being saved;
    // saving and refusals stay until they change
    badge.style.animation = s.kind === "ok" ? "nw-badge-fade .3s ease 3s forwards" : "none";
  };
  core.listeners.add(paint);
  paint(core.status());
}
