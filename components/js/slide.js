// @ts-check
// The needle slide's screen. A "Full screen" button (and the F key) puts the whole slide
// (title, finding, heatmap) in the browser's full screen, Esc or the button again leaves it.
// The slide measures the screen it is on and tells the page (state "screen": the window's
// width and height and the height left for the chart under the words and over the note), on
// first drawing, on resize and on entering or leaving full screen, so the chart takes the
// height there is and nothing scrolls. The finding is one line: while it runs past the
// slide's width its type shrinks, to 24 px at the least (then it wraps); the foot's notes
// (one across the slide, or one under each panel) shrink likewise while one runs past two
// lines. When the slide is
// first drawn in a tab the page is scrolled to its top. `data.label` and `data.leave` are
// our own words; `data.known` is the screen the page last heard of in this session (the
// slide entered again): the same measure is not sent again, so the page does not redraw.
// One state per page (window.__nwSlide, which the browser tests read).
import {perPage} from "./per_page.js";

/**
 * @typedef {{w: number, h: number, avail: number}} Screen
 * @typedef {object} SlideState
 * @property {boolean} keys              the page's listeners are on
 * @property {Screen | null} sent        the last screen the page was told
 * @property {{label: string, leave: string}} [words]  the button's words
 * @property {(name: string, value: unknown) => void} send  the component's state setter
 * @property {() => void} report         measure the screen, tell the page of a change
 * @property {Element | null} watched    the slide whose size is watched
 * @property {() => void} watch          watch the slide drawn now
 */
const MAIN = '[data-testid="stMain"]';
const SLIDE = ".st-key-nw-slide";
const CHART = ".st-key-nw-slide-chart";
const FOOT = ".st-key-nw-slide-foot";  // the notes under the chart
const MIN_FONT = 24;

function toggle() {
  if (document.fullscreenElement) {
    document.exitFullscreen().catch(() => {});
  } else {
    document.documentElement.requestFullscreen().catch(() => {});
  }
}

function top() {
  const main = document.querySelector(MAIN);
  if (main) main.scrollTo(0, 0);
  window.scrollTo(0, 0);
}

// The finding lines on one line each: the type shrinks while a line is wider than its box.
function fitFindings() {
  const lines = /** @type {NodeListOf<HTMLElement>} */ (
    document.querySelectorAll(`${SLIDE} [id^="nw-finding-"]`));
  for (const line of lines) {
    line.style.fontSize = "";
    line.classList.remove("nw-wraps");
    let size = parseFloat(getComputedStyle(line).fontSize);
    while (line.scrollWidth > line.clientWidth + 1 && size > MIN_FONT) {
      size = Math.max(MIN_FONT, size - 1);
      line.style.fontSize = `${size}px`;
    }
    if (line.scrollWidth > line.clientWidth + 1) line.classList.add("nw-wraps");
  }
}

// The foot's notes in two lines each at most: the type shrinks while a note runs longer.
function fitNotes() {
  const notes = /** @type {NodeListOf<HTMLElement>} */ (
    document.querySelectorAll(`${SLIDE} [id^="nw-present-note"]`));
  for (const note of notes) {
    note.style.fontSize = "";
    let size = parseFloat(getComputedStyle(note).fontSize);
    const lines = () => note.getBoundingClientRect().height /
                        (parseFloat(getComputedStyle(note).lineHeight) || 1.2 * size);
    while (lines() > 2.5 && size > MIN_FONT) {
      size = Math.max(MIN_FONT, size - 1);
      note.style.fontSize = `${size}px`;
    }
  }
}

// The height the chart may take: the window's, less what sits above the chart (its top on
// the page, scrolled to the top) and below it (the foot), less a small margin.
// Nothing (null) until the foot is drawn too: Streamlit draws a run's elements as they
// arrive, and a measure taken between the chart and its foot would leave the foot no room.
function measure() {
  const chart = document.querySelector(CHART);
  const foot = document.querySelector(FOOT);
  if (!chart || !foot) return null;
  const main = document.querySelector(MAIN);
  const scrolled = main ? main.scrollTop : 0;
  const box = chart.getBoundingClientRect();
  const below = Math.max(0, foot.getBoundingClientRect().bottom - box.bottom);
  const block = document.querySelector('[data-testid="stMainBlockContainer"]');
  const pad = block ? parseFloat(getComputedStyle(block).paddingBottom) || 0 : 0;
  const avail = Math.floor(innerHeight - (box.top + scrolled) - below - pad - 6);
  return {w: innerWidth, h: innerHeight, avail};
}

/**
 * @param {{parentElement: HTMLElement, data: {label: string, leave: string, known?: Screen},
 *          setStateValue: (name: string, value: unknown) => void}} component
 */
export default function (component) {
  const {parentElement, data, setStateValue} = component;
  const button = /** @type {HTMLButtonElement} */ (parentElement.querySelector("#nw-slide-full"));
  /** @type {SlideState} */
  const state = perPage("__nwSlide", () => ({keys: false, sent: null, send: () => {},
                                             report: () => {}, watched: null, watch: () => {}}));
  button.onclick = toggle;
  button.textContent = document.fullscreenElement ? data.leave : data.label;
  state.send = setStateValue;
  state.report = () => {
    fitFindings();
    fitNotes();
    const got = measure();
    if (!got) return;
    const last = state.sent;
    if (last && last.w === got.w && last.h === got.h && Math.abs(last.avail - got.avail) <= 3) return;
    state.sent = got;
    state.send("screen", got);
  };
  if (!state.keys) {
    state.keys = true;
    /** @type {any} */
    let timer = null;
    const later = () => { clearTimeout(timer); timer = setTimeout(() => state.report(), 150); };
    window.addEventListener("resize", later);
    document.addEventListener("fullscreenchange", () => {
      const b = document.querySelector("#nw-slide-full");
      if (b && state.words) {
        b.textContent = document.fullscreenElement ? state.words.leave : state.words.label;
      }
      later();
    });
    document.addEventListener("keydown", (event) => {
      if (!document.querySelector("#nw-slide-full")) return;  // not on the slide
      const t = /** @type {HTMLElement | null} */ (event.target);
      if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.key === "f" || event.key === "F") { event.preventDefault(); toggle(); }
    });
    // the words above the chart change size as they are drawn (a title, a finding): measure
    // again when the slide's size changes (the chart's own change leaves the result as it is)
    new ResizeObserver(later).observe(document.body);
    state.watched = null;
    state.watch = () => {
      const slide = document.querySelector(SLIDE);
      if (slide && slide !== state.watched) {
        state.watched = slide;
        new ResizeObserver(later).observe(slide);
      }
    };
  }
  state.words = {label: data.label, leave: data.leave};
  state.watch();
  if (!parentElement.dataset.nwShown) {  // a new element: the slide was just entered
    parentElement.dataset.nwShown = "1";
    top();
    requestAnimationFrame(top);
    setTimeout(top, 300);
    // a new slide: tell the page its screen unless it drew for this one already
    const known = data.known;
    state.sent = known && typeof known === "object" ? known : null;
  }
  setTimeout(() => state.report(), 200);
  setTimeout(() => state.report(), 800);
}
