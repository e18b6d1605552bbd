"""Open every page in Chromium: no Streamlit exception, nothing wider than the window at
1440, 1280 and 1024 px (a projector), one screenshot per page and width."""

from __future__ import annotations

import pytest

from tests.browser.harness import (
    assert_no_exception,
    page_paths,
    screenshot,
    wait_idle,
    wait_layout,
)

WIDTHS = (1440, 1280, 1024)

#: Elements of the main area whose right edge passes the main area's (cut off or scrolling).
OVERFLOW = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    const edge = main.getBoundingClientRect().right + 1;
    const out = [];
    for (const el of main.querySelectorAll('[data-testid="stElementContainer"]')) {
      const box = el.getBoundingClientRect();
      if (box.width > 0 && box.right > edge) out.push((el.innerText || el.className).slice(0, 60));
    }
    return {out, scroll: main.scrollWidth - main.clientWidth};
}"""


@pytest.mark.parametrize("path", page_paths())
def test_page_opens_without_exception(page, app_url, path):
    page.goto(f"{app_url}/{path}")
    wait_idle(page)
    # pages that need the reward engine draw once it is imported (a cold server: a minute)
    page.get_by_text("Loading the reward engine").wait_for(state="detached", timeout=240_000)
    wait_idle(page)
    assert_no_exception(page)
    assert page.locator('[data-testid="stSidebar"]').count() == 1
    screenshot(page, f"page-{path}")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        wait_layout(page)
        found = page.evaluate(OVERFLOW)
        assert found["scroll"] <= 1 and not found["out"], (width, found)
        screenshot(page, f"page-{path or 'home'}-{width}")
