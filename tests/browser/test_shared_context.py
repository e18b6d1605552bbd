"""The ``page`` fixture's shared context: after a test, nothing it stored is left for the
next one (an annotator's remembered name or an outbox queue would change what the next
test's page does)."""

from __future__ import annotations

from tests.browser.harness import wait_idle


def test_reset_closes_the_tests_tabs_and_wipes_what_they_stored(shared_context, app_url):
    first = shared_context.new_page()
    first.goto(f"{app_url}/")
    wait_idle(first)
    first.evaluate("localStorage.setItem('nw-probe', 'left'); sessionStorage.setItem('nw-probe', 'left');"
                   "document.cookie = 'nw-probe=left; path=/'; true")
    second = first.context.new_page()  # a tab the test opened itself
    second.goto(f"{app_url}/review")
    assert "nw-probe=left" in second.evaluate("document.cookie")
    shared_context.reset()
    assert first.is_closed() and second.is_closed()
    again = shared_context.new_page()
    assert again.context is first.context  # the same context, so its cache is kept
    again.goto(f"{app_url}/")
    wait_idle(again)
    assert again.evaluate("[localStorage.getItem('nw-probe'), sessionStorage.getItem('nw-probe'),"
                          " document.cookie.includes('nw-probe')]") == [None, None, False]
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
