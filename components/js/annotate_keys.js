// The annotate page's keyboard: the page script around the input interpreter.
//
// Every key and every click that changes data or the cursor is an event of one pure
// function, nwAnnotateInput.step (js/annotate_input.js), which holds all the page's input
// state (where the keys aim, the passage cursor, the Q / W prefix, the keys waiting for a
// question to be drawn) and answers with effects: actions for the outbox (nwCore), moves
// for the navigator (js/navigator_core.js: N / P / U, keys held for a question not in
// sight), notes, focus. A redraw is an event too: it gives the interpreter the page's new
// data, never a new state. This script only turns DOM events into those events and carries
// out the effects. The painting (js/annotate_paint.js) is loaded before this file, in the
// same module (components/annotate/keyboard.py). `data` is the page's: {dataset,
// annotator, item, n, cursor, labels, dimValues, answered, seq, moves, line, keys, dims}.
// No data is ever put into HTML here.
// the labels' short names come with the page's data (needlework.grounding.keymap)
let LABELS = {};
let SHORT = {};
const BARRIER = "nw-annotate-barrier";

function annotateKeys() {
  if (window.__nwAnnotate) return window.__nwAnnotate;
  const I = nwAnnotateInput;
  const S = {
    data: null, input: I.initial(),
    active: () => !!document.querySelector(nwDom.key("nw-toolbar")),
  };
  window.__nwAnnotate = S;
  // what the painting, the navigator and the tests read: the interpreter's state
  for (const name of ["item", "n", "cursor", "prefix", "cursorFor"]) {
    Object.defineProperty(S, name, {get: () => S.input[name], enumerable: true});
  }
  // who makes the changes: the session's annotator, or for a moment after a server
  // restart (the session has no name yet) the name this browser remembers
  S.who = () => (S.data && S.data.annotator) || nwCore.remembered();
  S.view = () => ({data: S.data, who: S.who(), overlay: nwCore.overlay(() => true),
                   settled: !nwDom.running()});
  // a run of the page ended: keys that waited for its boxes go on
  const app = document.querySelector(nwDom.APP);
  if (app) {
    new MutationObserver(() => {
      if (S.input.waiting.length && !nwDom.running()) S.dispatch({type: "settled"});
    }).observe(app, {attributes: true, attributeFilter: ["data-test-script-state"]});
  }

  const nav = nwNavigator.create(nwCore, {
    page: "annotate", storage: BARRIER,
    data: () => S.data, who: () => S.who(), paint: () => S.paint(), say: (t) => S.say(t),
    handle: (event) => S.dispatch(typeof event === "string" ? {type: "key", key: event} : event),
    here: () => (S.item === null ? null : {item: S.item, n: S.n, cursor: S.cursor}),
    drawn: () => !!S.data && S.data.item === S.item,
    same: (a, b) => a.item === b.item,
    fields: (at) => ({item: at.item, cursor: at.cursor}),
    link: (at) => ({item: at.item}),
    arrive: (target) => S.dispatch({type: "arrive", target: target || null}),
    beyond: (seek, k) => S.unfinishedAfter(seek, k),
    done: {next: "this is the last question in the list",
           previous: "this is the first question in the list",
           unfinished: "no unfinished question after this one"},
    other: "the page opened another question: the keys held for the next one were not applied",
  });
  S.nav = nav;
  for (const name of ["barrier", "held", "waitSeq", "moveId"]) {
    Object.defineProperty(S, name, {get: () => nav[name], enumerable: true});
  }
  // keys waiting for their question to be drawn count as not saved yet
  nwCore.heldCounters.add(() => S.input.waiting.length);
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

  // the interpreter's answers the painting reads
  S.labelOf = (num) => I.labelOf(S.input, S.view(), num);
  S.dims = () => (S.data && S.data.dims) || [];
  S.dimActions = (d) => I.dimActions(S.input, S.view(), d);
  S.dimChoice = (k) => I.dimChoice(S.input, S.view(), k);
  S.prefixText = () => I.prefixText(S.input, S.view());
  annotatePaint(S, style);  // the cards' saved chips, the counter, notes (js/annotate_paint.js)

  const focus = (selector, end = true) => {
    const box = document.querySelector(selector);
    if (!box || box.disabled) return false;
    box.focus();
    if (end && box.setSelectionRange) box.setSelectionRange(box.value.length, box.value.length);
    return true;
  };
  const FOCUS = {
    answer: () => focus(".st-key-nw-answer textarea"),
    comment: () => focus(".st-key-nw-comment input"),
    name: () => {
      const field = document.querySelector(nwDom.NAME_FIELD);
      if (field) { field.focus(); field.scrollIntoView({block: "center"}); }
    },
    category: () => {  // Q 7: open the category list (type to filter, Enter chooses)
      const box = document.querySelector(`${nwDom.key("nw-category")} input`);
      if (!box || box.disabled) return;
      box.scrollIntoView({block: "center"});
      box.focus();
      const open = document.querySelector(`${nwDom.key("nw-category")} ${nwDom.SELECT_OPEN}`);
      // after the key's own events (react-aria opens the list on a press of its button)
      setTimeout(() => { if (open) open.click(); else box.click(); }, 0);
    },
  };
  // characters typed while the box was opening, into the box that has the focus now, as
  // the browser types them (a text field's own input events: the field takes them as typed)
  const typeIn = (text) => {
    const box = document.activeElement;
    if (!box || !(box.tagName === "TEXTAREA" || box.tagName === "INPUT")) {
      S.say(`${text.length} character(s) typed for a box that did not open were not applied`);
      return;
    }
    for (const part of text.split(/(\x08)/)) {
      if (part === "\x08") document.execCommand("delete", false);
      else if (part) document.execCommand("insertText", false, part);
    }
  };
  const CLICK = {keymap: ".st-key-nw-keymap button", hide: ".st-key-nw-hide-imported input"};
  const run = (effect) => {
    if (effect.push) nwCore.push(effect.push);
    else if (effect.ask) nav.ask(effect.ask);
    else if (effect.say) S.say(effect.say);
    else if (effect.focus) FOCUS[effect.focus]();
    else if (effect.click) { const el = document.querySelector(CLICK[effect.click]); if (el) el.click(); }
    else if (effect.scroll) setTimeout(S.scroll, 30);
    else if (effect.replay) for (const event of effect.replay) S.dispatch(event);
    else if (effect.text) typeIn(effect.text);
    else if (effect.blur && document.activeElement && document.activeElement.blur) {
      document.activeElement.blur();
    }
  };

  // one event through the interpreter: its state first, then its effects in order (an
  // effect may dispatch again: a move aims the keys at once)
  S.dispatch = (event) => {
    if (!S.data) return;
    const plain = event.type === "key" && event.text === undefined;  // a key, kept by its name
    if ((event.type === "key" || event.type === "click") && nav.hold(plain ? event.key : event)) return;
    const {state, effects} = I.step(S.input, event, S.view());
    S.input = state;
    for (const effect of effects) run(effect);
    S.paint();
  };
  S.handle = (key) => S.dispatch({type: "key", key});

  S.receive = (data) => {
    S.data = data;
    if (data.keys) { LABELS = data.keys.labels || {}; SHORT = data.keys.short || {}; }
    const line = data.line || {ahead: [], behind: []};
    nav.receive(data, {here: {item: data.item, n: data.n, cursor: data.cursor},
                       ahead: line.ahead, behind: line.behind});
    S.dispatch({type: "data"});
    // bring the cursor's card into view once a question is drawn; later reruns of the
    // same question (a dimension, the comment) leave the page where the annotator is
    if (S.scrolledTo !== S.item) setTimeout(S.scroll, 120);
  };

  const keyOf = (el) => {
    const m = (el.className || "").match(/st-key-nw-key-([a-z0-9-]+)/);
    return m ? m[1] : null;
  };
  // the keys the interpreter takes: the labels', its own, and digits and Enter / Space
  // while a prefix is on or keys wait for the page (their meaning is decided in order)
  const taken = (key) => key.length === 1 && (key in LABELS || I.KEYS.includes(key) ||
    ((S.prefix || S.input.waiting.length) && /^[0-9 ]$/.test(key)));
  document.addEventListener("keydown", (e) => {
    if (!S.active() || !S.data) return;
    const t = e.target;
    // typing in a field is typing (a select's input only while its list is open)
    const textField = nwNavigator.typing(t, nwDom.SELECT);
    if (e.key === "Escape" && textField) { t.blur(); return; }
    if (e.key === "Escape" && (S.prefix || S.input.waiting.length)) { S.handle("escape"); return; }
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
    if (e.key === "Enter" && (S.prefix || S.input.waiting.length)) {
      e.preventDefault(); e.stopPropagation();
      if (!e.repeat) S.handle("enter");
      return;
    }
    // Shift is allowed: digits need it on some layouts (AZERTY); Shift+Z is redo
    const key = lower === "z" && e.shiftKey ? "Z" : e.key === "?" ? "?" : lower;
    if ((S.input.waiting.length || nav.barrier) && (e.key.length === 1 || e.key === "Backspace")) {
      // while keys wait for the page, every character waits with them: what it means (a
      // key, or text for a box opened before it) is decided in order (js/input_core.js)
      e.preventDefault(); e.stopPropagation();
      if (e.repeat) return;
      if (e.key === "Backspace") S.dispatch({type: "key", key: "backspace"});
      else S.dispatch({type: "key", key, text: e.key});
      return;
    }
    if (!taken(key)) return;
    if (key === "a" && !S.prefix) {
      // the answer box takes the focus (and the keys after it) only where there is one
      const box = document.querySelector(".st-key-nw-answer textarea");
      if (S.data.item === S.item && (!box || box.disabled)) return;
    }
    e.preventDefault(); e.stopPropagation();
    if (e.repeat) return;  // a key held down acts once
    S.handle(key);
  }, true);

  // label buttons on the cards, dimension options and the toolbar's key buttons are
  // events of the same interpreter as the keys
  // (the button gives the focus back: Enter or Space after a click must not press it again)
  document.addEventListener("click", (e) => {
    if (!S.active() || !S.data) return;
    const button = e.target.closest && e.target.closest("button");
    if (!button) return;
    if (button.dataset.nwLabel && button.dataset.nwPassage) {  // a card's label button
      e.preventDefault(); e.stopPropagation();
      button.blur();
      if (button.disabled) return;
      S.dispatch({type: "click", what: "label", item: S.data.item,
                  passage: parseInt(button.dataset.nwPassage, 10), digit: button.dataset.nwLabel});
      return;
    }
    if (button.dataset.nwDim !== undefined && button.dataset.nwOption !== undefined) {
      e.preventDefault(); e.stopPropagation();
      button.blur();
      if (button.disabled) return;
      S.dispatch({type: "click", what: "dim", item: S.data.item,
                  dim: parseInt(button.dataset.nwDim, 10),
                  option: parseInt(button.dataset.nwOption, 10)});
      return;
    }
    const box = button.closest('[class*="st-key-nw-key-"]');
    const key = box && keyOf(box);
    if (!key) return;
    e.preventDefault(); e.stopPropagation();
    button.blur();
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
    S.say(u.item === S.item ? `reverted ${label}` : `reverted ${label} of another question`);
  });
  nwCore.tellListeners.add((t) => S.say(t.message));  // R: how many it marked; F: on or off
  return S;
}

// the code is loaded once by its own component; the page's data comes every run by the
// courier drawn in the toolbar (components/annotate/keyboard.py), whose element holds the
// cursor's position and the notes
function receiveAnnotate(data, holder) {
  const S = annotateKeys();
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
  S.receive(data);
}

export default function () {
  nwMail.listen("annotate_keys", receiveAnnotate);
}
