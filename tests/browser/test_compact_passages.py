"""Annotate's compact layout (issue 59, point 10): the outlined passage is shown whole (a
364-character passage is read without scrolling inside its box), the others fold to two
lines, and five passages' label buttons are on the first screen at 1440x900 (four at
1280x800)."""

from __future__ import annotations

import uuid

from tests.browser.harness import screenshot, wait_idle
from tests.browser.keys import errors, items, open_annotate

#: passage n's text box: [shown height, whole height]; the label row's bottom; the window
BOXES = """() => {
  const out = {height: innerHeight, boxes: {}, rows: {}};
  for (let n = 1; n <= 7; n += 1) {
    const box = document.querySelector('#nw-passage-' + n);
    const row = document.querySelector(`.st-key-nw-card-${n} .nw-labels`);
    if (box) out.boxes[n] = [box.clientHeight, box.scrollHeight, box.textContent.length];
    if (row) out.rows[n] = row.getBoundingClientRect().bottom;
  }
  return out;
}"""


def _whole(seen: dict, n: int) -> bool:
    shown, whole, _ = seen["boxes"][str(n)]
    return whole <= shown + 1


def _on_screen(seen: dict) -> int:
    """How many passages' label rows are on the first screen, from the first."""
    count = 0
    for n in range(1, 8):
        bottom = seen["rows"].get(str(n))
        if bottom is None or bottom > seen["height"]:
            break
        count += 1
    return count


def test_compact_shows_the_outlined_passage_whole_and_five_passages(page, app_url, seeded_db):
    first, n = items(seeded_db)[0]
    who = f"compact-{uuid.uuid4().hex[:6]}"
    page.set_viewport_size({"width": 1440, "height": 900})
    open_annotate(page, app_url, first, who)
    page.locator(".st-key-nw-compact label").first.click()
    page.wait_for_function("() => document.querySelector('.st-key-nw-compact input').checked",
                           timeout=15_000)
    wait_idle(page)
    page.evaluate("window.scrollTo(0, 0)")
    seen = page.evaluate(BOXES)
    assert seen["boxes"]["1"][2] == 364  # the passage a reader scrolled inside before
    assert _whole(seen, 1), seen  # the outlined passage: whole, no scrolling inside it
    assert not _whole(seen, 2), seen  # the others: folded
    assert _on_screen(seen) >= 5, seen
    screenshot(page, "annotate-compact-whole-1440x900")
    # the cursor moves on: the next passage opens, the one left folds again
    page.keyboard.press("j")
    page.wait_for_function(
        "() => { const a = document.querySelector('#nw-passage-1'), "
        "b = document.querySelector('#nw-passage-2'); return a.scrollHeight > a.clientHeight + 1 "
        "&& b.scrollHeight <= b.clientHeight + 1; }", timeout=15_000)
    page.keyboard.press("k")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.wait_for_function("() => { const a = document.querySelector('#nw-passage-1'); "
                           "return a.scrollHeight <= a.clientHeight + 1; }", timeout=15_000)
    wait_idle(page)
    page.evaluate("window.scrollTo(0, 0)")
    seen = page.evaluate(BOXES)
    assert _whole(seen, 1) and _on_screen(seen) >= 4, seen
    screenshot(page, "annotate-compact-whole-1280x800")
    assert errors(page) == []
    assert n == 7
