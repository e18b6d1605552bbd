// The review page's keyboard: the page script around the input interpreter.
//
// Every key and click that changes data or where the keys aim (the verdicts A F T B S,
// the reasons 1-7, J / K / N, Z, Y, M, a comparison clicked in the item's grid) is an event
// of the one interpreter of input (js/input_core.js, Review's table js/review_input.js),
// which holds the page's input state: the comparison the keys aim at, the reasons picked
// before a verdict, the verdict a reason right after it goes with, and the keys waiting for
// the page. A redraw gives it new data, never a new state. This script turns DOM events
// into events and carries out the effects: actions for the outbox (nwCore), moves for the
// navigator (js/navigator_core.js: keys held for a comparison not in sight), notes, focus.
// It also scrolls the responses (PageDown, Space, the arrows) and W shows the whole text
// or the window around the difference (side by side: or the first part; the "Whole text"
// switch): views, not data.
// `data` is the page's: {dataset, annotator, item, i, j, verdict, reasons, advance, seq,
// moves, line, keys, blind}. No data is ever put into HTML here.
// the verdicts' and reasons' keys come with the page's data (needlework.verdicts)
let VERDICTS = {};
let REASONS = {};
const BARRIER = "nw-review-barrier";

function reviewKeys() {
  if (window.__nwReview) return window.__nwReview;
  const I = nwReviewInput;
  const S = {data: null, input: I.initial(), known: {},
             active: () => !!document.querySelector(".st-key-rv-verdicts")};
  window.__nwReview = S;
  Object.defineProperty(S, "at", {get: () => S.input.at, enumerable: true});
  const sameAt = (a, b) => a.item === b.item && a.i === b.i && a.j === b.j;
  const nav = nwNavigator.create(nwCore, {
    page: "review", storage: BARRIER,
    data: () => S.data, who: () => S.who(), paint: () => S.paint(), say: (t) => S.say(t),
    handle: (event) => S.dispatch(typeof event === "string" ? {type: "key", key: event} : event),
    here: () => S.at, drawn: () => S.drawn(), same: sameAt,
    fields: (at) => ({item: at.item, i: at.i, j: at.j}),
    link: (at) => ({item: at.item, i: at.i + 1, j: at.j + 1}),
    arrive: (target) => S.dispatch({type: "arrive", target: target || null}),
    beyond: (seek, k) => S.unreviewedAfter(seek, k),
    done: {next: "This is the last comparison in this view.",
           previous: "This is the first comparison in this view.",
           unreviewed: "Every comparison in this view is reviewed."},
    other: "the page opened another comparison: the keys held for the next one were not applied",
  });
  S.nav = nav;
  // what the tests and the page read: the navigator's state
  for (const name of ["barrier", "held", "waitSeq", "moveId"]) {
    Object.defineProperty(S, name, {get: () => nav[name], enumerable: true});
  }
  Object.defineProperty(S, "line", {get: () => nav.line, enumerable: true});
  // keys waiting for the page count as not saved yet
  nwCore.heldCounters.add(() => S.input.waiting.length);
  const style = document.createElement("style");
  style.id = "nw-review-style";
  document.head.appendChild(style);

  // who gives the verdicts: the session's annotator, or for a moment after a server
  // restart (the session has no name yet) the name this browser remembers
  S.who = () => (S.data && S.data.annotator) || nwCore.remembered();
  // my verdict and reasons saved on the comparisons the page's data names (the one on
  // screen, where J / K / N lead, the item's grid): a key pressed on one of them before
  // the page has drawn it still knows what is saved there
  S.savedOf = (at) => S.known[I.idOf(at)] || {verdict: null, reasons: []};
  const noteValue = () => {
    const field = document.querySelector(nwDom.NOTE_FIELD);
    return field ? field.value : null;
  };
  S.view = () => ({data: S.data, who: S.who(), overlay: nwCore.overlay(() => true),
                   known: S.known, note: S.drawn() ? noteValue() : null});
  S.reasons = () => I.reasonsOf(S.input, S.view());
  S.paint = () => {
    if (!S.data || !S.at) return;
    let css = "";
    const reasons = new Set(S.reasons());
    for (const [key, tag] of Object.entries(REASONS)) {
      const on = reasons.has(tag);
      css += `.st-key-rv_r_${key} button{` + (on
        ? "background:#1f6feb;color:#fff;border-color:#1f6feb}"
        : "background:inherit;color:inherit;border-color:rgba(128,128,128,.4)}");
    }
    const pending = nwCore.pendingFor((a) => a.kind === "verdict" && a.item === S.at.item &&
                                      a.i === S.at.i && a.j === S.at.j).map((a) => a.verdict).pop();
    if (pending) {
      const key = Object.keys(VERDICTS).find((k) => VERDICTS[k] === pending);
      css += `.st-key-rv_v_${pending} button{outline:2px dashed #1f6feb;outline-offset:1px}` +
        `.st-key-rv-verdicts::after{content:"saving: ${key.toUpperCase()}…";font-size:.75rem;` +
        "color:#9a3412}";
    }
    if (S.barrier || !S.drawn()) css += `${nwDom.MAIN} ${nwDom.key("rv-responses")}{opacity:.45}`;
    nwCore.setText(style, css);
  };

  S.drawn = () => !!(S.data && S.at && S.data.item === S.at.item && S.data.i === S.at.i &&
                     S.data.j === S.at.j);
  S.say = (text) => {  // a short note under the verdict buttons (our own words)
    const box = document.querySelector(".st-key-rv-verdicts");
    if (!box) return;
    let note = box.querySelector(".nw-review-note");
    if (!note) {
      note = document.createElement("div");
      note.className = "nw-review-note";
      note.setAttribute("role", "status");
      note.style.cssText = "font-size:.8rem;color:#1e3a8a;transition:opacity .3s";
      box.appendChild(note);
    }
    note.textContent = text;
    note.style.opacity = "1";
    clearTimeout(S.sayTimer);
    S.sayTimer = setTimeout(() => { note.style.opacity = "0"; }, 3500);
  };

  // where N leads from line[k], a comparison the page has not drawn yet: the first one
  // after it with no verdict of mine, saved or on its way (null: the server decides)
  S.unreviewedAfter = (seek, k) => {
    if (seek !== "unreviewed") return null;
    // which verdicts an undo, a redo or an accept leaves is for the server to say
    if (nwCore.overlay((a) => a.kind === "undo" || a.kind === "redo" || a.kind === "accept").length) {
      return null;
    }
    for (const c of nav.line.slice(k + 1)) {
      const given = nwCore.overlay((a) => a.kind === "verdict" && a.item === c.item &&
                                   a.i === c.i && a.j === c.j).length;
      if (!given && !S.savedOf(c).verdict) return c;
    }
    return null;  // none in sight: the server finds it (its list wraps around)
  };
  // W: the "Whole text" switch (the whole of both texts, or the window around the
  // difference in focus; side by side, or their first part); where it cannot change
  // anything, the page says why
  S.whole = () => {
    const box = document.querySelector(".st-key-rv_whole input");
    if (box && !box.disabled) box.click();
    else S.say(box ? "W: both texts are shown whole already" : "W: this view has no whole text to show");
  };
  const FOCUS = {
    name: () => {
      const field = document.querySelector(nwDom.NAME_FIELD);
      if (field) { field.focus(); field.scrollIntoView({block: "center"}); }
    },
    note: () => {  // the note of this comparison (Enter saves, Esc leaves)
      const field = document.querySelector(nwDom.NOTE_FIELD);
      if (field) {
        field.scrollIntoView({block: "center"});
        field.focus();
        field.setSelectionRange(field.value.length, field.value.length);
      }
    },
  };
  const run = (effect) => {
    if (effect.push) nwCore.push(effect.push);
    else if (effect.ask !== undefined) nav.ask(effect.ask, effect.target || undefined);
    else if (effect.say) S.say(effect.say);
    else if (effect.focus) FOCUS[effect.focus]();
    else if (effect.replay) for (const event of effect.replay) S.dispatch(event);
  };
  // one event through the interpreter: its state first, then its effects in order (a move
  // aims the keys at once); a key the interpreter says goes with the verdict just given is
  // never held for a move
  S.dispatch = (event) => {
    if (!S.data) return;
    const input = event.type === "key" || event.type === "click";
    if (input && (!S.at || (I.holds(S.input, event, S.view()) &&
                            nav.hold(event.type === "key" ? event.key : event)))) return;
    const {state, effects} = I.step(S.input, event, S.view());
    S.input = state;
    for (const effect of effects) run(effect);
    S.paint();
  };
  S.handle = (key) => S.dispatch({type: "key", key});

  // The responses on screen: when a comparison is first drawn, the page scrolls just
  // enough that both responses' boxes end above the verdict bar (their first screen is
  // text, not the page's header), keeping as much above them as fits. PageDown / PageUp,
  // Space / Shift+Space and the arrows scroll both boxes together (the page where no
  // box has more to show), with no click first.
  const scroller = (el) => {
    for (let e = el && el.parentElement; e; e = e.parentElement) {
      const y = getComputedStyle(e).overflowY;
      if ((y === "auto" || y === "scroll") && e.scrollHeight > e.clientHeight) return e;
    }
    return document.scrollingElement;
  };
  const boxes = () => [...document.querySelectorAll(".st-key-rv-responses .nw-box")];
  const barTop = () => {
    const bar = document.querySelector(".st-key-rv-bar");
    return bar ? bar.getBoundingClientRect().top : window.innerHeight;
  };
  S.fit = () => {
    const all = boxes();
    if (!all.length) return;
    const top = Math.min(...all.map((b) => b.getBoundingClientRect().top));
    const bottom = Math.max(...all.map((b) => b.getBoundingClientRect().bottom));
    const over = bottom + 8 - Math.min(barTop(), window.innerHeight);
    if (over <= 0) return;
    const room = top - 64 - 56;  // keep the Streamlit header and the responses' titles clear
    if (room <= 0) return;
    scroller(all[0]).scrollTop += Math.min(over, room);
  };
  S.scroll = (pages) => {
    const all = boxes();
    const down = pages > 0;
    const more = all.filter((b) => b.scrollHeight > b.clientHeight + 2 &&
      (down ? b.scrollTop + b.clientHeight < b.scrollHeight - 2 : b.scrollTop > 0));
    if (more.length) {
      for (const b of more) b.scrollTop += pages * (b.clientHeight - 48);
      return;
    }
    const page = scroller(all[0] || document.querySelector(".st-key-rv-verdicts"));
    page.scrollTop += pages * (window.innerHeight - 220);
  };
  const SCROLLS = {PageDown: 1, PageUp: -1, " ": 1, ArrowDown: 0.2, ArrowUp: -0.2};

  S.receive = (data) => {
    S.data = data;
    const shown = `${data.item}\u0000${data.i}\u0000${data.j}`;
    if (S.fitFor !== shown) {  // a comparison drawn for the first time in this tab
      S.fitFor = shown;
      [60, 300, 900].forEach((ms) => setTimeout(S.fit, ms));
    }
    const line = data.line || {ahead: [], behind: []};
    const here = {item: data.item, i: data.i, j: data.j, verdict: data.verdict,
                  reasons: data.reasons};
    const around = [...(line.behind || []).slice().reverse(), here, ...(line.ahead || [])];
    // what is saved is the named reviewer's: a run drawn while the session has no name
    // for a moment (a server restart) says nothing of it, and another name starts anew
    if (data.annotator) {
      if (S.knownFor !== data.annotator) { S.known = {}; S.knownFor = data.annotator; }
      for (const c of [...Object.values(data.moves || {}), ...(data.grid || []), ...around]) {
        S.known[I.idOf(c)] = {verdict: c.verdict || null, reasons: c.reasons || []};
      }
    }
    const ids = Object.keys(S.known);
    if (ids.length > 5000) S.known = Object.fromEntries(ids.slice(-1000).map((k) => [k, S.known[k]]));
    if (data.keys) { VERDICTS = data.keys.verdicts || {}; REASONS = data.keys.reasons || {}; }
    nav.receive(data, {here, ahead: line.ahead, behind: line.behind});
    S.dispatch({type: "data"});
  };

  document.addEventListener("keydown", (e) => {
    if (!S.active() || !S.data) return;
    const t = e.target;
    // typing in a field is typing (a select's input only while its list is open)
    const textField = nwNavigator.typing(t, nwDom.SELECT);
    if (e.key === "Escape" && textField) { t.blur(); return; }
    if (textField || e.altKey || !e.key) return;
    const lower = e.key.toLowerCase();
    if (e.ctrlKey || e.metaKey) {  // Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y: our undo and redo
      if (lower !== "z" && lower !== "y") return;
      e.preventDefault(); e.stopPropagation();
      if (!e.repeat) S.handle(lower === "y" || e.shiftKey ? "Z" : "z");
      return;
    }
    if (e.key in SCROLLS && !(t && t.closest && t.closest(
        `${nwDom.SELECT},${nwDom.DATAFRAME},[role="slider"],[role="radiogroup"]`))) {
      e.preventDefault(); e.stopPropagation();
      S.scroll(e.key === " " && e.shiftKey ? -1 : SCROLLS[e.key]);
      return;
    }
    if (e.shiftKey && !/^[0-9]$/.test(e.key) && lower !== "z") return;
    if (lower === "w" && !(lower in VERDICTS || lower in REASONS)) {  // a view, nothing saved
      e.preventDefault(); e.stopPropagation();
      if (!e.repeat) S.whole();
      return;
    }
    const key = lower === "z" && e.shiftKey ? "Z" : lower;
    if (key.length !== 1 || !(key in VERDICTS || key in REASONS || key in I.SEEK ||
                              key === "z" || key === "Z" || key === "m" || key === "y")) return;
    e.preventDefault(); e.stopPropagation();
    if (e.repeat) return;
    S.handle(key);
  }, true);
  document.addEventListener("click", (e) => {
    if (!S.active() || !S.data || !e.target.closest || !e.target.closest("button")) return;
    const box = e.target.closest('[class*="st-key-rv_"]');
    const m = box && (box.className || "").match(/st-key-rv_(v_[a-z-]+|r_\d|prev|next_unreviewed|next|pick_\d+_\d+)\b/);
    if (!m) return;
    e.preventDefault(); e.stopPropagation();
    const what = m[1];
    if (what.startsWith("v_")) {
      const key = Object.keys(VERDICTS).find((k) => VERDICTS[k] === what.slice(2));
      if (key) S.handle(key);
    } else if (what.startsWith("r_")) S.handle(what.slice(2));
    else if (what === "prev") S.handle("k");
    else if (what === "next") S.handle("j");
    else if (what === "next_unreviewed") S.handle("n");
    else {  // a comparison of the item's grid, on the item the page shows
      const [, i, j] = what.split("_").map(Number);
      S.dispatch({type: "click", what: "pick", item: S.data.item, i, j});
    }
  }, true);
  // a clicked switch or radio keeps the focus, and the page ignores keys typed in any
  // input: give the focus back so the verdict keys work right after "Whole text"
  document.addEventListener("click", () => setTimeout(() => {
    const a = document.activeElement;
    if (a && a.tagName === "INPUT" && (a.type === "checkbox" || a.type === "radio")) a.blur();
  }, 0), true);
  nwCore.listeners.add(() => S.paint());
  // an undo or redo came back: say which comparison it changed, above all one not on screen
  nwCore.revertListeners.add((u) => {
    const m = /^verdict:(\d+):(\d+)$/.exec(u.field || "");
    if (!m) return;
    const here = S.at && u.item === S.at.item && Number(m[1]) === S.at.i && Number(m[2]) === S.at.j;
    // a blind annotator's page never names the sides (chosen i vs rejected j would)
    const which = S.data && S.data.blind ? "" :
      `, chosen ${Number(m[1]) + 1} vs rejected ${Number(m[2]) + 1}`;
    S.say(here ? "reverted this comparison's verdict" :
      `reverted your verdict on item ${u.item}${which} (not the one on screen)`);
  });
  return S;
}

// the code is loaded once by its own component; the page's data comes every run by the
// courier (components/review/keys.py)
export default function () {
  nwMail.listen("review_keys", (data) => reviewKeys().receive(data));
}
