"""The ``page`` fixture's shared context: after a test, nothing it stored is left for the
next one (an annotator's remembered name or an outbox queue would change what the next
test's page does)."""

from __future__ import annotations

from tests.browser.harness import AppServer, SharedContext, wait_idle, watch

PROBE = ("[localStorage.getItem('nw-probe'), sessionStorage.getItem('nw-probe'),"
         " document.cookie.includes('nw-probe')]")


def _store_probe(tab, url: str) -> None:
    tab.goto(url)
    wait_idle(tab)
    tab.evaluate("localStorage.setItem('nw-probe', 'left'); sessionStorage.setItem('nw-probe', 'left');"
                 "document.cookie = 'nw-probe=left; path=/'; true")


def test_reset_closes_the_tests_other_tabs_and_wipes_what_they_stored(shared_context, app_url,
                                                                      seeded_db):
    first = shared_context.new_page()
    _store_probe(first, f"{app_url}/")
    second = first.context.new_page()  # a tab the test opened itself
    second.goto(f"{app_url}/review")
    assert "nw-probe=left" in second.evaluate("document.cookie")
    other = AppServer(seeded_db)  # another origin the tab reached
    other.start()
    try:
        _store_probe(first, f"{other.url}/")
        first.set_viewport_size({"width": 800, "height": 600})
        first.keyboard.down("Shift")
        shared_context.reset()
        assert second.is_closed() and not first.is_closed()
        again = shared_context.new_page()
        assert again is first and again.url == "about:blank"  # the same tab, taken back
        assert again.viewport_size == SharedContext.VIEWPORT
        for url in (f"{app_url}/", f"{other.url}/"):
            again.goto(url)
            wait_idle(again)
            assert again.evaluate(PROBE) == [None, None, False], url
        again.evaluate("window.__nwShift = null;"
                       "addEventListener('keydown', (e) => { window.__nwShift = e.shiftKey; })")
        again.keyboard.press("a")
        assert again.evaluate("window.__nwShift") is False  # the test's Shift was let go
    finally:
        other.stop()
        shared_context.reset()


def test_a_tab_given_a_script_for_every_page_is_not_handed_on(shared_context, app_url):
    tab = shared_context.new_page()
    tab.add_init_script("window.__nwLeft = 1")
    tab.goto(f"{app_url}/")
    shared_context.reset()
    assert tab.is_closed()
    again = shared_context.new_page()
    again.goto(f"{app_url}/")
    assert again.evaluate("window.__nwLeft") is None
    shared_context.reset()


def test_a_test_that_closes_the_context_leaves_a_new_one_for_the_next(shared_context, app_url):
    tab = shared_context.new_page()
    tab.context.close()  # as a test does when "the annotator's browser goes away"
    shared_context.reset()
    again = shared_context.new_page()
    again.goto(f"{app_url}/")
    wait_idle(again)
    assert not again.is_closed()
    shared_context.reset()


def test_a_watching_script_keeps_the_tab_and_runs_once_per_page(shared_context, app_url):
    tab = shared_context.new_page()
    count = "window.__nwWatched = (window.__nwWatched || 0) + 1"
    watch(tab, count)
    shared_context.reset()
    again = shared_context.new_page()
    assert again is tab
    watch(again, count)  # a later test asks for it again: it is there once
    again.goto(f"{app_url}/")
    assert again.evaluate("window.__nwWatched") == 1
    shared_context.reset()
