// The annotate page's input interpreter alone (components/js/annotate_input.js), driven
// line by line: each line on stdin is {event, view}, each line out the effects of that
// step ({effects}). The state stays here between lines. Used by the differential test
// (tests/browser/differential.py), which gives it the page as the server would draw it.
// A CommonJS file (differential.py names it) that imports the ES module.
"use strict";
const path = require("path");
const readline = require("readline");
const {pathToFileURL} = require("url");

const MODULE = path.join(__dirname, "..", "..", "components", "js", "annotate_input.js");
const lines = readline.createInterface({input: process.stdin});
const ready = import(pathToFileURL(MODULE).href);
let state = null;
// one line at a time, in order, once the module is loaded
let queue = Promise.resolve();
lines.on("line", (line) => {
  queue = queue.then(async () => {
    const I = await ready;
    if (state === null) state = I.initial();
    const {event, view} = JSON.parse(line);
    const r = I.step(state, event, view);
    state = r.state;
    process.stdout.write(JSON.stringify({effects: r.effects, state}) + "\n");
  });
});
