// The browser's outbox: every key action waits here until the server acknowledges it.
//
// Actions are kept in localStorage (one key per tab, adopted by another tab when the
// tab that made them is gone), POSTed to the server's action route (the route's path
// comes with the outbox component's data), and dropped only when the response names
// their id as applied, unchanged or refused. A response then asks for a rerun through
// the outbox component's state (the tab's id and a redraw nonce): the rerun only draws
// what is saved, at the place the server holds for this tab (moves are actions too:
// needlework/actions/positions.py). A refused action is
// never shown as saved: the badge says why, in the server's sentence, for REFUSAL_MS.
// Everything is written as text (textContent), never as HTML.
const nwCore = (() => {
  if (window.__nwCore) return window.__nwCore;
  const PREFIX = "nw-pending:";
  const REFUSAL_MS = 10000;
  // an acknowledged action is shown saved at once (the key scripts paint it from
  // `settled`); the page's rerun that draws it waits until the keys pause this long, so
  // that reruns (the server's and the browser's heaviest work) do not slow the next keys
  const QUIET_MS = 300;
  // the focus is in a select box's input (typing filters its list)
  const choosing = () => {
    const a = typeof document === "undefined" ? null : document.activeElement;
    return !!(a && a.tagName === "INPUT" && a.closest && a.closest(nwDom.SELECTBOX));
  };
  const MOVE_PAUSE_MS = 100;
  const rand = () => {
    const a = new Uint32Array(3);
    crypto.getRandomValues(a);
    return Array.from(a, (x) => x.toString(36)).join("");
  };
  // this tab's id: kept in its session storage (a reload keeps it), and made anew when
  // another live page has it (a duplicated tab copies the session storage): each page
  // beats "nw-live:ID" in the shared storage every second and clears it when it goes
  const LIVE = "nw-live:";
  const load = rand();
  const taken = (id) => {
    try {
      const v = JSON.parse(localStorage.getItem(LIVE + id) || "null");
      return !!v && v.load !== load && Date.now() - (v.at || 0) < 2500;
    } catch (e) { return false; }
  };
  let tab = null;
  try { tab = sessionStorage.getItem("nw-tab"); } catch (e) { /* storage off */ }
  if (!tab || taken(tab)) {
    tab = rand();
    try { sessionStorage.setItem("nw-tab", tab); } catch (e) { /* storage off */ }
  }
  const beat = () => {
    try { localStorage.setItem(LIVE + tab, JSON.stringify({load, at: Date.now()})); } catch (e) { /* */ }
  };
  beat();
  setInterval(beat, 1000);
  if (typeof addEventListener === "function") {
    addEventListener("pagehide", () => {
      try { localStorage.removeItem(LIVE + tab); } catch (e) { /* storage off */ }
    });
  }
  const mine = PREFIX + tab;
  // One POST at a time to the action route; actions offered meanwhile go out the moment
  // its answer comes, before the page gets to it (a page busy drawing a rerun would
  // otherwise hold the next keys back). After an error the page decides when to retry.
  // In a Web Worker when the browser has them (its own thread), else on the page.
  function pipeline(post, deliver) {
    let busy = false;
    let next = null;
    const start = (route, batch, acked) => {
      batch = batch.filter((a) => !acked.has(a.id));
      if (!batch.length) return false;
      busy = true;
      post(route, batch).then((data) => {
        busy = false;
        const waiting = next;
        next = null;
        const sending = !!(waiting && !data.error &&
                           start(waiting.route, waiting.batch, new Set(data.acks || [])));
        deliver(Object.assign({}, data, {sending}));
      });
      return true;
    };
    return {
      offer(route, batch, force) {
        if (busy && !force) { next = {route, batch}; return; }
        start(route, batch, new Set());
      },
    };
  }
  function post(route, batch) {
    const abort = typeof AbortController === "function" ? new AbortController() : null;
    const timer = setTimeout(() => { if (abort) abort.abort(); }, 2500);
    return fetch(route, {
      method: "POST", headers: {"Content-Type": "application/json"}, cache: "no-store",
      credentials: "same-origin", body: JSON.stringify({actions: batch}),
      signal: abort ? abort.signal : undefined,
    }).then(async (r) => {
      let data = {};
      try { data = await r.json(); } catch (e) { data = {}; }
      if (!r.ok) {
        data = {error: {401: "signin", 404: "noroute", 413: "failed", 429: "busy"}[r.status] ||
                       (r.status >= 500 ? "failed" : data.error || "failed")};
      }
      return data;
    }, () => ({error: "offline"})).then((data) => { clearTimeout(timer); return data || {}; });
  }
  function makePipe(deliver) {
    try {
      if (typeof Worker === "function" && typeof Blob === "function" && typeof URL === "function") {
        const source = `const pipeline = ${pipeline.toString()};\nconst post = ${post.toString()};\n` +
          "const pipe = pipeline(post, (data) => postMessage(data));\n" +
          "onmessage = (e) => pipe.offer(e.data.route, e.data.batch, e.data.force);\n";
        const worker = new Worker(URL.createObjectURL(new Blob([source], {type: "text/javascript"})));
        worker.onmessage = (e) => deliver(e.data || {});
        return {
          offer(route, batch, force) {
            worker.postMessage({route: new URL(route, location.href).href, batch, force});
          },
        };
      }
    } catch (e) { /* no workers here: the page sends */ }
    return pipeline(post, deliver);
  }
  const read = (key) => {
    try { return JSON.parse(localStorage.getItem(key) || "null"); } catch (e) { return null; }
  };
  const core = {
    queue: (read(mine) || {}).queue || [],
    settled: [],         // acknowledged, but maybe not yet in the page's data: {action, at}
    tab,                 // this tab's id (its session storage): the server keeps its position
    nonce: 0,            // the last redraw asked for (the outbox state's nonce)
    drawn: 0,            // the last redraw a rerun answered
    setState: null,
    route: null,         // the action route (from the outbox component's data)
    inFlight: null,      // {at} of the last POST not yet answered
    error: null,         // "busy" | "full" | "failed" from the last answer
    retryAt: 0,
    backoff: 0,
    refused: [],         // messages of refused actions, newest last
    refusedAt: 0,        // when the last refusal came (the badge says it for REFUSAL_MS)
    answeredAt: Date.now(),
    listeners: new Set(),
    revertListeners: new Set(),
    moveListeners: new Set(),  // a move's outcome: {id, seq} (seq 0: refused)
    reverted: new Set(),
    tellListeners: new Set(),  // what an action's outcome says to the person (once per id)
    heldCounters: new Set(),   // the page scripts' keys held until their place is shown
    told: new Set(),
    counter: 0,
    redrawTimer: null,
    redrawPause: 0,
    toldTab: 0,
    lastPush: 0,
    save() {
      try {
        if (this.queue.length) {
          localStorage.setItem(mine, JSON.stringify({at: Date.now(), queue: this.queue}));
        } else {
          localStorage.removeItem(mine);
        }
      } catch (e) { /* storage full or off: the queue is still in memory */ }
    },
    adopt() {
      // actions left by a tab that is gone (its heartbeat is older than 20 s)
      let keys = [];
      try { keys = Object.keys(localStorage).filter((k) => k.startsWith(PREFIX) && k !== mine); }
      catch (e) { return; }
      const have = new Set(this.queue.map((a) => a.id));
      let changed = false;
      for (const key of keys) {
        const other = read(key);
        if (!other || Date.now() - (other.at || 0) < 20000) continue;
        for (const a of other.queue || []) {
          if (!have.has(a.id)) { this.queue.push(a); have.add(a.id); changed = true; }
        }
        try { localStorage.removeItem(key); } catch (e) { /* ignore */ }
      }
      if (changed) {
        this.queue.sort((a, b) => (a.t || 0) - (b.t || 0));
        this.save();
      }
    },
    newId() {
      this.counter += 1;
      return `${Date.now().toString(36)}-${tab.slice(0, 8)}-${this.counter}-${rand().slice(0, 6)}`;
    },
    push(action) {
      action.id = action.id || this.newId();
      action.t = Date.now();
      this.lastPush = action.t;
      this.queue.push(action);
      this.save();
      this.notify();
      this.send();
      return action;
    },
    link(params) {
      // keep the address on where the tab is: a reload, or the address copied, opens there
      // (the server reads it only when a page opens)
      try {
        const url = new URL(location.href);
        for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));
        history.replaceState(history.state, "", url.toString());
      } catch (e) { /* no history here */ }
    },
    pending() { return this.queue.length; },
    // an element's text, written only when it differs: the tick repaints every second, and
    // each write restyles the whole page
    setText(el, text) { if (el.textContent !== text) el.textContent = text; },
    // the name this browser remembers (js/name_memory.js, local mode): the key scripts
    // use it while the session has none for a moment (a server restart), so that keys
    // are neither lost nor typed into the name field; "" when the person emptied it
    remembered() {
      try { return (localStorage.getItem("nw-annotator") || "").trim(); } catch (e) { return ""; }
    },
    pendingFor(predicate) { return this.queue.filter(predicate); },
    // actions whose effect the page's data may not show yet: acknowledged ones until
    // data drawn after their acknowledgement arrives (forget), then the pending ones
    overlay(predicate) {
      return this.settled.map((s) => s.action).concat(this.queue).filter(predicate);
    },
    forget(seen) {
      const n = Number(seen) || 0;
      this.settled = this.settled.filter((s) => s.at > n);
    },
    attach(setState, data) {
      this.setState = setState;
      if (data && data.route) this.route = data.route;
      // the server does not know this tab yet (a new page, a restarted server): tell it
      if (data && data.tab !== tab && Date.now() - this.toldTab > 2000) {
        this.toldTab = Date.now();
        this.redraw();
      }
      if (this.queue.length) this.send(true);
    },
    redrawSoon(pause = QUIET_MS) {
      // a rerun once the keys pause (`pause` ms with no new action and none in flight),
      // and no select box is being typed into: a rerun that redraws it takes its focus
      // (V then Q 7: the category list would lose the letters typed to filter it, and
      // they would act as keys)
      this.redrawPause = Math.min(pause, this.redrawTimer ? this.redrawPause : pause);
      if (this.redrawTimer) return;
      const wait = () => {
        const quiet = Date.now() - this.lastPush;
        const sending = this.queue.length && !this.error && Date.now() >= this.retryAt;
        if (sending || this.inFlight || quiet < this.redrawPause || choosing()) {
          this.redrawTimer = setTimeout(wait, Math.max(20, this.redrawPause - quiet));
          return;
        }
        this.redrawTimer = null;
        this.redraw();
      };
      this.redrawTimer = setTimeout(wait, 0);  // wait() measures the pause itself
    },
    redraw() {
      // ask for a rerun: the page draws what is saved, where the server has this tab
      if (this.redrawTimer) { clearTimeout(this.redrawTimer); this.redrawTimer = null; }
      if (!this.setState) return this.nonce;
      this.nonce = Math.max(this.nonce + 1, Date.now());
      // named: this browser remembers an annotator name (local mode), which the name
      // memory types into the session: a page opening waits for it to resume
      try {
        this.setState("outbox", {tab, nonce: this.nonce, named: !!this.remembered()});
      } catch (e) { /* */ }
      return this.nonce;
    },
    send(force) {
      if (!this.route || !this.queue.length) return;
      const now = Date.now();
      if (this.inFlight && !force) {                  // the pipe sends them after its answer
        this.pipe.offer(this.route, this.queue.slice(0, 200), false);
        return;
      }
      if (now < this.retryAt && !force) return;        // busy/full/offline: wait a little
      this.inFlight = {at: now};
      this.pipe.offer(this.route, this.queue.slice(0, 200), !!force);
    },
    received(data) {
      // the pipe may have sent the next actions already (`sending`): one is in flight
      this.inFlight = data.sending ? {at: Date.now()} : null;
      const acked = new Set(data.acks || []);
      const refusedIds = new Set((data.rejected || []).map((r) => r.id));
      let redraw = false;
      const moves = new Set((data.moved || []).map((m) => m.id));
      // when the last key pressed was a move that is now saved: nothing to wait for
      const lastWasMove = moves.size > 0 && !this.queue.some((a) => !acked.has(a.id)) &&
        this.queue.some((a) => moves.has(a.id) && a.t === this.lastPush);
      if (acked.size) {
        const at = this.redrawNonce();
        // a refused action is forgotten, never shown as saved
        for (const a of this.queue) {
          if (acked.has(a.id) && !refusedIds.has(a.id)) this.settled.push({action: a, at});
        }
        this.settled = this.settled.slice(-500);
        this.queue = this.queue.filter((a) => !acked.has(a.id));
        this.save();
        redraw = true;
      }
      for (const r of data.rejected || []) {
        this.refused.push(String(r.message || "refused"));
        this.refusedAt = Date.now();
      }
      this.refused = this.refused.slice(-5);
      for (const u of data.undone || []) {  // what an undo or redo reverted (once per id)
        if (this.reverted.has(u.id)) continue;
        this.reverted.add(u.id);
        for (const fn of this.revertListeners) { try { fn(u); } catch (e) { /* ignore */ } }
      }
      for (const m of data.moved || []) {
        for (const fn of this.moveListeners) { try { fn(m); } catch (e) { /* ignore */ } }
      }
      for (const t of data.told || []) {
        if (this.told.has(t.id)) continue;
        this.told.add(t.id);
        for (const fn of this.tellListeners) { try { fn(t); } catch (e) { /* ignore */ } }
      }
      this.error = data.error || null;
      if (this.error === "offline") {  // no answer at all: the server is down or restarting
        this.error = null;
        this.backoff = Math.min(2000, this.backoff ? this.backoff * 2 : 250);
        this.retryAt = Date.now() + this.backoff;
      } else {
        this.answeredAt = Date.now();
        if (this.error) {
          this.backoff = Math.min(10000, this.backoff ? this.backoff * 2 : 500);
          this.retryAt = Date.now() + this.backoff;
        } else {
          this.backoff = 0;
          this.retryAt = 0;
        }
      }
      // after a move the page draws the new place at once (the annotator has to read it),
      // or MOVE_PAUSE_MS after the keys that came after it; else once the keys pause
      if (redraw && lastWasMove) this.redraw();
      else if (redraw) this.redrawSoon(moves.size ? MOVE_PAUSE_MS : QUIET_MS);
      this.notify();
      if (this.queue.length && !this.error && Date.now() >= this.retryAt) this.send();
    },
    redrawNonce() {
      // the nonce the next redraw will carry: data drawn for it includes these actions
      return Math.max(this.nonce + 1, Date.now());
    },
    answer(data) {
      // the rerun says which redraw it is (nothing to acknowledge: the route does that)
      if (data && data.seen) this.drawn = Math.max(this.drawn || 0, Number(data.seen) || 0);
    },
    tick() {
      // resend what is pending: the last send got no answer in 3 s (a frozen server: the
      // request is aborted at 2.5 s), or a wait after an error is over. Never gives up.
      const now = Date.now();
      if (this.inFlight && now - this.inFlight.at > 3000) this.inFlight = null;
      if (this.queue.length && !this.inFlight && now >= this.retryAt) this.send(true);
      if (this.queue.length) this.save();  // heartbeat: this tab still owns its queue
      this.notify();
    },
    held() {
      let n = 0;
      for (const fn of this.heldCounters) { try { n += fn() || 0; } catch (e) { /* ignore */ } }
      return n;
    },
    status() {
      // what is not saved yet: the labels, verdicts... pending and the keys held (a move
      // on its way is no unsaved work: it is sent like them, but not counted)
      const n = this.queue.filter((a) => a.kind !== "move").length + this.held();
      if (!n && this.refused.length && Date.now() - this.refusedAt < REFUSAL_MS) {
        const last = this.refused[this.refused.length - 1];
        const text = `✕ not saved: ${last.length > 160 ? last.slice(0, 159) + "…" : last}`;
        return {n, text, kind: "error", refused: true};
      }
      if (!n) return {n, text: "✓ all saved", kind: "ok"};
      const now = Date.now();  // an action waiting 5 s with no answer from the server
      const silent = this.queue.length > 0 && now - this.answeredAt > 5000 &&
        now - (this.queue[0].t || now) > 5000;
      const why = {busy: "the database is busy, retrying", full: "the disk is full, retrying",
                   failed: "the server could not save, retrying",
                   signin: "sign in again to save them",
                   noroute: "this server takes no key actions: start it with `make run`"}[this.error] ||
                  (silent ? "waiting for the server" : "");
      const text = `⏳ ${n} not saved yet` + (why ? ` · ${why}` : "");
      return {n, text, kind: this.error || silent ? "error" : "pending"};
    },
    notify() {
      for (const fn of this.listeners) { try { fn(this.status()); } catch (e) { /* ignore */ } }
    },
  };
  core.pipe = makePipe((data) => core.received(data));
  window.__nwCore = core;
  core.adopt();
  // the badge: bottom right, on every page; our own text only; "all saved" fades out
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
  const paint = (s) => {
    // the tick calls this every second: write only a change (each write restyles the page)
    const now = [s.text, s.n, s.refused ? 1 : 0, s.kind].join("\n");
    if (now === shown) return;
    shown = now;
    badge.textContent = s.text;
    badge.dataset.pending = String(s.n);
    badge.dataset.refused = s.refused ? "1" : "";
    badge.style.background = {ok: "#dcfce7", pending: "#fff7ed", error: "#fee2e2"}[s.kind];
    badge.style.color = {ok: "#166534", pending: "#9a3412", error: "#991b1b"}[s.kind];
    badge.style.opacity = s.kind === "ok" ? "0.75" : "1";
    // "all saved" fades after a moment (a CSS animation: the page is not written to
    // again), so the badge covers no text of the page while nothing is being saved;
    // saving and refusals stay until they change
    badge.style.animation = s.kind === "ok" ? "nw-badge-fade .3s ease 3s forwards" : "none";
  };
  core.listeners.add(paint);
  paint(core.status());
  setInterval(() => core.tick(), 1000);
  setInterval(() => core.adopt(), 10000);
  return core;
})();
