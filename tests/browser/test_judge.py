"""LLM judges in Chromium (issue 13's acceptance): the demo judge started from the Reward model
page (``transformers serve`` on 127.0.0.1, built by ``make test`` into data/demo-judge), a
selection run on the demo preference set with accuracy and the invalid rate per subset. The
acceptance's second half (a needle set judged in the needle lab, the classifier's and the
judge's heatmaps side by side) is tests/browser/test_needle_judge.py.

The demo judge is a tiny model: its verdicts are not checked here, the page's mechanics are
(the figures on the page are the stored run's figures)."""

from __future__ import annotations

import pytest

import store
from store import judges as store_judges
from tests.browser.harness import assert_no_exception, screenshot, submit, wait_idle, wait_layout

DATASET = "demo-preference"
RUN_TIMEOUT_MS = 400_000


@pytest.fixture(scope="module")
def demo_judge_built(demo_models_dir):
    """data/demo-judge, the shipped demo judge (without it the page offers no Start)."""
    return demo_models_dir / "demo-judge"


def _main(page):
    return page.locator('[data-testid="stMain"]')


def _shots(page, heading: str, name: str) -> None:
    for width in (1440, 1280, 1024):
        page.set_viewport_size({"width": width, "height": 1000})
        wait_layout(page)
        page.get_by_text(heading).first.evaluate("e => e.scrollIntoView({block: 'start'})")
        screenshot(page, f"{name}-{width}")


def _fill(page, name: str, value: str) -> None:
    submit(page, _main(page).get_by_label(name, exact=True), value)


def test_demo_judge_selection_per_subset(page, app_url, seeded_db, demo_judge_built):
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"{app_url}/rewards?dataset={DATASET}")
    wait_idle(page, 120_000)
    main = _main(page)
    main.get_by_text("3 · Or judge it with an LLM").first.wait_for(timeout=120_000)
    start = main.get_by_role("button", name="Start the local demo judge")
    use = main.get_by_role("button", name="Use the running demo judge")
    start.or_(use).first.wait_for(timeout=240_000)  # the form waits for the engine import
    start.or_(use).first.click()
    main.get_by_role("button", name="Stop the demo judge").wait_for(timeout=120_000)
    wait_idle(page, 60_000)
    assert str(demo_judge_built) in main.get_by_label("Model", exact=True).input_value()
    _fill(page, "Items per subset (0 = all)", "1")
    main.get_by_role("button", name=f"Judge {DATASET}").click()
    main.get_by_text("Judged ").first.wait_for(timeout=RUN_TIMEOUT_MS)
    wait_idle(page, 60_000)
    assert_no_exception(page)

    db = store.connect(seeded_db)
    try:
        runs = [r for r in store_judges.list_runs(db, DATASET) if r["summary"].get("mode") == "selection"]
    finally:
        db.conn.close()
    assert runs, "a selection run is stored"
    summary = runs[0]["summary"]
    metrics = main.locator('[data-testid="stDataFrame"]').filter(
        has=page.locator("[role=columnheader]", has_text="invalid rate")).first
    metrics.wait_for(timeout=60_000)
    cells = " ".join(metrics.locator("[role=gridcell], [role=columnheader]").all_inner_texts())
    assert "accuracy" in cells and "invalid rate" in cells, cells[:400]
    for subset in summary["subsets"]:  # every judged subset has its row
        assert subset in cells, (subset, cells[:400])
    accuracy = summary["accuracy"]
    main.get_by_text(f"{100 * accuracy:.1f}%").first.wait_for()
    _shots(page, "4 · Results", "judge-results")
