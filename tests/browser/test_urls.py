"""Natural URLs in Chromium: every page answers at its own name and at the words people
type for it, /home and unknown paths land on Home, and no "Page not found" dialog opens."""

from __future__ import annotations

import pytest

from tests.browser.harness import assert_no_exception, wait_idle, watch
from tests.browser.keys import wait_mounted

CASES = [
    ("home", "/", "Home"),
    ("home?dataset=demo-preference", "/?dataset=demo-preference", "Home"),
    ("Annotate?dataset=xss", "/annotate?dataset=xss", "Annotate"),
    ("review-pairs", "/review", "Review pairs"),
    ("reward-model", "/rewards", "Reward model"),
    ("needle-lab", "/needle", "Needle lab"),
    ("import", "/data", "Import & export"),
    ("no-such-page?x=1", "/?x=1", "Home"),
]


@pytest.mark.parametrize(("path", "lands", "page_name"), CASES)
def test_natural_urls_open_their_page_without_a_dialog(page, app_url, path, lands, page_name):
    page.goto(f"{app_url}/{path}")
    wait_mounted(page, timeout=60_000)  # the page's runs over: a dialog would be open
    assert page.url.startswith(app_url + lands), page.url
    assert page.locator('[role="dialog"]').count() == 0
    nav = page.locator('[data-testid="stSidebarNav"] a[aria-current="page"]')
    assert nav.first.inner_text().strip().endswith(page_name)
    assert_no_exception(page)


#: Records every dialog the page shows, however briefly.
DIALOG_WATCH = """
(() => {
  window.__nwDialogs = [];
  new MutationObserver(() => {
    for (const d of document.querySelectorAll('[role="dialog"]')) {
      window.__nwDialogs.push(d.innerText.slice(0, 120));
    }
  }).observe(document, {childList: true, subtree: true});
})();
"""

DATASET_LINKS = [
    ("home", "demo-preference", "/?dataset=demo-preference", "Home"),
    ("annotate", "demo-grounding", "/annotate?dataset=demo-grounding", "Annotate"),
    ("agreement", "demo-grounding", "/agreement?dataset=demo-grounding", "Agreement"),
    ("review", "demo-preference", "/review?dataset=demo-preference", "Review pairs"),
    ("rewards", "demo-preference", "/rewards?dataset=demo-preference", "Reward model"),
    ("needle", "demo-needles", "/needle", "Needle lab"),
    ("rag", "demo-grounding", "/rag?dataset=demo-grounding", "RAG answers"),
    ("data", "demo-preference", "/data?dataset=demo-preference", "Import & export"),
]


@pytest.mark.parametrize(("path", "dataset", "lands", "page_name"), DATASET_LINKS)
def test_every_pages_dataset_link_opens_without_page_not_found(page, app_url, path, dataset,
                                                               lands, page_name):
    watch(page, DIALOG_WATCH)
    page.goto(f"{app_url}/{path}?dataset={dataset}")
    # a "Page not found" dialog opens as the run's message comes (st.navigation sends it
    # during the run): the page's runs over (its scripts mounted, and the run the outbox
    # asks for then) and the page quiet, it would have been recorded
    wait_mounted(page, timeout=60_000)
    assert page.url.startswith(app_url + lands), page.url
    assert page.evaluate("window.__nwDialogs") == []
    nav = page.locator('[data-testid="stSidebarNav"] a[aria-current="page"]')
    assert nav.first.inner_text().strip().endswith(page_name)
    assert_no_exception(page)


def test_homes_open_opens_its_dataset_whatever_the_sidebar_held(page, app_url):
    """The session holds demo-grounding; Home's Open › of demo-preference opens the review
    page on demo-preference (it showed "pick a preference dataset")."""
    page.goto(f"{app_url}/annotate?dataset=demo-grounding")
    wait_idle(page, timeout=60_000)
    page.goto(f"{app_url}/")
    wait_idle(page, timeout=60_000)
    page.locator('a[href$="?dataset=demo-preference"]', has_text="Open ›").first.click()
    page.wait_for_function("() => location.pathname.endsWith('/review')", timeout=30_000)
    wait_idle(page, timeout=60_000)
    sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
    assert "preference dataset" in sidebar and "grounding dataset" not in sidebar
    assert "pick one of these" not in page.locator('[data-testid="stMain"]').inner_text()
    assert_no_exception(page)
