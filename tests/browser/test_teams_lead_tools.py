"""The lead's tools in Chromium, team mode (issue 57, points 2, 4 and 5): what the lead does
from the command line is hers on the Audit and Quality pages, and the Person picker offers
people only; a date typed on the Audit page applies on Enter; after a reload the
reassign's kept items (named by number and text) and their button are still there, and a
gold item's leaving says why; a paused account's status reads whole on the Users page;
and local mode refuses a wide address with nothing of the app loaded and no page served."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

import store
from needlework.datasets.transfer import import_bytes
from needlework.teams import accounts
from needlework.teams.accounts import SignInRefused
from needlework.teams.assignment import assign_dataset
from needlework.teams.gold import mark_gold
from tests.browser.harness import (
    assert_no_exception,
    free_port,
    screenshot,
    team_server,
    wait_idle,
)
from tests.browser.test_teams import sign_in
from tests.conftest import ROOT, garage_records, jsonl
from tests.teams_fixtures import PASSWORDS

PEOPLE = {"lead": "admin", "rita": "admin", "ana": "annotator", "bob": "annotator"}
QUESTION = "What does a ticket cost at the Lakeside Museum?"  # every test item's text


def _read(db_path, sql: str, params=()) -> list:
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute(sql, list(params)).fetchall()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def lead_server(tmp_path_factory, chromium_available):
    """Team mode: ``g`` (6 items, not assigned: the lead assigns it from the command line)
    and ``r`` (5 items; sample-5 gold, in every queue; the rest assigned to ana and bob,
    each item to both). The accounts are made by the test, '(local)' in the audit."""
    folder = tmp_path_factory.mktemp("lead-tools")
    db_path = folder / "lead.db"
    db = store.connect(db_path)
    for name, role in PEOPLE.items():
        accounts.add_user(db, name, role, password=PASSWORDS[name])
    lead = accounts.get_user(db, "lead")
    import_bytes(db, jsonl(garage_records(6)), "g.jsonl", dataset="g")
    import_bytes(db, jsonl(garage_records(5)), "r.jsonl", dataset="r")
    mark_gold(db, "r", "sample-5", actor=lead)
    assign_dataset(db, "r", ["ana", "bob"], per_item=2, actor=lead)
    with pytest.raises(SignInRefused):
        accounts.sign_in(db, "ana", "wrong-password-1")  # an event by '(not signed in)'
    db.conn.close()
    with team_server(db_path) as server:
        yield server, db_path


def _cli(server, db_path, *args: str, password: str | None = PASSWORDS["lead"]):
    """``python -m needlework ARGS`` against the server's database and config."""
    env = {**os.environ, "NEEDLEWORK_DB": str(db_path),
           "NEEDLEWORK_CONFIG": server.env["NEEDLEWORK_CONFIG"]}
    env.pop("NEEDLEWORK_PASSWORD", None)
    if password is not None:
        env["NEEDLEWORK_PASSWORD"] = password
    return subprocess.run([sys.executable, "-m", "needlework", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def _page(browser, server, who: str, path: str):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    sign_in(page, f"{server.url}/{path}", who, PASSWORDS[who])
    return ctx, page


def _main(page):
    return page.locator('[data-testid="stMain"]')


def _options(page, combo) -> list[str]:
    """Open a select box's list (again, when a rerun closed it) and return its options."""
    for _ in range(4):
        wait_idle(page)
        combo.click()
        try:
            page.get_by_role("option").first.wait_for(timeout=5_000)
            return page.get_by_role("option").all_inner_texts()
        except PlaywrightError:  # a rerun redrew the box: open it again
            page.keyboard.press("Escape")
    raise AssertionError("the select box did not open")


def _rows(page, header: str) -> list[dict[str, str]]:
    """The rows of the table with the column ``header``: column -> cell."""
    grid = page.locator('[data-testid="stDataFrame"]').filter(
        has=page.locator("[role=columnheader]", has_text=header)).first
    grid.wait_for(timeout=30_000)
    headers = [h.strip() for h in grid.locator("[role=columnheader]").all_inner_texts()]
    out = []
    for row in grid.locator("[role=row]").all()[1:]:
        cells = [c.strip() for c in row.locator("[role=gridcell]").all_inner_texts()]
        if cells:
            out.append(dict(zip(headers[-len(cells):], cells, strict=True)))
    return out


def _filtered(page, combo, name: str, column: str, timeout: float = 30) -> list[dict[str, str]]:
    """Choose ``name`` in the select box ``combo`` and return the audit table's rows once
    every row's ``column`` is ``name``: the table is drawn by the run the choice asks for,
    and a rerun that closed the list before the click loses the choice (it is made again)."""
    page.get_by_role("option", name=name, exact=True).click()
    deadline, again = time.monotonic() + timeout, time.monotonic() + timeout / 3
    while True:
        wait_idle(page)
        rows = _rows(page, "what")
        if rows and {r[column] for r in rows} == {name}:
            return rows
        if time.monotonic() > deadline:
            return rows
        if time.monotonic() > again:  # the choice was lost: choose again, once
            _options(page, combo)
            page.get_by_role("option", name=name, exact=True).click()
            again = deadline


def _count(page):
    return _main(page).locator('[data-testid="stMarkdownContainer"]').filter(
        has_text=" match").first


def test_the_lead_acts_from_the_command_line_and_the_audit_names_her(lead_server, browser):
    server, db_path = lead_server
    refused = _cli(server, db_path, "assign", "--dataset", "g", "--annotators", "ana,bob",
                   password=None)
    assert refused.returncode == 1
    assert refused.stderr.strip().startswith("assign: team mode: assign acts as a person: "
                                             "add --as NAME")
    for args in (("assign", "--dataset", "g", "--annotators", "ana,bob", "--per-item", "2"),
                 ("gold", "sample", "--dataset", "g", "--percent", "30")):
        done = _cli(server, db_path, *args, "--as", "lead")
        assert done.returncode == 0, done.stderr
    assert _read(db_path, "select distinct marked_by from gold_items where dataset = 'g'") == [
        ("lead",)]
    ctx, page = _page(browser, server, "lead", "audit")
    try:
        main = _main(page)
        people = _options(page, main.get_by_role("combobox", name="Person"))
        assert people == ["(everyone)", "lead"], people  # not '(local)', '(not signed in)'
        rows = _filtered(page, main.get_by_role("combobox", name="Person"), "lead", "who")
        expect(_count(page)).to_contain_text("events match")
        assert {r["who"] for r in rows} == {"lead"}
        assert {"assignment.created", "gold.sampled", "sign_in"} <= {r["what"] for r in rows}
        page.goto(f"{server.url}/quality?dataset=g")
        page.get_by_role("heading", name="Gold items").wait_for(timeout=30_000)
        wait_idle(page)
        gold = _rows(page, "marked by")
        assert gold and {r["marked by"] for r in gold} == {"lead"}, gold
        assert_no_exception(page)
    except Exception:
        screenshot(page, "teams-lead-cli-audit")
        raise
    finally:
        ctx.close()


def test_a_date_typed_on_the_audit_page_applies_on_enter(lead_server, browser):
    server, _ = lead_server
    ctx, page = _page(browser, server, "lead", "audit")
    try:
        expect(_count(page)).to_contain_text("events match")
        since = page.get_by_role("textbox", name="From (UTC)")
        since.fill("2099-11-30")
        since.press("Enter")  # nothing clicked elsewhere: the typed day applies
        expect(_count(page)).to_have_text("0 events match from 2099-11-30 (UTC)")
        expect(_main(page).get_by_text("No events match.")).to_be_visible()
        since.fill("2026-11-31")
        since.press("Tab")
        expect(_main(page).get_by_text("From: '2026-11-31' is not a date")).to_be_visible()
        expect(_count(page)).not_to_contain_text("from")
        assert_no_exception(page)
    except Exception:
        screenshot(page, "teams-lead-audit-date")
        raise
    finally:
        ctx.close()


def test_after_a_reload_the_kept_items_are_named_and_can_be_taken_out(lead_server, browser):
    server, db_path = lead_server
    ctx, page = _page(browser, server, "lead", "assign?dataset=r")
    try:
        main = _main(page)
        page.get_by_role("heading", name="Someone left").wait_for(timeout=30_000)
        combo = main.get_by_role("combobox", name="Whose unfinished items")
        assert _options(page, combo) == ["ana", "bob"]
        page.get_by_role("option", name="bob", exact=True).click()
        wait_idle(page)
        main.get_by_role("button", name="Reassign the unfinished items").click()
        said = main.get_by_text("No unfinished item of bob moved. 4 items kept in bob's "
                                "queue: everyone else already has them. 1 gold item left "
                                "bob's queue instead of moving: gold items are in every "
                                "annotator's queue already.")
        said.wait_for(timeout=30_000)
        page.reload()  # a new session: nothing of the last one's state
        drop = main.get_by_role("button", name="Take these 4 items out of bob's queue")
        drop.wait_for(timeout=60_000)
        wait_idle(page)
        names = "; ".join(f"{k}. {QUESTION}" for k in range(1, 5))
        expect(main.get_by_text(names)).to_be_visible()
        assert "sample-" not in main.inner_text()  # no key where the pickers show text
        drop.click()
        main.get_by_text("4 items taken out of bob's queue; every annotation on them "
                         "stays.").wait_for(timeout=30_000)
        assert _read(db_path, "select count(*) from assignments where dataset = 'r' and "
                              "annotator = 'bob'") == [(0,)]
        assert_no_exception(page)
    except Exception:
        screenshot(page, "teams-lead-reassign-reload")
        raise
    finally:
        ctx.close()


def test_a_paused_accounts_status_reads_whole(lead_server, browser):
    server, db_path = lead_server
    db = store.connect(db_path)
    later = datetime.now(UTC) + timedelta(minutes=10)  # a pause that outlasts the test
    try:
        for _ in range(5):  # the 5th wrong password pauses rita's name
            with pytest.raises(SignInRefused):
                accounts.sign_in(db, "rita", "wrong-password-1", now=later)
        until = accounts.get_user(db, "rita").locked_until
    finally:
        db.conn.close()
    ctx, page = _page(browser, server, "lead", "users")
    try:
        rows = {r["name"]: r["status"] for r in _rows(page, "status")}
        assert rows["rita"] == "active, paused" and rows["lead"] == "active", rows
        line = page.locator(".st-key-nw-users-paused").get_by_text(
            f"rita: active; sign-in paused in some browsers until {until[11:16]} UTC (Paused "
            "sign-ins, below).", exact=True)
        expect(line).to_be_visible()
        assert line.evaluate("e => e.scrollWidth <= e.clientWidth")  # nothing cut off
        assert_no_exception(page)
    except Exception:
        screenshot(page, "teams-lead-users-paused")
        raise
    finally:
        ctx.close()


def test_local_mode_refuses_a_wide_address_before_the_app_loads(tmp_path, browser):
    """No page ever opens at 127.0.0.2 (a loopback address other than 127.0.0.1: refused in
    local mode, never a port open to the network), the server stops in one line, and no
    module of the app was loaded before it did."""
    port = free_port()
    env = {**os.environ, "NEEDLEWORK_CONFIG": str(tmp_path / "none.toml"),
           "NEEDLEWORK_DB": str(tmp_path / "local.db")}
    log = tmp_path / "serve.log"  # -X importtime writes much: a file, never a full pipe
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "streamlit", "run", "serve.py",
             "--server.port", str(port), "--server.address", "127.0.0.2", "--server.headless",
             "true", "--server.fileWatcherType", "none"],
            cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT)
    ctx = browser.new_context()
    page = ctx.new_page()
    deadline = time.monotonic() + 120
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            with pytest.raises(PlaywrightError):
                page.goto(f"http://127.0.0.2:{port}/", timeout=5_000)
        proc.wait(timeout=5)
    finally:
        ctx.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = log.read_text(errors="replace")
    assert proc.returncode != 0
    assert ("needlework: local mode has no sign-in, so it serves on 127.0.0.1 only, not on "
            "127.0.0.2.") in err
    loaded = {line.rsplit("|", 1)[1].strip() for line in err.splitlines()
              if line.startswith("import time:")}
    assert sorted(loaded & {"store", "needlework.actions.route", "needlework.web"}) == []
