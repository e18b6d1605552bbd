"""Team mode on two processes behind HAProxy (``python -m needlework serve-team``), in
Chromium (issue 60's acceptance): an annotator signs in through the proxy, labels with the
keyboard, reloads, is sent to the other process (the affinity cookie set to its name) and is
still signed in, every label exactly as pressed; and a process SIGKILLed while she presses
keys loses nothing and applies nothing twice (the outbox sends again, HAProxy redispatches
to the live process, the action ids make the resends idempotent), and she stays signed in.

The first test goes through TLS (a self-signed certificate made here): the app's cookies
are Secure behind the proxy. Each test runs ``serve-team`` of its own on a copy of the
seeded database.
"""

from __future__ import annotations

import sqlite3
import threading

import pytest
from playwright.sync_api import expect

import store
from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset
from tests.browser.harness import assert_no_exception, screenshot, wait_idle
from tests.browser.keys import (
    DATASET,
    ERROR_WATCH,
    changes,
    errors,
    everything_else,
    history_rows,
    implied,
    items,
    labels_of,
    press,
    settle,
)
from tests.serve_team_fixtures import TeamRun, haproxy_missing
from tests.test_serve_team import self_signed

WHO, PASSWORD = "ana-p", "ana-p-passphrase-7"
AFFINITY = "needlework_worker"


@pytest.fixture
def team_db(tmp_path, seeded_db):
    """A copy of the seeded database with an annotator who has every demo item."""
    missing = haproxy_missing()
    if missing:
        pytest.fail(missing)
    path = tmp_path / "team.db"
    source, target = sqlite3.connect(seeded_db), sqlite3.connect(path)
    source.backup(target)
    source.close()
    target.close()
    db = store.connect(path)
    accounts.add_user(db, WHO, "annotator", password=PASSWORD)
    assign_dataset(db, DATASET, [WHO], per_item=1)
    db.conn.close()
    return path


@pytest.fixture
def order(team_db):
    return items(team_db)


def sign_in(page, url: str) -> None:
    page.goto(url)
    page.get_by_label("Name or e-mail").wait_for(timeout=90_000)
    box = page.get_by_role("textbox", name="Password")
    expect(box).to_have_value("", timeout=30_000)
    page.get_by_label("Name or e-mail").fill(WHO)
    box.fill(PASSWORD)
    expect(box).to_have_value(PASSWORD)
    page.get_by_role("button", name="Sign in", exact=True).click()
    signed_in(page)


def signed_in(page, timeout: float = 60_000) -> None:
    """The sidebar names the account (no sign-in form): the page's process found the
    session, from its memory or from the cookie."""
    page.locator(".st-key-nw-account").get_by_text(WHO, exact=True).wait_for(timeout=timeout)
    wait_idle(page, timeout)
    assert page.get_by_label("Name or e-mail").count() == 0
    assert_no_exception(page)


def on_item(page, item: str) -> None:
    """Wait until the key script has ``item`` for the signed-in annotator."""
    page.locator(".st-key-nw-toolbar").wait_for(timeout=60_000)
    wait_idle(page)
    page.keyboard.press("Escape")
    page.wait_for_function(
        "([item, who]) => window.__nwAnnotate && window.__nwAnnotate.data && "
        "window.__nwAnnotate.item === item && window.__nwAnnotate.data.annotator === who",
        arg=[item, WHO], timeout=60_000)


def open_item(page, url: str, item: str) -> None:
    page.goto(f"{url}/annotate?dataset={DATASET}&item={item}")
    on_item(page, item)


def watch_actions(page) -> list[str | None]:
    """The worker that answered each key-action request of the page, in order (HAProxy's
    ``X-Needlework-Worker``; ``None``: an answer of the proxy itself, a 502 or 503)."""
    answered: list[str | None] = []
    page.on("response", lambda r: answered.append(r.headers.get("x-needlework-worker"))
            if "/_nw/actions" in r.url else None)
    return answered


def cookies(context) -> dict[str, dict]:
    return {c["name"]: c for c in context.cookies()}


def test_labels_through_the_proxy_then_on_the_other_process_still_signed_in(browser, tmp_path,
                                                                            team_db, order):
    run = TeamRun(tmp_path, team_db, workers=2, certificate=self_signed(tmp_path)).start()
    context = browser.new_context(viewport={"width": 1400, "height": 1000},
                                  ignore_https_errors=True)
    try:
        page = context.new_page()
        answered = watch_actions(page)
        page.add_init_script(ERROR_WATCH)
        others = everything_else(team_db, WHO)
        sign_in(page, run.url)
        jar = cookies(context)
        first = jar[AFFINITY]["value"]
        other = {"w1": "w2", "w2": "w1"}[first]
        assert jar[AFFINITY]["httpOnly"] and jar[AFFINITY]["secure"]
        session = jar[accounts.SESSION_COOKIE]  # Secure: the proxy said the browser used HTTPS
        assert session["httpOnly"] and session["secure"] and session["sameSite"] == "Strict"

        open_item(page, run.url, order[0][0])
        pressed = list("231")
        press(page, pressed, 150)
        settle(page)
        assert labels_of(team_db, WHO) == implied(order, 0, pressed)
        assert set(answered) == {first}

        response = page.reload()
        assert response.headers["x-needlework-worker"] == first
        signed_in(page)
        on_item(page, order[0][0])

        # the affinity cookie names the other process: every request now goes there
        context.add_cookies([{"name": AFFINITY, "value": other, "url": run.url,
                              "secure": True, "httpOnly": True}])
        response = page.reload()
        assert response.headers["x-needlework-worker"] == other
        signed_in(page)
        on_item(page, order[0][0])
        assert cookies(context)[AFFINITY]["value"] == other
        answered.clear()
        more = ["n", *"45"]
        press(page, more, 150)
        settle(page)
        pressed += more
        assert set(answered) == {other}
        assert labels_of(team_db, WHO) == implied(order, 0, pressed)
        assert history_rows(team_db, WHO) == changes(order, 0, pressed)
        assert everything_else(team_db, WHO) == others
        assert errors(page) == []
        screenshot(page, "proxy-other-process")
    finally:
        context.close()
        run.stop()


def test_a_worker_killed_while_keys_are_pressed_loses_nothing_and_doubles_nothing(
        browser, tmp_path, team_db, order):
    run = TeamRun(tmp_path, team_db, workers=2).start()
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        answered = watch_actions(page)
        page.add_init_script(ERROR_WATCH)
        others = everything_else(team_db, WHO)
        sign_in(page, run.url)
        victim = cookies(context)[AFFINITY]["value"]
        survivor = {"w1": "w2", "w2": "w1"}[victim]
        open_item(page, run.url, order[2][0])
        warm = list("12")
        press(page, warm, 150)
        settle(page)

        # 16 keys 150 ms apart; the process the browser is on is SIGKILLed after the 6th or so
        keys = list("3412") + ["n"] + list("5321") + ["k", "2", "n"] + list("4135")
        killed: list[int] = []
        timer = threading.Timer(0.9, lambda: killed.append(run.kill_worker(victim)))
        timer.start()
        try:
            press(page, keys, 150)
        finally:
            timer.join()
        assert killed, "the worker was not killed"
        assert answered.index(survivor) > answered.index(victim)  # keys on both sides of it
        settle(page, timeout=120)
        pressed = warm + keys
        assert labels_of(team_db, WHO) == implied(order, 2, pressed)
        assert history_rows(team_db, WHO) == changes(order, 2, pressed)
        assert everything_else(team_db, WHO) == others

        # the page is now served by the live process, and the person is still signed in
        signed_in(page)
        assert cookies(context)[AFFINITY]["value"] == survivor
        response = page.reload()
        assert response.headers["x-needlework-worker"] == survivor
        signed_in(page)
        assert errors(page) == []

        run.wait_restarted(victim, killed[0])  # the supervisor started it again
        screenshot(page, "proxy-after-kill")
    finally:
        context.close()
        run.stop()
