"""A server's first seconds: several pages opened at once right after it starts never show
a half-imported module (the warm-up thread and the page scripts never import one module
at the same time)."""

from __future__ import annotations

import os

import pytest

from tests.browser.harness import AppServer, assert_no_exception, wait_idle

STARTS = int(os.environ.get("NEEDLEWORK_STARTUP_TRIALS", "4"))
PAGES = ("annotate?dataset=demo-grounding", "needle", "review?dataset=demo-preference", "rewards")


@pytest.mark.parametrize("trial", range(STARTS))
def test_pages_opened_together_at_a_fresh_start_show_no_import_error(browser, seeded_db, trial):
    server = AppServer(seeded_db, env={"NEEDLEWORK_WARM_UP": "1"})
    server.start()
    contexts = [browser.new_context(viewport={"width": 1280, "height": 900}) for _ in PAGES]
    try:
        pages = [c.new_page() for c in contexts]
        for page, path in zip(pages, PAGES, strict=True):
            page.goto(f"{server.url}/{path}", wait_until="commit")
        for page in pages:
            wait_idle(page, timeout=90_000)
            assert_no_exception(page)
        assert "partially initialized" not in server.log()
    finally:
        for c in contexts:
            c.close()
        server.stop()
