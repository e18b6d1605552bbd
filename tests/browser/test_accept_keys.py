"""Y accepts the suggestions shown (issue 30, point 3): mixed with label keys 150 ms and
60 ms apart and at full speed, across server kills 20-150 ms after the accept, and pending
through an outage and a reload, the database holds exactly the labels implied, each with
where it came from (accepted, changed over a suggestion, or typed), and nothing else."""

from __future__ import annotations

import json
import signal
import sqlite3
import uuid

import pytest

import store
from needlework.suggest.data import import_suggestions
from tests.browser.harness import AppServer, wait_idle
from tests.browser.keys import (
    DATASET,
    PREFERENCE,
    comparisons,
    errors,
    items,
    open_annotate,
    open_review,
    press,
    read,
    settle,
    settle_review,
)
from tests.browser.test_keys import goto_after_outage

ANSWER, RELATED, OUTDATED, UNKNOWN, IRRELEVANT = (
    "ANSWER-THE-QUESTION", "RELATED-INFORMATION", "OUTDATED", "UNKNOWN", "irrelevant")
ACCEPTED = {"how": "accepted", "source": "judge"}


@pytest.fixture(scope="module")
def server(tmp_path_factory, seeded_db):
    """A server of its own on a copy of the seeded database, with a judge's suggestions
    on the first two demo questions (and a second source's on one passage)."""
    db_path = tmp_path_factory.mktemp("accept") / "needlework.db"
    source, target = sqlite3.connect(seeded_db), sqlite3.connect(db_path)
    source.backup(target)
    source.close()
    target.close()
    order = items(db_path)
    (first, _), (second, _) = order[0], order[1]
    rows = [{"item": first, "field": "label:2", "value": OUTDATED, "source": "judge", "score": 0.7},
            {"item": first, "field": "label:3", "value": UNKNOWN, "source": "judge", "score": 0.6},
            {"item": first, "field": "label:5", "value": IRRELEVANT, "source": "judge", "score": 0.9},
            {"item": first, "field": "label:2", "value": RELATED, "source": "zz-model"},
            {"item": second, "field": "label:1", "value": OUTDATED, "source": "judge", "score": 0.5}]
    db = store.connect(db_path)
    import_suggestions(db, "".join(json.dumps(r) + "\n" for r in rows).encode(), "s.jsonl",
                       DATASET, by="lead")
    pairs = comparisons(db_path)  # the review queue: the first two get a suggested verdict
    verdicts = [{"item": k, "field": f"verdict:{i}:{j}", "value": v, "source": "rm", "score": s}
                for (k, i, j), v, s in zip(pairs[:2], ("flip", "tie"), (-1.2, 0.05), strict=True)]
    import_suggestions(db, "".join(json.dumps(r) + "\n" for r in verdicts).encode(), "v.jsonl",
                       PREFERENCE, by="lead")
    db.conn.close()
    app = AppServer(db_path)
    app.start()
    yield app, order
    app.signal(signal.SIGCONT)
    app.stop()


def saved(db_path, who: str) -> dict[tuple[str, int], tuple[str, dict | None]]:
    """``who``'s labels: (item, passage) → (value, via without the score)."""
    rows = read(db_path, "select item_key, field, value, via from annotations where dataset = ? "
                "and annotator = ? and field like 'label:%'", [DATASET, who])
    out = {}
    for key, field, value, via in rows:
        how = json.loads(via) if via else None
        if how:
            how.pop("score", None)
        out[(key, int(field.split(":")[1]))] = (json.loads(value), how)
    return out


@pytest.mark.parametrize("pace", [150, 60, None], ids=["150ms", "60ms", "burst"])
def test_accept_mixed_with_label_keys_lands_exactly_what_was_pressed(page, server, pace):
    app, order = server
    (first, _), (second, _) = order[0], order[1]
    who = f"accept-{uuid.uuid4().hex[:6]}"
    open_annotate(page, app.url, first, who)
    # 2: passage 1 Answer (typed), then the cursor is on 2; Y: 2, 3, 5 get the judge's
    # labels; 1: passage 2 irrelevant over the suggestion; N; Y on the second question
    # (its passage 1), Y again (nothing left), 2: passage 1 Answer over it
    press(page, list("2y1nyy2"), pace)
    settle(page)
    assert saved(app.db_path, who) == {
        (first, 1): (ANSWER, None),
        (first, 2): (IRRELEVANT, {"how": "changed", "source": "judge", "suggested": OUTDATED}),
        (first, 3): (UNKNOWN, ACCEPTED),
        (first, 5): (IRRELEVANT, ACCEPTED),
        (second, 1): (ANSWER, {"how": "changed", "source": "judge", "suggested": OUTDATED}),
    }
    history = read(app.db_path, "select count(*) from history where annotator = ?", [who])[0][0]
    assert history == 7  # first: 1 typed, 3 accepted, 1 changed; second: 1 accepted, 1 changed
    assert errors(page) == []


def test_a_kill_20_to_150_ms_after_an_accept_invents_nothing_and_loses_nothing(page, server):
    app, order = server
    (first, _) = order[0]
    for delay in (20, 60, 100, 150):
        # each trial in a tab of its own: a tab keeps its place (the question and the
        # passage cursor) on the server, so a tab reopened on the same question would
        # start where the last trial's Y left its cursor
        tab = page.context.new_page()
        who = f"accept-kill-{delay}-{uuid.uuid4().hex[:4]}"
        open_annotate(tab, app.url, first, who)
        press(tab, ["2", "y"], 25)
        tab.wait_for_timeout(delay)  # the kill's moment: ``delay`` ms after the accept
        app.kill()
        app.start()
        settle(tab, timeout=60)
        assert saved(app.db_path, who) == {(first, 1): (ANSWER, None),
                                           (first, 2): (OUTDATED, ACCEPTED),
                                           (first, 3): (UNKNOWN, ACCEPTED),
                                           (first, 5): (IRRELEVANT, ACCEPTED)}, delay
        assert read(app.db_path, "select count(*) from history where annotator = ?",
                    [who])[0][0] == 4, delay
        assert errors(tab) == []
        tab.close()


@pytest.mark.parametrize("pace", [150, 60, None], ids=["150ms", "60ms", "burst"])
def test_review_y_accepts_the_suggested_verdict_and_moves_on(page, server, pace):
    app, _ = server
    pairs = comparisons(app.db_path)
    who = f"accept-review-{uuid.uuid4().hex[:6]}"
    open_review(page, app.url, who)
    press(page, ["y", "y", "a"], pace)  # accept, accept (each moves on), then a typed verdict
    settle_review(page)
    rows = read(app.db_path, "select item_key, field, value, via from annotations where "
                "dataset = ? and annotator = ?", [PREFERENCE, who])
    got = {(k, f): (json.loads(v)["verdict"], via and json.loads(via)["how"]) for k, f, v, via in rows}
    field = [(k, f"verdict:{i}:{j}") for k, i, j in pairs[:3]]
    assert got == {field[0]: ("flip", "accepted"), field[1]: ("tie", "accepted"),
                   field[2]: ("agree", None)}
    assert errors(page) == []


def test_review_a_kill_20_to_150_ms_after_y_invents_nothing_and_loses_nothing(page, server):
    app, _ = server
    pairs = comparisons(app.db_path)
    field = f"verdict:{pairs[0][1]}:{pairs[0][2]}"
    for delay in (20, 80, 150):
        who = f"accept-review-kill-{delay}-{uuid.uuid4().hex[:4]}"
        open_review(page, app.url, who, at=pairs[0])  # the last name is remembered
        press(page, ["y"], None)
        page.wait_for_timeout(delay)  # the kill's moment: ``delay`` ms after the accept
        app.kill()
        app.start()
        settle_review(page)
        rows = read(app.db_path, "select item_key, field, value, via from annotations where "
                    "dataset = ? and annotator = ?", [PREFERENCE, who])
        got = [(k, f, json.loads(v)["verdict"], json.loads(via)["how"]) for k, f, v, via in rows]
        assert got == [(pairs[0][0], field, "flip", "accepted")], delay
        assert read(app.db_path, "select count(*) from history where annotator = ?",
                    [who])[0][0] == 1, delay
        assert errors(page) == []


def test_review_opened_without_a_link_resumes_where_the_remembered_reviewer_left_off(page, server):
    """Local mode: Review opened without a link, in a browser that remembers a name, opens
    on that reviewer's first comparison without a verdict, every time (it used to depend on
    whether the page's first run finished before the name arrived)."""
    app, _ = server
    pairs = comparisons(app.db_path)
    who = f"accept-resume-{uuid.uuid4().hex[:6]}"
    open_review(page, app.url, who, at=pairs[0])
    press(page, ["y", "y"], 150)  # two accepted verdicts, each moving on
    settle_review(page)
    assert len(read(app.db_path, "select 1 from annotations where dataset = ? and annotator = ?",
                    [PREFERENCE, who])) == 2
    key, i, j = pairs[2]
    shown = ("(w) => { const d = window.__nwReview && window.__nwReview.data; return !!d && "
             "d.annotator === w.who && d.item === w.key && d.i === w.i && d.j === w.j; }")
    for _ in range(3):
        page.goto(f"{app.url}/review?dataset={PREFERENCE}")
        page.wait_for_function(shown, arg={"who": who, "key": key, "i": i, "j": j}, timeout=30_000)
        wait_idle(page)
        assert page.evaluate(shown, {"who": who, "key": key, "i": i, "j": j})
        assert f"item={key}&i={i + 1}&j={j + 1}" in page.url
    assert errors(page) == []


def test_an_accept_pending_through_an_outage_and_a_reload_lands_once(page, server):
    app, order = server
    (first, _) = order[0]
    who = f"accept-reload-{uuid.uuid4().hex[:4]}"
    url = f"{app.url}/annotate?dataset={DATASET}&item={first}"
    open_annotate(page, app.url, first, who)
    app.kill()
    press(page, ["2", "y"], 150)  # held in the browser: nobody answers
    # both kept in the tab's storage, where the reloaded page finds them
    page.wait_for_function("() => { const c = window.__nwCore; const kept = JSON.parse("
                           "localStorage.getItem('nw-pending:' + c.tab) || 'null'); "
                           "return c.queue.length === 2 && !!kept && kept.queue.length === 2; }",
                           timeout=10_000)
    with pytest.raises(Exception, match="ERR_CONNECTION_REFUSED"):
        page.reload(timeout=10_000)  # reloaded with the two actions pending
    app.start()
    goto_after_outage(page, url)
    page.locator(".st-key-nw-toolbar").wait_for(timeout=30_000)
    settle(page, timeout=60)
    assert saved(app.db_path, who) == {(first, 1): (ANSWER, None),
                                       (first, 2): (OUTDATED, ACCEPTED),
                                       (first, 3): (UNKNOWN, ACCEPTED),
                                       (first, 5): (IRRELEVANT, ACCEPTED)}
    assert read(app.db_path, "select count(*) from history where annotator = ?", [who])[0][0] == 4
    assert errors(page) == []
