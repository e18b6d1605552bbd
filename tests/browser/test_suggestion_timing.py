"""When annotators see suggestions, in Chromium (issue 30, point 5): with "after", Annotate
shows no suggestion on an unlabelled passage and Y (or an accept sent by hand) changes
nothing; once the annotator labels the passage its suggestion shows, marked where it differs
from theirs. With "never" nothing shows."""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path

import pytest

import store
from needlework.suggest.data import import_suggestions
from needlework.teams.blind import set_suggestion_timing
from tests.browser.harness import AppServer, assert_no_exception
from tests.browser.keys import (
    DATASET,
    errors,
    items,
    open_annotate,
    press,
    read,
    settle,
    wait_drawn,
)

SHOTS = Path("/tmp/helper_timing")


@pytest.fixture(scope="module")
def server(tmp_path_factory, seeded_db):
    """A server of its own on a copy of the seeded database, with a judge's suggestion for
    passage 1 and 2 of the first demo question."""
    db_path = tmp_path_factory.mktemp("timing") / "needlework.db"
    source, target = sqlite3.connect(seeded_db), sqlite3.connect(db_path)
    source.backup(target)
    source.close()
    target.close()
    first = items(db_path)[0][0]
    rows = [{"item": first, "field": "label:1", "value": "OUTDATED", "source": "judge", "score": 0.7},
            {"item": first, "field": "label:2", "value": "UNKNOWN", "source": "judge", "score": 0.6}]
    db = store.connect(db_path)
    import_suggestions(db, "".join(json.dumps(r) + "\n" for r in rows).encode(), "s.jsonl",
                       DATASET, by="lead")
    db.conn.close()
    app = AppServer(db_path)
    app.start()
    yield app, first
    app.stop()


def timing(db_path, when: str) -> None:
    db = store.connect(db_path)
    set_suggestion_timing(db, DATASET, when, [], actor=None)
    db.conn.close()


def head(page, number: int) -> str:
    return page.locator(f"#nw-head-{number}").inner_text()


def mine(db_path, who: str) -> list:
    return read(db_path, "select field, value, via from annotations where dataset = ? and "
                "annotator = ? order by field", [DATASET, who])


def test_after_shows_a_suggestion_only_beside_the_own_label(page, server):
    app, first = server
    timing(app.db_path, "after")
    who = f"after-{uuid.uuid4().hex[:6]}"
    open_annotate(page, app.url, first, who)
    assert page.evaluate("window.__nwAnnotate.data.suggested") == {}
    assert "Outdated" not in head(page, 1) and "model:" not in head(page, 1)
    assert "suggested:" not in head(page, 1)
    page.get_by_text("once you have saved your own label").wait_for(timeout=10_000)
    press(page, ["y"], 150)  # nothing to accept: the script says so and sends nothing
    # an accept sent by hand reaches the server, which takes nothing either
    page.evaluate("([d, item, who]) => window.__nwCore.push({kind: 'accept', dataset: d, "
                  "item, annotator: who})", [DATASET, first, who])
    settle(page)
    assert mine(app.db_path, who) == []
    press(page, ["3"], None)  # passage 1: Related, where the model says Outdated
    settle(page)
    page.locator("#nw-head-1", has_text="differs from yours").wait_for(timeout=30_000)
    assert "model: Outdated (judge 0.70) — differs from yours" in head(page, 1)
    assert "model:" not in head(page, 2)  # passage 2 is not labelled yet
    assert mine(app.db_path, who) == [("label:1", '"RELATED-INFORMATION"', None)]  # typed
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".st-key-nw-card-1").screenshot(path=str(SHOTS / "after-differs-card.png"))
    page.screenshot(path=str(SHOTS / "after-differs-page.png"))
    assert_no_exception(page)
    assert errors(page) == []


def test_never_shows_nothing(page, server):
    app, first = server
    timing(app.db_path, "never")
    who = f"never-{uuid.uuid4().hex[:6]}"
    open_annotate(page, app.url, first, who)
    press(page, ["3", "y"], 150)
    settle(page)
    page.locator("#nw-head-1").wait_for(timeout=10_000)
    wait_drawn(page)  # the redraw after the label
    for number in (1, 2):
        text = head(page, number)
        assert "model:" not in text and "suggested:" not in text and "Outdated" not in text
    assert page.locator("button.nw-suggested").count() == 0
    assert page.evaluate("window.__nwAnnotate.data.suggested") == {}
    assert [f for f, _, _ in mine(app.db_path, who)] == ["label:1"]
    assert errors(page) == []
