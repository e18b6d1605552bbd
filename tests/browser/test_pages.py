"""Open every page in Chromium: no Streamlit exception, one screenshot per page."""

from __future__ import annotations

import pytest

from tests.browser.harness import assert_no_exception, page_paths, screenshot, wait_idle


@pytest.mark.parametrize("path", page_paths())
def test_page_opens_without_exception(page, app_url, path):
    page.goto(f"{app_url}/{path}")
    wait_idle(page)
    assert_no_exception(page)
    assert page.locator('[data-testid="stSidebar"]').count() == 1
    screenshot(page, f"page-{path}")
