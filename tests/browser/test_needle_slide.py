"""The needle slide in a room (issue 29): at 1280×720 and 1920×1080 it fits one screen,
its labels are at least 24 px at 1920, it opens at its top when entered from a scrolled lab,
F puts the whole slide (title and finding too) in full screen, thin cells are grey with
their n only; screenshots at 1024, 1280, 1440 and 1920 px."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

import store
from needlework.datasets import import_bytes
from needlework.needle.builder import BuildOptions, build_from_source
from store.datasets import get_dataset, iter_items
from store.scores import save_item_scores
from tests.browser.harness import assert_no_exception, screenshot, wait_idle

DATASET = "slide-needles"

#: Where everything on the slide is, and the chart's text sizes (px).
MEASURE = """() => {
  const box = s => { const e = document.querySelector(s); if (!e) return null;
    const b = e.getBoundingClientRect();
    return {top: b.top, bottom: b.bottom, right: b.right, size: parseFloat(getComputedStyle(e).fontSize)}; };
  const svg = document.querySelector('.st-key-nw-slide [data-testid="stVegaLiteChart"] svg');
  const b = svg.getBoundingClientRect();
  const sized = sel => [...svg.querySelectorAll(sel)].map(t => [t.textContent, parseFloat(t.getAttribute('font-size') || getComputedStyle(t).fontSize)]);
  return {title: box('#nw-present-title'), finding: box('#nw-finding-0'), chart: {top: b.top, bottom: b.bottom, right: b.right},
          cells: sized('g.mark-text.role-mark text'), axes: sized('g.role-axis-label text'),
          fullscreen: !!document.fullscreenElement, width: innerWidth, height: innerHeight};
}"""


@pytest.fixture(scope="module")
def slide_url(app_url, seeded_db):
    """A needle set of 4 lengths × 10 haystacks, with a stand-in model's scores that miss
    the needle in the middle of the longer responses (thin and blank cells included)."""
    db = store.connect(seeded_db)
    try:
        if get_dataset(db, DATASET) is not None:  # set up again when the worker comes back
            return f"{app_url}/needle?dataset={DATASET}"
        built = build_from_source("demo", BuildOptions(lengths=(250, 500, 1000, 2000)), demo_count=10)
        import_bytes(db, built.jsonl().encode("utf-8"), f"{DATASET}.jsonl", format="needle",
                     dataset=DATASET)
        rows = []
        for item in iter_items(db, DATASET):
            r = item["record"]
            wrong = r["length_tokens"] >= 1000 and 0.3 <= r["tagged_position"] < 0.7
            rows.append({"item_key": r["id"], "subset": str(r["length_tokens"]),
                         "chosen_scores": [-1.0 if wrong else 1.0], "rejected_scores": [0.0]})
        save_item_scores(db, DATASET, "6" * 32, "fp32|full", "/models/stand-in-rm", rows)
    finally:
        db.conn.close()
    return f"{app_url}/needle?dataset={DATASET}"


def _open_slide_from_the_lab(page, url: str) -> dict:
    page.goto(url)
    page.get_by_role("button", name="Presentation mode").wait_for(timeout=240_000)
    wait_idle(page)
    page.locator('[data-testid="stMain"]').evaluate("m => m.scrollTo(0, m.scrollHeight)")
    page.get_by_role("button", name="Presentation mode").click()
    page.locator("#nw-finding-0").wait_for(timeout=60_000)
    page.locator('.st-key-nw-slide g.mark-text.role-mark text').first.wait_for(timeout=60_000)
    wait_idle(page)
    page.wait_for_timeout(800)  # the chart's fit to its width
    assert_no_exception(page)
    return page.evaluate(MEASURE)


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_the_slide_fits_one_screen_with_room_sized_type(browser, slide_url, size):
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        got = _open_slide_from_the_lab(page, slide_url)
        # entered from a lab scrolled to its end: the slide opens at its top
        assert 0 <= got["title"]["top"] < 60, got["title"]
        # one screen: title, finding and the whole heatmap (axis and legend) inside it
        assert got["chart"]["bottom"] <= height and got["chart"]["right"] <= width, got["chart"]
        assert got["finding"]["bottom"] < got["chart"]["top"]
        # cell and axis labels: at least 24 px (readable at 3 m on a 1920-px projector)
        assert got["cells"] and min(s for _, s in got["cells"]) >= 24, [c for c in got["cells"] if c[1] < 24]
        assert got["axes"] and min(s for _, s in got["axes"]) >= 24, got["axes"]
        if width == 1920:
            assert got["title"]["size"] >= 40 and got["finding"]["size"] >= 24, got
        # thin cells say their n only: no bright "100 %" of one pair
        labels = page.locator('.st-key-nw-slide g.mark-text.role-mark text').evaluate_all(
            "els => els.map(e => [e.textContent, e.getAttribute('aria-label') || ''])")
        thin = [text for text, aria in labels if "too few to read" in aria]
        assert thin and all(t.startswith("n=") for t in thin), thin
        assert all("%" in t for t, aria in labels if "too few to read" not in aria)
        screenshot(page, f"needle-slide-{width}x{height}")
        # F: the whole slide in full screen, title and finding kept
        page.keyboard.press("f")
        page.wait_for_function("() => !!document.fullscreenElement", timeout=10_000)
        page.wait_for_timeout(500)
        full = page.evaluate(MEASURE)
        assert full["title"]["top"] >= 0 and full["finding"]["bottom"] <= full["height"]
        # the button's words follow the fullscreenchange event, which fires a frame after
        # document.fullscreenElement changes
        expect(page.locator("#nw-slide-full")).to_have_text("Leave full screen (Esc)", timeout=5_000)
        page.keyboard.press("f")
        page.wait_for_function("() => !document.fullscreenElement", timeout=10_000)
        expect(page.locator("#nw-slide-full")).to_have_text("Full screen (F)", timeout=5_000)
    finally:
        context.close()


@pytest.mark.parametrize("width", [1024, 1440])
def test_the_slide_at_other_widths_cuts_nothing(browser, slide_url, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        got = _open_slide_from_the_lab(page, slide_url)
        assert got["chart"]["right"] <= width, got["chart"]
        texts = [t for t, _ in got["axes"]]
        assert "90–100 %" in texts and "0–10 %" in texts, texts  # no column label cut
        screenshot(page, f"needle-slide-{width}")
    finally:
        context.close()
