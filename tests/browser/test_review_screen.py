"""Review at 1280×800 shows the text (issue 29): each comparison opens with at least 20
lines of each response on screen (or all of a shorter one) above the verdict bar, whose
keys stay visible; PageDown / PageUp, Space and the arrows scroll both responses with no
click first."""

from __future__ import annotations

import uuid

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.harness import screenshot
from tests.browser.keys import key_state, open_review, settle_review

#: Each response box: lines on screen between Streamlit's header and the verdict bar, and
#: the lines it holds; the verdict buttons' box.
SCREEN = """() => {
  const bar = document.querySelector('.st-key-rv-bar').getBoundingClientRect();
  const floor = Math.min(bar.top, innerHeight);
  const boxes = [...document.querySelectorAll('.st-key-rv-responses .nw-box')].map(e => {
    const b = e.getBoundingClientRect(), lh = parseFloat(getComputedStyle(e).lineHeight);
    return {shown: Math.floor(Math.max(0, Math.min(b.bottom, floor) - Math.max(b.top, 64)) / lh),
            holds: Math.floor(e.clientHeight / lh), scroll: e.scrollTop,
            more: e.scrollHeight > e.clientHeight + 2};
  });
  const v = document.querySelector('.st-key-rv-verdicts').getBoundingClientRect();
  return {boxes, verdicts: {top: v.top, bottom: v.bottom}, height: innerHeight,
          at: window.__nwReview && window.__nwReview.at};
}"""


#: True once the comparison the keys aim at is drawn, the key script's fit (run 60, 300 and
#: 900 ms after a comparison is first drawn: ``S.receive`` in components/js/review_keys.js)
#: is done and the responses' boxes have kept still for ``quiet`` ms. The first call on a
#: page wraps ``S.receive`` so that each draw's fits count themselves (the timers read
#: ``S.fit`` when they are set): the fit is done once the three fits of the draw on screen
#: have run. For a comparison drawn before that (the page's first), whose timers cannot be
#: observed, once nothing (the comparison, the boxes, the scroll) has moved for ``settle`` ms,
#: longer than the timers run.
FITTED = """([quiet, settle]) => {
  const S = window.__nwReview;
  if (!S || !S.receive || !S.fit) return false;
  if (!S.nwFits) {
    S.nwFits = {};  // fits run, per draw
    S.nwDraw = null;  // the draw of the comparison on screen (null: drawn before this)
    let draws = 0;
    const receive = S.receive, fit = S.fit;
    S.receive = (data) => {
      const draw = ++draws, before = S.fitFor;
      S.fit = () => { S.nwFits[draw] = (S.nwFits[draw] || 0) + 1; return fit(); };
      receive(data);
      if (S.fitFor !== before) S.nwDraw = draw;
    };
  }
  const boxes = [...document.querySelectorAll('.st-key-rv-responses .nw-box')];
  const drawn = !!(S.data && S.at && S.data.item === S.at.item && S.data.i === S.at.i
                   && S.data.j === S.at.j && boxes.length);
  const now = performance.now();
  if (!drawn) { window.__nwFitted = undefined; return false; }
  const page = document.querySelector('[data-testid="stMain"]') || document.scrollingElement;
  const shape = JSON.stringify([S.data.item, S.data.i, S.data.j, page.scrollTop, boxes.map((b) => {
    const r = b.getBoundingClientRect(); return [r.top, r.bottom, r.width, b.scrollTop]; })]);
  const s = window.__nwFitted;
  if (!s || s.shape !== shape) { window.__nwFitted = {shape, since: now}; return false; }
  const still = now - s.since;
  return S.nwDraw === null ? still >= settle : (S.nwFits[S.nwDraw] || 0) >= 3 && still >= quiet;
}"""


def wait_fitted(page, quiet_ms: float = 100, settle_ms: float = 1500,
                timeout: float = 30_000) -> None:
    """Wait until Review has drawn the comparison its keys aim at and its fit of the
    responses above the verdict bar is done (:data:`FITTED`)."""
    page.evaluate("() => { window.__nwFitted = undefined; }")
    try:
        page.wait_for_function(FITTED, arg=[quiet_ms, settle_ms], timeout=timeout, polling="raf")
    except PlaywrightTimeout:
        raise AssertionError(f"the comparison was not drawn in {timeout:.0f} ms: "
                             f"{key_state(page)}; {page.evaluate(SCREEN)}") from None


def _drawn(page) -> dict:
    settle_review(page)
    wait_fitted(page)
    return page.evaluate(SCREEN)


def _scrolled(page, which: str) -> None:
    """Wait until ``some`` response box is scrolled down, or ``none`` is."""
    try:
        page.wait_for_function(
            "(which) => { const tops = [...document.querySelectorAll("
            "'.st-key-rv-responses .nw-box')].map((e) => e.scrollTop); return tops.length > 0 && "
            "(which === 'some' ? tops.some((t) => t > 0) : tops.every((t) => t === 0)); }",
            arg=which, timeout=5_000)
    except PlaywrightTimeout:
        raise AssertionError(f"{which} response scrolled: {page.evaluate(SCREEN)}") from None


def test_review_opens_each_comparison_on_its_text_and_scrolls_it_by_key(browser, app_url):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        open_review(page, app_url, f"screen-{uuid.uuid4().hex[:6]}")
        scrolled = False
        seen = []  # each comparison's place and its boxes: lines held, more to scroll
        for n in range(5):
            got = _drawn(page)
            seen.append((got["at"], [(b["holds"], b["more"]) for b in got["boxes"]]))
            assert len(got["boxes"]) == 2, got
            for box in got["boxes"]:  # 20 lines, or every line of a shorter response
                assert box["shown"] >= min(20, box["holds"]), (n, got)
            assert 0 <= got["verdicts"]["top"] and got["verdicts"]["bottom"] <= got["height"], got
            if n == 0:
                screenshot(page, "review-1280x800")
            if not scrolled and any(b["more"] for b in got["boxes"]):
                # PageDown with no click first: both responses scroll, PageUp brings them back
                page.keyboard.press("PageDown")
                _scrolled(page, "some")
                page.keyboard.press("PageUp")
                _scrolled(page, "none")
                page.keyboard.press(" ")
                _scrolled(page, "some")
                scrolled = True
            page.keyboard.press("j")
        assert scrolled, f"no comparison of the demo pairs has a response longer than its box: {seen}"
    finally:
        context.close()
