// @ts-check
// The annotate page's painting, for its page script (js/annotate_keys.js), which calls
// annotatePaint(S, style) on its page object: the cursor's outline, the labels and
// dimensions the page has not drawn yet as "saving…" / "✓ saved" chips over the cards
// (generated CSS in `style`, the script's own <style>), the toolbar's counter, the short
// notes of what a key did, and scrolling the cursor's card into view. Label names come
// from S.labels and S.short (the page's data). Our own words only: no data is ever put
// into HTML here.
import {pageOutbox} from "./outbox_core.js";
import {nwDom} from "./st_dom.js";
/** @typedef {import("./annotate_keys.js").AnnotatePage} AnnotatePage */

/**
 * Add the painting to the page object `S`.
 * @param {AnnotatePage} S
 * @param {HTMLStyleElement} style
 */
export function annotatePaint(S, style) {
  const core = pageOutbox();
  // the cursor's outline, on the drawn question's cards; in the compact layout its
  // passage, folded to two lines elsewhere, whole (up to half the window)
  S.cursorCss = (c) => `.st-key-nw-card-${c}{box-shadow:0 0 0 3px #1f6feb;border-radius:.6rem}` +
    `.st-key-nw-card-${c} #nw-head-${c} mark.nw-cite:first-of-type{outline:2px solid #1f6feb}` +
    `.st-key-nw-card-${c} .nw-fold > #nw-passage-${c}{max-height:50vh!important}`;
  // labels the page's data does not show yet: pending ones ("saving") and ones the
  // server acknowledged ("saved"): passage number -> still pending?
  S.touched = () => {
    /** @type {Map<number, boolean>} */
    const touched = new Map();
    const mark = (/** @type {any} */ a, /** @type {boolean} */ pending) => {
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
    for (const s of core.settled) mark(s.action, false);
    for (const a of core.queue) mark(a, true);
    return touched;
  };
  // those labels, drawn over the card until its rerun draws them
  S.labelCss = (touched) => {
    let css = "";
    for (const [num, pending] of touched) {
      const value = S.labelOf(num);
      const what = value ? S.short[value] : "cleared";
      const chip = pending ? `saving: ${what}…` : `✓ saved: ${what}`;
      const colours = pending ? "background:#fff7ed;color:#9a3412;border:1px solid #fdba74" :
        "background:#dcfce7;color:#166534;border:1px solid #86efac";
      css += `.st-key-nw-card-${num}{position:relative}` +
        `#nw-stamp-${num}{visibility:hidden}` +
        `.st-key-nw-card-${num}::after{content:"${chip}";position:absolute;top:.45rem;` +
        `right:.7rem;font-size:.75rem;padding:1px 8px;border-radius:9px;${colours}}`;
      for (const [digit, label] of Object.entries(S.labels)) {
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
      const pending = acts.some((a) => core.queue.includes(a));
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
    const where = /** @type {HTMLElement | null} */ (document.querySelector(".nw-cursor-pos"));
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
    const note = /** @type {HTMLElement | null} */ (document.querySelector(".nw-key-note"));
    if (note) note.style.top = S.prefix ? "4.3rem" : "2.6rem";
  };
  S.paint = () => {
    if (!S.data) return;
    const drawn = S.data.item === S.item;  // the cards on the page are of our question
    let css = drawn ? S.cursorCss(S.cursor) + S.labelCss(S.touched()) + S.dimCss() : "";
    if (S.barrier || !drawn) {
      css += `${nwDom.MAIN} [class*="${nwDom.KEY_CLASS}nw-item-"]{opacity:.45;transition:opacity .15s}`;
    }
    core.setText(style, css);
    S.counter(drawn);
  };

  S.say = (text) => {  // a short note in view, next to the cursor counter (our own words)
    const note = /** @type {HTMLElement | null} */ (document.querySelector(".nw-key-note"));
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
    const card = /** @type {HTMLElement | null} */ (
      panel || document.querySelector(".st-key-nw-card-" + S.cursor));
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
}
