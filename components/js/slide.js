// The needle slide's screen: a "Full screen" button (and the F key) that puts the whole
// slide (title, finding, heatmaps) in the browser's full screen, which the chart's own
// full-screen view could not (it showed the cells alone, in small type), and Esc / the
// button again to leave it. When the slide is first drawn in a tab the page is scrolled to
// its top, so the title and the finding are on screen (entering from the lab kept the lab's
// scroll). `data.label` and `data.leave` are our own words.
const MAIN = '[data-testid="stMain"]';

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

export default function (component) {
  const {parentElement, data} = component;
  const button = parentElement.querySelector("#nw-slide-full");
  const state = window.__nwSlide || (window.__nwSlide = {keys: false});
  button.onclick = toggle;
  button.textContent = document.fullscreenElement ? data.leave : data.label;
  if (!state.keys) {
    state.keys = true;
    document.addEventListener("fullscreenchange", () => {
      const b = document.querySelector("#nw-slide-full");
      if (b && window.__nwSlideWords) {
        b.textContent = document.fullscreenElement ? window.__nwSlideWords.leave
                                                   : window.__nwSlideWords.label;
      }
    });
    document.addEventListener("keydown", (event) => {
      if (!document.querySelector("#nw-slide-full")) return;  // not on the slide
      const t = event.target;
      if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.key === "f" || event.key === "F") { event.preventDefault(); toggle(); }
    });
  }
  window.__nwSlideWords = {label: data.label, leave: data.leave};
  if (!parentElement.dataset.nwShown) {  // a new element: the slide was just entered
    parentElement.dataset.nwShown = "1";
    top();
    requestAnimationFrame(top);
    setTimeout(top, 300);
  }
}
