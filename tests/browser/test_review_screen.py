"""Review at 1280×800 shows the text (issue 29): each comparison opens with at least 20
lines of each response on screen (or all of a shorter one) above the verdict bar, whose
keys stay visible; PageDown / PageUp, Space and the arrows scroll both responses with no
click first."""

from __future__ import annotations

import uuid

from tests.browser.harness import screenshot
from tests.browser.keys import open_review, settle_review

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


def _drawn(page) -> dict:
    settle_review(page)
    page.wait_for_function("() => { const S = window.__nwReview; return S && S.data && S.at && "
                           "S.data.item === S.at.item && S.data.i === S.at.i && S.data.j === S.at.j; }",
                           timeout=30_000)
    page.wait_for_timeout(1200)  # the fit runs 60, 300 and 900 ms after the draw
    return page.evaluate(SCREEN)


def test_review_opens_each_comparison_on_its_text_and_scrolls_it_by_key(browser, app_url):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        open_review(page, app_url, f"screen-{uuid.uuid4().hex[:6]}")
        scrolled = False
        for n in range(5):
            got = _drawn(page)
            assert len(got["boxes"]) == 2, got
            for box in got["boxes"]:  # 20 lines, or every line of a shorter response
                assert box["shown"] >= min(20, box["holds"]), (n, got)
            assert 0 <= got["verdicts"]["top"] and got["verdicts"]["bottom"] <= got["height"], got
            if n == 0:
                screenshot(page, "review-1280x800")
            if not scrolled and any(b["more"] for b in got["boxes"]):
                # PageDown with no click first: both responses scroll, PageUp brings them back
                page.keyboard.press("PageDown")
                page.wait_for_timeout(300)
                down = page.evaluate(SCREEN)
                assert any(b["scroll"] > 0 for b in down["boxes"]), down
                page.keyboard.press("PageUp")
                page.wait_for_timeout(300)
                assert all(b["scroll"] == 0 for b in page.evaluate(SCREEN)["boxes"])
                page.keyboard.press(" ")
                page.wait_for_timeout(300)
                assert any(b["scroll"] > 0 for b in page.evaluate(SCREEN)["boxes"])
                scrolled = True
            page.keyboard.press("j")
        assert scrolled, "no comparison of the demo pairs has a response longer than its box"
    finally:
        context.close()
