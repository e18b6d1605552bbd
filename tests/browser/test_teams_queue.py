"""An annotator's own queue in team mode, in Chromium (issue 47): on Annotate she opens
only the items assigned to her (a link to another's item, N / P and the question list
never show its text) and her progress counts her queue; on Review her list, counts, J / N
and the key script's line of comparisons ahead hold her own comparisons only, so a run of
verdicts typed at speed lands on her items and nothing is refused. A reviewer's D in
adjudication opens the next question with an open dispute.

One team-mode server of its own: a grounding and a preference dataset whose texts differ
item by item, each split between ana and bob (one annotator per item).
"""

from __future__ import annotations

import copy
import re
import sqlite3
import time

import pytest
from playwright.sync_api import expect

import store
from needlework.datasets.transfer import import_bytes
from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset
from store.annotations import set_annotation
from tests.browser.harness import assert_no_exception, screenshot, team_server, wait_idle
from tests.browser.test_teams import sign_in
from tests.conftest import GARAGE_RECORD, jsonl
from tests.teams_fixtures import PASSWORDS

GROUND, PREF, DISPUTED = "queue-g", "queue-p", "queue-d"
PEOPLE = {"lead": "admin", "rita": "reviewer", "ana": "annotator", "bob": "annotator"}


def _queue(db_path, dataset: str, who: str) -> list[str]:
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
    try:
        return [r[0] for r in conn.execute(
            "select item_key from assignments where dataset = ? and annotator = ? "
            "order by queue_pos, item_key", [dataset, who])]
    finally:
        conn.close()


def _verdicts(db_path, who: str) -> list[tuple[str, str]]:
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute("select item_key, field from annotations where dataset = ? and "
                            "annotator = ? and field like 'verdict:%' order by item_key, field",
                            [PREF, who]).fetchall()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory, chromium_available):
    folder = tmp_path_factory.mktemp("queue")
    db_path = folder / "queue.db"
    db = store.connect(db_path)
    for name, role in PEOPLE.items():
        accounts.add_user(db, name, role, password=PASSWORDS[name])
    records = []
    for k in range(1, 9):
        r = copy.deepcopy(GARAGE_RECORD)
        r["sample_id"], r["question"] = f"sample-{k}", f"Question of sample-{k}?"
        records.append(r)
    import_bytes(db, jsonl(records), f"{GROUND}.jsonl", dataset=GROUND)
    import_bytes(db, jsonl([{"id": f"q{k}", "subset": "QA", "prompt": f"Prompt of q{k}?",
                             "chosen": [f"A careful answer {k}."],
                             "rejected": [f"Wrong {k}.", f"Also wrong {k}.", f"No answer {k}."]}
                            for k in range(8)]), f"{PREF}.jsonl", dataset=PREF, format="lfrb")
    import_bytes(db, jsonl(records), f"{DISPUTED}.jsonl", dataset=DISPUTED)
    for key in ("sample-2", "sample-5", "sample-7"):  # two annotators disagree on passage 2
        set_annotation(db, DISPUTED, key, "x1", "label:2", "OUTDATED")
        set_annotation(db, DISPUTED, key, "x2", "label:2", "UNKNOWN")
    set_annotation(db, DISPUTED, "sample-5", "rita", "final:label:2", "UNKNOWN")  # settled
    lead = accounts.get_user(db, "lead")
    for name in (GROUND, PREF):
        assign_dataset(db, name, ["ana", "bob"], per_item=1, actor=lead)
    db.conn.close()
    with team_server(db_path) as app:
        yield app


def signed_in(browser, server, who: str):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    sign_in(page, server.url, who, PASSWORDS[who])
    deadline = time.time() + 30  # the session cookie, asked for after the sign-in
    while accounts.SESSION_COOKIE not in {c["name"] for c in ctx.cookies()}:
        assert time.time() < deadline, f"{who}'s session cookie was never set"
        page.wait_for_timeout(100)
    return ctx, page


def _main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def _theirs_shown(page, theirs: list[str], words: str) -> list[str]:
    text = page.locator("body").inner_text()
    return [k for k in theirs if f"{words} {k}?" in text]


def _annotate_on(page, key: str) -> None:
    page.wait_for_function("(key) => window.__nwAnnotate && window.__nwAnnotate.item === key "
                           "&& new URLSearchParams(location.search).get('item') === key",
                           arg=key, timeout=30_000)
    wait_idle(page)
    assert_no_exception(page)


def test_annotate_opens_only_her_own_items(browser, server):
    mine, theirs = _queue(server.db_path, GROUND, "ana"), _queue(server.db_path, GROUND, "bob")
    assert len(mine) == 4 and not set(mine) & set(theirs)
    ctx, page = signed_in(browser, server, "ana")
    try:
        # a link to bob's item: her first unfinished item instead, and why
        page.goto(f"{server.url}/annotate?dataset={GROUND}&item={theirs[0]}")
        page.locator(".st-key-nw-toolbar").wait_for(timeout=60_000)
        _annotate_on(page, mine[0])
        assert "the item the link named is not assigned to you" in _main_text(page)
        assert not _theirs_shown(page, theirs, "Question of")
        assert "0 of 4 items done by ana" in _main_text(page)  # her queue, not the dataset's 8
        assert "4 questions in your queue" in _main_text(page)
        page.keyboard.press("Escape")
        # N along her queue to its end, then once more: never another's item
        for key in [*mine[1:], mine[-1]]:
            page.keyboard.press("n")
            _annotate_on(page, key)
            assert not _theirs_shown(page, theirs, "Question of"), page.url
        # the question list holds her items only
        page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').first.click()
        page.get_by_role("option").first.wait_for(timeout=10_000)
        listed = page.get_by_role("option").all_inner_texts()
        page.keyboard.press("Escape")
        assert len(listed) == 4, listed
        assert all(any(f" {k.split('-')[1]}. " in o for o in listed) for k in mine), listed
        screenshot(page, "teams-queue-annotate")
    finally:
        ctx.close()


def _review_caption(page) -> str:
    found = page.locator('[data-testid="stCaptionContainer"]').filter(
        has_text="in this view ·").first
    found.wait_for(timeout=60_000)
    return found.inner_text()


def test_review_goes_along_her_own_comparisons(browser, server):
    mine, theirs = _queue(server.db_path, PREF, "ana"), _queue(server.db_path, PREF, "bob")
    assert len(mine) == 4
    ctx, page = signed_in(browser, server, "ana")
    try:
        page.goto(f"{server.url}/review?dataset={PREF}&item={theirs[0]}")
        caption = _review_caption(page)
        wait_idle(page)
        assert_no_exception(page)
        assert "4 items in your queue · comparison 1 of 12 in this view" in caption, caption
        assert "12 not reviewed by you" in caption, caption
        assert "the item the link named is not assigned to you" in caption, caption
        assert not _theirs_shown(page, theirs, "Prompt of")
        # the key script has its code and the page's data: a key before it is nobody's
        page.wait_for_function("() => !!(window.__nwReview && window.__nwReview.data)",
                               timeout=30_000)
        page.evaluate("document.activeElement && document.activeElement.blur()")
        # twelve verdicts at typing speed: the line ahead holds her comparisons only, so
        # every one lands on her items and none is refused
        for _ in range(12):
            page.keyboard.press("a")
            page.wait_for_timeout(60)  # the typist's pace: verdicts 60 ms apart
        deadline = time.time() + 30
        while len(_verdicts(server.db_path, "ana")) < 12 and time.time() < deadline:
            time.sleep(0.2)
        saved = _verdicts(server.db_path, "ana")
        assert len(saved) == 12, saved
        assert {k for k, _ in saved} == set(mine)
        wait_idle(page)
        badge = page.locator("#nw-save-status")
        assert badge.get_attribute("data-refused") != "1", badge.inner_text()
        assert "not saved" not in badge.inner_text()
        assert "0 not reviewed by you" in _review_caption(page)
        # J at the end of her list goes nowhere else
        page.keyboard.press("j")
        wait_idle(page)
        assert not _theirs_shown(page, theirs, "Prompt of")
        assert page.url.split("item=")[1].split("&")[0] in mine
        screenshot(page, "teams-queue-review")
    finally:
        ctx.close()


def test_d_opens_the_next_open_dispute_in_adjudication(browser, server):
    ctx, page = signed_in(browser, server, "rita")
    try:
        page.goto(f"{server.url}/agreement?dataset={DISPUTED}")
        page.get_by_role("tab", name="Adjudication").click()
        keys = page.get_by_text("Keys: D opens the next question with an open dispute")
        keys.wait_for(timeout=60_000)
        wait_idle(page)
        assert_no_exception(page)
        picker = page.get_by_role("combobox", name="Question in dispute")
        expect(picker).to_have_value("2. Question of sample-2?")  # the first in dispute
        said = page.locator('[data-testid="stCaptionContainer"]').filter(
            has_text=re.compile(r"^Question \d+: "))
        page.evaluate("document.activeElement && document.activeElement.blur()")
        page.keyboard.press("d")  # question 5 is settled: 7
        expect(said).to_have_text("Question 7: an open dispute (2 questions with one).",
                                  timeout=30_000)
        expect(picker).to_have_value("7. Question of sample-7?", timeout=30_000)
        wait_idle(page)
        # typing a d in the note is text, not the key
        note = page.get_by_label("Note to the annotators", exact=False)
        note.click()
        page.keyboard.type("d")
        expect(note).to_have_value("d")
        wait_idle(page)  # D as a key would have pressed its button: a run, waited for here
        expect(picker).to_have_value("7. Question of sample-7?")
        assert note.input_value() == "d"
        note.fill("")
        page.keyboard.press("Escape")
        page.evaluate("document.activeElement && document.activeElement.blur()")
        page.keyboard.press("d")  # wraps around to question 2
        expect(said).to_have_text("Question 2: an open dispute (2 questions with one).",
                                  timeout=30_000)
        expect(picker).to_have_value("2. Question of sample-2?", timeout=30_000)
        assert_no_exception(page)
        screenshot(page, "teams-queue-next-dispute")
    finally:
        ctx.close()
