"""Blind Review is blind (issue 57, point 1): for an annotator who may not see the file's
labels, nothing on Review pairs differs with which side the file chose, gold items
included: the buttons, their keys, icons and classes, the grid, the status after a
verdict, and the key script's data and actions.

Two items show this annotator the same texts in the same places: on ``LEFT_CHOSEN``
Response A is the chosen response, on ``LEFT_REJECTED`` (a gold item) the same text is
the rejected one, shown as Response A too (the order is fixed per item and annotator,
needlework.review.sides). Their pages must be the same once the item's own id and its
place in the queue are taken out; the verdicts stored keep their meaning.
"""

from __future__ import annotations

import json
import re

import pytest

import store
from needlework.datasets.transfer import import_bytes
from needlework.review.sides import sides_for
from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset
from needlework.teams.quality import mark_gold
from tests.browser.harness import assert_no_exception, screenshot, team_server, wait_idle
from tests.browser.keys import read
from tests.browser.test_teams_blind import _DOM, first_difference, signed_in
from tests.conftest import garage_records, jsonl
from tests.teams_fixtures import PASSWORDS

PREFS = "prefs"
PEOPLE = {"lead": "admin", "rita": "reviewer", "ana": "annotator", "bob": "annotator"}
GROUND = "ground"
GOOD, POOR = "A careful, sourced answer to the question.", "A quick guess."


def keys_for_ana() -> tuple[str, str]:
    """An item id Response A is the chosen one of for ana, and one it is the rejected one of."""
    ids = [f"q{k}" for k in range(40)]
    straight = next(k for k in ids if not sides_for(True, "ana", k).swap)
    swapped = next(k for k in ids if sides_for(True, "ana", k).swap)
    return straight, swapped


LEFT_CHOSEN, LEFT_REJECTED = keys_for_ana()


@pytest.fixture(scope="module")
def server(tmp_path_factory, chromium_available):
    folder = tmp_path_factory.mktemp("blind-review")
    db_path = folder / "blind.db"
    db = store.connect(db_path)
    users = {name: accounts.add_user(db, name, role, password=PASSWORDS[name])
             for name, role in PEOPLE.items()}
    # the same prompt; the text ana sees as Response A is GOOD on both items
    records = [{"id": "first", "prompt": "Say something.", "chosen": "one", "rejected": "two"},
               {"id": LEFT_CHOSEN, "prompt": "Which is right?", "chosen": GOOD, "rejected": POOR},
               {"id": LEFT_REJECTED, "prompt": "Which is right?", "chosen": POOR, "rejected": GOOD},
               {"id": "last", "prompt": "Say more.", "chosen": "three", "rejected": "four"}]
    import_bytes(db, jsonl(records), "prefs.jsonl", dataset=PREFS, format="pairs")
    assign_dataset(db, PREFS, ["ana"], actor=users["lead"])
    mark_gold(db, PREFS, LEFT_REJECTED, actor=users["rita"])  # the gold answer: chosen better
    import_bytes(db, jsonl(garage_records(16)), "ground.jsonl", dataset=GROUND)
    assign_dataset(db, GROUND, ["ana", "bob"], per_item=1, actor=users["lead"])  # 8 each
    db.conn.close()
    with team_server(db_path) as app:
        yield app


def open_pair(page, url: str, key: str) -> None:
    page.goto(f"{url}/review?dataset={PREFS}&item={key}")
    page.wait_for_function("(key) => window.__nwReview && window.__nwReview.data && "
                           "window.__nwReview.data.item === key && window.__nwReview.data.annotator",
                           arg=key, timeout=60_000)
    page.locator(".st-key-rv-verdicts").wait_for(timeout=30_000)
    wait_idle(page)
    assert_no_exception(page)


def snapshot(page, key: str) -> tuple[str, str, str]:
    """The page's text, its DOM (tags, own classes, test ids, titles, states, own text)
    and the key script's data, with the item's id and its place in the queue taken out."""
    text, dom = page.locator("body").inner_text(), page.evaluate(_DOM)
    data = page.evaluate("() => { const d = Object.assign({}, window.__nwReview.data); "
                         "for (const k of ['seq', 'seen', 'line', 'moves']) delete d[k]; "
                         "return JSON.stringify(d); }")

    def neutral(s: str) -> str:
        s = s.replace(key, "ITEM")
        s = re.sub(r"\d\d:\d\d(\s*:\s*\d\d)?", "HH:MM", s)
        return re.sub(r"\b\d+\s*(/|of)\s*\d+\b", "N of M", s)

    return neutral(text), neutral(dom), neutral(data)


def test_an_annotators_review_page_is_the_same_whichever_side_the_file_chose(browser, server):
    ctx, page = signed_in(browser, server, "ana")
    sent: list[dict] = []
    page.on("request", lambda r: sent.append(json.loads(r.post_data)) if r.method == "POST"
            and "/action" in r.url and r.post_data else None)
    try:
        pages = {}
        for key in (LEFT_CHOSEN, LEFT_REJECTED):
            open_pair(page, server.url, key)
            pages[key] = snapshot(page, key)
            assert "Response A" in pages[key][0] and "A better" in pages[key][0]
        for (a, b), what in zip(zip(pages[LEFT_CHOSEN], pages[LEFT_REJECTED], strict=True),
                                ("text", "DOM", "key script data"), strict=True):
            if a != b:
                screenshot(page, "teams-blind-review-differs")
            assert a == b, f"{what}: {first_difference(a, b)}"
        # nothing the page holds or sends says agree or flip, or which side the file chose
        for _, dom, data in pages.values():
            assert not re.search(r"\b(agree|flip)\b|✅|🔁|[Cc]hosen|[Rr]ejected", dom + data), dom + data
        # "A better" on both (the left response, GOOD on both): stored as each item's verdict
        for key in (LEFT_CHOSEN, LEFT_REJECTED):
            open_pair(page, server.url, key)
            page.keyboard.press("a")
            page.wait_for_function("(key) => window.__nwCore.queue.length === 0", arg=key,
                                   timeout=30_000)
        stored = {k: json.loads(v)["verdict"] for k, v in read(
            server.db_path, "select item_key, value from annotations where dataset = ? and "
            "annotator = 'ana'", [PREFS])}
        assert stored == {LEFT_CHOSEN: "agree", LEFT_REJECTED: "flip"}
        assert {a.get("verdict") for body in sent for a in body.get("actions", [])
                if a.get("kind") == "verdict"} == {"a-better"}
        # after the verdict: the same status, the same button pressed, on both
        after = {}
        for key in (LEFT_CHOSEN, LEFT_REJECTED):
            open_pair(page, server.url, key)
            page.get_by_text("Saved: A better").wait_for(timeout=30_000)
            after[key] = snapshot(page, key)
        for a, b in zip(after[LEFT_CHOSEN], after[LEFT_REJECTED], strict=True):
            assert a == b, first_difference(a, b)
        # and her Home names no side either
        page.goto(f"{server.url}/")
        page.get_by_text("judged a pair: A better").first.wait_for(timeout=60_000)
        home = page.locator("body").inner_text()
        assert not re.search(r"[Cc]hosen (better|\d)|[Rr]ejected (better|\d)", home), home
    finally:
        ctx.close()


def test_a_blind_annotator_reads_her_own_queue_and_no_files_value(browser, server):
    """Issue 57, point 3, as she sees it: Annotate's header counts her queue as its list
    does, the dimension help names no file's value; bob, with no preference set assigned,
    is told so on Review."""
    ctx, page = signed_in(browser, server, "ana")
    try:
        page.goto(f"{server.url}/annotate?dataset={GROUND}")
        page.get_by_text("8 questions in your queue").wait_for(timeout=60_000)
        page.locator("#nw-question-meta").get_by_text("of 8 in your queue").wait_for(
            timeout=30_000)
        text = page.locator("body").inner_text()
        assert not re.search(r"Q\d+/16", text), text
        assert "the file's value" not in text and "V takes" not in text, text
    finally:
        ctx.close()
    ctx, page = signed_in(browser, server, "bob")
    try:
        page.goto(f"{server.url}/review")
        page.get_by_text("No preference dataset is assigned to you yet").wait_for(
            timeout=60_000)
    finally:
        ctx.close()
