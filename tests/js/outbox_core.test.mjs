// The outbox core (components/js/outbox_core.js) under node, with a fake fetch, a fake
// clock and in-memory storage (its Host, components/js/host.js): what it sends to the
// action route, what it keeps, what it forgets, how it waits after each kind of failure.
// Run by tests/test_outbox_core_js.py.
import assert from "node:assert";
import {webcrypto} from "node:crypto";
import vm from "node:vm";
import {createCore} from "../../components/js/outbox_core.js";
import {workerSource} from "../../components/js/outbox_pipe.js";
import {run} from "./tap.mjs";

function world({store = new Map(), session = new Map()} = {}) {
  const storage = {
    getItem: (k) => (store.has(k) ? store.get(k) : null),
    setItem: (k, v) => store.set(k, String(v)),
    removeItem: (k) => store.delete(k),
    key: (i) => Array.from(store.keys())[i],
    get length() { return store.size; },
  };
  const w = {now: 1_000_000, posts: [], replies: [], redraws: [], timers: []};
  const host = {
    now: () => w.now,
    localStorage: storage,
    sessionStorage: {getItem: (k) => (session.has(k) ? session.get(k) : null),
                     setItem: (k, v) => session.set(k, String(v))},
    setInterval: () => 0,
    setTimeout: (fn, ms) => { w.timers.push({fn, at: w.now + ms}); return w.timers.length + 1000 * w.now; },
    clearTimeout: () => {},
    random: (words) => { webcrypto.getRandomValues(words); },
    fetch: (url, init) => new Promise((resolve, reject) => {
      w.posts.push({url, body: JSON.parse(init.body)});
      w.replies.push({resolve, reject});
    }),
    AbortController, Worker: undefined, document: {}, location: undefined, history: undefined,
    onPage: () => {},
  };
  const core = createCore(host);
  core.attach((name, value) => w.redraws.push(value), {route: "/_nw/actions", tab: core.tab});
  w.core = core;
  w.reply = async (i, status, body) => {
    w.replies[i].resolve({ok: status >= 200 && status < 300, status, json: async () => body});
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
  };
  w.fail = async (i) => {
    w.replies[i].reject(new Error("connection refused"));
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
  };
  w.store = store;
  w.advance = (ms) => {  // the fake clock moves on; timers due by then run, in order
    const until = w.now + ms;
    for (;;) {
      const due = w.timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      w.timers.splice(w.timers.indexOf(due), 1);
      w.now = Math.max(w.now, due.at);
      due.fn();
    }
    w.now = until;
  };
  return w;
}

const label = (n) => ({kind: "set", dataset: "g", item: "q1", annotator: "ana",
                       field: `label:${n}`, value: "OUTDATED"});

const tests = {
  async "one press: posted at once, kept until acknowledged, then a redraw"() {
    const w = world();
    const a = w.core.push(label(1));
    assert.strictEqual(w.posts.length, 1);
    assert.deepStrictEqual(w.posts[0].body.actions.map((x) => x.id), [a.id]);
    assert.strictEqual(w.core.status().text, "⏳ 1 not saved yet");
    assert.ok(Array.from(w.store.keys()).some((k) => k.startsWith("nw-pending:")));
    await w.reply(0, 200, {acks: [a.id], rejected: [], undone: [], told: [], error: null});
    assert.strictEqual(w.core.queue.length, 0);
    assert.strictEqual(w.core.status().text, "✓ all saved");
    assert.strictEqual(w.redraws.length, 0);  // the rerun waits until the keys pause
    w.advance(350);
    assert.strictEqual(w.redraws.length, 1);
    // shown as saved until data drawn for that redraw arrives
    assert.strictEqual(w.core.overlay(() => true).length, 1);
    const at = w.core.settled[0].at;  // a rerun asked for before the acknowledgement
    w.core.forget(at - 1);
    assert.strictEqual(w.core.overlay(() => true).length, 1);
    w.core.forget(w.redraws[0].nonce);
    assert.strictEqual(w.core.overlay(() => true).length, 0);
    assert.ok(!Array.from(w.store.keys()).some((k) => k.startsWith("nw-pending:")));
  },
  async "presses while a post is in flight go in the next one, in order"() {
    const w = world();
    const a = w.core.push(label(1));
    const b = w.core.push(label(2));
    const c = w.core.push(label(3));
    assert.strictEqual(w.posts.length, 1);
    await w.reply(0, 200, {acks: [a.id], error: null});
    assert.strictEqual(w.posts.length, 2);
    assert.deepStrictEqual(w.posts[1].body.actions.map((x) => x.id), [b.id, c.id]);
  },
  async "the next press goes out the moment the answer comes, before the page handles it"() {
    const w = world();
    const a = w.core.push(label(1));
    const b = w.core.push(label(2));
    let postsWhenHandled = null;
    const received = w.core.received.bind(w.core);
    w.core.received = (data) => { postsWhenHandled = w.posts.length; return received(data); };
    await w.reply(0, 200, {acks: [a.id], error: null});
    assert.strictEqual(postsWhenHandled, 2);
    assert.deepStrictEqual(w.posts[1].body.actions.map((x) => x.id), [b.id]);
    assert.ok(w.core.inFlight);  // and the page knows one is in flight: no resend
    w.core.tick();
    assert.strictEqual(w.posts.length, 2);
  },
  async "answers the page never read: the same actions are sent again, and kept till read"() {
    const w = world();
    const received = w.core.received.bind(w.core);
    w.core.received = () => {};  // the answers are lost on the way to the page
    const a = w.core.push(label(1));
    await w.reply(0, 200, {acks: [a.id], error: null});
    w.now += 3100;
    w.core.tick();  // nothing heard for 3 s: sent again, whatever the pipe saw
    assert.strictEqual(w.posts.length, 2);
    assert.deepStrictEqual(w.posts[1].body.actions.map((x) => x.id), [a.id]);
    w.core.received = received;
    await w.reply(1, 200, {acks: [a.id], error: null});
    assert.strictEqual(w.core.queue.length, 0);
  },
  async "keys typed without a pause: one redraw, after the last answer and the pause"() {
    const w = world();
    for (let i = 0; i < 5; i += 1) {
      const a = w.core.push(label(i + 1));
      await w.reply(w.posts.length - 1, 200, {acks: [a.id], error: null});
      w.advance(150);
    }
    assert.strictEqual(w.redraws.length, 0);
    w.advance(200);
    assert.strictEqual(w.redraws.length, 1);
    assert.strictEqual(w.core.overlay(() => true).length, 5);  // shown saved meanwhile
    w.core.forget(w.redraws[0].nonce);
    assert.strictEqual(w.core.overlay(() => true).length, 0);
  },
  async "a refusal is said, never shown as saved"() {
    const w = world();
    const a = w.core.push(label(1));
    await w.reply(0, 200, {acks: [a.id], rejected: [{id: a.id, message: "not assigned to ana"}],
                           error: null});
    assert.strictEqual(w.core.overlay(() => true).length, 0);
    assert.strictEqual(w.core.status().text, "✕ not saved: not assigned to ana");
    w.now += 11_000;
    assert.strictEqual(w.core.status().text, "✓ all saved");
  },
  async "a busy database: kept, said, sent again after a growing wait"() {
    const w = world();
    w.core.push(label(1));
    await w.reply(0, 200, {acks: [], error: "busy"});
    assert.strictEqual(w.core.queue.length, 1);
    assert.match(w.core.status().text, /database is busy/);
    w.core.tick();
    assert.strictEqual(w.posts.length, 1);  // not before the wait is over
    w.now += 600;
    w.core.tick();
    assert.strictEqual(w.posts.length, 2);
    await w.reply(1, 200, {acks: [], error: "full"});
    assert.match(w.core.status().text, /disk is full/);
    assert.ok(w.core.backoff > 500);
  },
  async "a server error (a bug, 500): every action kept, said, sent again"() {
    const w = world();
    const a = w.core.push(label(1));
    const b = w.core.push(label(2));
    await w.reply(0, 500, {error: "internal", message: "the server could not save"});
    assert.deepStrictEqual(w.core.queue.map((x) => x.id), [a.id, b.id]);
    assert.match(w.core.status().text, /server could not save, retrying/);
    w.now += 600;
    w.core.tick();
    assert.strictEqual(w.posts.length, 2);
    assert.deepStrictEqual(w.posts[1].body.actions.map((x) => x.id), [a.id, b.id]);
    await w.reply(1, 200, {acks: [a.id, b.id], error: null});
    assert.strictEqual(w.core.queue.length, 0);
    assert.strictEqual(w.core.status().text, "✓ all saved");
  },
  async "a server that is down: no answer counts as offline, retried, never dropped"() {
    const w = world();
    w.core.push(label(1));
    await w.fail(0);
    assert.strictEqual(w.core.queue.length, 1);
    for (let i = 0; i < 20; i += 1) {
      w.now += 2000;
      w.core.tick();
      if (w.posts.length > i + 1) await w.fail(w.posts.length - 1);
    }
    assert.ok(w.posts.length >= 10);
    assert.match(w.core.status().text, /waiting for the server/);
    const last = w.posts.length - 1;
    w.now += 2000;
    w.core.tick();
    await w.reply(w.posts.length - 1, 200, {acks: [w.core.queue[0].id], error: null});
    assert.strictEqual(w.core.queue.length, 0);
    assert.ok(last >= 0);
  },
  async "signed out: kept and said, not refused"() {
    const w = world();
    w.core.push(label(1));
    await w.reply(0, 401, {error: "signin"});
    assert.strictEqual(w.core.queue.length, 1);
    assert.match(w.core.status().text, /sign in again/);
  },
  async "a frozen server: the post is given up after 2.5 s and sent again"() {
    const w = world();
    w.core.push(label(1));
    w.now += 3100;
    w.core.tick();
    assert.strictEqual(w.posts.length, 2);
    assert.deepStrictEqual(w.posts[1].body.actions, w.posts[0].body.actions);
  },
  async "keys a page holds count as not saved"() {
    const w = world();
    let held = 2;
    w.core.heldCounters.add(() => held);
    assert.strictEqual(w.core.status().text, "⏳ 2 not saved yet");
    held = 0;
    assert.strictEqual(w.core.status().text, "✓ all saved");
  },
  async "a reload keeps the tab's id; a duplicated tab gets its own"() {
    const store = new Map();
    const first = world({store, session: new Map([["nw-tab", "tababc123"]])});
    assert.strictEqual(first.core.tab, "tababc123");
    // a duplicated tab: the session storage is copied while the first page is alive
    const copy = world({store, session: new Map([["nw-tab", "tababc123"]])});
    assert.notStrictEqual(copy.core.tab, "tababc123");
    // the first page goes (a reload): its beat is cleared, the reloaded page keeps the id
    store.delete("nw-live:tababc123");
    const again = world({store, session: new Map([["nw-tab", "tababc123"]])});
    assert.strictEqual(again.core.tab, "tababc123");
  },
  async "a page that does not know the tab yet is told once, with the tab's id"() {
    const w = world();
    assert.strictEqual(w.redraws.length, 0);
    w.core.attach((name, value) => w.redraws.push(value), {route: "/_nw/actions", tab: null});
    w.core.attach((name, value) => w.redraws.push(value), {route: "/_nw/actions", tab: null});
    assert.strictEqual(w.redraws.length, 1);
    assert.strictEqual(w.redraws[0].tab, w.core.tab);
    assert.strictEqual(w.posts.length, 0);
    w.advance(2100);  // still unknown later (a restarted server): told again
    w.core.attach((name, value) => w.redraws.push(value), {route: "/_nw/actions", tab: null});
    assert.strictEqual(w.redraws.length, 2);
  },
  async "a move is an action: its seq goes to the listeners, the redraw follows soon"() {
    const w = world();
    const seen = [];
    w.core.moveListeners.add((m) => seen.push(m));
    const a = w.core.push({kind: "move", tab: w.core.tab, page: "annotate", dataset: "g",
                           item: "q2", cursor: 1});
    assert.strictEqual(w.posts.length, 1);
    assert.strictEqual(w.core.status().text, "✓ all saved");  // a move is no unsaved work
    await w.reply(0, 200, {acks: [a.id], moved: [{id: a.id, seq: 42}]});
    assert.deepStrictEqual(seen, [{id: a.id, seq: 42}]);
    assert.strictEqual(w.redraws.length, 1);  // the last key was the move: drawn at once
    assert.strictEqual(w.redraws[0].tab, w.core.tab);
    // a move followed by a label: the redraw waits until the keys pause MOVE_PAUSE_MS
    const b = w.core.push({kind: "move", tab: w.core.tab, page: "annotate", dataset: "g",
                           item: "q3", cursor: 1});
    w.now += 10;
    const c = w.core.push(label(1));
    await w.reply(1, 200, {acks: [b.id, c.id], moved: [{id: b.id, seq: 43}]});
    assert.strictEqual(w.redraws.length, 1);
    w.advance(80);
    assert.strictEqual(w.redraws.length, 1);
    w.advance(30);  // MOVE_PAUSE_MS after the last key, not QUIET_MS
    assert.strictEqual(w.redraws.length, 2);
  },
  async "the Web Worker's code: it posts and answers, calling fetch and timers as the browser allows"() {
    // the browser's fetch and timers throw "Illegal invocation" when called as a method of
    // another object: here they throw too
    const plain = (name, fn) => function (...args) {
      if (this !== undefined && this !== context) throw new TypeError(`Illegal invocation of ${name}`);
      return fn(...args);
    };
    const posted = [];
    const answers = [];
    const context = vm.createContext({
      fetch: plain("fetch", (url, init) => {
        posted.push({url, body: JSON.parse(init.body)});
        return Promise.resolve({ok: true, status: 200, json: async () => ({acks: ["a1"]})});
      }),
      setTimeout: plain("setTimeout", () => 1), clearTimeout: plain("clearTimeout", () => {}),
      AbortController, postMessage: (data) => answers.push(data),
    });
    vm.runInContext(workerSource(), context);
    context.onmessage({data: {route: "http://x/_nw/actions", batch: [{id: "a1"}], force: false}});
    for (let k = 0; k < 5; k += 1) await new Promise((r) => setImmediate(r));
    assert.deepStrictEqual(posted, [{url: "http://x/_nw/actions", body: {actions: [{id: "a1"}]}}]);
    assert.deepStrictEqual(answers.map((a) => [a.acks, a.sending, a.error]), [[["a1"], false, undefined]]);
  },
};

await run(tests);
