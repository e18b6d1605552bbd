// Review's table of the one input interpreter (components/js/input_core.js,
// components/js/review_input.js) under node: verdicts, reasons before and right after a
// verdict, moves that drop a draft and say so, grid clicks, undo, accept, no name.
// Run by tests/test_annotate_input_js.py.
import assert from "node:assert";
import * as I from "../../components/js/review_input.js";
import {run} from "./tap.mjs";

const KEYS = {verdicts: {a: "agree", f: "flip", t: "tie", b: "both-bad", s: "skip"},
              reasons: {1: "factual error", 2: "unsafe", 3: "incomplete"}};

// a queue of comparisons q0..q5 (one each); N moves to the next without a verdict
function page({who = "rev", advance = true, suggested = null} = {}) {
  const p = {state: I.initial(), sent: [], effects: [], who, known: {}};
  p.draw = (item, extra = {}) => {
    p.data = Object.assign({dataset: "pr", item, i: 0, j: 0, advance, suggested, keys: KEYS,
                            annotator: who}, extra);
    p.feed({type: "data"});
  };
  p.view = () => ({data: p.data, who: p.who, overlay: p.sent.slice(), known: p.known,
                   note: I.drawn(p.state, {data: p.data}) ? "" : null});
  p.feed = (event) => {
    if ((event.type === "key" || event.type === "click") && !p.state.at) return [];
    const r = I.step(p.state, event, p.view());
    p.state = r.state;
    for (const e of r.effects) {
      p.effects.push(e);
      if (e.push) p.sent.push(e.push);
      if (e.ask !== undefined) {  // the navigator: straight to the target, or along q0..q5
        const n = Number(p.state.at.item.slice(1));
        const to = e.target || {item: `q${e.ask === "previous" ? n - 1 : n + 1}`, i: 0, j: 0};
        p.feed({type: "arrive", target: to});
      }
    }
    return r.effects;
  };
  p.keys = (text) => { for (const key of text) p.feed({type: "key", key}); };
  p.open = (item) => { p.draw(item); p.feed({type: "arrive", target: null}); };
  p.said = () => p.effects.filter((e) => e.say).map((e) => e.say);
  return p;
}

const tests = [];
const test = (name, fn) => tests.push([name, fn]);

test("a verdict names the comparison on screen and moves on to the next", () => {
  const p = page();
  p.open("q0");
  p.keys("a");
  assert.deepStrictEqual(p.sent.map((a) => [a.kind, a.item, a.verdict]), [["verdict", "q0", "agree"]]);
  assert.strictEqual(p.state.at.item, "q1");
});

test("a reason right after a verdict goes with it, even once the page moved on", () => {
  const p = page();
  p.open("q0");
  p.keys("f1");
  assert.deepStrictEqual(p.sent.map((a) => [a.kind, a.item, a.flip || a.verdict]),
                         [["verdict", "q0", "flip"], ["reasons", "q0", "factual error"]]);
  assert.ok(p.said().includes("factual error: with the verdict you just gave"));
  // the navigator must not hold it for the move
  const q = page();
  q.open("q0");
  q.keys("f");
  assert.strictEqual(I.holds(q.state, {type: "key", key: "1"}, q.view()), false);
  assert.strictEqual(I.holds(q.state, {type: "key", key: "j"}, q.view()), true);
  // any other key in between: the reason is for the comparison on screen (a draft)
  p.keys("j2t");
  const last = p.sent[p.sent.length - 1];
  assert.deepStrictEqual([last.kind, last.item, last.verdict, last.reasons], ["verdict", "q2", "tie", ["unsafe"]]);
});

test("reasons before a verdict go with it; a move away drops them and says so", () => {
  const p = page();
  p.open("q0");
  p.keys("13");
  assert.deepStrictEqual(p.sent, []);
  assert.deepStrictEqual(I.reasonsOf(p.state, p.view()), ["factual error", "incomplete"]);
  p.keys("j");
  assert.ok(p.said().some((t) => t.startsWith("not saved: factual error, incomplete")));
  assert.deepStrictEqual(p.state.drafts, {});
  p.keys("2b");
  assert.deepStrictEqual(p.sent.map((a) => [a.item, a.verdict, a.reasons]), [["q1", "both-bad", ["unsafe"]]]);
});

test("on a comparison with a verdict a reason flips on what is saved", () => {
  const p = page({advance: false});
  p.open("q0");
  p.known["q0\u00000\u00000"] = {verdict: "agree", reasons: []};
  p.keys("x2");  // x: no key; then 2 on a comparison with a saved verdict
  assert.deepStrictEqual(p.sent.map((a) => [a.kind, a.flip]), [["reasons", "unsafe"]]);
});

test("a click in the grid goes to the comparison clicked, on the item it showed", () => {
  const p = page();
  p.open("q0");
  p.feed({type: "click", what: "pick", item: "q0", i: 0, j: 2});
  assert.deepStrictEqual(p.state.at, {item: "q0", i: 0, j: 2});
  p.keys("t");
  assert.deepStrictEqual([p.sent[0].i, p.sent[0].j], [0, 2]);
});

test("Z and Shift+Z, Y, M; no name: nothing sent, the name asked for", () => {
  const p = page({suggested: "flip"});
  p.open("q0");
  p.keys("zZ");
  assert.deepStrictEqual(p.sent.map((a) => [a.kind, "item" in a]), [["undo", false], ["redo", false]]);
  p.keys("y");
  assert.strictEqual(p.sent[2].kind, "accept");
  assert.strictEqual(p.state.at.item, "q1");
  p.draw("q1", {suggested: null});
  p.keys("y");
  assert.ok(p.said().includes("no suggestion shown on this comparison"));
  p.keys("m");
  assert.ok(p.effects.some((e) => e.focus === "note"));
  const q = page({who: ""});
  q.open("q0");
  q.keys("a1");
  assert.deepStrictEqual(q.sent, []);
  assert.ok(q.effects.some((e) => e.focus === "name"));
});

await run(tests);
