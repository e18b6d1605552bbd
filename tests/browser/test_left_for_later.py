"""Questions left for later in Chromium (issue 59, point 12): L goes to the next question
flagged, or skipped and not finished, wrapping around, and says so when there is none;
Home shows each Open › link's words, never an empty grey box, while the browser still
loads the links' code (the moment before a name is typed, on a first visit)."""

from __future__ import annotations

import uuid

import pytest

from tests.browser.harness import assert_no_exception, screenshot, wait_idle
from tests.browser.keys import DATASET, errors, items, open_annotate, settle

SIZES = [(1280, 800), (1440, 900)]


def _at(page, item: str) -> None:
    page.wait_for_function("(item) => window.__nwAnnotate && window.__nwAnnotate.item === item "
                           "&& window.__nwAnnotate.data.item === item", arg=item, timeout=30_000)


@pytest.mark.parametrize("size", SIZES)
def test_l_brings_back_what_was_flagged_or_skipped(page, app_url, seeded_db, size):
    order = [key for key, _ in items(seeded_db)]
    who = f"later-{uuid.uuid4().hex[:6]}"
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_annotate(page, app_url, order[0], who)
    page.keyboard.press("l")  # nothing left for later yet: it says so and stays
    page.wait_for_function("() => document.querySelector('.nw-key-note').innerText"
                           ".includes('no other question left for later')", timeout=15_000)
    assert page.evaluate("window.__nwAnnotate.item") == order[0]
    page.keyboard.press("s")  # question 1 skipped: on to question 2
    _at(page, order[1])
    page.keyboard.press("n")
    _at(page, order[2])
    page.keyboard.press("f")  # question 3 flagged
    page.keyboard.press("n")
    _at(page, order[3])
    settle(page)
    wait_idle(page)
    button = page.locator(".st-key-nw-key-l button").first
    assert button.is_enabled()
    toolbar = page.locator(".st-key-nw-toolbar").bounding_box()
    assert toolbar["height"] < 60, toolbar  # the toolbar keeps its one row with L in it
    screenshot(page, f"annotate-left-for-later-{size[0]}x{size[1]}")
    page.keyboard.press("l")  # after question 4, around the end: the skipped question 1
    _at(page, order[0])
    assert f"item={order[0]}" in page.url
    button.click()  # the button acts as the key: the flagged question 3
    _at(page, order[2])
    settle(page)
    assert errors(page) == []
    assert_no_exception(page)


@pytest.mark.parametrize("size", SIZES)
def test_home_shows_open_while_the_links_load_and_they_open(page, app_url, size):
    page.set_viewport_size({"width": size[0], "height": size[1]})
    held = []
    page.route("**/PageLink.*.js", lambda route: held.append(route))  # held back a while
    page.goto(f"{app_url}/")
    main = page.locator('[data-testid="stMain"]')
    main.get_by_text(DATASET, exact=True).first.wait_for(timeout=30_000)
    page.get_by_text("Enter your name to save work.").wait_for(timeout=30_000)
    # every row's link is still loading; each shows the link's words, no empty grey box
    slots = """() => [...document.querySelectorAll(
        '[class*="st-key-nw-ds-"]:not([class*="st-key-nw-ds-manage"])')].map((row) => {
        const e = row.querySelector(':scope > [data-testid="stElementContainer"] > '
                                    + '[data-testid="stSkeleton"]');
        if (!e) return null;
        const box = getComputedStyle(e), words = getComputedStyle(e, '::after');
        return [box.backgroundColor, words.content, e.getBoundingClientRect().width];
      })"""
    try:
        page.wait_for_function(f"() => {{ const s = ({slots})(); return s.length >= 4 && "
                               "s.every((x) => x && x[0] === 'rgba(0, 0, 0, 0)' && "
                               "x[1] === '\"Open ›\"' && x[2] > 30); }", timeout=15_000)
    except Exception as e:  # noqa: BLE001 - say what the rows show instead
        raise AssertionError(f"the rows' links while loading: {page.evaluate(slots)}") from e
    screenshot(page, f"home-links-loading-{size[0]}x{size[1]}")
    for route in held:
        route.continue_()
    page.unroute("**/PageLink.*.js")
    link = main.locator(f'a[href$="?dataset={DATASET}"]', has_text="Open ›").first
    link.wait_for(timeout=30_000)
    wait_idle(page)
    screenshot(page, f"home-links-{size[0]}x{size[1]}")
    link.click()
    page.locator(".st-key-nw-toolbar").wait_for(timeout=30_000)
    assert "/annotate" in page.url
    assert_no_exception(page)
