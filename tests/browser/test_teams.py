"""Team mode in Chromium (issue 15's acceptance): an admin signs in, creates two annotators
and a reviewer, assigns a dataset with overlap 2; each annotator signs in in a browser
context of their own, sees only their datasets and queue and labels with the keyboard;
the reviewer sees agreement computed on the overlapping items and adjudicates; a reload
keeps every session signed in. Five wrong passwords lock an account; no password is in
the database file or the server's log; st.login against a real OpenID provider signs a
user in, matched by e-mail; local mode still starts without any sign-in.

The server here is its own (a temporary database and a team-mode needlework.toml), not
the suite's shared local-mode one.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import time

import pytest
from playwright.sync_api import expect

import store
from needlework.datasets.transfer import import_bytes
from needlework.grounding.agreement import report as agreement_report
from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset, reassign_unfinished
from needlework.teams.oidc import write_auth_secrets
from store.annotations import dataset_annotations
from tests.browser.harness import (
    AppServer,
    assert_no_exception,
    free_port,
    screenshot,
    wait_idle,
)
from tests.conftest import ROOT, garage_records, jsonl

LEAD, LEAD_PASSWORD = "lead-t", "lead-t-passphrase-7"
NEW = {"ana-t": ("annotator", "ana-t-passphrase-7"), "bob-t": ("annotator", "bob-t-passphrase-7"),
       "rita-t": ("reviewer", "rita-t-passphrase-7")}
LOCKY, LOCKY_PASSWORD = "locky-t", "locky-t-passphrase-7"
WRONG = "not-the-password-7"
DATASET, QUEUES, OTHER = "team-g", "team-q", "team-other"
KEYS = {"1": "irrelevant", "2": "ANSWER-THE-QUESTION", "3": "RELATED-INFORMATION"}
OIDC_DIR = ROOT / "tests" / "oidc"


def _read(db_path, sql: str, params=()) -> list:
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute(sql, list(params)).fetchall()
    finally:
        conn.close()


def _team_config(folder) -> str:
    path = folder / "needlework.toml"
    path.write_text('[server]\nmode = "team"\naddress = "127.0.0.1"\n', encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def team(tmp_path_factory, chromium_available):
    """A team-mode server: the first admin (made as the CLI makes it), a grounding dataset
    to assign in the browser, one assigned with overlap 1 and one nobody has."""
    folder = tmp_path_factory.mktemp("team")
    db_path = folder / "team.db"
    db = store.connect(db_path)
    accounts.add_user(db, LEAD, "admin", password=LEAD_PASSWORD)
    accounts.add_user(db, LOCKY, "reviewer", password=LOCKY_PASSWORD)
    for name in (DATASET, QUEUES, OTHER):
        import_bytes(db, jsonl(garage_records(4)), f"{name}.jsonl", dataset=name)
    db.conn.close()
    server = AppServer(db_path, env={"NEEDLEWORK_CONFIG": _team_config(folder)})
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _context(browser):
    return browser.new_context(viewport={"width": 1280, "height": 900})


def sign_in(page, url: str, name: str, password: str) -> None:
    """Fill the sign-in form at ``url`` and wait for the sidebar to name the account."""
    page.goto(url)
    page.get_by_label("Name or e-mail").wait_for(timeout=90_000)  # maybe a fresh server
    send_form(page, name, password)
    signed_in_as(page, name)


def send_form(page, name: str, password: str) -> None:
    """Send the sign-in form once (after the last refusal has emptied the password)."""
    box = page.get_by_role("textbox", name="Password")
    expect(box).to_have_value("", timeout=30_000)
    page.get_by_label("Name or e-mail").fill(name)
    box.fill(password)
    expect(box).to_have_value(password)
    page.get_by_role("button", name="Sign in", exact=True).click()


def signed_in_as(page, name: str) -> None:
    page.locator(".st-key-nw-account").get_by_text(name, exact=True).wait_for(timeout=30_000)
    wait_idle(page)
    assert_no_exception(page)


def wait_db(db_path, sql: str, params, expected, timeout: float = 20.0):
    deadline = time.time() + timeout
    while True:
        got = _read(db_path, sql, params)
        if got == expected:
            return
        if time.time() > deadline:
            raise AssertionError(f"{sql} {params}: expected {expected!r}, got {got!r}")
        time.sleep(0.1)


def label_item(page, url: str, db_path, who: str, key: str, presses: str) -> None:
    """Open ``key`` on the annotate page and label its passages with the keyboard."""
    page.goto(f"{url}/annotate?dataset={DATASET}&item={key}")
    page.locator(".st-key-nw-toolbar").wait_for(timeout=30_000)
    wait_idle(page)
    page.keyboard.press("Escape")
    # the key script has this question (a key pressed before it has loaded does nothing)
    try:
        page.wait_for_function("(key) => window.__nwAnnotate && window.__nwAnnotate.data && "
                               "window.__nwAnnotate.item === key", arg=key, timeout=30_000)
    except Exception:
        screenshot(page, f"teams-label-{who}-{key}")
        state = page.evaluate("() => window.__nwAnnotate ? {item: window.__nwAnnotate.item, "
                              "data: !!window.__nwAnnotate.data, url: location.href, "
                              "barrier: window.__nwAnnotate.barrier, held: window.__nwAnnotate.held} "
                              ": {url: location.href}")
        raise AssertionError(f"the key script never had {key}: {state}") from None
    for number, press in enumerate(presses, start=1):
        page.keyboard.press(press)
        wait_db(db_path, "select value, annotator from annotations where dataset = ? and "
                "item_key = ? and annotator = ? and field = ?",
                [DATASET, key, who, f"label:{number}"], [(json.dumps(KEYS[press]), who)])
    assert_no_exception(page)


def nav_links(page) -> list[str]:
    """The page titles in the sidebar's menu (each link's last line: the icon comes first)."""
    return [t.strip().splitlines()[-1] for t in
            page.locator('[data-testid="stSidebarNav"] a').all_inner_texts()]


def test_admin_team_assignment_annotators_and_reviewer(browser, team):
    url, db_path = team.url, team.db_path
    admin_ctx = _context(browser)
    admin = admin_ctx.new_page()
    sign_in(admin, f"{url}/users", LEAD, LEAD_PASSWORD)
    assert "admin" in admin.locator(".st-key-nw-account").inner_text()
    # the lead's pages are in the menu itself, not under "View 3 more"
    assert {"Quality", "Guidelines", "Audit", "Users", "Assignment"} <= set(nav_links(admin))
    form = admin.locator('[data-testid="stForm"]').first  # the new account's form
    for name, (role, password) in NEW.items():
        form.get_by_label("Name", exact=True).fill(name)
        if role != "annotator":
            form.get_by_label("Role").click()
            admin.get_by_role("option", name=role).click()
        form.get_by_label("Password", exact=True).fill(password)
        form.get_by_label("Password again").fill(password)
        form.get_by_role("button", name="Create the account").click()
        admin.get_by_text(f"Account {name} created ({role}).").wait_for(timeout=30_000)
        wait_idle(admin)
    hashes = _read(db_path, "select name, role, password_hash from users where name like '%-t' "
                   "and name != ? order by name", [LEAD])
    assert [(n, r) for n, r, _ in hashes] == sorted(
        [(n, r) for n, (r, _) in NEW.items()] + [(LOCKY, "reviewer")])
    assert all(h.startswith("$argon2id$") for _, _, h in hashes)

    # assign with overlap 2: the annotators chosen by default are the annotator accounts
    admin.goto(f"{url}/assign?dataset={DATASET}")
    admin.get_by_text("Distribute the items", exact=True).first.wait_for()
    wait_idle(admin)
    admin.get_by_role("button", name="Distribute the items").click()
    admin.get_by_text("4 items distributed as 8 assignments").wait_for(timeout=30_000)
    assert _read(db_path, "select annotator, count(*) from assignments where dataset = ? group by "
                 "annotator order by annotator", [DATASET]) == [("ana-t", 4), ("bob-t", 4)]
    screenshot(admin, "teams-assign")
    db = store.connect(db_path)  # a second dataset, one annotator per item
    assign_dataset(db, QUEUES, ["ana-t", "bob-t"], per_item=1)
    db.conn.close()

    # each annotator in a browser context of their own
    people = {}
    for name in ("ana-t", "bob-t"):
        ctx = _context(browser)
        page = ctx.new_page()
        sign_in(page, url, name, NEW[name][1])
        people[name] = (ctx, page)
    ana = people["ana-t"][1]
    assert "ana-t · annotator" in ana.locator(".st-key-nw-account").inner_text()
    assert nav_links(ana) == ["Home", "Annotate", "Review pairs"]
    ana.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').click()
    options = ana.get_by_role("option").all_inner_texts()
    assert sorted(o.strip() for o in options) == [DATASET, QUEUES]  # not team-other
    ana.keyboard.press("Escape")
    # Home: the datasets open, but only an admin is offered Manage (rename, archive, delete)
    for who in (admin, ana):
        who.goto(url)
        who.get_by_role("link", name="Open ›").first.wait_for(timeout=30_000)
        wait_idle(who)
    assert admin.get_by_role("button", name="Manage").count() >= 3
    assert ana.get_by_role("button", name="Manage").count() == 0
    for path in ("agreement", "data", "users", "assign"):
        ana.goto(f"{url}/{path}")
        ana.get_by_text("is not offered to your role (annotator)").wait_for(timeout=30_000)
        assert not ana.get_by_role("button", name="Import").count()

    label_item(ana, url, db_path, "ana-t", "sample-1", "213")
    label_item(ana, url, db_path, "ana-t", "sample-2", "221")
    bob = people["bob-t"][1]
    label_item(bob, url, db_path, "bob-t", "sample-1", "211")
    label_item(bob, url, db_path, "bob-t", "sample-2", "221")
    label_item(ana, url, db_path, "ana-t", "sample-3", "2")  # bob has not: not overlapping
    by = _read(db_path, "select annotator, by, count(*) from history where dataset = ? "
               "group by annotator, by order by annotator", [DATASET])
    assert by == [("ana-t", "ana-t", 7), ("bob-t", "bob-t", 6)]  # saved as the signed-in user
    ana.goto(f"{url}/annotate?dataset={DATASET}&item=sample-1")
    ana.locator(".st-key-nw-toolbar").wait_for(timeout=30_000)
    wait_idle(ana)
    assert "bob-t" not in ana.locator('[data-testid="stMain"]').inner_text()  # only her labels
    screenshot(ana, "teams-annotator")

    # the reviewer: agreement on the overlapping items, then adjudication
    rita_ctx = _context(browser)
    rita = rita_ctx.new_page()
    sign_in(rita, f"{url}/agreement?dataset={DATASET}", "rita-t", NEW["rita-t"][1])
    db = store.connect(db_path)
    expected = agreement_report(dataset_annotations(db, DATASET))
    db.conn.close()
    assert expected.labels.units == 6  # two items, three passages each, labelled by both
    rita.get_by_text("Krippendorff's α, passage labels").wait_for(timeout=30_000)
    main = rita.locator('[data-testid="stMain"]').inner_text()
    assert f"{expected.labels.value:.3f}" in main
    rita.get_by_role("tab", name="Adjudication").click()
    box = rita.locator(".st-key-nw-adj-3")
    box.wait_for(timeout=30_000)
    box.get_by_role("radio", name="Related", exact=True).click()
    wait_db(db_path, "select annotator, value from annotations where dataset = ? and item_key = ? "
            "and field = ?", [DATASET, "sample-1", "final:label:3"],
            [("rita-t", json.dumps("RELATED-INFORMATION"))])
    assert _read(db_path, "select by from history where field = 'final:label:3'") == [("rita-t",)]
    screenshot(rita, "teams-reviewer")

    # a reload keeps each session signed in (the token comes back in the cookie)
    for page, name in ((admin, LEAD), (ana, "ana-t"), (bob, "bob-t"), (rita, "rita-t")):
        page.reload()
        signed_in_as(page, name)
    for ctx in (admin_ctx, rita_ctx, *(c for c, _ in people.values())):
        ctx.close()


def test_an_annotator_sees_only_their_queue(browser, team):
    """One annotator per item: ana's list is her half of the dataset. (The question list
    follows the queue in components/annotate/questions.py.)"""
    url, db_path = team.url, team.db_path
    db = store.connect(db_path)  # alone, or after the test above
    for name, (role, password) in NEW.items():
        if accounts.get_user(db, name) is None:
            accounts.add_user(db, name, role, password=password)
    if not db.execute("select count(*) from assignments where dataset = ?", [QUEUES]).fetchone()[0]:
        assign_dataset(db, QUEUES, ["ana-t", "bob-t"], per_item=1)
    db.conn.close()
    mine = [k for (k,) in _read(db_path, "select item_key from assignments where dataset = ? and "
                                "annotator = 'ana-t' order by queue_pos", [QUEUES])]
    assert len(mine) == 2
    ctx = _context(browser)
    page = ctx.new_page()
    sign_in(page, f"{url}/annotate?dataset={QUEUES}", "ana-t", NEW["ana-t"][1])
    page.get_by_text("2 questions in your queue").wait_for(timeout=30_000)
    page.locator(".st-key-nw-toolbar").wait_for(timeout=30_000)
    wait_idle(page)
    # the question picker lists her items only (numbered by their place in the dataset)
    page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').first.click()
    options = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    numbers = sorted(int(o.split(".")[0].split()[-1]) for o in options)
    assert numbers == sorted(int(k.removeprefix("sample-")) for k in mine), options
    # it opens at her first item, and N (next) goes to her second, skipping bob's between
    main = page.locator('[data-testid="stMain"]')
    main.get_by_text(f"id {mine[0]}", exact=False).wait_for(timeout=30_000)
    page.keyboard.press("n")
    main.get_by_text(f"id {mine[1]}", exact=False).wait_for(timeout=30_000)
    wait_idle(page)
    assert_no_exception(page)
    ctx.close()


def test_five_wrong_passwords_lock_the_account(browser, team):
    ctx = _context(browser)
    page = ctx.new_page()
    page.goto(team.url)
    for attempt in range(1, 6):
        send_form(page, LOCKY, WRONG)
        wait_db(team.db_path, "select failures, locked_until is not null from sign_in_failures "
                "where login_key = ?", [accounts.login_key(LOCKY)],
                [(attempt, int(attempt == 5))], timeout=40)
        wait_idle(page)
    page.get_by_text("5 times in a row: sign-in with this name is paused in browsers it has not "
                     "signed in from before until").wait_for(timeout=30_000)
    send_form(page, LOCKY, LOCKY_PASSWORD)
    page.get_by_text("after 5 wrong passwords in a row, sign-in with this name is paused in "
                     "browsers it has not signed in from before: try again after"
                     ).wait_for(timeout=30_000)
    assert page.locator(".st-key-nw-account").count() == 0
    screenshot(page, "teams-locked")
    ctx.close()


def test_passwords_are_not_in_the_database_file_nor_the_log(browser, team):
    """Sign in (a wrong password first), sign out, then read the database file, its WAL
    and the server's log as bytes: no password typed in this module is there."""
    ctx = _context(browser)
    page = ctx.new_page()
    page.goto(team.url)
    send_form(page, LEAD, WRONG)
    page.get_by_text("wrong name or password").wait_for(timeout=30_000)
    sign_in(page, team.url, LEAD, LEAD_PASSWORD)
    page.locator(".st-key-nw-account").get_by_role("button", name="Sign out").click()
    page.get_by_text("You are signed out.").wait_for(timeout=30_000)
    page.reload()
    page.get_by_label("Name or e-mail").wait_for(timeout=30_000)  # the cookie went too
    ctx.close()
    files = [team.db_path, team.db_path.with_name(team.db_path.name + "-wal"), team.log_path]
    blob = b"".join(p.read_bytes() for p in files if p.exists())
    assert b"$argon2id$" in blob  # the hashes are there
    for password in (LEAD_PASSWORD, LOCKY_PASSWORD, WRONG, *(p for _, p in NEW.values())):
        assert password.encode() not in blob, password


def test_a_refused_key_says_why_and_is_not_shown_as_saved(browser, team):
    """Issue 26, point 6: the lead moves ana's unfinished items to bob while her page is
    open; her next label key is refused on the server, and the page says so in the
    server's sentence instead of "all saved"."""
    name = "team-refused"
    db = store.connect(team.db_path)
    for who, (role, password) in NEW.items():
        if accounts.get_user(db, who) is None:
            accounts.add_user(db, who, role, password=password)
    import_bytes(db, jsonl(garage_records(2)), f"{name}.jsonl", dataset=name)
    assign_dataset(db, name, ["ana-t"], per_item=1)
    ctx = _context(browser)
    page = ctx.new_page()
    sign_in(page, f"{team.url}/annotate?dataset={name}", "ana-t", NEW["ana-t"][1])
    page.locator(".st-key-nw-toolbar").wait_for(timeout=30_000)
    wait_idle(page)
    page.keyboard.press("Escape")
    reassign_unfinished(db, name, "ana-t", to=["bob-t"], actor=accounts.get_user(db, LEAD))
    db.conn.close()
    page.keyboard.press("1")
    badge = page.locator("#nw-save-status")
    expect(badge).to_contain_text("not saved:", timeout=30_000)
    text = badge.inner_text()
    assert "is not assigned to" in text, text
    assert badge.get_attribute("data-refused") == "1"
    screenshot(page, "teams-refused-key")
    assert _read(team.db_path, "select count(*) from annotations where dataset = ?", [name]) == [(0,)]
    refused = _read(team.db_path, "select outcome from applied_actions where outcome like ?",
                    ["rejected%"])
    assert refused, "the refusal is recorded with the action"
    ctx.close()


def _session_cookie(ctx) -> dict | None:
    return next((c for c in ctx.cookies() if c["name"] == accounts.SESSION_COOKIE), None)


def test_the_session_cookie_is_httponly_and_dies_with_the_session(browser, team):
    """Issue 26, point 4: the server sets the cookie (HttpOnly, SameSite=Strict), no script
    on the page sees it, a reload keeps the session, and after a sign-out the same token,
    copied into another browser, opens nothing."""
    ctx = _context(browser)
    page = ctx.new_page()
    sign_in(page, team.url, LEAD, LEAD_PASSWORD)
    deadline = time.time() + 20
    while _session_cookie(ctx) is None and time.time() < deadline:
        page.wait_for_timeout(100)
    cookie = _session_cookie(ctx)
    assert cookie is not None, ctx.cookies()
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict", cookie
    assert accounts.SESSION_COOKIE not in page.evaluate("document.cookie")
    page.reload()
    signed_in_as(page, LEAD)  # the server read its own cookie back
    # a cross-site request to the cookie route changes nothing
    refused = page.evaluate("""async (url) => {
        const r = await fetch(url, {method: 'DELETE', headers: {'Content-Type': 'text/plain'},
                                    body: '{}'});
        return r.status; }""", team.url + "/_nw/session")
    assert refused == 403
    token = cookie["value"]
    db = store.connect(team.db_path)
    assert accounts.resume(db, token) is not None
    page.locator(".st-key-nw-account").get_by_role("button", name="Sign out").click()
    page.get_by_text("You are signed out.").wait_for(timeout=30_000)
    deadline = time.time() + 20
    while _session_cookie(ctx) is not None and time.time() < deadline:
        page.wait_for_timeout(100)
    assert _session_cookie(ctx) is None
    assert accounts.resume(db, token) is None
    db.conn.close()
    thief = _context(browser)
    thief.add_cookies([{**{k: cookie[k] for k in ("name", "value", "domain", "path")},
                        "httpOnly": True, "sameSite": "Strict"}])
    stolen = thief.new_page()
    stolen.goto(team.url)
    stolen.get_by_label("Name or e-mail").wait_for(timeout=60_000)
    stolen.get_by_text("Your session has ended").wait_for(timeout=30_000)
    assert stolen.locator(".st-key-nw-account").count() == 0
    thief.close()
    ctx.close()


def test_a_reload_the_moment_the_signed_in_page_shows_keeps_the_session(browser, team):
    """The signed-in page is drawn only after the browser has the session cookie: the
    instant the account shows, the cookie is there, and a reload at once (no wait) opens
    the page signed in, three sign-ins in a row."""
    for _ in range(3):
        ctx = _context(browser)
        page = ctx.new_page()
        page.goto(team.url)
        page.get_by_label("Name or e-mail").wait_for(timeout=90_000)
        send_form(page, LEAD, LEAD_PASSWORD)
        page.locator(".st-key-nw-account").get_by_text(LEAD, exact=True).wait_for(timeout=30_000)
        assert _session_cookie(ctx) is not None, ctx.cookies()
        page.reload()
        signed_in_as(page, LEAD)
        assert page.get_by_label("Name or e-mail").count() == 0
        ctx.close()


def test_local_mode_starts_without_sign_in(page, app_url):
    page.goto(app_url)
    page.get_by_label("Annotator", exact=True).wait_for(timeout=90_000)  # the typed name
    wait_idle(page)
    assert page.get_by_role("button", name="Sign in", exact=True).count() == 0
    assert "Users" not in nav_links(page)


# --- st.login against a real OpenID Connect provider --------------------------------------

CLIENT_ID, CLIENT_SECRET = "needlework-browser", "browser-client-secret-5e1d"
OLI, OLI_EMAIL, OLI_IDP_PASSWORD = "oli-t", "Oli@Example.org", "oli-at-the-idp-7"


@pytest.fixture(scope="module")
def oidc_app(tmp_path_factory, chromium_available):
    """panva's oidc-provider on 127.0.0.1 and a team-mode app whose [auth] settings
    (written by needlework.teams.oidc.write_auth_secrets) point at it."""
    node = shutil.which("node")
    if node is None or not (OIDC_DIR / "node_modules" / "oidc-provider").is_dir():
        pytest.fail("the test OpenID provider is not installed: run `make test` (it runs "
                    "`npm ci` in tests/oidc)")
    folder = tmp_path_factory.mktemp("oidc-app")
    port = free_port()
    redirect = f"http://127.0.0.1:{port}/oauth2callback"
    config = folder / "provider.json"
    config.write_text(json.dumps({
        "clients": [{"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
                     "redirect_uris": [redirect], "post_logout_redirect_uris": [redirect],
                     "grant_types": ["authorization_code"], "response_types": ["code"]}],
        "users": {OLI_EMAIL.lower(): {"password": OLI_IDP_PASSWORD, "name": "Oli"}},
    }))
    provider = subprocess.Popen([node, str(OIDC_DIR / "provider.mjs"), str(config)],
                                cwd=OIDC_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    server = None
    try:
        line = provider.stdout.readline()
        if not line:
            pytest.fail(f"the OpenID provider did not start: {provider.stderr.read()[-2000:]}")
        issuer = json.loads(line)["issuer"]
        secrets = write_auth_secrets(folder / "secrets.toml", client_id=CLIENT_ID,
                                     server_metadata_url=f"{issuer}/.well-known/openid-configuration",
                                     client_secret=CLIENT_SECRET, redirect_uri=redirect)
        db_path = folder / "oidc.db"
        db = store.connect(db_path)
        accounts.add_user(db, OLI, "annotator", email=OLI_EMAIL.upper())  # no password
        db.conn.close()
        server = AppServer(db_path, port=port, env={"NEEDLEWORK_CONFIG": _team_config(folder),
                                                    "STREAMLIT_SECRETS_FILES": str(secrets)})
        server.start()
        yield server
    finally:
        if server is not None:
            server.stop()
        provider.terminate()
        try:
            provider.wait(timeout=10)
        except subprocess.TimeoutExpired:
            provider.kill()


def test_st_login_signs_in_the_account_with_that_email(browser, oidc_app):
    ctx = _context(browser)
    page = ctx.new_page()
    page.goto(oidc_app.url)
    wait_idle(page, timeout=90_000)  # a fresh server's first page
    page.get_by_role("button", name="Sign in with your organisation's account").click()
    page.wait_for_url("**/interaction/**", timeout=30_000)  # the provider's own page
    page.locator("input[name=login]").fill(OLI_EMAIL)
    page.locator("input[name=password]").fill(OLI_IDP_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{oidc_app.url}/**", timeout=30_000)
    signed_in_as(page, OLI)
    assert f"{OLI} · annotator" in page.locator(".st-key-nw-account").inner_text()
    page.reload()
    signed_in_as(page, OLI)
    screenshot(page, "teams-oidc")
    ctx.close()
