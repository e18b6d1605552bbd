// The review page's keyboard: verdicts and reasons become actions aimed at a comparison.
//
// A F T B S name a verdict on the comparison on screen (chosen i vs rejected j of an item)
// and go to the outbox (nwCore) with the reasons picked for it and the note as typed;
// 1-7 toggle a reason (kept here until there is a verdict, then saved at once). J / K / N
// ask the server for the next / previous / next unreviewed comparison; keys pressed
// until it is shown are held and then aimed at it. Clicks on those buttons act the same.
// `data` is the server's view: {dataset, annotator, item, i, j, verdict, reasons, advance,
// seenRev}. No data is ever put into HTML here.
// the verdicts' and reasons' keys come with the page's data (needlework.review.verdicts)
let VERDICTS = {};
let REASONS = {};
const SEEK = {j: "next", k: "previous", n: "unreviewed"};
const BARRIER = "nw-review-barrier";

function reviewKeys() {
  if (window.__nwReview) return window.__nwReview;
  const S = {data: null, at: null, rev: 0, barrier: null, held: [], drafts: {},
             active: () => !!document.querySelector(".st-key-rv-verdicts")};
  window.__nwReview = S;
  try {
    const saved = JSON.parse(sessionStorage.getItem(BARRIER) || "null");
    if (saved && saved.view) { S.barrier = saved.view; S.held = saved.held || []; S.rev = saved.view.rev; }
  } catch (e) { /* ignore */ }
  const saveBarrier = () => {
    try {
      if (S.barrier) sessionStorage.setItem(BARRIER, JSON.stringify({view: S.barrier, held: S.held}));
      else sessionStorage.removeItem(BARRIER);
    } catch (e) { /* ignore */ }
  };
  const style = document.createElement("style");
  style.id = "nw-review-style";
  document.head.appendChild(style);

  // who gives the verdicts: the session's annotator, or for a moment after a server
  // restart (the session has no name yet) the name this browser remembers
  S.who = () => (S.data && S.data.annotator) || nwCore.remembered();
  const id = () => `${S.at.item}\u0000${S.at.i}\u0000${S.at.j}`;
  S.pendingVerdict = () => {
    let v = null;
    for (const a of nwCore.overlay((a) => a.kind === "verdict" && a.item === S.at.item &&
                                   a.i === S.at.i && a.j === S.at.j)) v = a.verdict;
    return v;
  };
  S.reasons = () => {
    const draft = S.drafts[id()];
    if (draft) return draft;
    const same = S.data.item === S.at.item && S.data.i === S.at.i && S.data.j === S.at.j;
    let reasons = same ? S.data.reasons || [] : [];
    for (const a of nwCore.overlay((a) => (a.kind === "verdict" || a.kind === "reasons") &&
                                   a.item === S.at.item && a.i === S.at.i && a.j === S.at.j)) {
      reasons = a.flip ? flipped(reasons, a.flip) : a.reasons;
    }
    return reasons;
  };
  const flipped = (reasons, tag) => {
    const now = new Set(reasons);
    if (now.has(tag)) now.delete(tag); else now.add(tag);
    return Object.values(REASONS).filter((r) => now.has(r));
  };
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
    if (S.barrier) css += '[data-testid="stMain"] .st-key-rv-responses{opacity:.45}';
    style.textContent = css;
  };

  S.ask = (view) => {
    S.rev = Math.max(S.rev + 1, Date.now());
    S.barrier = {page: "review", dataset: S.data.dataset, item: S.at.item, i: S.at.i, j: S.at.j,
                 ...view, rev: S.rev};
    S.held = [];
    S.askedAt = Date.now();
    saveBarrier();
    S.paint();
    nwCore.setView(S.barrier);
  };

  const note = () => {
    const field = document.querySelector('[data-testid="stSidebar"] input[aria-label="Note"]');
    return field ? field.value : null;
  };

  S.handle = (key) => {
    if (!S.data || !S.at) return;
    if (S.barrier) { S.held.push(key); saveBarrier(); nwCore.notify(); return; }
    if (key in SEEK) { S.ask({seek: SEEK[key]}); return; }
    if (!S.who()) {  // nothing is saved without a name: go and type it
      const field = document.querySelector('[data-testid="stSidebar"] input[aria-label="Annotator"]');
      if (field) { field.focus(); field.scrollIntoView({block: "center"}); }
      return;
    }
    if (key === "z" || key === "Z") {
      nwCore.push({kind: key === "z" ? "undo" : "redo", dataset: S.data.dataset,
                   annotator: S.who(), scope: "review"});
      return;
    }
    if (key in VERDICTS) {
      nwCore.push({kind: "verdict", dataset: S.data.dataset, item: S.at.item, i: S.at.i,
                   j: S.at.j, annotator: S.who(), verdict: VERDICTS[key],
                   reasons: S.reasons(), note: note()});
      delete S.drafts[id()];
      if (S.data.advance) S.ask({seek: "unreviewed"});
      S.paint();
      return;
    }
    if (key in REASONS) {
      const tag = REASONS[key];
      if ((S.data.verdict && S.data.item === S.at.item && S.data.i === S.at.i &&
           S.data.j === S.at.j) || S.pendingVerdict()) {
        // the server flips the reason on what is saved (right after Z the page may still
        // show the reasons the undo took back)
        delete S.drafts[id()];
        nwCore.push({kind: "reasons", dataset: S.data.dataset, item: S.at.item, i: S.at.i,
                     j: S.at.j, annotator: S.who(), flip: tag});
      } else {
        S.drafts[id()] = flipped(S.reasons(), tag);  // goes with the verdict
      }
      S.paint();
    }
  };

  S.receive = (data) => {
    S.data = data;
    if (data.keys) { VERDICTS = data.keys.verdicts || {}; REASONS = data.keys.reasons || {}; }
    nwCore.forget(data.seen);
    if (S.barrier && S.barrier.dataset !== data.dataset) { S.barrier = null; S.held = []; saveBarrier(); }
    const caughtUp = (data.seenRev || 0) >= S.rev;
    if (!S.at || caughtUp) S.at = {item: data.item, i: data.i, j: data.j};
    if (!caughtUp && !S.barrier) {  // the server shows another comparison than ours: hold keys
      S.barrier = {page: "review", dataset: data.dataset, ...S.at, rev: S.rev, seek: null};
      S.held = [];
      saveBarrier();
    }
    if (caughtUp && S.barrier) {
      S.barrier = null;
      const held = S.held;
      S.held = [];
      saveBarrier();
      nwCore.view = {page: "review", dataset: data.dataset, ...S.at, rev: S.rev};
      for (const key of held) S.handle(key);
    } else if (S.barrier && Date.now() - (S.askedAt || 0) > 3000) {
      S.askedAt = Date.now();
      nwCore.setView(S.barrier);
    }
    S.paint();
  };

  const textField = (t) => {
    const tag = t && t.tagName;
    return tag === "TEXTAREA" || (tag === "INPUT" &&
      ["text", "search", "password", "email", ""].includes(t.type || "") &&
      !t.closest('[data-baseweb="select"]'));
  };
  document.addEventListener("keydown", (e) => {
    if (!S.active() || !S.data) return;
    const t = e.target;
    if (e.key === "Escape" && textField(t)) { t.blur(); return; }
    if (textField(t) || (t && t.isContentEditable) || e.altKey || !e.key) return;
    const lower = e.key.toLowerCase();
    if (e.ctrlKey || e.metaKey) {  // Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y: our undo and redo
      if (lower !== "z" && lower !== "y") return;
      e.preventDefault(); e.stopPropagation();
      if (!e.repeat) S.handle(lower === "y" || e.shiftKey ? "Z" : "z");
      return;
    }
    if (e.shiftKey && !/^[0-9]$/.test(e.key) && lower !== "z") return;
    const key = lower === "z" && e.shiftKey ? "Z" : lower;
    if (key.length !== 1 || !(key in VERDICTS || key in REASONS || key in SEEK ||
                              key === "z" || key === "Z")) return;
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
    else {
      const [, i, j] = what.split("_").map(Number);
      if (S.barrier) return;
      S.ask({i, j, seek: null});
    }
  }, true);
  // a clicked switch or radio keeps the focus, and the page ignores keys typed in any
  // input: give the focus back so the verdict keys work right after "Whole text"
  document.addEventListener("click", () => setTimeout(() => {
    const a = document.activeElement;
    if (a && a.tagName === "INPUT" && (a.type === "checkbox" || a.type === "radio")) a.blur();
  }, 0), true);
  nwCore.listeners.add(() => S.paint());
  // keys held until the asked-for place is shown count as not saved yet (moves do not)
  const MOVES = new Set(["j", "k", "n", "p", "u", "arrowup", "arrowdown", "arrowleft",
                         "arrowright", "escape", "tab", "pageup", "pagedown", "home", "end"]);
  nwCore.heldCounters.add(() => S.held.filter((k) => !MOVES.has(String(k).toLowerCase())).length);
  // a question asked and not answered in 3 s (a restart, a lost request): ask again
  setInterval(() => {
    if (S.barrier && S.data && Date.now() - (S.askedAt || 0) > 3000) {
      S.askedAt = Date.now();
      nwCore.setView(S.barrier);
    }
  }, 1000);
  return S;
}

export default function (component) {
  reviewKeys().receive(component.data);
}
