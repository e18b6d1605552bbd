// The annotate page's input interpreter alone (components/js/annotate_input.js), driven
// line by line: each line on stdin is {event, view}, each line out the effects of that
// step ({effects}). The state stays here between lines. Used by the differential test
// (tests/browser/differential.py), which gives it the page as the server would draw it.
"use strict";
const fs = require("fs");
const path = require("path");
const readline = require("readline");

const JS = path.join(__dirname, "..", "..", "components", "js");
const SOURCE = ["input_core.js", "annotate_input.js"]
  .map((name) => fs.readFileSync(path.join(JS, name), "utf8")).join("\n");
const I = new Function(SOURCE + "\nreturn nwAnnotateInput;")();
let state = I.initial();
const lines = readline.createInterface({input: process.stdin});
lines.on("line", (line) => {
  const {event, view} = JSON.parse(line);
  const r = I.step(state, event, view);
  state = r.state;
  process.stdout.write(JSON.stringify({effects: r.effects, state}) + "\n");
});
