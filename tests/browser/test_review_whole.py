"""Review's W (issue 50): the diff view shows the window around the difference in focus;
W shows the whole of both texts, W again the window, and W typed in a text field is a
"w" in it, the view left as it is."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.harness import assert_no_exception, screenshot, wait_idle

DEMO = "demo-preference"
WHOLE = '.st-key-rv_whole input[type="checkbox"]'
#: the characters of both texts the diff view shows
SHOWN = "() => [...document.querySelectorAll('mark.nw-current')].length && " \
        "document.querySelector('[data-testid=\"stMain\"]').innerText.length"


def _whole(page) -> bool:
    return page.locator(WHOLE).is_checked()


def _redrawn(page, before: int) -> None:
    """Wait until the diff view shows another text than the ``before`` characters (the
    switch was flipped on the page at once; the rerun it asks for redraws the view), then
    until the page is idle."""
    page.wait_for_function(f"(before) => {{ const n = ({SHOWN})(); return n && n !== before; }}",
                           arg=before, timeout=15_000)
    wait_idle(page)
    page.locator('[data-testid="stMain"] mark.nw-current').first.wait_for(timeout=15_000)


def test_w_shows_the_whole_text_and_back_and_types_in_a_field(page, app_url):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/review?dataset={DEMO}&item=RAG_5")
    wait_idle(page)
    main = page.locator('[data-testid="stMain"]')
    main.locator("mark.nw-current").first.wait_for(timeout=30_000)
    wait_idle(page)
    # the key script has the page (a key pressed before it has is not W yet)
    page.wait_for_function("() => { const S = window.__nwReview; return !!(S && S.data && "
                           "S.active()); }", timeout=30_000)
    assert _whole(page) is False
    window = page.evaluate(SHOWN)
    page.keyboard.press("w")
    page.wait_for_function(f"() => document.querySelector('{WHOLE}').checked", timeout=15_000)
    _redrawn(page, window)
    whole = page.evaluate(SHOWN)
    assert whole > window, (window, whole)  # more of both texts on screen
    screenshot(page, "review-whole-text-1280x800")
    page.keyboard.press("w")
    page.wait_for_function(f"() => !document.querySelector('{WHOLE}').checked", timeout=15_000)
    _redrawn(page, whole)
    assert page.evaluate(SHOWN) == window
    # in the note's field W is a letter: typed there, the view stays as it is
    note = page.get_by_label("Note", exact=True)
    note.click()
    page.keyboard.type("wow")
    expect(note).to_have_value(re.compile(r"wow$"), timeout=5_000)
    wait_idle(page)  # whatever the keys set off has run (a W taken as the key would rerun)
    assert _whole(page) is False
    page.keyboard.press("Escape")
    assert_no_exception(page)
