"""Local mode remembers the annotator's name in the browser: a reload, a new tab and a
deep link opened from Home keep it (issue 18, point 6); clearing it forgets it."""

from __future__ import annotations

import uuid

from tests.browser.harness import wait_idle


def name_field(page):
    return page.get_by_label("Annotator", exact=True)


def test_the_name_survives_a_reload_a_new_tab_and_a_deep_link(browser, app_url):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(app_url + "/")
        wait_idle(page)
        who = f"mem-{uuid.uuid4().hex[:6]}"
        name_field(page).fill(who)
        page.keyboard.press("Enter")
        wait_idle(page)
        page.reload()
        wait_idle(page)
        page.wait_for_function("(who) => [...document.querySelectorAll('input')].some("
                               "i => i.value === who)", arg=who, timeout=20_000)
        other = context.new_page()  # a new tab, as Home's "Open" makes
        other.goto(f"{app_url}/annotate?dataset=demo-grounding")
        other.wait_for_function("(who) => [...document.querySelectorAll('input')].some("
                                "i => i.value === who)", arg=who, timeout=30_000)
        wait_idle(other)
        assert name_field(other).input_value() == who
        assert other.get_by_text("read-only: enter your name").count() == 0
        name_field(other).fill("")  # cleared on purpose: forgotten
        other.keyboard.press("Enter")
        wait_idle(other)
        third = context.new_page()
        third.goto(app_url + "/")
        wait_idle(third)
        third.wait_for_timeout(1500)
        assert name_field(third).input_value() == ""
    finally:
        context.close()
