"""Gold items set up in bulk on the Quality page, in Chromium, in team mode (issue 47): a
reviewer imports a file of gold answers (a bad row is named by file, line and field, and
nothing changes), asks for k % of every annotator's queue as gold, and is told in one
sentence, where the Mark button is, why an item without answers cannot be gold."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

import store
from needlework.datasets.transfer import import_bytes
from needlework.review.sides import sides_for
from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset
from needlework.teams.blind import set_visibility
from needlework.teams.gold import mark_gold
from tests.browser.harness import assert_no_exception, screenshot, team_server, wait_idle
from tests.browser.test_teams import send_form, signed_in_as
from tests.conftest import garage_records, jsonl
from tests.teams_fixtures import PASSWORDS

PEOPLE = {"lead": "admin", "rita": "reviewer", "ana": "annotator", "bob": "annotator"}


def _read(db_path, sql: str, params=()) -> list:
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute(sql, list(params)).fetchall()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def gold_server(tmp_path_factory, chromium_available):
    """Team mode: ``labelled`` (12 items with the file's labels, assigned to ana and bob)
    and ``bare`` (3 items without any label)."""
    folder = tmp_path_factory.mktemp("gold")
    db_path = folder / "gold.db"
    db = store.connect(db_path)
    for name, role in PEOPLE.items():
        accounts.add_user(db, name, role, password=PASSWORDS[name])
    import_bytes(db, jsonl(garage_records(12)), "labelled.jsonl", dataset="labelled")
    bare = garage_records(3)
    for r in bare:
        r["evidence_relevant"], r["evidence_correct"] = ["", "", ""], ["", "", ""]
    import_bytes(db, jsonl(bare), "bare.jsonl", dataset="bare")
    assign_dataset(db, "labelled", ["ana", "bob"], double_share=0.5,
                   actor=accounts.get_user(db, "lead"))
    db.conn.close()
    with team_server(db_path) as server:
        yield server, db_path


def _quality(browser, server, dataset: str):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    page.goto(f"{server.url}/quality?dataset={dataset}")
    page.get_by_label("Name or e-mail").wait_for(timeout=90_000)
    send_form(page, "rita", PASSWORDS["rita"])
    signed_in_as(page, "rita")
    page.get_by_role("heading", name="Gold items").wait_for(timeout=30_000)
    wait_idle(page)
    return ctx, page


def _main(page):
    return page.locator('[data-testid="stMain"]')


def _open_options(page, combo) -> list[str]:
    """Open a select box's list (again, when a rerun closed it) and return its options."""
    for _ in range(4):
        wait_idle(page)
        combo.click()
        try:
            page.get_by_role("option").first.wait_for(timeout=5_000)
            options = page.get_by_role("option").all_inner_texts()
        except Exception:  # noqa: BLE001 - a rerun redrew the box: open it again
            options = []
        if options:  # empty: a rerun closed the list between its first option and the read
            return options
        page.keyboard.press("Escape")
    raise AssertionError("the select box did not open")


def test_a_reviewer_imports_gold_answers_and_a_bad_row_is_named(gold_server, browser, tmp_path):
    server, db_path = gold_server
    ctx, page = _quality(browser, server, "labelled")
    try:
        bulk = page.locator(".st-key-nw-gold-bulk")
        bad = tmp_path / "gold-bad.csv"
        bad.write_text("item,field,value\nsample-3,label:1,Outdated\nsample-4,label:7,Related\n",
                       encoding="utf-8")
        bulk.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(bad))
        wait_idle(page)
        bulk.get_by_role("button", name="Import gold answers").click()
        error = bulk.get_by_text("gold-bad.csv line 3: label:7: the item has 3 passages · "
                                 "nothing was imported.")
        error.wait_for(timeout=20_000)
        expect(error).to_be_in_viewport()
        assert _read(db_path, "select count(*) from gold_items") == [(0,)]
        good = tmp_path / "gold.jsonl"
        good.write_text('{"item": "sample-3", "field": "label:1", "value": "Outdated"}\n'
                        '{"item": "sample-4", "field": "label:2", "value": "related"}\n',
                        encoding="utf-8")
        bulk.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(good))
        wait_idle(page)
        bulk.get_by_role("button", name="Import gold answers").click()
        bulk.get_by_text("Imported 2 gold answers of 2 items from gold.jsonl").wait_for(
            timeout=20_000)
        assert_no_exception(page)
        assert _read(db_path, "select item_key, answers from gold_items order by 1") == [
            ("sample-3", '{"label:1": "OUTDATED"}'),
            ("sample-4", '{"label:2": "RELATED-INFORMATION"}')]
        # k % of every queue: the share and the seed, then the figures under the control
        share = bulk.get_by_label("Gold share of each queue (%)")
        share.fill("40")
        share.press("Enter")
        wait_idle(page)
        seed = bulk.get_by_label("Seed")
        seed.fill("7")
        seed.press("Enter")
        wait_idle(page)
        bulk.get_by_role("button", name="Add gold items").click()
        done = bulk.get_by_text("of every annotator's queue.", exact=False)
        done.wait_for(timeout=20_000)
        expect(done).to_contain_text("(seed 7): at least 40 %")
        queues = _read(db_path, "select a.annotator, count(g.item_key), count(*) from assignments a "
                                "left join gold_items g on g.dataset = a.dataset and "
                                "g.item_key = a.item_key where a.dataset = 'labelled' "
                                "group by a.annotator")
        assert [q[0] for q in queues] == ["ana", "bob"]
        assert all(gold * 100 >= 40 * items for _, gold, items in queues), queues
        for who, gold, items in queues:
            expect(bulk).to_contain_text(f"{who} {gold} of {items}")
        assert _read(db_path, "select count(*) from audit_events where action = 'gold.sampled' "
                              "and by = 'rita'") == [(1,)]
    except Exception:
        screenshot(page, "teams-gold-import")
        raise
    finally:
        ctx.close()


def test_marking_an_item_without_answers_says_why_beside_the_button(gold_server, browser):
    server, db_path = gold_server
    ctx, page = _quality(browser, server, "bare")
    try:
        main = _main(page)
        options = _open_options(page, main.get_by_role("combobox", name="Item", exact=True))
        assert any(o.startswith("2.") for o in options), options
        page.get_by_role("option", name="2.", exact=False).click()
        wait_idle(page)
        expect(main).to_contain_text("This item has no file labels and no adjudicated values")
        mark = main.get_by_role("button", name="Mark as gold")
        mark.scroll_into_view_if_needed()
        mark.click()
        said = main.get_by_text("item sample-2 has no answers to mark as gold: it has no file "
                                "labels and no adjudicated values; give the answers or import "
                                "them from a file")
        said.wait_for(timeout=20_000)
        expect(said).to_be_in_viewport()
        assert _read(db_path, "select count(*) from gold_items where dataset = 'bare'") == [(0,)]
        assert_no_exception(page)
    except Exception:
        screenshot(page, "teams-gold-refusal")
        raise
    finally:
        ctx.close()


#: ana's Response A is the rejected one on p0, p8, p18, p24 and the chosen one on the
#: others (needlework.review.sides.sides_for): the two orders alternate along her queue
ORDER = (0, 4, 8, 14, 18, 20, 24, 28)
PAIRS = [{"id": f"p{k}", "prompt": f"Question number {k}?",
          "chosen": f"The careful answer number {k}.",
          "rejected": f"A sloppy answer number {k}."} for k in ORDER]
SIDE_WORDS = re.compile(r"\b(chosen|rejected)\b", re.IGNORECASE)


@pytest.fixture(scope="module")
def pairs_server(tmp_path_factory, chromium_available):
    """Team mode: a pairs dataset assigned to ana, one gold item (chosen is better), the
    lead's switch showing the file's labels on (gold items keep them hidden anyway)."""
    folder = tmp_path_factory.mktemp("gold-pairs")
    db_path = folder / "pairs.db"
    db = store.connect(db_path)
    for name, role in PEOPLE.items():
        accounts.add_user(db, name, role, password=PASSWORDS[name])
    lead = accounts.get_user(db, "lead")
    import_bytes(db, jsonl(PAIRS), "pairs.jsonl", dataset="pp", format="pairs")
    assign_dataset(db, "pp", ["ana"], actor=lead)
    mark_gold(db, "pp", "p8", actor=lead)
    set_visibility(db, "pp", "annotators_see_file_labels", True, actor=lead)
    db.conn.close()
    with team_server(db_path) as server:
        yield server, db_path


def _verdict(db_path, item: str) -> str | None:
    rows = _read(db_path, "select value from annotations where dataset = 'pp' and item_key = ? "
                          "and annotator = 'ana' and field = 'verdict:0:0'", [item])
    return json.loads(rows[0][0])["verdict"] if rows else None


def _wait_verdict(db_path, item: str, timeout: float = 20.0) -> str:
    deadline = time.time() + timeout
    while time.time() < deadline:
        found = _verdict(db_path, item)
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"no verdict of ana on {item}")


def test_review_names_no_side_to_an_annotator_and_a_keeps_its_meaning(pairs_server, browser):
    """Which response the file chose would give every preference gold answer away: an
    annotator reads Response A / B in an order fixed per item, and A (the left one is
    better) saves "agree" where it is the chosen one and "flip" where it is not, also when
    typed ahead of the page."""
    server, db_path = pairs_server
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    try:
        page.goto(f"{server.url}/review?dataset=pp")
        page.get_by_label("Name or e-mail").wait_for(timeout=90_000)
        send_form(page, "ana", PASSWORDS["ana"])
        signed_in_as(page, "ana")
        main, side = _main(page), page.locator('[data-testid="stSidebar"]')
        seen: dict[str, bool] = {}
        for _ in range(6):
            expect(main.get_by_role("button", name="A better")).to_be_visible(timeout=30_000)
            wait_idle(page)
            item = parse_qs(urlparse(page.url).query)["item"][0]
            shown = main.inner_text() + "\n" + side.inner_text()
            assert not SIDE_WORDS.search(shown), SIDE_WORDS.search(shown)
            number = item[1:]
            careful, sloppy = (shown.index(f"The careful answer number {number}."),
                               shown.index(f"A sloppy answer number {number}."))
            chosen_left = careful < sloppy
            assert chosen_left == (not sides_for(True, "ana", item).swap)
            seen[item] = chosen_left
            page.keyboard.press("a")  # the left response, Response A, is better
            assert _wait_verdict(db_path, item) == ("agree" if chosen_left else "flip")
            expect(main.get_by_text(f"Question number {number}?")).to_have_count(0, timeout=30_000)
        assert set(seen.values()) == {True, False}, seen  # both orders were met
        # typed ahead: the second A goes to the next item before the page shows it, and
        # means that item's Response A all the same
        wait_idle(page)
        first = parse_qs(urlparse(page.url).query)["item"][0]
        page.keyboard.press("a")
        page.keyboard.press("a")
        _wait_verdict(db_path, first)
        later = None
        deadline = time.time() + 20
        while later is None and time.time() < deadline:
            rows = _read(db_path, "select item_key, value from annotations where dataset = 'pp' "
                                  "and annotator = 'ana' and item_key not in ({})".format(
                                      ",".join("?" * (len(seen) + 1))), [*seen, first])
            later = rows[0] if rows else None
            time.sleep(0.1)
        assert later is not None, "the second A saved nothing"
        assert sides_for(True, "ana", later[0]) != sides_for(True, "ana", first)
        expected = "flip" if sides_for(True, "ana", later[0]).swap else "agree"
        assert json.loads(later[1])["verdict"] == expected
        # "flipped by me" would say which of her A / B verdicts picked the rejected one
        main.get_by_text("Filters and sort").click()
        options = _open_options(page, main.get_by_role("combobox", name="Review state"))
        assert "Not fully reviewed by me" in options and "Flipped by me" not in options, options
        page.keyboard.press("Escape")
        assert_no_exception(page)
    except Exception:
        screenshot(page, "teams-gold-review-sides")
        raise
    finally:
        ctx.close()
