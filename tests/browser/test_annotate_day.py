"""An annotator's day on Annotate (issue 50, point 2): Y takes every suggestion of the
question, dimensions included, and one Z takes the whole accept back; each suggestion
says how sure its source is; H and the compact layout are the person's, remembered in a
new browser; in the compact layout at 1440x900 four passages' label rows and the
dimensions are on the first screen; the save badge and toasts cover no text."""

from __future__ import annotations

import json
import sqlite3
import uuid

import pytest

import store
from needlework.suggest.data import import_suggestions
from tests.browser.harness import SCREENSHOTS, AppServer, wait_idle
from tests.browser.keys import DATASET, errors, items, open_annotate, read, settle

DIMS = {"question_valid": "NO", "question_complexity": "Aggregation",
        "question_popularity": "Tail"}


@pytest.fixture(scope="module")
def server(tmp_path_factory, seeded_db):
    """A server of its own on a copy of the seeded database, with a judge's suggestions
    (labels with a confidence, and dimensions) on the first demo question."""
    db_path = tmp_path_factory.mktemp("day") / "needlework.db"
    source, target = sqlite3.connect(seeded_db), sqlite3.connect(db_path)
    source.backup(target)
    source.close()
    target.close()
    order = items(db_path)
    first, n = order[0]
    rows = [{"item": first, "field": f"label:{p}", "value": "OUTDATED", "source": "judge",
             "confidence": 0.61 + p / 100} for p in range(1, n + 1)]
    rows += [{"item": first, "field": f"dim:{f}", "value": v, "source": "judge",
              "confidence": 0.9} for f, v in DIMS.items()]
    db = store.connect(db_path)
    import_suggestions(db, "".join(json.dumps(r) + "\n" for r in rows).encode(), "s.jsonl",
                       DATASET, by="lead")
    db.conn.close()
    app = AppServer(db_path)
    app.start()
    yield app, order
    app.stop()


def saved(db_path, key: str, who: str) -> dict:
    return {f: json.loads(v) for f, v in read(
        db_path, "select field, value from annotations where dataset = ? and item_key = ? and "
        "annotator = ?", [DATASET, key, who])}


def shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def test_y_takes_labels_and_dimensions_and_one_z_takes_them_all_back(page, server):
    app, order = server
    first, n = order[0]
    who = f"day-{uuid.uuid4().hex[:6]}"
    open_annotate(page, app.url, first, who)
    # the confidence shows beside each suggestion
    page.get_by_text("Outdated (judge 62% sure)").first.wait_for(timeout=15_000)
    page.keyboard.press("y")
    settle(page)
    accepted = {**{f"label:{p}": "OUTDATED" for p in range(1, n + 1)},
                **{f"dim:{f}": v for f, v in DIMS.items()}}
    assert saved(app.db_path, first, who) == accepted
    page.keyboard.press("z")
    settle(page)
    assert saved(app.db_path, first, who) == {}  # one key: the whole accept
    page.wait_for_function("() => document.querySelector('.nw-key-note').innerText"
                           f".includes('undone: {n + len(DIMS)} changes made together')",
                           timeout=15_000)
    page.keyboard.press("Shift+Z")
    settle(page)
    assert saved(app.db_path, first, who) == accepted
    assert errors(page) == []


def test_h_and_compact_are_remembered_and_compact_fits_four_passages_and_the_dimensions(
        browser, server):
    app, order = server
    first, _ = order[0]
    who = f"view-{uuid.uuid4().hex[:6]}"
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    open_annotate(page, app.url, first, who)
    assert page.locator("#nw-dims .nw-sugg").count() == len(DIMS)
    page.locator(".st-key-nw-compact label").first.click()
    page.locator(".st-key-nw-cards .nw-box").first.wait_for(timeout=15_000)
    page.wait_for_function("() => !document.querySelector('.st-key-nw-compact input') || "
                           "document.querySelector('.st-key-nw-compact input').checked",
                           timeout=15_000)
    wait_idle(page)
    page.evaluate("window.scrollTo(0, 0)")
    boxes = page.evaluate("""() => {
      const r = (s) => { const e = document.querySelector(s);
                         return e ? e.getBoundingClientRect().bottom : null; };
      return {rows: [1, 2, 3, 4].map((n) => r(`.st-key-nw-card-${n} .nw-labels`)),
              dims: r('#nw-dims'), height: innerHeight};
    }""")
    assert None not in boxes["rows"] and boxes["dims"] is not None, boxes
    assert max(*boxes["rows"], boxes["dims"]) <= boxes["height"], boxes
    shot(page, "annotate-compact-1440")
    # nothing of ours covers text: the save badge sits in the header bar, above the page
    badge = page.evaluate("document.getElementById('nw-save-status').getBoundingClientRect().bottom")
    top = page.evaluate("document.querySelector('.st-key-nw-toolbar').getBoundingClientRect().top")
    assert badge < top
    # a toast comes up over the sidebar's empty foot, clear of the cards
    page.get_by_role("button", name="Categories").click()
    page.get_by_role("button", name="Save the list").click()
    toast = page.locator('[data-testid="stToast"]').first
    toast.wait_for(timeout=15_000)
    page.keyboard.press("Escape")
    cards = page.evaluate("document.querySelector('.st-key-nw-cards').getBoundingClientRect().left")
    box = toast.bounding_box()
    assert box["x"] + box["width"] <= cards and box["y"] > top
    # H hides every suggestion, the dimensions' model tags too
    page.keyboard.press("h")
    page.wait_for_function("() => document.querySelectorAll('#nw-dims .nw-sugg').length === 0",
                           timeout=15_000)
    assert "sure)" not in page.inner_text(".st-key-nw-cards")
    context.close()
    # a new browser (a new session): both choices are the person's, kept
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    open_annotate(page, app.url, first, who)
    wait_idle(page)
    assert page.locator(".st-key-nw-hide-imported input").is_checked()
    assert page.locator(".st-key-nw-compact input").is_checked()
    assert page.locator("#nw-dims .nw-sugg").count() == 0
    shot(page, "annotate-compact-hidden-1280")
    context.close()
