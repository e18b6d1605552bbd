"""Failed requests and provider defaults on the Reward model page, in Chromium (issue 48):
a judge behind a real local server that refuses ``temperature`` 0 with OpenAI's HTTP 400
and answers HTTP 500 to every third prompt. The page's figures are the stored run's,
over the answered trials, with the failures and the provider default beside them."""

from __future__ import annotations

import time

from playwright.sync_api import Error as PlaywrightError

import store
from store import judges as store_judges
from tests.browser.harness import assert_no_exception, screenshot, submit, wait_idle
from tests.judges_hosted_fixtures import HostedJudgeServer

DATASET = "demo-preference"


def _fill(page, name: str, value: str) -> None:
    """Type ``value`` into the field labelled ``name`` and submit it. While a run redraws
    the form (a run the page asks for by itself, after a check of the judge ends), its old
    field and the new one are both on the page for a moment: then wait until one is left
    and type again."""
    field = page.locator('[data-testid="stMain"]').get_by_label(name, exact=True)
    for attempt in range(3):
        deadline = time.monotonic() + 60
        while field.count() != 1:
            assert time.monotonic() < deadline, f"{field.count()} fields named {name!r}"
            wait_idle(page, 60_000)
        try:
            submit(page, field, value)
            return
        except PlaywrightError as exc:
            if "strict mode violation" not in str(exc) or attempt == 2:
                raise


def test_failures_and_provider_defaults_beside_the_figures(page, app_url, seeded_db):
    page.set_viewport_size({"width": 1400, "height": 1000})
    with HostedJudgeServer(lambda body: "Verdict: [[A]]", reasoning=True, fail_every=3) as server:
        page.goto(f"{app_url}/rewards?dataset={DATASET}")
        wait_idle(page, 120_000)
        main = page.locator('[data-testid="stMain"]')
        main.get_by_text("3 · Or judge it with an LLM").first.wait_for(timeout=120_000)
        main.get_by_label("Base URL", exact=True).wait_for(timeout=240_000)
        _fill(page, "Base URL", server.base_url)
        _fill(page, "Model", "judge")
        _fill(page, "Items per subset (0 = all)", "2")
        main.get_by_role("button", name=f"Judge {DATASET}").click()
        # other tests of this server judged the dataset before: wait for this run's summary
        summary = _finished_summary(seeded_db, server.base_url)
        wait_idle(page, 60_000)
        answered = len(server.answered())
        failed = len(server.failed_prompts())
    assert_no_exception(page)
    assert failed >= 1 and answered >= 2
    assert summary["answered"] == answered and summary["failed"] == failed
    main.get_by_text(f"answered {answered} of {answered + failed} trials, failed {failed}"
                     ).first.wait_for(timeout=60_000)
    main.get_by_text("temperature: provider default (refused 0)").first.wait_for()
    main.get_by_text("requests failed (refused, timed out or a server error)").first.wait_for()
    table = main.locator('[data-testid="stDataFrame"]').filter(
        has=page.locator("[role=columnheader]", has_text="failed (no answer)")).first
    table.wait_for(timeout=60_000)
    main.get_by_text("answered").first.evaluate("e => e.scrollIntoView({block: 'start'})")
    screenshot(page, "judge-failures")


def _finished_summary(db_path, endpoint: str, timeout: float = 300.0) -> dict:
    """The summary of the judge run at ``endpoint`` once it is stored (the run's row
    exists, with no summary, while it runs)."""
    deadline = time.time() + timeout
    while True:
        db = store.connect(db_path)
        try:
            run = next((r for r in store_judges.list_runs(db, DATASET)
                        if r["endpoint"] == endpoint and r["summary"]), None)
        finally:
            db.conn.close()
        if run is not None:
            return run["summary"]
        if time.time() > deadline:
            raise AssertionError(f"no finished judge run at {endpoint} after {timeout:.0f} s")
        time.sleep(0.1)  # the poll's interval
