"""The needle lab with an LLM judge in Chromium (issue 13's needle point, issue 18's 1, 2, 17).

A small needle set and a stand-in reward model's stored scores; the demo judge started from
the needle lab (``transformers serve`` on 127.0.0.1, built by ``make test`` into
data/demo-judge); two pairs per length judged in both orders as a background job; the model's
and the judge's heatmaps side by side, each inside the page at 1440, 1280 and 1024 px; a judge
cell opened to its trials and the judge's own words; then presentation mode with the
presenter's title, where a cell click drills into its pairs on the slide.

The demo judge is a tiny model: its verdicts are not checked, the page's counts are (each
judged pair is two trials, as stored)."""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import expect

import store
from store import judges as store_judges
from tests.browser.harness import (
    assert_no_exception,
    screenshot,
    submit,
    wait_idle,
    wait_layout,
    wait_still,
)
from tests.browser.test_needle_slide import wait_slide
from tests.needle_fixtures import import_scored_needles

RUN_TIMEOUT_MS = 400_000
TITLE = "Reward model vs LLM judge: safety needles"


@pytest.fixture(scope="module")
def demo_judge_built(demo_models_dir):
    """data/demo-judge, the shipped demo judge (without it the page offers no Start)."""
    return demo_models_dir / "demo-judge"


def _seed(db_path) -> tuple[str, int]:
    """A needle set (2 lengths × 2 demo haystacks × up to 10 sites) and a stand-in model's
    scores for it (wrong in the middle of the longer responses). Returns (name, pairs)."""
    name = f"needles-judge-{uuid.uuid4().hex[:6]}"
    db = store.connect(db_path)
    try:
        records = import_scored_needles(db, name, 2, 440, (200, 400), "6" * 32,
                                        "/models/seeded-rm")
    finally:
        db.conn.close()
    return name, len(records)


def _main(page):
    return page.locator('[data-testid="stMain"]')


def _panels(page):
    return page.locator('[data-testid="stVegaLiteChart"]').filter(
        has=page.locator('g.mark-rect path[aria-label*="accuracy"]'))


def _panel_of(page, model: str):
    return _panels(page).filter(has=page.locator(f'g.mark-rect path[aria-label*="model: {model};"]')).first


def _cells(chart):
    return chart.locator('g.mark-rect path[aria-label*="accuracy"][fill]')


def _counts(chart) -> int:
    labels = _cells(chart).evaluate_all("els => els.map(e => e.getAttribute('aria-label'))")
    return sum(int(re.search(r"(?:pairs|trials) \(n\): (\d+)", lab).group(1)) for lab in labels)


def _click(page, cell) -> None:
    cell.scroll_into_view_if_needed()
    box = cell.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def _inside_the_page(page, width: int) -> None:
    """Both panels fit the main column at this width (nothing cut at the right)."""
    page.set_viewport_size({"width": width, "height": 1300})
    wait_layout(page)
    wait_still(page, '[data-testid="stVegaLiteChart"] svg')  # Vega draws them at the new width
    right = _main(page).locator('[data-testid="stMainBlockContainer"]').bounding_box()
    right = right["x"] + right["width"]
    for k in range(2):
        box = _panels(page).nth(k).locator("svg").first.bounding_box()
        assert box["x"] + box["width"] <= right + 1, (width, k, box, right)


def test_a_judge_beside_the_reward_model(page, app_url, seeded_db, demo_judge_built):
    name, pairs = _seed(seeded_db)
    page.set_viewport_size({"width": 1400, "height": 1300})
    page.goto(f"{app_url}/needle?dataset={name}")
    main = _main(page)
    main.get_by_text("3 · Where does it miss the needle?").first.wait_for(timeout=240_000)
    wait_idle(page, 120_000)
    start = main.get_by_role("button", name="Start the local demo judge")
    use = main.get_by_role("button", name="Use the running demo judge")
    stop = main.get_by_role("button", name="Stop the demo judge")
    start.or_(use).or_(stop).first.wait_for(timeout=240_000)
    if start.or_(use).count():
        start.or_(use).first.click()
    stop.wait_for(timeout=120_000)
    wait_idle(page, 60_000)
    if use.count():  # running for another session, and this form holds something else
        use.click()
        wait_idle(page, 60_000)
    submit(page, main.get_by_label("Pairs per length (0 = all)", exact=True), "2")
    main.get_by_role("button", name=re.compile(rf"^Judge {name} ")).click()
    main.get_by_text(re.compile(r"^Judged \d+ trials")).first.wait_for(timeout=RUN_TIMEOUT_MS)
    wait_idle(page, 120_000)
    assert_no_exception(page)

    db = store.connect(seeded_db)
    try:
        run = store_judges.finished_runs(db, name)[0]
    finally:
        db.conn.close()
    trials = run["summary"]["requests"]
    assert trials == 2 * run["judged_items"] == 2 * 2 * 2  # 2 lengths × 2 pairs × both orders
    # side by side on one scale, both counting pairs (a judge's pair is two trials)
    _panel_of(page, "judge demo-judge").locator("svg").first.wait_for(timeout=60_000)
    expect(_panels(page)).to_have_count(2, timeout=60_000)  # the single panel of before is gone
    wait_idle(page, 60_000)
    assert _counts(_panel_of(page, "seeded-rm")) == pairs
    assert _counts(_panel_of(page, "judge demo-judge")) == run["judged_items"] == trials // 2
    text = main.inner_text()
    assert "judge demo-judge (both orders)" in text
    assert re.search(r"(No position bias shown|Position bias): right \d+ % of the time with the "
                     r"chosen response shown first \(A\) and \d+ % with it shown second \(B\)", text)
    for width in (1440, 1280, 1024):
        _inside_the_page(page, width)
        main.get_by_text("3 · Where does it miss the needle?").first.evaluate(
            "e => e.scrollIntoView({block: 'start'})")
        screenshot(page, f"needle-judge-{width}")

    # a judge cell: its trials (two per pair), then the judge's own words beside the needle
    page.set_viewport_size({"width": 1400, "height": 1300})
    wait_layout(page)
    wait_still(page, '[data-testid="stVegaLiteChart"] svg')  # a click lands on the chart drawn
    _click(page, _cells(_panel_of(page, "judge demo-judge")).first)
    main.get_by_text("its own words").first.wait_for(timeout=60_000)
    wait_idle(page, 60_000)
    assert_no_exception(page)
    text = main.inner_text()
    assert re.search(r"judge demo-judge · \d+ trials? of \d+ pairs?, \d+ correct", text)
    assert main.locator("#nw-judge-words").count() == 1
    assert main.locator("#nw-judge-words").inner_text().strip()
    assert main.locator(".nw-text mark.nw-needle").count() >= 1
    main.get_by_text("its own words").first.scroll_into_view_if_needed()
    screenshot(page, "needle-judge-cell")

    # presentation: the presenter's title, both panels, a cell click drills in on the slide
    submit(page, main.get_by_role("textbox", name="Slide title"), TITLE)
    page.get_by_role("button", name="Presentation mode").click()
    page.locator("#nw-finding-0").wait_for(timeout=60_000)
    wait_idle(page, 60_000)
    assert_no_exception(page)
    assert TITLE in main.inner_text()
    _panel_of(page, "judge demo-judge").locator("svg").first.wait_for(timeout=60_000)
    expect(_panels(page)).to_have_count(2, timeout=60_000)
    # the slide sized its charts to the screen: a click on a chart the page is about to
    # redraw is lost with the old chart
    wait_slide(page)
    _click(page, _cells(_panel_of(page, "seeded-rm")).first)
    main.get_by_text(re.compile(r"· seeded-rm · \d+ pairs?, \d+ right")).first.wait_for(timeout=60_000)
    wait_idle(page, 60_000)
    assert_no_exception(page)
    page.get_by_role("button", name="Tools").click()  # Exit and the downloads sit in Tools
    expect(page.get_by_role("button", name="Exit presentation")).to_have_count(1)
    page.keyboard.press("Escape")
    screenshot(page, "needle-judge-present")
