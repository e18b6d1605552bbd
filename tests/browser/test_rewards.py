"""The reward-model page in Chromium: load the demo model, score the demo preference
set in the background (leaving the page and coming back), read the metrics, open a
failure's per-token view through its deep link."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

import store
from needlework.rewards.results import failures
from store.scores import item_scores, list_jobs
from tests.browser.harness import (
    assert_no_exception,
    load_model,
    screenshot,
    wait_idle,
    wait_layout,
)

DATASET = "demo-preference"
SCORE_TIMEOUT_S = 600


@pytest.fixture(scope="session")
def demo_model_dir(demo_models_dir) -> Path:
    """data/demo-model, the shipped demo model."""
    return demo_models_dir / "demo-model"


def _main(page):
    return page.locator('[data-testid="stMain"]')


def _shot(page, heading: str, name: str, height: int = 1000) -> None:
    """A screenshot of the viewport scrolled to a section (Streamlit scrolls inside the
    page, so a full-page screenshot would only show the top)."""
    page.set_viewport_size({"width": 1400, "height": height})
    wait_layout(page)
    page.get_by_text(heading).first.evaluate("e => e.scrollIntoView({block: 'start'})")
    screenshot(page, name)


def _wait_for_job(seeded_db: Path) -> dict:
    db = store.connect(seeded_db)
    deadline = time.time() + SCORE_TIMEOUT_S
    try:
        while time.time() < deadline:
            jobs = [j for j in list_jobs(db) if j["dataset"] == DATASET]
            if jobs and jobs[0]["status"] not in ("queued", "running"):
                return jobs[0]
            time.sleep(0.2)  # the poll's interval
    finally:
        db.conn.close()
    raise AssertionError(f"scoring {DATASET} took more than {SCORE_TIMEOUT_S} s")


def test_load_score_and_per_token_view(page, app_url, seeded_db, demo_model_dir):
    page.goto(f"{app_url}/rewards?dataset={DATASET}")
    wait_idle(page)
    assert_no_exception(page)
    started = time.perf_counter()
    load_model(page, demo_model_dir)
    load_s = time.perf_counter() - started
    main = _main(page)
    main.get_by_text("Demo model.").first.wait_for(timeout=30_000)
    main.get_by_text("Context (tokens)").first.wait_for(timeout=30_000)
    screenshot(page, "rewards-model")

    page.get_by_role("button", name=f"Score {DATASET}").click()
    page.get_by_text("Scoring demo-preference with").first.wait_for(timeout=60_000)
    _shot(page, "2 · Score", "rewards-scoring")
    # The job runs on the server: leave the page and come back while it runs.
    page.goto(f"{app_url}/home")
    wait_idle(page)
    page.goto(f"{app_url}/rewards?dataset={DATASET}")
    # still there: its progress (or its result, if it finished meanwhile)
    page.get_by_text(re.compile(r"Scoring demo-preference with|Scored 28 items")).first.wait_for(
        timeout=120_000)
    job = _wait_for_job(seeded_db)
    assert job["status"] == "done", job
    score_s = job["result"]["seconds"]
    page.get_by_text("Scored 28 items").first.wait_for(timeout=60_000)
    wait_idle(page)
    assert_no_exception(page)
    main.get_by_text("Ties count as wrong").first.wait_for(timeout=30_000)
    tables = main.locator('[data-testid="stDataFrame"]')
    tables.nth(2).wait_for(timeout=30_000)  # the leaderboard, metrics per subset, the failures
    per_subset = tables.filter(has=page.locator("[role=gridcell]", has_text="overall"))
    metrics = per_subset.first.locator("[role=gridcell], [role=columnheader], td, th")
    metrics.filter(has_text="overall").first.wait_for(state="attached", timeout=30_000)
    cells = " ".join(metrics.all_inner_texts())
    assert "overall" in cells and "best-of-n accuracy" in cells, cells[:500]
    # one numbering everywhere (issue 18, 10): responses counted from 1, as on Review pairs
    failing = tables.filter(has=page.locator("[role=columnheader]", has_text="failing comparison"))
    cells_of = failing.first.locator("[role=gridcell]")
    cells_of.filter(has_text="rejected").first.wait_for(state="attached", timeout=30_000)
    words = " ".join(cells_of.all_inner_texts())
    assert re.search(r"chosen [1-9]\d* \(.*\) ≤ rejected [1-9]", words), words[:300]
    assert "[0]" not in words and "chosen 0" not in words, words[:300]
    _shot(page, "4 · Results", "rewards-results", 1400)

    db = store.connect(seeded_db)
    rows = item_scores(db, DATASET, job["result"]["fingerprint"])
    db.conn.close()
    fails = failures([{"id": r["item_key"], "subset": r["subset"], "chosen_scores": r["chosen_scores"],
                       "rejected_scores": r["rejected_scores"]} for r in rows])
    assert len(rows) == 28 and fails, "the demo model should get some demo pairs wrong"
    short = next(f for f in fails if f.subset != "Reasoning") if any(
        f.subset != "Reasoning" for f in fails) else fails[0]

    page.goto(f"{app_url}/rewards?dataset={DATASET}&item={short.item}")
    wait_idle(page, timeout=120_000)
    assert_no_exception(page)
    page.locator('[data-testid="stVegaLiteChart"]').nth(1).wait_for(timeout=60_000)
    assert page.locator('[data-testid="stVegaLiteChart"]').count() >= 2
    main.locator(".nw-text mark[style*='background']").first.wait_for(timeout=60_000)  # shading
    main.locator(".nw-text mark.nw-chg").first.wait_for(state="attached", timeout=60_000)  # differ
    review = main.get_by_role("link", name="Review this pair")
    review.wait_for(timeout=30_000)
    assert f"item={short.item}" in (review.get_attribute("href") or "")
    _shot(page, "5 · Per-token view", "rewards-per-token", 2200)

    review.click()  # the failure's deep link into Review pairs
    page.wait_for_url("**/review**", timeout=60_000)
    wait_idle(page, timeout=60_000)
    assert_no_exception(page)
    assert f"item={short.item}" in page.url
    main.get_by_text(short.item).first.wait_for(timeout=60_000)
    print(f"\nmodel load {load_s:.1f} s (browser, incl. rerun); scoring {DATASET}: {score_s} s")
