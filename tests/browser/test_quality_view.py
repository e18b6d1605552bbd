"""The lead's Quality page at laptop sizes, in Chromium (issue 50): two annotators who
finished items on two days, the throughput chart names each day once under its bars, and
the page is seen at 1280x800 and 1440x900 (screenshots in artifacts/screenshots/)."""

from __future__ import annotations

import pytest

import store
from needlework.datasets.transfer import import_bytes
from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset
from tests.browser.harness import (
    assert_no_exception,
    screenshot,
    team_server,
    wait_idle,
    wait_layout,
    wait_still,
)
from tests.browser.test_teams import sign_in
from tests.conftest import garage_records, jsonl
from tests.teams_fixtures import PASSWORDS, finish_grounding

PEOPLE = {"lead": "admin", "rita": "reviewer", "ana": "annotator", "bob": "annotator"}
DATASET = "week"

#: The x axis labels of the chart titled "Day (UTC)" in ``e`` (a chart's container).
DAY_LABELS = ("e => [...e.querySelectorAll('g.role-axis')].filter(a => a.textContent.includes("
              "'Day (UTC)')).flatMap(a => [...a.querySelectorAll('g.role-axis-label text')]"
              ".map(t => t.textContent))")


@pytest.fixture(scope="module")
def server(tmp_path_factory, chromium_available):
    """``week``: 6 items for ana and bob; ana finished 3 today, bob 2 yesterday (his history
    moved back a day)."""
    db_path = tmp_path_factory.mktemp("quality") / "quality.db"
    db = store.connect(db_path)
    users = {name: accounts.add_user(db, name, role, password=PASSWORDS[name])
             for name, role in PEOPLE.items()}
    import_bytes(db, jsonl(garage_records(6)), f"{DATASET}.jsonl", dataset=DATASET)
    assign_dataset(db, DATASET, ["ana", "bob"], per_item=2, actor=users["lead"])
    for who, n in (("ana", 3), ("bob", 2)):
        for k in range(1, n + 1):
            finish_grounding(db, DATASET, f"sample-{k}", users[who])
    db.execute("update history set at = strftime('%Y-%m-%dT%H:%M:%fZ', at, '-1 day') "
               "where dataset = ? and annotator = 'bob'", [DATASET])
    db.conn.commit()
    db.conn.close()
    with team_server(db_path) as app:
        yield app


@pytest.mark.parametrize("size", [(1280, 800), (1440, 900)])
def test_the_throughput_names_each_day_once(browser, server, size):
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    try:
        sign_in(page, server.url, "rita", PASSWORDS["rita"])
        page.goto(f"{server.url}/quality?dataset={DATASET}")
        wait_idle(page)
        main = page.locator('[data-testid="stMain"]')
        chart = main.locator('[data-testid="stVegaLiteChart"]').filter(
            has=page.locator('text:has-text("Day (UTC)")'))
        chart.wait_for(timeout=60_000)
        chart.evaluate("e => e.scrollIntoView({block: 'center'})")
        wait_layout(page)
        wait_still(page, '[data-testid="stVegaLiteChart"] svg')
        screenshot(page, f"quality-throughput-{size[0]}x{size[1]}")
        days = chart.evaluate(DAY_LABELS)
        assert len(days) == 2 and len(set(days)) == 2 and days == sorted(days), days
        assert "ana" in chart.inner_text() and "bob" in chart.inner_text()
        assert_no_exception(page)
    finally:
        context.close()
