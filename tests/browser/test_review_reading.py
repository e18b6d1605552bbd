"""Review's reading switches in Chromium (issue 59, point 11): W shows both texts whole or
their first part in the side-by-side and Markdown views too; where both are whole already
it says so on screen; the view and Markdown stay after a reload (kept per person); the
sidebar names the item the verdict is for."""

from __future__ import annotations

import uuid

import pytest

from tests.browser.harness import assert_no_exception, screenshot, wait_idle
from tests.browser.keys import PREFERENCE, errors, open_review

WHOLE = ".st-key-rv_whole input"
#: the characters both response boxes hold
SHOWN = ("() => [...document.querySelectorAll('.st-key-rv-responses .nw-text.nw-box')]"
         ".reduce((n, b) => n + b.textContent.length, 0)")


def _checked(page, on: bool) -> None:
    page.wait_for_function(f"() => document.querySelector('{WHOLE}').checked === {str(on).lower()}",
                           timeout=15_000)
    wait_idle(page)


@pytest.mark.parametrize("size", [(1280, 800), (1440, 900)])
def test_w_side_by_side_and_markdown_and_the_view_kept(page, app_url, size):
    who = f"reader-{uuid.uuid4().hex[:6]}"
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_review(page, app_url, who, at=("RAG_5", 0, 0))
    main = page.locator('[data-testid="stMain"]')
    main.locator("mark.nw-current").first.wait_for(timeout=30_000)  # near-identical: a diff
    main.get_by_role("radio", name="Side by side").click()
    main.get_by_role("button", name="More").first.wait_for(timeout=15_000)
    wait_idle(page)
    assert not page.locator(WHOLE).is_checked()
    first = page.evaluate(SHOWN)
    page.keyboard.press("w")  # side by side: both texts whole
    _checked(page, True)
    page.wait_for_function(f"() => ({SHOWN})() > {first * 3}", timeout=15_000)
    assert main.get_by_role("button", name="More").count() == 0
    screenshot(page, f"review-side-whole-{size[0]}x{size[1]}")
    page.keyboard.press("w")  # and back to their first part
    _checked(page, False)
    page.wait_for_function(f"() => ({SHOWN})() === {first}", timeout=15_000)
    # the Markdown view: W the same
    page.locator(".st-key-rv_markdown").get_by_text("Markdown").click()
    main.locator(".nw-md").first.wait_for(timeout=15_000)
    wait_idle(page)
    markdown = page.evaluate("() => document.querySelector('.st-key-rv-responses .nw-md')"
                             ".textContent.length")
    page.keyboard.press("w")
    _checked(page, True)
    page.wait_for_function("(n) => document.querySelector('.st-key-rv-responses .nw-md')"
                           ".textContent.length > 3 * n", arg=markdown, timeout=15_000)
    screenshot(page, f"review-markdown-whole-{size[0]}x{size[1]}")
    page.keyboard.press("w")
    _checked(page, False)
    # a reload: the view and Markdown are the person's, kept
    page.reload()
    page.wait_for_function("(who) => window.__nwReview && window.__nwReview.data && "
                           "window.__nwReview.data.annotator === who", arg=who, timeout=30_000)
    main.locator(".nw-md").first.wait_for(timeout=30_000)
    wait_idle(page)
    assert main.get_by_role("radio", name="Side by side").is_checked()
    assert page.locator(".st-key-rv_markdown input").is_checked()
    # the sidebar names the item the verdict is for
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert "Verdict on item RAG_5 · chosen vs rejected 1" in sidebar.inner_text()
    # two short texts: whole already, and W says so on screen
    page.goto(f"{app_url}/review?dataset={PREFERENCE}&item=Reasoning_1")
    main.get_by_text("Item Reasoning_1").wait_for(timeout=30_000)
    page.wait_for_function("() => window.__nwReview && window.__nwReview.data && "
                           "window.__nwReview.data.item === 'Reasoning_1'", timeout=30_000)
    wait_idle(page)
    assert page.locator(WHOLE).is_disabled()
    page.keyboard.press("w")
    page.locator(".nw-review-note", has_text="both texts are shown whole already").wait_for(
        timeout=15_000)
    screenshot(page, f"review-whole-already-{size[0]}x{size[1]}")
    assert errors(page) == []
    assert_no_exception(page)
