// The annotate page's input interpreter (components/js/annotate_input.js) under node:
// step(state, event, view) alone, with a model of the page's data and the actions it sends.
// Run by tests/test_annotate_input_js.py.
import assert from "node:assert";
import * as I from "../../components/js/annotate_input.js";
import {run} from "./tap.mjs";

const LABELS = {1: "irrelevant", 2: "ANSWER-THE-QUESTION", 3: "RELATED-INFORMATION",
                4: "OUTDATED", 5: "UNKNOWN"};
const DIMS = [
  {title: "Temporal", fields: ["temporal"], options: ["fast", "slow"], values: [["fast"], ["slow"]]},
  {title: "Form", fields: ["form"], options: ["simple", "complex", "multi"],
   values: [["simple"], ["complex"], ["multi"]]},
  {title: "Pair", fields: ["a", "b"], options: ["yes", "no"], values: [["y", ""], ["n", "n"]]},
];

// a page: questions q1..qN with `n` passages; `draw(item)` makes the page's data
// (the server's side is not modelled: the saved labels and dimensions stay as the actions
// in the overlay say; a redraw shows the outcome of the actions the server decides, undo
// and the like, so they leave the overlay, and H's choice, which the data carries)
const DECIDED = new Set(["undo", "redo", "view", "accept", "rest", "deflect"]);
function page({who = "ana", n = 4, questions = 3, fileDims = {}} = {}) {
  const p = {sent: [], effects: [], state: I.initial(), data: null, who, drawnUpTo: 0};
  p.draw = (item, extra = {}) => {
    p.drawnUpTo = p.sent.length;
    const views = p.sent.filter((a) => a.kind === "view");
    p.data = Object.assign({dataset: "g", item, n, cursor: 1, labels: {}, dimValues: {},
                            fileDims, suggested: {}, annotator: who, dims: DIMS,
                            hidden: views.length ? views[views.length - 1].value : false,
                            keys: {labels: LABELS}}, extra);
    p.feed({type: "data"});
  };
  p.settled = true;
  p.view = () => ({data: p.data, who: p.who, settled: p.settled, overlay: p.sent.filter(
    (a, k) => !DECIDED.has(a.kind) || k >= p.drawnUpTo)});
  p.feed = (event) => {
    const r = I.step(p.state, event, p.view());
    p.state = r.state;
    for (const e of r.effects) {
      p.effects.push(e);
      if (e.push) p.sent.push(e.push);
      if (e.ask && p.moves && p.moves[e.ask]) p.feed({type: "arrive", target: p.moves[e.ask]});
      if (e.replay) for (const event of e.replay) p.feed(event);
    }
    return r.effects;
  };
  p.keys = (text) => { for (const key of text) p.feed({type: "key", key}); };
  // keys as the page script sends them while keys wait: each with the character typed
  // ("\b": Backspace)
  p.typed = (text) => {
    for (const ch of text) {
      p.feed(ch === "\b" ? {type: "key", key: "backspace"}
                          : {type: "key", key: ch.toLowerCase(), text: ch});
    }
  };
  p.open = (item) => { p.draw(item); p.feed({type: "arrive", target: null}); };
  p.labels = () => p.sent.filter((a) => a.kind === "set" && a.field.startsWith("label:"))
    .map((a) => `${a.item}:${a.field.slice(6)}=${a.value === null ? "-" : a.value.slice(0, 3)}`);
  p.dims = () => p.sent.filter((a) => a.kind === "set" && a.field.startsWith("dim:"))
    .map((a) => `${a.item}:${a.field.slice(4)}=${a.value}`);
  p.questions = questions;
  return p;
}

const tests = [];
const test = (name, fn) => tests.push([name, fn]);

test("a label key labels the cursor's passage and moves on, 0 clears, J and K move", () => {
  const p = page();
  p.open("q1");
  p.keys("23k0j5");
  assert.deepStrictEqual(p.labels(), ["q1:1=ANS", "q1:2=REL", "q1:2=-", "q1:3=UNK"]);
  assert.strictEqual(p.state.cursor, 4);
  p.keys("555");  // the cursor stays on the last passage
  assert.strictEqual(p.state.cursor, 4);
});

test("W on a question not drawn yet walks its dimensions: no digit becomes a label", () => {
  const p = page();
  p.open("q1");
  p.keys("12");
  // N: the navigator aims the keys at q2 at once; the page still draws q1
  p.feed({type: "arrive", target: {item: "q2", n: 4, cursor: 1}});
  p.keys("3w121");
  assert.deepStrictEqual(p.labels(), ["q1:1=irr", "q1:2=ANS", "q2:1=REL"]);
  assert.deepStrictEqual(p.dims(), ["q2:temporal=fast", "q2:form=complex", "q2:a=y", "q2:b="]);
  assert.strictEqual(p.state.prefix, null);
  assert.ok(p.effects.some((e) => e.say === "dimensions done"));
});

test("W's Enter needs the file's value: it and the keys after it wait for the page", () => {
  const p = page({fileDims: {"dim:temporal": "slow", "dim:form": "multi"}});
  p.open("q1");
  p.feed({type: "arrive", target: {item: "q2", n: 4, cursor: 1}});
  p.keys("w");
  p.feed({type: "key", key: "enter"});
  p.keys("12");  // form: simple; pair: no; then a label key after the walk
  p.keys("4");
  assert.deepStrictEqual(p.dims(), []);
  assert.strictEqual(p.state.waiting.length, 4);
  p.draw("q2");  // the page shows q2: the keys act in order
  assert.deepStrictEqual(p.dims(), ["q2:temporal=slow", "q2:form=simple", "q2:a=n", "q2:b=n"]);
  assert.deepStrictEqual(p.labels(), ["q2:1=OUT"]);
  assert.strictEqual(p.state.waiting.length, 0);
});

test("a click on a card's label labels it (or clears it) and moves the cursor past it", () => {
  const p = page();
  p.open("q1");
  p.feed({type: "click", what: "label", item: "q1", passage: 1, digit: "3"});
  assert.strictEqual(p.state.cursor, 2);
  p.keys("4");
  assert.deepStrictEqual(p.labels(), ["q1:1=REL", "q1:2=OUT"]);
  p.feed({type: "click", what: "label", item: "q1", passage: 2, digit: "4"});  // clears it
  assert.strictEqual(p.state.cursor, 3);  // and moves on, as any click on a label
  assert.strictEqual(I.labelOf(p.state, p.view(), 2), null);
  // a click on a card of a question the keys have left does nothing
  p.feed({type: "arrive", target: {item: "q2", n: 4, cursor: 1}});
  p.feed({type: "click", what: "label", item: "q1", passage: 3, digit: "2"});
  assert.strictEqual(p.labels().length, 3);
});

test("a dimension option click sets it, a second clears it, and moves a walk past it", () => {
  const p = page();
  p.open("q1");
  p.keys("w");
  p.feed({type: "click", what: "dim", item: "q1", dim: 0, option: 1});
  assert.deepStrictEqual(p.state.prefix, {walk: 1});
  p.feed({type: "click", what: "dim", item: "q1", dim: 0, option: 1});
  assert.deepStrictEqual(p.dims(), ["q1:temporal=slow", "q1:temporal=null"]);
  assert.deepStrictEqual(p.state.prefix, {walk: 1});
});

test("a redraw never takes back a cursor a key moved; another person's name resets it", () => {
  const p = page({who: "ana"});
  p.open("q1");
  p.keys("2");
  // a redraw of the same question whose data was made before the label came back
  p.draw("q1", {cursor: 1, annotator: null});
  p.feed({type: "arrive", target: null});
  p.draw("q1", {cursor: 1, annotator: "ana"});
  p.feed({type: "arrive", target: null});
  p.keys("3");
  assert.deepStrictEqual(p.labels(), ["q1:1=ANS", "q1:2=REL"]);
  // the remembered name first, the session's name later: one person, the cursor stays
  const q = page({who: "bo"});
  q.draw("q1", {annotator: null, cursor: 1});
  q.feed({type: "arrive", target: null});
  q.keys("2");
  q.draw("q1", {annotator: "bo", cursor: 1});
  q.feed({type: "arrive", target: null});
  q.keys("2");
  assert.deepStrictEqual(q.labels(), ["q1:1=ANS", "q1:2=ANS"]);
  // a page drawn for nobody (the session's name not back yet), then for the remembered
  // name: before anyone acted, the cursor goes where the server has it for that person
  const m = page({who: "fi"});
  m.draw("q1", {annotator: null, cursor: 1});
  m.feed({type: "arrive", target: null});
  m.draw("q1", {annotator: "fi", cursor: 3});
  m.feed({type: "arrive", target: null});
  assert.strictEqual(m.state.cursor, 3);
  // before anyone acted, a name typed puts the cursor where the server has it for them
  const r = page({who: "cy"});
  r.open("q1");
  r.who = "dee";
  r.draw("q1", {annotator: "dee", cursor: 3});
  r.feed({type: "arrive", target: null});
  assert.strictEqual(r.state.cursor, 3);
});

test("Q then a dimension then its option; Q 4 opens the category once the page shows", () => {
  const p = page();
  p.open("q1");
  p.keys("q22");
  assert.deepStrictEqual(p.dims(), ["q1:form=complex"]);
  p.feed({type: "arrive", target: {item: "q2", n: 4, cursor: 1}});
  p.keys("q4");
  assert.ok(!p.effects.some((e) => e.focus === "category"));
  p.draw("q2");
  assert.ok(p.effects.some((e) => e.focus === "category"));
});

test("keys waiting behind V follow a move among them to where it leads", () => {
  const p = page({fileDims: {"dim:temporal": "slow"}});
  p.open("q1");
  p.feed({type: "arrive", target: {item: "q2", n: 4, cursor: 1}});
  p.moves = {next: {item: "q3", n: 4, cursor: 1}};
  p.keys("vs2");  // V waits for q2; S skips q2 and moves on; 2 labels q3's first passage
  assert.deepStrictEqual(p.labels(), []);
  p.draw("q2");
  assert.deepStrictEqual(p.dims(), ["q2:temporal=slow"]);
  assert.deepStrictEqual(p.labels(), ["q3:1=ANS"]);
  assert.strictEqual(p.state.item, "q3");
});

test("what is typed after A on a question still opening goes into the answer, as typed", () => {
  const p = page();
  p.open("q1");
  p.feed({type: "arrive", target: {item: "q2", n: 4, cursor: 1}});
  p.typed("aOnly 12");
  assert.deepStrictEqual(p.effects.filter((e) => e.focus || e.text !== undefined), []);
  p.draw("q2");
  assert.deepStrictEqual(p.labels(), []);  // the 1 and 2 are text
  const made = p.effects.filter((e) => e.focus || e.text !== undefined || e.blur);
  assert.deepStrictEqual(made, [{focus: "answer"}, {text: "Only 12"}]);
});

test("after Z, A and an answer typed at once: the answer whole, Esc leaves, keys act again", () => {
  const p = page();
  p.open("q1");
  p.keys("z");  // the undo waits for the server: A reads the page and waits for it
  p.typed("aOn\bne");
  p.feed({type: "key", key: "enter"});
  p.typed("two");
  p.feed({type: "key", key: "escape"});
  p.keys("2");
  p.draw("q1");
  const made = p.effects.filter((e) => e.focus || e.text !== undefined || e.blur);
  assert.deepStrictEqual(made, [{focus: "answer"}, {text: "On\bne\ntwo"}, {blur: true}]);
  assert.deepStrictEqual(p.labels(), ["q1:1=ANS"]);  // the 2 after Esc is a label key again
});

test("A waits for the run that draws the page to end: its box shows what the run drew", () => {
  const p = page();
  p.open("q1");
  p.keys("z");
  p.typed("aok");
  p.settled = false;  // the redraw's data came; the run that brings the box goes on
  p.draw("q1");
  assert.deepStrictEqual(p.effects.filter((e) => e.focus || e.text !== undefined), []);
  p.settled = true;
  p.feed({type: "settled"});
  const made = p.effects.filter((e) => e.focus || e.text !== undefined || e.blur);
  assert.deepStrictEqual(made, [{focus: "answer"}, {text: "ok"}]);
});

test("text typed after M goes into the one-line comment: Enter keeps the focus there", () => {
  const p = page();
  p.open("q1");
  p.feed({type: "arrive", target: {item: "q2", n: 4, cursor: 1}});
  p.typed("mok");
  p.feed({type: "key", key: "enter"});
  p.typed("!");
  p.feed({type: "click", what: "label", item: "q2", passage: 3, digit: "2"});
  p.draw("q2");
  const made = p.effects.filter((e) => e.focus || e.text !== undefined || e.blur);
  assert.deepStrictEqual(made, [{focus: "comment"}, {text: "ok!"}, {blur: true}]);
  assert.deepStrictEqual(p.labels(), ["q2:3=ANS"]);  // the click after the typing still counts
});

test("no name: label keys ask for one and send nothing", () => {
  const p = page({who: ""});
  p.open("q1");
  p.keys("2w1");
  assert.deepStrictEqual(p.sent, []);
  assert.ok(p.effects.filter((e) => e.focus === "name").length >= 2);
});

test("H, F, S, Z, Y, R, D become their actions; S moves on", () => {
  const p = page();
  p.open("q1");
  p.data.suggested = {2: "OUTDATED"};
  p.keys("hfsZyrd");
  assert.deepStrictEqual(p.sent.map((a) => a.kind + (a.field ? ":" + a.field : "")),
    ["view:hide_suggestions", "set:flag", "set:skipped", "redo", "accept", "rest", "deflect"]);
  assert.ok(p.effects.some((e) => e.ask === "next"));
  assert.ok(!("item" in p.sent[3]));  // an undo or redo is of the person's work
});

test("L asks for the next question left for later, as U asks for the next unfinished", () => {
  const p = page();
  p.open("q1");
  p.keys("l");
  assert.ok(p.effects.some((e) => e.ask === "later"));
  assert.deepStrictEqual(p.sent, []);  // a move, nothing saved by itself
  assert.ok(I.KEYS.includes("l"));
});

// The differential check: random sequences of every key and click (but A and M, which
// hand the keys after them to a text box) leave the same actions on a calm page, redrawn
// after every event, as on a busy one, redrawn (the question or the last one) at random
// points between them.
test("random sequences: the same actions whenever the page draws", () => {
  let seed = 7;
  const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  const KEYSET = "1234500jkqwvwyrZzfdh".split("").concat(["enter", " ", "escape"]);
  for (let round = 0; round < 300; round += 1) {
    const events = [];
    for (let k = 0; k < 30; k += 1) {
      const x = rand();
      if (x < 0.1) events.push({type: "click", what: "label", passage: 1 + Math.floor(rand() * 4),
                                digit: String(1 + Math.floor(rand() * 5))});
      else if (x < 0.15) events.push({type: "click", what: "dim", dim: Math.floor(rand() * 3),
                                      option: Math.floor(rand() * 2)});
      else events.push({type: "key", key: KEYSET[Math.floor(rand() * KEYSET.length)]});
    }
    const run = (redraws) => {
      const p = page({fileDims: {"dim:temporal": "slow"}});
      p.open("q1");
      p.feed({type: "arrive", target: {item: "q2", n: 4, cursor: 1}});
      if (!redraws) p.draw("q2");
      for (const e of events) {
        p.feed(e.type === "click" ? Object.assign({item: "q2"}, e) : e);
        if (!redraws) p.draw("q2");
        else if (rand() < 0.3) p.draw(p.data.item === "q2" || rand() < 0.5 ? "q2" : "q1");
      }
      // the page redraws after each answer, until nothing waits for it
      for (let k = 0; k < 20 && (k === 0 || p.state.waiting.length); k += 1) p.draw("q2");
      assert.strictEqual(p.state.waiting.length, 0);
      // Y and D on a question not drawn yet go to the server, which decides (here: no
      // suggestion, no answer, so they change nothing); drawn, the page knows that first
      return p.sent.filter((a) => a.kind !== "accept" && a.kind !== "deflect")
        .map((a) => JSON.stringify(a));
    };
    const busy = run(true);
    const calm = run(false);
    if (process.env.DEBUG_ROUND && Number(process.env.DEBUG_ROUND) === round) {
      console.log(JSON.stringify(events));
    }
    assert.deepStrictEqual(busy, calm, `round ${round}`);
  }
});

await run(tests);
