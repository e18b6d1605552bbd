// The key scripts' navigator (components/js/navigator_core.js) under node, with a fake
// outbox core, clock and session storage: where moves go, which keys it holds for a page
// not drawn yet, how it catches up with the page and when it asks for a redraw again.
// Run by tests/test_navigator_core_js.py.
import assert from "node:assert";
import * as api from "../../components/js/navigator_core.js";
import {run} from "./tap.mjs";

// a page of questions like Annotate's: places are {item, n, cursor}
function world({session = new Map(), moves = {}, line = null} = {}) {
  const w = {now: 5_000_000, pushed: [], links: [], redraws: 0, said: [], handled: [],
             intervals: [], notified: 0};
  const host = {  // the clock, the session storage and the intervals (components/js/host.js)
    now: () => w.now,
    sessionStorage: {getItem: (k) => (session.has(k) ? session.get(k) : null),
                     setItem: (k, v) => session.set(k, String(v)),
                     removeItem: (k) => session.delete(k)},
    setInterval: (fn) => { w.intervals.push(fn); return w.intervals.length; },
  };
  const core = {
    host, tab: "tab1", heldCounters: new Set(), moveListeners: new Set(), forgotten: [],
    push(a) { a.id = `a${w.pushed.length + 1}`; w.pushed.push(a); return a; },
    link(p) { w.links.push(p); },
    notify() { w.notified += 1; },
    forget(seen) { this.forgotten.push(seen); },
    redraw() { w.redraws += 1; },
  };
  const page = {data: null, item: null, n: 0, cursor: 1};
  const nav = api.create(core, {
    page: "annotate", storage: "nw-test-barrier",
    data: () => page.data, who: () => "ana", paint: () => {}, say: (t) => w.said.push(t),
    handle: (k) => w.handled.push([k, page.item]),
    here: () => (page.item === null ? null : {item: page.item, n: page.n, cursor: page.cursor}),
    drawn: () => !!page.data && page.data.item === page.item,
    same: (a, b) => a.item === b.item,
    fields: (at) => ({item: at.item, cursor: at.cursor}),
    link: (at) => ({item: at.item}),
    arrive: (t) => {
      const c = t || page.data;
      page.item = c.item; page.n = c.n; page.cursor = c.cursor || 1;
    },
    done: {next: "last", previous: "first", unfinished: "none"},
    other: "another question",
  });
  w.page = page; w.nav = nav; w.core = core; w.api = api; w.session = session;
  // the page draws `item` at `seq`, with the line around it
  w.draw = (item, seq, extra = {}) => {
    page.data = Object.assign({dataset: "g", item, n: 3, cursor: 1, seq, seen: seq,
                               moves: extra.moves || moves}, extra);
    const l = extra.line || line;
    return nav.receive(page.data, l ? {here: {item, n: 3, cursor: 1}, ...l} : null);
  };
  w.ack = (seq) => { for (const fn of core.moveListeners) fn({id: nav.moveId, seq}); };
  w.tick = (ms) => { w.now += ms; for (const fn of w.intervals) fn(); };
  return w;
}

const q = (item, n = 3, cursor = 1) => ({item, n, cursor});

const tests = {
  "a move the data names goes at once: a move action, the address, the keys aim there"() {
    const w = world({moves: {next: q("b", 5, 2)}});
    w.draw("a", 1);
    w.nav.ask("next");
    assert.deepStrictEqual(w.pushed.map((a) => [a.kind, a.page, a.tab, a.dataset, a.item, a.cursor]),
                           [["move", "annotate", "tab1", "g", "b", 2]]);
    assert.deepStrictEqual(w.links, [{item: "b"}]);
    assert.strictEqual(w.page.item, "b");
    assert.strictEqual(w.nav.waitSeq, Infinity);
    assert.strictEqual(w.nav.barrier, null);
  },

  "no move past the end: the page's sentence, nothing sent"() {
    const w = world({moves: {}});
    w.draw("a", 1);
    w.nav.ask("next");
    assert.deepStrictEqual(w.said, ["last"]);
    assert.strictEqual(w.pushed.length, 0);
  },

  "a seek the script has no sentence for: the page's data says it (L, nothing left)"() {
    const w = world({moves: {}});
    w.draw("a", 1, {done: {later: "nothing left for later"}});
    w.nav.ask("later");
    assert.deepStrictEqual(w.said, ["nothing left for later"]);
    assert.strictEqual(w.pushed.length, 0);
    assert.ok(w.api.MOVES.has("l"));  // a held L is a move, never unsaved work
  },

  "L the data names goes at once, like U"() {
    const w = world({moves: {later: q("f", 4, 2)}});
    w.draw("a", 1);
    w.nav.ask("later");
    assert.deepStrictEqual(w.pushed.map((a) => [a.kind, a.item, a.cursor]), [["move", "f", 2]]);
    assert.strictEqual(w.page.item, "f");
  },

  "N N before the page draws: the second goes along the line, no key held"() {
    const w = world({moves: {next: q("b")}, line: {ahead: [q("b"), q("c"), q("d")], behind: []}});
    w.draw("a", 1);
    w.nav.ask("next");
    w.nav.ask("next");
    w.nav.ask("next");
    assert.deepStrictEqual(w.pushed.map((a) => a.item), ["b", "c", "d"]);
    assert.strictEqual(w.nav.barrier, null);
    assert.strictEqual(w.nav.hold("1"), false);  // a label goes to d at once
    w.nav.ask("previous");
    assert.strictEqual(w.page.item, "c");
  },

  "a move out of sight holds the keys, and they follow it once the page catches up"() {
    const w = world({moves: {next: q("b")}});
    w.draw("a", 1);
    w.nav.ask("next");           // to b (the data names it)
    w.nav.ask("next");           // beyond b: not in sight
    assert.deepStrictEqual(w.nav.barrier.from, q("b"));
    assert.ok(w.nav.hold("1"));
    assert.ok(w.nav.hold("j"));
    assert.ok(w.nav.hold("2"));
    assert.strictEqual(w.nav.heldCount(), 2);  // moves are not unsaved work
    assert.strictEqual(w.notified, 3);
    w.ack(7);
    assert.strictEqual(w.nav.waitSeq, 7);
    w.draw("a", 5, {moves: {next: q("b")}});   // an older run: not caught up, address kept
    assert.strictEqual(w.page.item, "b");
    assert.deepStrictEqual(w.links.at(-1), {item: "b"});
    assert.ok(w.nav.barrier);
    w.draw("b", 7, {moves: {next: q("c")}});   // our move drawn: go on to c, then the keys
    assert.strictEqual(w.nav.barrier, null);
    assert.deepStrictEqual(w.pushed.map((a) => a.item), ["b", "c"]);
    assert.deepStrictEqual(w.handled, [["1", "c"], ["j", "c"], ["2", "c"]]);
  },

  "the page opened another place: the held keys are dropped, and it says so"() {
    const w = world({moves: {next: q("b")}});
    w.draw("a", 1);
    w.nav.ask("next");
    w.nav.ask("next");
    w.nav.hold("1");
    w.ack(7);
    w.draw("z", 8);
    assert.strictEqual(w.nav.barrier, null);
    assert.deepStrictEqual(w.handled, []);
    assert.deepStrictEqual(w.said, ["another question"]);
    assert.strictEqual(w.page.item, "z");
  },

  "a barrier is kept over a reload, and dropped for another dataset"() {
    const session = new Map();
    const w = world({session, moves: {next: q("b")}});
    w.draw("a", 1);
    w.nav.ask("next");
    w.nav.ask("next");
    w.nav.hold("3");
    assert.ok(session.has("nw-test-barrier"));
    const again = world({session});
    assert.deepStrictEqual(again.nav.held, ["3"]);
    assert.strictEqual(again.nav.barrier.seek, "next");
    again.draw("x", 1, {dataset: "other"});
    assert.strictEqual(again.nav.barrier, null);
    assert.ok(!session.has("nw-test-barrier"));
  },

  "a saved move the page does not draw in 3 s is asked for again, every 3 s"() {
    const w = world({moves: {next: q("b")}});
    w.draw("a", 1);
    w.nav.ask("next");
    w.tick(5000);
    assert.strictEqual(w.redraws, 0);  // not acknowledged yet: nothing to wait for
    w.ack(4);
    w.tick(1000);
    w.tick(1000);
    assert.strictEqual(w.redraws, 0);
    w.tick(1500);
    assert.strictEqual(w.redraws, 1);
    w.tick(1000);
    assert.strictEqual(w.redraws, 1);
    w.tick(2500);
    assert.strictEqual(w.redraws, 2);
    w.draw("b", 4);
    w.tick(5000);
    assert.strictEqual(w.redraws, 2);
    assert.strictEqual(w.nav.waitSeq, null);
  },

  "a refused move (seq 0) is caught up with by any data"() {
    const w = world({moves: {next: q("b")}});
    w.draw("a", 3);
    w.nav.ask("next");
    w.ack(0);
    assert.ok(w.nav.caughtUp({seq: 0}));
    w.draw("a", 3);
    assert.strictEqual(w.page.item, "a");
  },

  "only our last move's outcome counts"() {
    const w = world({moves: {next: q("b")}});
    w.draw("a", 1);
    w.nav.ask("next");
    for (const fn of w.core.moveListeners) fn({id: "someone-else", seq: 9});
    assert.strictEqual(w.nav.waitSeq, Infinity);
  },

  "a seek other than next / previous asks the page's rule, else holds"() {
    const w = world({moves: {next: q("b")}, line: {ahead: [q("b"), q("c")], behind: []}});
    w.draw("a", 1);
    w.nav.ask("next");
    w.nav.ask("unfinished");  // Annotate's line does not say what is unfinished
    assert.strictEqual(w.nav.barrier.seek, "unfinished");
  },

  "typing: text fields and editable text type, a select's input only while its list is open"() {
    const w = world();
    const SELECT = "[data-testid=\"stSelectbox\"] input[role=\"combobox\"]";
    const el = (tag, {type = "", open = null, inSelect = false, editable = false} = {}) => ({
      tagName: tag, type, isContentEditable: editable,
      getAttribute: (name) => (name === "aria-expanded" ? open : null),
      closest: (css) => (inSelect && css === SELECT ? {} : null),
    });
    const typing = (t) => w.api.typing(t, SELECT);
    assert.strictEqual(typing(el("TEXTAREA")), true);
    assert.strictEqual(typing(el("INPUT", {type: "text"})), true);
    assert.strictEqual(typing(el("INPUT", {type: "search"})), true);
    assert.strictEqual(typing(el("DIV", {editable: true})), true);
    assert.strictEqual(typing(el("INPUT", {type: "checkbox"})), false);
    assert.strictEqual(typing(el("BUTTON")), false);
    assert.strictEqual(typing(null), false);
    // a select box after a choice (its list closed): the keys are commands again
    assert.strictEqual(typing(el("INPUT", {type: "text", inSelect: true, open: "false"})), false);
    // its list open: typing filters the list
    assert.strictEqual(typing(el("INPUT", {type: "text", inSelect: true, open: "true"})), true);
  },
  "the module exports the factory and the keys that move"() {
    const w = world();
    assert.strictEqual(typeof w.api.create, "function");
    assert.ok(w.api.MOVES.has("n") && !w.api.MOVES.has("1"));
  },
};

await run(tests);
