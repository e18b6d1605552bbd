// @ts-check
// The responses on screen, for the review page's script (js/review_keys.js): when a
// comparison is first drawn, the page scrolls just enough that both responses' boxes end
// above the verdict bar (their first screen is text, not the page's header), keeping as
// much above them as fits. PageDown / PageUp, Space / Shift+Space and the arrows scroll
// both boxes together (the page where no box has more to show), with no click first
// (js/review_events.js). A view: nothing is saved.

/** @param {Element | null} el @returns {Element} */
const scroller = (el) => {
  for (let e = el && el.parentElement; e; e = e.parentElement) {
    const y = getComputedStyle(e).overflowY;
    if ((y === "auto" || y === "scroll") && e.scrollHeight > e.clientHeight) return e;
  }
  return /** @type {Element} */ (document.scrollingElement);
};
const boxes = () => [.../** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll(".st-key-rv-responses .nw-box"))];
const barTop = () => {
  const bar = document.querySelector(".st-key-rv-bar");
  return bar ? bar.getBoundingClientRect().top : window.innerHeight;
};
/** Scroll the page so the responses' boxes end above the verdict bar (a comparison
 * drawn for the first time). */
export function fit() {
  const all = boxes();
  if (!all.length) return;
  const top = Math.min(...all.map((b) => b.getBoundingClientRect().top));
  const bottom = Math.max(...all.map((b) => b.getBoundingClientRect().bottom));
  const over = bottom + 8 - Math.min(barTop(), window.innerHeight);
  if (over <= 0) return;
  const room = top - 64 - 56;  // keep the Streamlit header and the responses' titles clear
  if (room <= 0) return;
  scroller(all[0]).scrollTop += Math.min(over, room);
}
/**
 * Scroll both boxes by `pages` (the page where no box has more to show).
 * @param {number} pages
 */
export function scroll(pages) {
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
}
/** @type {Record<string, number>} the keys that scroll, and by how many pages */
export const SCROLLS = {PageDown: 1, PageUp: -1, " ": 1, ArrowDown: 0.2, ArrowUp: -0.2};
