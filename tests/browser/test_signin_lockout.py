"""Nobody locks another person out (issue 47, point 3), in Chromium against a team-mode
server behind a "proxy" (the server trusts 127.0.0.1, so the X-Forwarded-For a browser
context sends names its client).

The admin signs in once in her browser context (which gets the HttpOnly device cookie)
and signs out; a stranger in another context types her name with 20 wrong passwords;
the admin signs in at once from her own context (the same tab, then a new one); the
stranger's context is paused, even with the right password. The audit trail says where
each attempt came from and whether a device cookie came with it; the admin then lifts
the pause on the Users page.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

import store
from needlework.teams import accounts
from tests.browser.harness import assert_no_exception, screenshot, team_server, wait_idle
from tests.browser.test_teams import send_form, sign_in, signed_in_as, wait_db

ADMIN, ADMIN_PASSWORD = "lead-l", "lead-l-passphrase-7"
STRANGER_ADDRESS = "203.0.113.66"
PAUSED = "paused in browsers it has not signed in from before"


def _events(db_path, action: str) -> list[dict]:
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
    try:
        rows = conn.execute("select by, target, after from audit_events where action = ? "
                            "order by id", [action]).fetchall()
    finally:
        conn.close()
    return [{"by": r[0], "target": r[1], "after": json.loads(r[2] or "null")} for r in rows]


@pytest.fixture(scope="module")
def server(tmp_path_factory, chromium_available):
    folder = tmp_path_factory.mktemp("lockout")
    db_path = folder / "team.db"
    db = store.connect(db_path)
    accounts.add_user(db, ADMIN, "admin", password=ADMIN_PASSWORD)
    db.conn.close()
    with team_server(db_path, 'trusted_proxies = ["127.0.0.1"]\n\n[lockout]\nfailures = 5\n'
                     'minutes = 15\n') as app:
        yield app


def _device_cookie(ctx) -> dict | None:
    return next((c for c in ctx.cookies() if c["name"] == accounts.DEVICE_COOKIE), None)


def _sign_out(page) -> None:
    page.locator(".st-key-nw-account").get_by_role("button", name="Sign out").click()
    page.get_by_text("You are signed out.").wait_for(timeout=30_000)
    wait_idle(page)


def test_a_strangers_wrong_passwords_leave_the_admin_able_to_sign_in(browser, server):
    mine = browser.new_context(viewport={"width": 1280, "height": 900})
    stranger = browser.new_context(viewport={"width": 1280, "height": 900},
                                   extra_http_headers={"X-Forwarded-For": STRANGER_ADDRESS})
    try:
        page = mine.new_page()
        sign_in(page, server.url, ADMIN, ADMIN_PASSWORD)
        # the device cookie: HttpOnly, SameSite=Strict, its token only as a SHA-256 in the db
        for _ in range(100):
            cookie = _device_cookie(mine)
            if cookie:
                break
            page.wait_for_timeout(200)
        assert cookie and cookie["httpOnly"] and cookie["sameSite"] == "Strict", mine.cookies()
        assert cookie["value"].startswith("nwd_")
        assert page.evaluate("document.cookie").find(cookie["value"]) == -1
        wait_db(server.db_path, "select count(*) from device_cookies where token_hash = ?",
                [accounts.token_hash(cookie["value"])], [(1,)])
        _sign_out(page)

        # a stranger types her name with 20 wrong passwords
        other = stranger.new_page()
        other.goto(server.url)
        other.get_by_label("Name or e-mail").wait_for(timeout=90_000)
        for attempt in range(1, 21):
            send_form(other, ADMIN, f"guess-{attempt:02d}-wrong")
            wait_db(server.db_path, "select count(*) from audit_events where action = "
                    "'sign_in.refused'", [], [(attempt,)], timeout=40)
            wait_idle(other)
        other.get_by_text(PAUSED).wait_for(timeout=30_000)
        screenshot(other, "lockout-stranger-paused")

        # the admin signs in at once from her own browser: the same tab...
        send_form(page, ADMIN, ADMIN_PASSWORD)
        signed_in_as(page, ADMIN)
        _sign_out(page)
        # ...and a new one, where the server reads the device cookie the browser sends
        fresh = mine.new_page()
        sign_in(fresh, server.url, ADMIN, ADMIN_PASSWORD)

        # the stranger's browser stays paused, the right password included
        send_form(other, ADMIN, ADMIN_PASSWORD)
        wait_db(server.db_path, "select count(*) from audit_events where action = "
                "'sign_in.refused'", [], [(21,)], timeout=40)
        other.get_by_text(PAUSED).wait_for(timeout=30_000)
        assert other.locator(".st-key-nw-account").count() == 0
        assert_no_exception(other)

        # where each attempt came from, and whether it brought a device cookie
        refused = _events(server.db_path, "sign_in.refused")
        assert {(e["after"]["client"], e["after"]["device_cookie"]) for e in refused} == {
            (STRANGER_ADDRESS, False)}
        assert [e["after"]["reason"] for e in refused].count("wrong password") == 5
        signed = _events(server.db_path, "sign_in")
        assert [(e["target"], e["after"]["client"], e["after"]["device_cookie"])
                for e in signed] == [(ADMIN, "127.0.0.1", False), (ADMIN, "127.0.0.1", True),
                                     (ADMIN, "127.0.0.1", True)]
        text = json.dumps(refused + signed)
        assert "guess-" not in text and ADMIN_PASSWORD not in text

        # the admin sees the pause on the Users page and lifts it
        fresh.goto(f"{server.url}/users")
        lift = fresh.get_by_role("button", name="Lift every pause")
        lift.wait_for(timeout=60_000)
        wait_idle(fresh)
        fresh.get_by_text("its name, in browsers it has not signed in from before").first.wait_for(
            state="attached")  # a cell of the table (drawn on a canvas)
        screenshot(fresh, "lockout-users-pauses")
        lift.click()
        fresh.get_by_text("1 pause lifted.").wait_for(timeout=30_000)
        fresh.get_by_text("No sign-in is paused.").wait_for(timeout=30_000)
        assert _events(server.db_path, "sign_in.pause_lifted")[0]["target"] == ADMIN
        send_form(other, ADMIN, ADMIN_PASSWORD)  # the pause is gone for that browser too
        signed_in_as(other, ADMIN)
    finally:
        mine.close()
        stranger.close()


def test_x_forwarded_for_from_a_peer_that_is_not_a_trusted_proxy_is_ignored(
        browser, tmp_path, chromium_available):
    """No trusted_proxies: a browser on this machine that sends X-Forwarded-For is
    recorded as 127.0.0.1, whatever it claims (Streamlit's server would have believed it)."""
    db_path = tmp_path / "team.db"
    db = store.connect(db_path)
    accounts.add_user(db, ADMIN, "admin", password=ADMIN_PASSWORD)
    db.conn.close()
    with team_server(db_path) as app:
        ctx = browser.new_context(extra_http_headers={"X-Forwarded-For": STRANGER_ADDRESS})
        try:
            page = ctx.new_page()
            page.goto(app.url)
            page.get_by_label("Name or e-mail").wait_for(timeout=90_000)
            send_form(page, ADMIN, "guess-00-wrong")
            page.get_by_text("wrong name or password").wait_for(timeout=30_000)
            wait_idle(page)
            send_form(page, ADMIN, ADMIN_PASSWORD)
            signed_in_as(page, ADMIN)
            [refused] = _events(db_path, "sign_in.refused")
            [signed] = _events(db_path, "sign_in")
            assert refused["after"]["client"] == signed["after"]["client"] == "127.0.0.1"
            assert STRANGER_ADDRESS not in app.log()
        finally:
            ctx.close()
