"""Twenty accounts from a CSV file sign in (issue 47's acceptance), in Chromium against a
team-mode server of its own: the admin uploads the file on the Users page and reads the
one-time passwords from the page (and its download, which holds the same); three of the
people sign in through the real sign-in form, are asked to choose their own password
before any page, and land on their page (an annotator on the annotate page of the dataset
assigned to them, at their queue); the other seventeen sign in through the logic and
choose theirs too. The table is gone after the next run; no password, one-time or chosen,
is in the database file or the server's log.
"""

from __future__ import annotations

import csv
import io

import pytest
from playwright.sync_api import expect

import store
from needlework.datasets.transfer import import_bytes
from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset
from needlework.teams.first_password import choose_password, must_choose
from tests.browser.harness import assert_no_exception, screenshot, team_server, wait_idle
from tests.browser.test_teams import send_form, signed_in_as
from tests.conftest import garage_records, jsonl

LEAD, LEAD_PASSWORD = "lead-csv", "lead-csv-passphrase-7"
DATASET = "csv-g"
ROLES = ["annotator"] * 16 + ["reviewer"] * 3 + ["admin"]
PEOPLE = [(f"person-{i:02d}", f"person{i:02d}@example.org" if i % 3 else "", role)
          for i, role in enumerate(ROLES, start=1)]
ANNOTATORS = [name for name, _, role in PEOPLE if role == "annotator"]
CHOSEN = "{}-own-passphrase-9"  # what each person chooses, by name


@pytest.fixture(scope="module")
def server(tmp_path_factory, chromium_available):
    folder = tmp_path_factory.mktemp("accounts-csv")
    db_path = folder / "team.db"
    db = store.connect(db_path)
    accounts.add_user(db, LEAD, "admin", password=LEAD_PASSWORD)
    import_bytes(db, jsonl(garage_records(8)), f"{DATASET}.jsonl", dataset=DATASET)
    db.conn.close()
    with team_server(db_path) as app:
        yield app


def _context(browser):
    return browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)


def _file() -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["name", "e-mail", "role"])
    writer.writerows(PEOPLE)
    return ("\ufeff" + out.getvalue()).encode("utf-8")  # as a spreadsheet saves it


def _upload_and_create(page, data: bytes, name: str) -> None:
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        files=[{"name": name, "mimeType": "text/csv", "buffer": data}])
    page.get_by_text(name, exact=True).wait_for(timeout=30_000)  # the uploader lists it
    wait_idle(page)
    page.get_by_role("button", name="Create the accounts").click()


def _shown_passwords(page) -> dict[str, tuple[str, str, str]]:
    """name -> (e-mail, role, one-time password) as the page's table shows them."""
    rows = page.locator("table.nw-one-time tr")
    expect(rows).to_have_count(len(PEOPLE) + 1, timeout=30_000)
    cells = [rows.nth(i).locator("td").all_inner_texts() for i in range(1, len(PEOPLE) + 1)]
    return {c[0]: (c[1], c[2], c[3]) for c in cells}


def _first_sign_in(browser, url: str, name: str, one_time: str, path: str = ""):
    """Sign in with the one-time password through the form, choose a password on the
    screen that follows (a mismatch first, refused), and reach the page of ``path``."""
    ctx = _context(browser)
    page = ctx.new_page()
    page.goto(f"{url}/{path}")
    page.get_by_label("Name or e-mail").wait_for(timeout=90_000)
    send_form(page, name, one_time)
    page.get_by_text("🪡 Choose your password", exact=True).wait_for(timeout=30_000)
    main = page.locator('[data-testid="stMain"]')
    # the title is drawn before the rest of the run replaces the sign-in form's elements
    expect(main).to_contain_text(f"You signed in as {name}", timeout=30_000)
    wait_idle(page)
    assert page.locator(".st-key-nw-account").count() == 0  # no page, no sidebar yet
    assert not page.locator('[data-testid="stSidebarNav"]').is_visible()
    new, again = page.get_by_label("New password", exact=True), page.get_by_label(
        "New password again")
    new.fill(CHOSEN.format(name))
    again.fill(CHOSEN.format(name) + "x")
    page.get_by_role("button", name="Save my password").click()
    try:
        page.get_by_text("The two passwords differ: choose another.").wait_for(timeout=30_000)
    except Exception as e:  # noqa: BLE001 - say what the screen showed instead
        raise AssertionError(f"no mismatch said; the screen: {main.inner_text()[:600]!r}") from e
    expect(new).to_have_value("", timeout=30_000)  # emptied: a password is not kept
    new.fill(CHOSEN.format(name))
    again.fill(CHOSEN.format(name))
    page.get_by_role("button", name="Save my password").click()
    signed_in_as(page, name)
    return ctx, page


def test_twenty_accounts_from_a_csv_sign_in(browser, server):
    url, db_path = server.url, server.db_path
    admin_ctx = _context(browser)
    admin = admin_ctx.new_page()
    admin.goto(f"{url}/users")
    admin.get_by_label("Name or e-mail").wait_for(timeout=90_000)
    send_form(admin, LEAD, LEAD_PASSWORD)
    signed_in_as(admin, LEAD)
    admin.get_by_text("Accounts from a CSV file", exact=True).wait_for(timeout=30_000)

    # a bad file first: one sentence naming file, line and field; nothing created
    bad = _file().replace(b"person-05,person05@example.org,annotator",
                          b"person-05,person05@example.org,boss")
    _upload_and_create(admin, bad, "bad-team.csv")
    admin.get_by_text("bad-team.csv line 6, role: 'boss' is not a role", exact=False).wait_for(
        timeout=60_000)
    db = store.connect(db_path)
    assert db.execute("select count(*) from users").fetchone()[0] == 1

    _upload_and_create(admin, _file(), "team.csv")
    admin.get_by_text(f"{len(PEOPLE)} account(s) created").wait_for(timeout=90_000)
    assert_no_exception(admin)
    shown = _shown_passwords(admin)
    assert {n: (e, r) for n, (e, r, _) in shown.items()} == {n: (e, r) for n, e, r in PEOPLE}
    passwords = {n: p for n, (_, _, p) in shown.items()}
    expect(admin.get_by_text("team.csv", exact=True)).to_have_count(0)  # the uploader is empty
    assert len(set(passwords.values())) == len(PEOPLE)
    with admin.expect_download() as got:
        admin.get_by_role("button", name="Download name, e-mail, password (CSV)").click()
    rows = list(csv.DictReader(io.StringIO(got.value.path().read_text(encoding="utf-8"))))
    assert {r["name"]: (r["e-mail"], r["password"]) for r in rows} == {
        n: (e, passwords[n]) for n, e, _ in PEOPLE}
    screenshot(admin, "teams-accounts-csv")
    wait_idle(admin)
    assert admin.locator("table.nw-one-time").count() == 1  # the download left it there
    # the next run draws the page without them
    admin.get_by_label("Account", exact=True).click()
    admin.get_by_role("option", name="person-01").click()
    wait_idle(admin)
    expect(admin.locator("table.nw-one-time")).to_have_count(0, timeout=30_000)
    admin_ctx.close()

    assign_dataset(db, DATASET, ANNOTATORS[:2], per_item=1, actor=accounts.get_user(db, LEAD))
    first_item = db.execute("select item_key from assignments where dataset = ? and annotator = ? "
                            "order by queue_pos limit 1", [DATASET, ANNOTATORS[0]]).fetchone()[0]

    # three through the browser: two annotators, one reviewer
    through_browser = [ANNOTATORS[0], ANNOTATORS[1], "person-17"]
    ctx, ana = _first_sign_in(browser, url, ANNOTATORS[0], passwords[ANNOTATORS[0]],
                              f"annotate?dataset={DATASET}")
    assert f"{ANNOTATORS[0]} · annotator" in ana.locator(".st-key-nw-account").inner_text()
    ana.locator(".st-key-nw-toolbar").wait_for(timeout=30_000)  # the annotate page, her queue
    ana.locator('[data-testid="stMain"]').get_by_text(f"id {first_item}", exact=False).wait_for(
        timeout=30_000)
    ana.get_by_text("in your queue", exact=False).first.wait_for(timeout=30_000)
    assert "/annotate" in ana.url
    assert_no_exception(ana)
    # the signed-in page shows only once the browser holds the session cookie
    assert accounts.SESSION_COOKIE in {c["name"] for c in ctx.cookies()}
    ana.reload()  # the session holds across a reload, with no second password screen
    signed_in_as(ana, ANNOTATORS[0])
    assert ana.get_by_text("🪡 Choose your password", exact=True).count() == 0
    ctx.close()
    ctx, bob = _first_sign_in(browser, url, ANNOTATORS[1], passwords[ANNOTATORS[1]])
    bob.get_by_text(DATASET, exact=False).first.wait_for(timeout=30_000)  # Home: her dataset
    ctx.close()
    ctx, rev = _first_sign_in(browser, url, "person-17", passwords["person-17"])
    assert "person-17 · reviewer" in rev.locator(".st-key-nw-account").inner_text()
    ctx.close()

    # the other seventeen through the logic
    for name, _, role in PEOPLE:
        if name in through_browser:
            continue
        signed = accounts.sign_in(db, name, passwords[name])
        assert signed.user.role == role and must_choose(db, signed.user)
        choose_password(db, signed.user, CHOSEN.format(name), CHOSEN.format(name))
    for name, email, role in PEOPLE:
        user = accounts.sign_in(db, email or name, CHOSEN.format(name)).user
        assert (user.name, user.role, must_choose(db, user)) == (name, role, False)
        with pytest.raises(accounts.SignInRefused):  # the one-time password is spent
            accounts.sign_in(db, name, passwords[name], client="the-test")
    assert db.execute("select count(*) from audit_events where action = 'account.created' and "
                      "json_extract(after, '$.how') = 'csv' and by = ?",
                      [LEAD]).fetchone()[0] == len(PEOPLE)
    db.conn.close()

    files = [db_path, db_path.with_name(db_path.name + "-wal"), server.log_path]
    blob = b"".join(p.read_bytes() for p in files if p.exists())
    for name, _, _ in PEOPLE:
        assert passwords[name].encode() not in blob, name
        assert CHOSEN.format(name).encode() not in blob, name
