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
// The painting (js/annotate_paint.js) and the dimension keys (js/annotate_dims.js) are
// loaded before this file, in the same module (components/annotate/keyboard.py).
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


  annotatePaint(S, style);  // the cards' saved chips, the counter, notes (js/annotate_paint.js)

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
  annotateDims(S, toggled);  // Q, W, V and the dimensions' state (js/annotate_dims.js)

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
