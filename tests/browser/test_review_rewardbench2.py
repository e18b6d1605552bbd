"""Review on the RewardBench 2 demo set in Chromium (issue 62, point 4): the sidebar opens
demo-rewardbench2, the sides read "Correct 1" and "Incorrect 2", and verdict, reason and
move keys on a best-of-4 instance (1 × 3) and a Ties row (k × m) land in the database
file on the right ``verdict:I:J`` field."""

from __future__ import annotations

import json
import sqlite3
import time
import uuid

from needlework.seeding.demo import DEMO_REWARDBENCH2 as RB2
from tests.browser.harness import assert_no_exception, screenshot, wait_idle, wait_layout
from tests.browser.keys import settle_review
from tests.browser.test_review_screen import wait_fitted


def verdicts(db_path, who: str) -> dict[tuple[str, str], dict]:
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
    try:
        rows = conn.execute("select item_key, field, value from annotations where dataset = ? "
                            "and annotator = ? and field like 'verdict:%'", [RB2, who]).fetchall()
    finally:
        conn.close()
    return {(k, f): json.loads(v) for k, f, v in rows}


def wait_verdicts(db_path, who: str, count: int, timeout: float = 20.0) -> dict:
    deadline = time.time() + timeout
    while True:
        rows = verdicts(db_path, who)
        if len(rows) >= count or time.time() > deadline:
            return rows
        time.sleep(0.05)


def on(page, item: str, i: int, j: int) -> None:
    """Wait until the page draws comparison (item, i, j) and the key script is there."""
    page.wait_for_function(
        "([item, i, j]) => { const S = window.__nwReview; return S && S.data && S.at && "
        "S.data.item === item && S.data.i === i && S.data.j === j && S.at.item === item && "
        "S.at.i === i && S.at.j === j; }", arg=[item, i, j], timeout=30_000)


def test_rewardbench2_verdicts_by_key_on_best_of_4_and_ties(browser, app_url, seeded_db):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    who = f"rb2-{uuid.uuid4().hex[:6]}"
    try:
        page.goto(f"{app_url}/review")
        wait_idle(page)
        # the sidebar's picker opens the set
        page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.click()
        page.get_by_role("option", name=RB2, exact=True).click()
        page.locator(".st-key-rv-verdicts").wait_for(timeout=30_000)
        page.get_by_label("Annotator", exact=True).fill(who)
        page.keyboard.press("Enter")
        page.get_by_text("Enter your name in the sidebar to save verdicts.").wait_for(
            state="detached", timeout=30_000)
        page.keyboard.press("Escape")
        on(page, "factuality-1", 0, 0)
        wait_idle(page)
        main = page.locator('[data-testid="stMain"]')
        main.get_by_text("Correct 1", exact=True).first.wait_for(timeout=15_000)
        assert main.get_by_text("Incorrect 1", exact=True).count()
        assert "Correct better" in page.locator(".st-key-rv_v_agree").inner_text()
        assert main.get_by_text("best-of-4: Correct 1 against Incorrect 1–3", exact=False).count()
        assert_no_exception(page)
        wait_fitted(page)  # the page fits the responses above the bar
        screenshot(page, "review-rb2-best-of-4-1280x800")

        # A, then F and 1 (a reason for the flip), then T: factuality-1's three comparisons
        page.keyboard.press("a")
        on(page, "factuality-1", 0, 1)
        page.keyboard.press("f")
        page.keyboard.press("1")
        on(page, "factuality-1", 0, 2)
        page.keyboard.press("t")
        rows = wait_verdicts(seeded_db, who, 3)
        assert rows == {
            ("factuality-1", "verdict:0:0"): {"verdict": "agree", "reasons": [], "note": ""},
            ("factuality-1", "verdict:0:1"): {"verdict": "flip", "reasons": ["factual error"],
                                              "note": ""},
            ("factuality-1", "verdict:0:2"): {"verdict": "tie", "reasons": [], "note": ""},
        }, rows
        # on to the next unreviewed: factuality-2; J and K move in its row, B and S judge
        on(page, "factuality-2", 0, 0)
        page.keyboard.press("j")
        on(page, "factuality-2", 0, 1)
        page.keyboard.press("b")
        on(page, "factuality-2", 0, 2)  # on to the next one without a verdict
        page.keyboard.press("k")
        page.keyboard.press("k")
        on(page, "factuality-2", 0, 0)
        page.keyboard.press("s")
        rows = wait_verdicts(seeded_db, who, 5)
        assert rows[("factuality-2", "verdict:0:1")]["verdict"] == "both-bad"
        assert rows[("factuality-2", "verdict:0:0")]["verdict"] == "skip"
        settle_review(page)

        # a Ties row: correct 1-4 against incorrect 1-5; J walks a row and on to the next
        page.set_viewport_size({"width": 1440, "height": 900})
        page.goto(f"{app_url}/review?dataset={RB2}&item=tied:2&i=1&j=5")
        on(page, "tied:2", 0, 4)
        wait_idle(page)
        assert page.locator(".st-key-rv-picker button").count() == 20
        assert main.get_by_text("Correct 1–4 are equally correct", exact=False).count()
        wait_fitted(page)
        screenshot(page, "review-rb2-ties-1440x900")
        page.keyboard.press("j")
        on(page, "tied:2", 1, 0)
        page.keyboard.press("f")
        rows = wait_verdicts(seeded_db, who, 6)
        assert rows[("tied:2", "verdict:1:0")] == {"verdict": "flip", "reasons": [], "note": ""}
        settle_review(page)
        assert_no_exception(page)
        page.set_viewport_size({"width": 1280, "height": 800})
        wait_layout(page)
        screenshot(page, "review-rb2-ties-1280x800")
        page.set_viewport_size({"width": 1440, "height": 900})
        page.goto(f"{app_url}/review?dataset={RB2}&item=factuality-3&i=1&j=1")
        on(page, "factuality-3", 0, 0)
        wait_idle(page)
        wait_fitted(page)
        screenshot(page, "review-rb2-best-of-4-1440x900")
    finally:
        context.close()
