"""Accounts from a CSV file (issue 47, point 4): all or nothing, each bad row named by file,
line and field, one-time passwords shown once and replaced at the first sign-in, only
hashes stored, one audit event per account (never a password); the CLI's ``users
import`` with ``--out`` (mode 0600); the "choose your password" screen of the sign-in
gate (AppTest)."""

from __future__ import annotations

import csv
import io
import os
import re
import stat

import pytest
from streamlit.testing.v1 import AppTest

import store
from components.teams.first_password import ERROR, field_keys
from components.teams.session import TOKEN
from needlework.teams import accounts
from needlework.teams.accounts_csv import (
    ALPHABET,
    MAX_ACCOUNTS,
    CsvImportError,
    credentials_csv,
    import_accounts,
    one_time_password,
    read_accounts,
)
from needlework.teams.first_password import choose_password, must_choose
from needlework.teams.passwords import PasswordRejected
from needlework.teams.permissions import PermissionDenied
from tests.cli_here import run
from tests.conftest import ROOT
from tests.teams_fixtures import PASSWORDS, team_mode_db

GOOD = ("name,e-mail,role\n"
        "ana,ana@example.org,annotator\n"
        "Bob Builder,,reviewer\n"
        "\n"
        "cy,CY@example.org,Admin\n")


@pytest.fixture
def db(tmp_path):
    db = store.connect(tmp_path / "team.db")
    accounts.add_user(db, "lead", "admin", email="lead@example.org")
    return db


def lead(db):
    return accounts.get_user(db, "lead")


def user_rows(db) -> list[tuple]:
    return db.execute("select name, email, role, must_change_password from users "
                      "order by id").fetchall()


def events(db, action: str = "account.created") -> list[tuple]:
    return db.execute("select by, target, after from audit_events where action = ? order by id",
                      [action]).fetchall()


def refusal(db, text: str | bytes, name: str = "people.csv") -> str:
    before = (user_rows(db), events(db))
    data = text.encode("utf-8") if isinstance(text, str) else text
    with pytest.raises(CsvImportError) as e:
        import_accounts(db, data, name, actor=lead(db))
    assert (user_rows(db), events(db)) == before  # nothing created, nothing recorded
    assert str(e.value).endswith("No account was created.")
    return str(e.value)


@pytest.mark.slow
def test_a_good_file_creates_every_account_with_a_one_time_password(db):
    made = import_accounts(db, ("\ufeff" + GOOD.replace("\n", "\r\n")).encode("utf-8"),
                           "people.csv", actor=lead(db))
    assert [(a.name, a.email, a.role) for a in made] == [
        ("ana", "ana@example.org", "annotator"), ("Bob Builder", None, "reviewer"),
        ("cy", "CY@example.org", "admin")]
    assert user_rows(db)[1:] == [("ana", "ana@example.org", "annotator", 1),
                                 ("Bob Builder", None, "reviewer", 1),
                                 ("cy", "CY@example.org", "admin", 1)]
    assert len({a.password for a in made}) == 3
    stored = [r[0] for r in db.execute("select password_hash from users where name != 'lead'")]
    assert all(h.startswith("$argon2id$") for h in stored)
    dump = "\n".join(db.iterdump())
    for a in made:
        assert a.password not in dump and a.password not in repr(a)
        signed = accounts.sign_in(db, a.email or a.name, a.password)  # by name or e-mail
        assert signed.user.name == a.name and must_choose(db, signed.user)
    assert [(by, target) for by, target, _ in events(db)[1:]] == [  # after lead's own
        ("lead", "ana"), ("lead", "Bob Builder"), ("lead", "cy")]
    assert all('"how": "csv"' in after for _, _, after in events(db)[1:])
    got = list(csv.reader(io.StringIO(credentials_csv(made))))
    assert got == [["name", "e-mail", "password"]] + [[a.name, a.email or "", a.password]
                                                      for a in made]


@pytest.mark.slow
def test_columns_in_any_order_and_quoted_fields_spanning_lines(db):
    text = ('Role,Name,,Email,\nannotator,"Dee, Jr.",,dee@example.org,\r\n'  # empty columns
            'reviewer,eve,,\n')
    made = import_accounts(db, text.encode(), "x.csv", actor=lead(db))
    assert [(a.name, a.role, a.email) for a in made] == [
        ("Dee, Jr.", "annotator", "dee@example.org"), ("eve", "reviewer", None)]
    with pytest.raises(CsvImportError, match=r"y\.csv line 4, role: 'boss'"):
        read_accounts(b'name,e-mail,role\n"two\nlines",,annotator\nf,,boss\n', "y.csv")


def test_one_time_passwords_are_random_strong_and_readable():
    seen = {one_time_password() for _ in range(200)}
    assert len(seen) == 200
    for password in seen:
        assert re.fullmatch(rf"[{ALPHABET}]{{5}}(-[{ALPHABET}]{{5}}){{3}}", password)
    assert not set("01ilo") & set(ALPHABET)


@pytest.mark.parametrize(("text", "message"), [
    ("name,e-mail,role\nana,ana@example.org,boss\n",
     "people.csv line 2, role: 'boss' is not a role (annotator, reviewer, admin)"),
    ("name,e-mail,role\n,ana@example.org,annotator\n",
     "people.csv line 2, name: the account name is empty"),
    ("name,e-mail,role\n" + "x" * 61 + ",,annotator\n",
     "people.csv line 2, name: the account name has 61 characters: at most 60"),
    ("name,e-mail,role\nana\u0007,,annotator\n",
     "people.csv line 2, name: the account name holds the unprintable character U+0007"),
    ("name,e-mail,role\nana,not-an-address,annotator\n",
     "people.csv line 2, e-mail: 'not-an-address' is not an e-mail address"),
    ("name,e-mail,role\nana,,annotator,extra\n", "people.csv line 2: 4 fields, the header has 3"),
    ("name,e-mail,role\nana,annotator\n", "people.csv line 2: 2 field(s), the header has 3"),
    ("name,role\nana,annotator\n", "people.csv line 1: no column 'e-mail'"),
    ("ana,ana@example.org,annotator\n", "people.csv line 1: the column 'ana' is not one of"),
    ("name,e-mail,role,name\nana,,annotator,ana\n", "people.csv line 1: the column 'name' is "
     "named twice"),
    ("", "people.csv: empty (the first row names the columns name, e-mail, role)"),
    ("name,e-mail,role\n\n", "people.csv: no account after the header row"),
    ('name,e-mail,role\n"ana"x,,annotator\n', "people.csv line 2: not CSV"),
])
def test_each_bad_row_is_named_by_file_line_and_field(db, text, message):
    assert message in refusal(db, text)


def test_bytes_that_are_not_utf8_are_refused_with_their_line(db):
    assert "people.csv line 3: byte 33 is not UTF-8" in refusal(
        db, b"name,e-mail,role\nana,,annotator\nb\xe9b,,annotator\n")


def test_duplicates_within_the_file_and_with_existing_accounts(db):
    message = refusal(db, "name,e-mail,role\n"
                          "ana,ana@example.org,annotator\n"
                          "ANA,,annotator\n"                    # the name again, up to case
                          "bob,Ana@Example.org,annotator\n"     # the e-mail again
                          "lead,,annotator\n"                   # an existing account's name
                          "zoe,LEAD@example.org,reviewer\n"     # an existing account's e-mail
                          "lead@example.org,,annotator\n")      # a name that is one's e-mail
    assert message.split("; ") == [
        "people.csv line 3, name: 'ANA' is already the name of line 2",
        "people.csv line 4, e-mail: 'Ana@Example.org' is already the e-mail of line 2",
        "people.csv line 5, name: 'lead' is taken by the account 'lead'",
        "people.csv line 6, e-mail: 'LEAD@example.org' is taken by the account 'lead'",
        "people.csv line 7, name: 'lead@example.org' is already the e-mail of line 6. "
        "No account was created."]
    assert refusal(db, "name,e-mail,role\nLead@Example.org,,annotator\n") == (
        "people.csv line 2, name: 'Lead@Example.org' is taken by the account 'lead'. "
        "No account was created.")  # a name that is an account's e-mail would sign in as two


def test_all_or_nothing_one_bad_row_among_good_ones(db):
    rows = [f"p{i},p{i}@example.org,annotator" for i in range(30)]
    rows[17] = "p17,p17@example.org,superuser"
    message = refusal(db, "name,e-mail,role\n" + "\n".join(rows) + "\n")
    assert message == ("people.csv line 19, role: 'superuser' is not a role (annotator, "
                       "reviewer, admin). No account was created.")
    assert accounts.get_user(db, "p0") is None


def test_the_first_ten_problems_are_named_and_the_rest_counted(db):
    message = refusal(db, "name,e-mail,role\n" + "".join(f"u{i},,nobody\n" for i in range(14)))
    assert message.count("role: 'nobody'") == 10 and "line 11," in message
    assert "line 12," not in message and "and 4 more problem(s)" in message


def test_too_many_accounts_in_one_file(db):
    text = "name,e-mail,role\n" + "".join(f"u{i},,annotator\n" for i in range(MAX_ACCOUNTS + 1))
    assert f"line {MAX_ACCOUNTS + 2}: more than {MAX_ACCOUNTS} accounts" in refusal(db, text)


def test_only_admins_import(db):
    accounts.add_user(db, "rita", "reviewer", email="rita@example.org")
    before = user_rows(db)
    with pytest.raises(PermissionDenied, match="rita is a reviewer and may not manage accounts"):
        import_accounts(db, GOOD.encode(), "people.csv", actor=accounts.get_user(db, "rita"))
    assert user_rows(db) == before


@pytest.mark.slow
def test_the_first_sign_in_chooses_a_password_and_ends_the_one_time_one(db):
    [made] = import_accounts(db, b"name,e-mail,role\nana,,annotator\n", "a.csv", actor=lead(db))
    first = accounts.sign_in(db, "ana", made.password)
    user = first.user
    with pytest.raises(accounts.AccountError, match="the two passwords differ"):
        choose_password(db, user, "ana-own-pass-1", "ana-own-pass-2")
    with pytest.raises(PasswordRejected, match="at least 8 characters"):
        choose_password(db, user, "short", "short")
    with pytest.raises(PasswordRejected, match="not the one-time password"):
        choose_password(db, user, made.password, made.password)
    assert must_choose(db, user) and accounts.resume(db, first.token) is not None
    signed = choose_password(db, user, "ana-own-pass-1", "ana-own-pass-1")
    assert not must_choose(db, user)
    assert accounts.resume(db, first.token) is None  # the one-time session ended
    assert accounts.resume(db, signed.token).name == "ana"
    with pytest.raises(accounts.SignInRefused):
        accounts.sign_in(db, "ana", made.password)
    assert accounts.sign_in(db, "ana", "ana-own-pass-1").user.name == "ana"
    with pytest.raises(accounts.AccountError, match="no one-time password to replace"):
        choose_password(db, user, "ana-other-pass-2", "ana-other-pass-2")
    [(by, target, after)] = events(db, "account.password_chosen")
    assert (by, target, after) == ("ana", "ana", '{"password": "chosen"}')
    dump = "\n".join(db.iterdump())
    assert "ana-own-pass-1" not in dump and made.password not in dump


# --- the command line --------------------------------------------------------------------


@pytest.mark.slow
def test_cli_users_import_prints_the_passwords_once(tmp_path):
    path, people = tmp_path / "team.db", tmp_path / "people.csv"
    people.write_text(GOOD, encoding="utf-8")
    out = run(["users", "import", str(people), "--db", str(path)])
    assert out.returncode == 0, out.stderr
    rows = list(csv.reader(io.StringIO(out.stdout)))
    assert rows[0] == ["name", "e-mail", "password"]
    assert [r[:2] for r in rows[1:]] == [["ana", "ana@example.org"], ["Bob Builder", ""],
                                         ["cy", "CY@example.org"]]
    assert "created 3 accounts" in out.stderr and "shown once" in out.stderr
    db = store.connect(path)
    for name, _, password in rows[1:]:
        assert must_choose(db, accounts.sign_in(db, name, password).user)
    assert [r[0] for r in events(db)] == ["(local)"] * 3
    again = run(["users", "import", str(people), "--db", str(path)])
    assert again.returncode == 1 and again.stdout == ""
    assert again.stderr.startswith("users import: people.csv line 2, name: 'ana' is taken")


@pytest.mark.slow
def test_cli_users_import_writes_an_owner_only_file(tmp_path):
    path, people, secret = tmp_path / "team.db", tmp_path / "people.csv", tmp_path / "pw.csv"
    people.write_text(GOOD, encoding="utf-8")
    os.umask(0o022)
    out = run(["users", "import", str(people), "--out", str(secret), "--db", str(path)])
    assert out.returncode == 0, out.stderr
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert str(secret) in out.stdout and "readable by you only" in out.stdout
    rows = list(csv.DictReader(secret.open(encoding="utf-8", newline="")))
    assert not any(r["password"] in out.stdout + out.stderr for r in rows)
    assert [r["name"] for r in rows] == ["ana", "Bob Builder", "cy"]
    db = store.connect(path)
    assert accounts.sign_in(db, "cy", rows[2]["password"]).user.role == "admin"
    # an existing file is not overwritten, and nothing is created then
    people.write_text("name,e-mail,role\nzed,,annotator\n", encoding="utf-8")
    out = run(["users", "import", str(people), "--out", str(secret), "--db", str(path)])
    assert out.returncode == 1 and "exists" in out.stderr
    assert accounts.get_user(db, "zed") is None


def test_cli_users_import_bad_file_creates_nothing_and_no_out_file(tmp_path):
    path, people, secret = tmp_path / "team.db", tmp_path / "people.csv", tmp_path / "pw.csv"
    people.write_text("name,e-mail,role\nana,,annotator\nbob,,chief\n", encoding="utf-8")
    out = run(["users", "import", str(people), "--out", str(secret), "--db", str(path)])
    assert out.returncode == 1
    assert out.stderr.strip() == ("users import: people.csv line 3, role: 'chief' is not a "
                                  "role (annotator, reviewer, admin). No account was created.")
    assert not secret.exists()
    assert store.connect(path).execute("select count(*) from users").fetchone()[0] == 0
    out = run(["users", "import", str(tmp_path / "absent.csv"), "--db", str(path)])
    assert out.returncode == 1 and "not a file" in out.stderr


# --- the sign-in gate's "choose your password" screen (AppTest) ---------------------------


@pytest.mark.slow
def test_the_gate_asks_for_a_password_before_any_page(tmp_path, monkeypatch):
    db = team_mode_db(tmp_path, monkeypatch, people={"lead": "admin"})
    [made] = import_accounts(db, b"name,e-mail,role\nana,,annotator\n", "a.csv",
                             actor=accounts.get_user(db, "lead"))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state[TOKEN] = accounts.sign_in(db, "ana", made.password).token
    at.run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["🪡 Choose your password"]
    first = field_keys(at.session_state)
    assert [t.key for t in at.text_input] == list(first)
    assert not at.sidebar.selectbox and not at.dataframe  # no page, no sidebar
    new, again = first
    at.text_input(key=new).set_value("ana-own-pass-1")
    at.text_input(key=again).set_value("ana-own-pass-2")
    at.button(key="nw-first-password-go").click().run()
    assert all(key not in at.session_state for key in first)  # the passwords are not kept
    # the next try's fields are new ones, drawn empty
    assert [(t.key, t.value) for t in at.text_input] == [(k, "") for k in field_keys(at.session_state)]
    assert field_keys(at.session_state) != first
    assert must_choose(db, accounts.get_user(db, "ana"))
    assert "two passwords differ" in " ".join(e.value for e in at.error)
    at.run()  # a rerun nobody asked for (a component's answer) leaves the reason on screen
    assert "two passwords differ" in " ".join(e.value for e in at.error)
    new, again = field_keys(at.session_state)
    at.text_input(key=new).set_value("ana-own-pass-1")
    at.text_input(key=again).set_value("ana-own-pass-1")
    at.button(key="nw-first-password-go").click().run()
    assert not at.exception, at.exception
    assert not must_choose(db, accounts.get_user(db, "ana"))
    assert ERROR not in at.session_state
    token = at.session_state[TOKEN]
    assert accounts.resume(db, token).name == "ana"
    fresh = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    fresh.session_state[TOKEN] = token
    fresh.run()
    assert not fresh.exception, fresh.exception
    assert "🪡 Choose your password" not in [t.value for t in fresh.title]
    assert any("ana" in m.value and "annotator" in m.value for m in fresh.sidebar.markdown)
    assert PASSWORDS["lead"] not in "\n".join(db.iterdump())
