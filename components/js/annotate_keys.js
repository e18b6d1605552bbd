// The annotate page's keyboard: every press becomes an action aimed at a passage.
//
// The passage cursor lives here, so a key goes where the annotator sees the outline,
// however far the server is behind. A label key names (dataset, item, passage, label,
// annotator) and goes to the outbox (nwCore), which keeps it until the server applies
// it. N / P / U move to the question the page's data says they lead to, and a second N
// or P before the page has drawn the first goes along the questions the data lists
// around the one drawn (`line`): the navigator (js/navigator_core.js) moves, holds keys
// for a question not in sight and catches up with the page. Clicks on the label,
// dimension and key buttons are handled the same way. `data` is the page's: {dataset,
// annotator, item, n, cursor, labels, dimValues, answered, seq, moves, line, keys, dims}.
// No data is ever put into HTML here.
// the labels' keys and short names come with the page's data (needlework.grounding.keymap)
let LABELS = {};
let SHORT = {};
const SEEK = {n: "next", p: "previous", u: "unfinished"};
const ONE_KEY = "jk0dzsfmrhwvy?";  // keys handled here besides labels, moves and Q
const BARRIER = "nw-annotate-barrier";

function annotateKeys() {
  if (window.__nwAnnotate) return window.__nwAnnotate;
  const S = {
    data: null, item: null, cursor: 1, cursorFor: null, n: 0,
    active: () => !!document.querySelector(nwDom.key("nw-toolbar")),
  };
  window.__nwAnnotate = S;
  const nav = nwNavigator.create(nwCore, {
    page: "annotate", storage: BARRIER,
    data: () => S.data, who: () => S.who(), paint: () => S.paint(), say: (t) => S.say(t),
    handle: (key) => S.handle(key),
    here: () => (S.item === null ? null : {item: S.item, n: S.n, cursor: S.cursor}),
    drawn: () => !!S.data && S.data.item === S.item,
    same: (a, b) => a.item === b.item,
    fields: (at) => ({item: at.item, cursor: at.cursor}),
    link: (at) => ({item: at.item}),
    arrive: (target) => (target ? S.arrive(target) : S.follow()),
    beyond: (seek, k) => S.unfinishedAfter(seek, k),
    done: {next: "this is the last question in the list",
           previous: "this is the first question in the list",
           unfinished: "no unfinished question after this one"},
    other: "the page opened another question: the keys held for the next one were not applied",
  });
  S.nav = nav;
  // what the tests and the page read: the navigator's state
  for (const name of ["barrier", "held", "waitSeq", "moveId"]) {
    Object.defineProperty(S, name, {get: () => nav[name], enumerable: true});
  }
  const style = document.createElement("style");
  style.id = "nw-cursor-style";
  document.head.appendChild(style);

  // U along the line: the first question after line[k] the annotator had finished when
  // the page was drawn and has not touched since (a label typed there may finish it, and
  // which does is the server's rule); null: the server finds it (its list wraps around)
  S.unfinishedAfter = (seek, k) => {
    if (seek !== "unfinished") return null;
    const touched = new Set(nwCore.overlay((a) => a.kind !== "move").map((a) => (
      ["set", "accept", "rest", "deflect"].includes(a.kind) ? a.item : "*")));  // "*": an undo
    if (touched.has("*")) return null;
    for (const c of nav.line.slice(k + 1)) {
      if (touched.has(c.item) || c.done === undefined) return null;
      if (!c.done) return c;
    }
    return null;
  };

  // who makes the changes: the session's annotator, or for a moment after a server
  // restart (the session has no name yet) the name this browser remembers
  S.who = () => (S.data && S.data.annotator) || nwCore.remembered();


  // the cursor's outline, on the drawn question's cards
  S.cursorCss = (c) => `.st-key-nw-card-${c}{box-shadow:0 0 0 3px #1f6feb;border-radius:.6rem}` +
    `.st-key-nw-card-${c} #nw-head-${c} mark.nw-cite:first-of-type{outline:2px solid #1f6feb}`;
  // labels the page's data does not show yet: pending ones ("saving") and ones the
  // server acknowledged ("saved"): passage number -> still pending?
  S.touched = () => {
    const touched = new Map();
    const mark = (a, pending) => {
      if (a.item !== S.item || a.dataset !== S.data.dataset) return;
      if (a.kind === "rest") {
        for (let k = 1; k <= S.n; k += 1) touched.set(k, pending || touched.get(k) || false);
      } else if (a.kind === "accept") {
        for (const k of Object.keys(S.data.suggested || {}).map(Number)) {
          touched.set(k, pending || touched.get(k) || false);
        }
      } else if (a.kind === "set" && a.field.startsWith("label:")) {
        const k = parseInt(a.field.slice(6), 10);
        touched.set(k, pending || touched.get(k) || false);
      }
    };
    for (const s of nwCore.settled) mark(s.action, false);
    for (const a of nwCore.queue) mark(a, true);
    return touched;
  };
  // those labels, drawn over the card until its rerun draws them
  S.labelCss = (touched) => {
    let css = "";
    for (const [num, pending] of touched) {
      const value = S.labelOf(num);
      const what = value ? SHORT[value] : "cleared";
      const chip = pending ? `saving: ${what}…` : `✓ saved: ${what}`;
      const colours = pending ? "background:#fff7ed;color:#9a3412;border:1px solid #fdba74" :
        "background:#dcfce7;color:#166534;border:1px solid #86efac";
      css += `.st-key-nw-card-${num}{position:relative}` +
        `#nw-stamp-${num}{visibility:hidden}` +
        `.st-key-nw-card-${num}::after{content:"${chip}";position:absolute;top:.45rem;` +
        `right:.7rem;font-size:.75rem;padding:1px 8px;border-radius:9px;${colours}}`;
      for (const [digit, label] of Object.entries(LABELS)) {
        const sel = `.st-key-nw-card-${num} button[data-nw-label="${digit}"]`;
        css += label === value ?
          `${sel}{background:#1f6feb;border-color:#1f6feb;color:#fff}` :
          `${sel}.nw-chosen{background:var(--nw-bg,#fff);` +
          `border-color:rgba(49,51,63,.2);color:rgb(49,51,63)}`;
      }
    }
    return css;
  };
  // dimensions likewise: the option the actions not drawn yet amount to, over the buttons
  S.dimCss = () => {
    let css = "";
    S.dims().forEach((d, k) => {
      const acts = S.dimActions(d);
      if (!acts.length) return;
      const pending = acts.some((a) => nwCore.queue.includes(a));
      const chosen = S.dimChoice(k);
      const sel = `#nw-dims button[data-nw-dim="${k}"]`;
      css += `${sel}.nw-chosen{background:var(--nw-bg,#fff);border-color:rgba(49,51,63,.2);` +
        `color:rgb(49,51,63)}`;
      if (chosen !== null) {
        css += `${sel}[data-nw-option="${chosen}"]{background:#1f6feb;border-color:#1f6feb;` +
          `color:#fff${pending ? ";outline:2px dashed #fdba74;outline-offset:1px" : ""}}`;
      }
    });
    return css;
  };
  // the toolbar's counter ("passage 2 of 7", "opening…") and what the next key does
  S.counter = (drawn) => {
    const where = document.querySelector(".nw-cursor-pos");
    if (!where) return;
    const text = S.barrier || !drawn ? "opening…" : S.prefix ?
      (S.prefix.walk !== undefined ? `dimension\n${S.prefix.walk + 1} of ${S.dims().length}` :
        "Q\n…") : S.n ? `passage\n${S.cursor} of ${S.n}` : "no\npassages";
    const tipText = S.prefix && drawn && !S.barrier ? "\n" + S.prefixText() : "";
    if (where.textContent !== text + tipText) {  // written only when it changes
      where.textContent = text;
      if (tipText) {
        // what the next key does, under the toolbar (the toolbar keeps its one row)
        const tip = document.createElement("span");
        tip.className = "nw-prefix-tip";
        tip.textContent = tipText;
        tip.style.cssText = "position:absolute;left:0;top:2.6rem;z-index:96;white-space:nowrap;" +
          "font-weight:500;font-size:.8rem;padding:2px 9px;border-radius:9px;background:#1e3a8a;" +
          "color:#fff;box-shadow:0 1px 3px rgba(0,0,0,.2);pointer-events:none";
        where.appendChild(tip);
      }
    }
    const note = document.querySelector(".nw-key-note");
    if (note) note.style.top = S.prefix ? "4.3rem" : "2.6rem";
  };
  S.paint = () => {
    if (!S.data) return;
    const drawn = S.data.item === S.item;  // the cards on the page are of our question
    let css = drawn ? S.cursorCss(S.cursor) + S.labelCss(S.touched()) + S.dimCss() : "";
    if (S.barrier || !drawn) {
      css += `${nwDom.MAIN} [class*="${nwDom.KEY_CLASS}nw-item-"]{opacity:.45;transition:opacity .15s}`;
    }
    nwCore.setText(style, css);
    S.counter(drawn);
  };

  S.say = (text) => {  // a short note in view, next to the cursor counter (our own words)
    const note = document.querySelector(".nw-key-note");
    if (!note) return;
    note.textContent = text;
    note.style.opacity = "1";
    clearTimeout(S.sayTimer);
    S.sayTimer = setTimeout(() => { note.style.opacity = "0"; }, 3500);
  };

  S.scroll = () => {
    if (!S.data || S.data.item !== S.item) return;  // still opening: not its cards
    // a RAG run's answer shown above the passages (?rag_run=, a link from the RAG answers
    // page) is what the page opened for: a question's first scroll goes to it, its
    // outlined sentence in view, not to the cursor's passage
    const linked = S.scrolledTo !== S.item && new URLSearchParams(location.search).has("rag_run");
    const panel = linked ? document.querySelector(".st-key-nw-rag-panel") : null;
    if (linked && !panel && (S.panelTries = (S.panelTries || 0) + 1) < 20) {
      setTimeout(S.scroll, 150);  // the panel is drawn after the toolbar: wait for it
      return;
    }
    S.panelTries = 0;
    const card = panel || document.querySelector(".st-key-nw-card-" + S.cursor);
    if (!card) return;
    S.scrolledTo = S.item;
    const r = card.getBoundingClientRect();
    const bar = document.querySelector(".st-key-nw-top");  // the sticky label toolbar
    const below = bar ? bar.getBoundingClientRect().bottom + 8 : 170;
    if (r.top < below || r.top > window.innerHeight - 140) {
      card.style.scrollMarginTop = below + "px";  // land just under the toolbar
      card.scrollIntoView({block: "start", behavior: "instant"});
    }
    const mark = panel && panel.querySelector("mark.nw-current");
    if (mark && mark.getBoundingClientRect().bottom > window.innerHeight) {
      mark.scrollIntoView({block: "center", behavior: "instant"});
    }
  };

  // what the page shows until it is redrawn (the server decides: R is applied there)
  S.labelOf = (num) => {
    let value = S.data.item === S.item ? (S.data.labels || {})[String(num)] || null : null;
    // the suggestion an accept gives (the page's data names it, for the drawn question)
    const offered = S.data.item === S.item ? (S.data.suggested || {})[String(num)] || null : null;
    for (const a of nwCore.overlay((a) => a.item === S.item && (a.kind === "rest" ||
                                   a.kind === "accept" ||
                                   (a.kind === "set" && a.field === "label:" + num)))) {
      value = a.kind === "rest" ? value || "irrelevant" :
        a.kind === "accept" ? value || offered : toggled(value, a);
    }
    return value;
  };
  const toggled = (value, a) => (a.toggle && value === a.value ? null : a.value);

  // toggle: the server clears the label instead if it is already `value` (a click on it)
  S.label = (num, value, advance, toggle = false) => {
    if (!S.who()) { S.hint(); return; }
    nwCore.push({kind: "set", dataset: S.data.dataset, item: S.item, annotator: S.who(),
                 field: "label:" + num, value, toggle});
    if (advance) S.cursor = Math.min(num + 1, Math.max(1, S.n));
    else S.cursor = num;
    S.paint();
    setTimeout(S.scroll, 30);
  };

  S.hint = () => {
    const field = document.querySelector(nwDom.NAME_FIELD);
    if (field) { field.focus(); field.scrollIntoView({block: "center"}); }
  };

  // aim the keys at a question a move leads to (the page's data names it)
  S.arrive = (target) => {
    S.item = target.item;
    S.n = target.n;
    S.cursor = Math.max(1, Math.min(target.cursor || 1, Math.max(1, target.n)));
  };
  // follow the page's data: where the server has this tab (our move, or one the page made)
  S.follow = () => {
    const data = S.data;
    // another question, or the same one for another person (a name typed, or typed
    // over the remembered one): the cursor goes where the server puts it for them; a
    // name the session lost for a moment (drawn empty) leaves it where it is
    if (S.item !== data.item || (data.annotator && S.cursorFor !== data.annotator)) {
      S.cursor = data.cursor || 1;
      S.cursorFor = data.annotator;
    }
    S.item = data.item;
    S.n = data.n;
  };
  S.ask = (seek) => nav.ask(seek);

  S.dims = () => (S.data && S.data.dims) || [];
  S.prefixText = () => {
    if (S.prefix.walk !== undefined) {
      const k = S.prefix.walk;
      const d = S.dims()[k];
      const file = S.fileChoice(k);
      return `${d.title} (${k + 1}/${S.dims().length}): ` +
        d.options.map((o, i) => `${i + 1} ${o}`).join(" · ") +
        (file === null ? "" : ` · Enter: the file's (${d.options[file]})`) +
        " · Space: leave · 0 clear · Esc";
    }
    if (S.prefix.dim === undefined) {
      return "Q: " + S.dims().map((d, i) => `${i + 1} ${d.title}`).join(" · ") +
        ` · ${S.dims().length + 1} Category · Esc`;
    }
    const d = S.dims()[S.prefix.dim];
    return `${d.title}: ` + d.options.map((o, i) => `${i + 1} ${o}`).join(" · ") + " · 0 clear";
  };
  // a dimension's actions the page's data may not show yet, in order
  S.dimActions = (d) => nwCore.overlay((a) => a.kind === "set" && a.item === S.item &&
    S.data && a.dataset === S.data.dataset && d.fields.some((f) => a.field === "dim:" + f));
  // the option a dimension holds: the saved values, then those actions (an option's ""
  // matches any value of its field, as needlework.grounding.keymap.choice_of)
  S.dimChoice = (k) => {
    const d = S.dims()[k];
    if (!d || !S.data) return null;
    const saved = S.data.item === S.item ? S.data.dimValues || {} : {};
    const got = d.fields.map((f) => (("dim:" + f) in saved ? saved["dim:" + f] : null));
    for (const a of S.dimActions(d)) {
      const i = d.fields.indexOf(a.field.slice(4));
      got[i] = toggled(got[i], a);
    }
    const found = d.values.findIndex((want) => want.every((w, i) => w === "" || w === got[i]));
    return found < 0 ? null : found;
  };
  // the option the file's own values amount to (only when the page may show them)
  S.fileChoice = (k) => {
    const d = S.dims()[k];
    if (!d || !S.data || S.data.item !== S.item) return null;
    const file = S.data.fileDims || {};
    const got = d.fields.map((f) => file["dim:" + f] || null);
    if (got.every((v) => v === null)) return null;
    const found = d.values.findIndex((want) => want.every((w, i) => w === "" || w === got[i]));
    return found < 0 ? null : found;
  };
  S.takeFile = () => {  // V: the file's value of every dimension not set yet
    if (S.data.item !== S.item) return;
    let n = 0;
    S.dims().forEach((d, k) => {
      const file = S.fileChoice(k);
      if (file !== null && S.dimChoice(k) === null) { S.setDim(d, file, true); n += 1; }
    });
    const field = "dim:question_category";
    const file = (S.data.fileDims || {})[field];
    const mine = (S.data.dimValues || {})[field] || nwCore.overlay((a) => a.kind === "set" &&
      a.item === S.item && a.field === field).length;
    if (file && !mine) {
      nwCore.push({kind: "set", dataset: S.data.dataset, item: S.item, annotator: S.who(),
                   field, value: file});
      n += 1;
    }
    S.say(Object.keys(S.data.fileDims || {}).length ?
      `took the file's value of ${n} dimension(s) you had not set` :
      "the file's values are hidden or absent here: nothing taken");
  };
  S.category = () => {  // Q 7: open the category list (type to filter, Enter chooses)
    const box = document.querySelector(`${nwDom.key("nw-category")} input`);
    if (!box || box.disabled) return;
    box.scrollIntoView({block: "center"});
    box.focus();
    const open = document.querySelector(`${nwDom.key("nw-category")} ${nwDom.SELECT_OPEN}`);
    // after the key's own events (react-aria opens the list on a press of its button)
    setTimeout(() => { if (open) open.click(); else box.click(); }, 0);
  };
  S.setDim = (d, option, quiet = false) => {
    const values = option === null ? d.fields.map(() => null) : d.values[option];
    d.fields.forEach((f, k) => nwCore.push({kind: "set", dataset: S.data.dataset, item: S.item,
      annotator: S.who(), field: "dim:" + f, value: values[k]}));
    if (!quiet) S.say(`${d.title}: ${option === null ? "cleared" : d.options[option]}`);
  };
  // H: the person's choice to hide the file's labels and the suggestions, an action in
  // order with the labels (each label counts what was on screen); from what the page
  // drew and the H presses not drawn yet
  S.hide = () => {
    const pressed = nwCore.overlay((a) => a.kind === "view" && a.field === "hide_suggestions");
    const now = pressed.length ? pressed[pressed.length - 1].value : !!S.data.hidden;
    nwCore.push({kind: "view", dataset: S.data.dataset, item: S.item, annotator: S.who(),
                 field: "hide_suggestions", value: !now});
    S.say(now ? "H: the suggestions and the file's own values shown again"
              : "H: the suggestions and the file's own values hidden");
  };
  S.click = (selector) => {
    const el = document.querySelector(selector);
    if (el) el.click();
    return !!el;
  };

  // W: one key per dimension, in order (any other key stops the walk, then acts)
  S.walkKey = (key) => {
    const digit = /^[0-9]$/.test(key) ? parseInt(key, 10) : null;
    const k = S.prefix.walk;
    const d = S.dims()[k];
    if (digit === null && key !== "enter" && key !== " ") {
      S.prefix = null;
      S.paint();
      S.handle(key);
      return;
    }
    if (digit === 0) S.setDim(d, null);
    else if (digit && digit <= d.options.length) S.setDim(d, digit - 1);
    else if (key === "enter" && S.fileChoice(k) !== null) S.setDim(d, S.fileChoice(k));
    else if (digit) { S.say(`${d.title} has ${d.options.length} options`); return; }
    S.prefix.walk = k + 1;
    if (S.prefix.walk >= S.dims().length) { S.prefix = null; S.say("dimensions done"); }
    S.paint();
  };
  // Q, then a dimension, then its option
  S.dimKey = (key) => {
    const digit = /^[0-9]$/.test(key) ? parseInt(key, 10) : null;
    if (S.prefix.dim === undefined) {
      if (digit && digit <= S.dims().length) S.prefix.dim = digit - 1;
      else { S.prefix = null; if (digit === S.dims().length + 1) S.category(); }
    } else {
      const d = S.dims()[S.prefix.dim];
      if (digit === 0) S.setDim(d, null);
      else if (digit && digit <= d.options.length) S.setDim(d, digit - 1);
      S.prefix = null;
    }
    S.paint();
  };
  const named = (fn) => () => { if (!S.who()) S.hint(); else fn(); };
  // keys that save nothing by themselves: prefixes, moves, the cursor, the view
  const VIEW = {
    q: named(() => { S.prefix = {}; S.paint(); }),
    w: named(() => {
      if (S.data.item !== S.item) return;  // still opening
      S.prefix = {walk: 0};
      S.paint();
    }),
    v: named(() => { S.takeFile(); S.paint(); }),
    n: () => S.ask(SEEK.n), p: () => S.ask(SEEK.p), u: () => S.ask(SEEK.u),
    "?": () => S.click(".st-key-nw-keymap button"),
    // H: kept per person (an action); with no name yet, for this session (the switch)
    h: () => (S.who() ? S.hide() : S.click(".st-key-nw-hide-imported input")),
    j: () => S.step(1), k: () => S.step(-1),
  };
  S.step = (by) => {  // J / K: the passage cursor
    S.cursor = Math.max(1, Math.min(S.cursor + by, Math.max(1, S.n)));
    S.paint();
    setTimeout(S.scroll, 30);
  };
  const undo = (key) => {
    nwCore.push({kind: key === "z" ? "undo" : "redo", dataset: S.data.dataset,
                 annotator: S.who(), scope: "annotate"});
    S.say(key === "z" ? "undoing your last change…" : "redoing…");
  };
  // keys of the question as a whole (a name needed)
  const QUESTION = {
    z: undo, Z: undo,
    m: () => {
      if (S.data.item !== S.item) return;  // still opening: the box is the last question's
      const box = document.querySelector(".st-key-nw-comment input");
      if (box) { box.focus(); box.setSelectionRange(box.value.length, box.value.length); }
    },
    f: () => {  // a toggle the server decides (the page may not show an undo yet)
      nwCore.push({kind: "set", dataset: S.data.dataset, item: S.item,
                   annotator: S.who(), field: "flag", value: "flagged", toggle: true});
      S.paint();
    },
    s: () => {
      nwCore.push({kind: "set", dataset: S.data.dataset, item: S.item,
                   annotator: S.who(), field: "skipped", value: "skipped"});
      S.say("skipped");
      S.ask("next");
    },
  };
  // keys of the passages (a name needed; but D, on a question with passages)
  const PASSAGES = {
    0: () => S.label(S.cursor, null, false),
    y: () => {
      // one action: the server gives each passage still unlabeled its suggestion when it
      // applies it (the suggestions it stores, that this person may see); on a question
      // still being opened (N then Y at full speed) it goes too, the server decides
      if (S.data.item === S.item && !Object.keys(S.data.suggested || {}).length) {
        S.say("no suggestions shown on this question");
        return;
      }
      nwCore.push({kind: "accept", dataset: S.data.dataset, item: S.item, annotator: S.who()});
      S.say("accepting the suggestions for the unlabeled passages…");
      S.paint();
    },
    r: () => {
      // one action: the server labels what is unlabeled when it applies it, so an undo
      // sent just before counts (the page's copy may still show the undone label)
      nwCore.push({kind: "rest", dataset: S.data.dataset, item: S.item, annotator: S.who()});
      S.say("marking the unlabeled passages irrelevant…");
      S.paint();
    },
    d: () => {
      if (S.data.answered && S.data.item === S.item) S.say("the answer is not empty: D writes the deflection into an empty answer only");
      else {
        nwCore.push({kind: "deflect", dataset: S.data.dataset, item: S.item,
                     annotator: S.who()});
        S.say("deflection written in the answer");
      }
    },
  };
  S.handle = (key) => {
    if (!S.data || nav.hold(key)) return;
    if (S.prefix && S.prefix.walk !== undefined) { S.walkKey(key); return; }
    if (S.prefix) { S.dimKey(key); return; }
    if (Object.hasOwn(VIEW, key)) { VIEW[key](); return; }
    if (!S.who()) { S.hint(); return; }
    if (Object.hasOwn(QUESTION, key)) { QUESTION[key](key); return; }
    if (!S.n && key !== "d") return;
    if (key in LABELS) S.label(S.cursor, LABELS[key], true);
    else if (Object.hasOwn(PASSAGES, key)) PASSAGES[key]();
  };

  S.receive = (data) => {
    S.data = data;
    if (data.keys) { LABELS = data.keys.labels || {}; SHORT = data.keys.short || {}; }
    const line = data.line || {ahead: [], behind: []};
    nav.receive(data, {here: {item: data.item, n: data.n, cursor: data.cursor},
                       ahead: line.ahead, behind: line.behind});
    S.cursor = Math.max(1, Math.min(S.cursor, Math.max(1, S.n)));
    S.paint();
    // bring the cursor's card into view once a question is drawn; later reruns of the
    // same question (a dimension, the comment) leave the page where the annotator is
    if (S.scrolledTo !== S.item) setTimeout(S.scroll, 120);
  };

  const keyOf = (el) => {
    const m = (el.className || "").match(/st-key-nw-key-([a-z0-9-]+)/);
    return m ? m[1] : null;
  };
  document.addEventListener("keydown", (e) => {
    if (!S.active() || !S.data) return;
    const t = e.target;
    // typing in a field is typing (a select's input only while its list is open)
    const textField = nwNavigator.typing(t, nwDom.SELECT);
    if (e.key === "Escape" && textField) { t.blur(); return; }
    if (e.key === "Escape" && S.prefix) { S.prefix = null; S.paint(); return; }
    if (textField || e.altKey || !e.key) return;
    const lower = e.key.toLowerCase();
    if (e.ctrlKey || e.metaKey) {
      // Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y outside a text field: our undo and redo (the
      // browser's own would undo the last text typed, e.g. blank the name field)
      if (lower !== "z" && lower !== "y") return;
      e.preventDefault(); e.stopPropagation();
      if (!e.repeat) S.handle(lower === "y" || e.shiftKey ? "Z" : "z");
      return;
    }
    if (lower === "a" && !S.prefix) {
      if (S.data.item !== S.item) { e.preventDefault(); return; }  // still opening
      const box = document.querySelector(".st-key-nw-answer textarea");
      if (box && !box.disabled) {
        e.preventDefault(); e.stopPropagation();
        box.focus();
        box.setSelectionRange(box.value.length, box.value.length);
      }
      return;
    }
    if (S.prefix && S.prefix.walk !== undefined && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault(); e.stopPropagation();
      if (!e.repeat) S.handle(e.key === "Enter" ? "enter" : " ");
      return;
    }
    // Shift is allowed: digits need it on some layouts (AZERTY); Shift+Z is redo
    const key = lower === "z" && e.shiftKey ? "Z" : e.key === "?" ? "?" : lower;
    if (key.length !== 1 ||
        !(key in LABELS || key in SEEK || ONE_KEY.includes(key) || key === "Z" || key === "q" ||
          (S.prefix && /^[0-9]$/.test(key)))) return;
    e.preventDefault(); e.stopPropagation();
    if (e.repeat) return;  // a key held down acts once
    S.handle(key);
  }, true);

  // label buttons on the cards and the toolbar's key buttons act like their keys
  document.addEventListener("click", (e) => {
    if (!S.active() || !S.data) return;
    const button = e.target.closest && e.target.closest("button");
    if (!button) return;
    if (button.dataset.nwLabel && button.dataset.nwPassage) {  // a card's label button
      e.preventDefault(); e.stopPropagation();
      if (button.disabled || S.barrier || S.data.item !== S.item) return;
      const value = LABELS[button.dataset.nwLabel];
      if (value) S.label(parseInt(button.dataset.nwPassage, 10), value, false, true);
      return;
    }
    if (button.dataset.nwDim !== undefined && button.dataset.nwOption !== undefined) {
      // a dimension's option button: set it, or clear it when it is the one held
      e.preventDefault(); e.stopPropagation();
      if (button.disabled || S.barrier || S.data.item !== S.item) return;
      if (!S.who()) { S.hint(); return; }
      const k = parseInt(button.dataset.nwDim, 10);
      const option = parseInt(button.dataset.nwOption, 10);
      const d = S.dims()[k];
      if (!d || !(option >= 0 && option < d.options.length)) return;
      S.setDim(d, S.dimChoice(k) === option ? null : option);
      S.paint();
      return;
    }
    const box = button.closest('[class*="st-key-nw-key-"]');
    const key = box && keyOf(box);
    if (!key) return;
    e.preventDefault(); e.stopPropagation();
    const map = {"prev": "k", "next": "j", "clear": "0", "item-prev": "p", "item-next": "n",
                 "item-unfinished": "u", "deflect": "d"};
    S.handle(map[key] || key);
  }, true);

  // the answer draft is committed 1.5 s after typing pauses (Ctrl+Enter commits a text area)
  let draftTimer = null;
  document.addEventListener("input", (e) => {
    const t = e.target;
    if (!t || t.tagName !== "TEXTAREA" || !t.closest(".st-key-nw-answer")) return;
    clearTimeout(draftTimer);
    draftTimer = setTimeout(() => {
      if (document.activeElement !== t) return;  // a blur already saved it
      t.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", code: "Enter",
        ctrlKey: true, bubbles: true, cancelable: true}));
    }, 1500);
  }, true);
  nwCore.listeners.add(() => S.paint());
  nwCore.revertListeners.add((u) => {  // an undo or redo came back: show what it reverted
    const label = u.field.startsWith("label:") ? `passage ${u.field.slice(6)}'s label` :
      u.field.startsWith("dim:") ? "a dimension" : u.field;
    if (S.data && u.item === S.item && u.field.startsWith("label:")) {
      S.cursor = parseInt(u.field.slice(6), 10) || S.cursor;
      S.paint();
      setTimeout(S.scroll, 30);
    }
    S.say(u.item === S.item ? `reverted ${label}` : `reverted ${label} of another question`);
  });
  nwCore.tellListeners.add((t) => S.say(t.message));  // R: how many it marked; F: on or off
  return S;
}

export default function (component) {
  const S = annotateKeys();
  const holder = component.parentElement;
  if (holder && !holder.querySelector(".nw-cursor-pos")) {
    const span = document.createElement("span");
    span.className = "nw-cursor-pos";
    span.title = "The current passage (outlined): the label keys act on it.";
    span.style.cssText = "display:inline-block;font-weight:600;font-size:.82rem;line-height:1.15;" +
      "white-space:pre;text-align:center";
    holder.appendChild(span);
    const note = document.createElement("span");
    note.className = "nw-key-note";
    note.setAttribute("role", "status");
    note.style.cssText = "position:absolute;left:0;top:2.6rem;z-index:95;white-space:nowrap;" +
      "font-size:.8rem;padding:2px 8px;border-radius:9px;background:#eef4ff;color:#1e3a8a;" +
      "box-shadow:0 1px 3px rgba(0,0,0,.15);opacity:0;transition:opacity .3s;pointer-events:none";
    holder.style.position = "relative";
    holder.appendChild(note);
  }
  S.receive(component.data);
}
