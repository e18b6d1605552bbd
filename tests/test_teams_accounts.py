"""Accounts: argon2id hashes only, sessions that survive a reload and expire, sign-out,
lock-out after five wrong passwords, disabled accounts, the ``users`` CLI; no password
or token in the database file or in logs."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

import store
from needlework.teams import accounts, pauses
from needlework.teams.accounts import AccountError, SignInRefused
from needlework.teams.config import Policy
from needlework.teams.passwords import PasswordRejected
from needlework.teams.permissions import PermissionDenied
from tests.conftest import ROOT

PW = "cobalt-Heron-4417"
NEW_PW = "quartz-Otter-9051"


def db_bytes(path) -> bytes:
    """The database file and its write-ahead log, as stored on disk."""
    data = path.read_bytes()
    wal = path.with_name(path.name + "-wal")
    return data + (wal.read_bytes() if wal.exists() else b"")


@pytest.fixture
def filedb(tmp_path):
    path = tmp_path / "team.db"
    return store.connect(path), path


@pytest.mark.slow
def test_passwords_and_session_tokens_never_reach_the_database_file(filedb):
    db, path = filedb
    accounts.add_user(db, "boss", "admin", password=PW)
    accounts.add_user(db, "ana", "annotator", password=PW + "-ana", email="ana@example.org")
    first = accounts.sign_in(db, "boss", PW)
    with pytest.raises(SignInRefused):
        accounts.sign_in(db, "ana", NEW_PW)  # a wrong password is not stored either
    accounts.reset_password(db, "ana", NEW_PW)
    second = accounts.sign_in(db, "ana", NEW_PW)
    db.conn.close()
    stored = db_bytes(path)
    for secret in (PW, PW + "-ana", NEW_PW, first.token, second.token):
        assert secret.encode() not in stored
        assert secret.encode("utf-16-le") not in stored
    db = store.connect(path)
    hashes = [r[0] for r in db.execute("select password_hash from users order by name_key")]
    assert all(h.startswith("$argon2id$v=19$") for h in hashes)
    assert len(set(hashes)) == 2
    tokens = [r[0] for r in db.execute("select token_hash from sessions")]
    assert accounts.token_hash(second.token) in tokens
    assert all(len(t) == 64 for t in tokens)



def test_hashes_use_owasps_minimum_and_an_older_hash_is_stored_again_at_sign_in(db):
    """New hashes carry m=19456,t=2,p=1; a hash made with RFC 9106's low-memory profile
    (what was stored before) still signs in, and that sign-in stores it again with today's
    parameters."""
    from argon2 import PasswordHasher, profiles  # noqa: PLC0415

    accounts.add_user(db, "ana", "annotator", password=PW)
    stored = db.execute("select password_hash from users where name = 'ana'").fetchone()[0]
    assert stored.startswith("$argon2id$v=19$m=19456,t=2,p=1$")
    older = PasswordHasher.from_parameters(profiles.RFC_9106_LOW_MEMORY).hash(PW)
    assert older.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    db.execute("update users set password_hash = ? where name = 'ana'", [older])
    assert accounts.sign_in(db, "ana", PW).user.name == "ana"
    again = db.execute("select password_hash from users where name = 'ana'").fetchone()[0]
    assert again.startswith("$argon2id$v=19$m=19456,t=2,p=1$") and again != older
    assert accounts.sign_in(db, "ana", PW).user.name == "ana"

@pytest.mark.slow
def test_sign_in_by_name_or_email_in_any_case(db):
    accounts.add_user(db, "Ana Lopez", "annotator", password=PW, email="Ana@Example.org")
    for login in ("Ana Lopez", "  ana lopez ", "ana@example.org", "ANA@EXAMPLE.ORG"):
        assert accounts.sign_in(db, login, PW).user.name == "Ana Lopez"


def test_a_session_survives_a_reload_then_expires_or_ends_at_sign_out(tmp_path):
    path = tmp_path / "team.db"
    db = store.connect(path)
    accounts.add_user(db, "ana", "annotator", password=PW)
    start = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    signed = accounts.sign_in(db, "ana", PW, policy=Policy(session_hours=8), now=start)
    assert signed.token.startswith("nw_") and signed.token not in repr(signed)
    # a reload: a new script run, a new connection, only the token kept by the browser
    again = store.connect(path)
    user = accounts.resume(again, signed.token, now=start + timedelta(hours=7, minutes=59))
    assert user is not None and user.name == "ana" and user.role == "annotator"
    assert accounts.resume(again, signed.token, now=start + timedelta(hours=8)) is None
    seen = again.execute("select last_seen_at from sessions").fetchone()[0]
    assert seen == accounts.iso(start + timedelta(hours=7, minutes=59))
    assert accounts.session_expiry(again, signed.token, now=start) == signed.expires_at
    assert accounts.seconds_left(signed.expires_at, now=start) == 8 * 3600
    # a fresh session ends at sign-out
    other = accounts.sign_in(again, "ana", PW)
    assert accounts.resume(again, other.token) is not None
    assert accounts.sign_out(again, other.token) is True
    assert accounts.resume(again, other.token) is None
    assert accounts.sign_out(again, other.token) is False
    for junk in (None, "", "nw_short", other.token + "x", "x" * 10_000):
        assert accounts.resume(again, junk) is None


@pytest.mark.slow
def test_five_wrong_passwords_pause_the_name_for_new_browsers_and_the_pause_grows(db):
    accounts.add_user(db, "ana", "annotator", password=PW)
    policy = Policy(lock_failures=5, lock_minutes=15)
    t0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    home = accounts.sign_in(db, "ana", PW, policy=policy, now=t0 - timedelta(days=1)).device_token
    for attempt in range(4):
        with pytest.raises(SignInRefused, match="^wrong name or password$"):
            accounts.sign_in(db, "ana", f"guess-{attempt}", policy=policy, now=t0, client="10.0.0.9")
    with pytest.raises(SignInRefused, match="5 times in a row: sign-in with this name is paused "
                       "in browsers it has not signed in from before until 09:01 UTC"):
        accounts.sign_in(db, "ana", "guess-4", policy=policy, now=t0, client="10.0.0.9")
    # the right password is refused without a device cookie while paused, from any address
    with pytest.raises(SignInRefused, match="^after 5 wrong passwords in a row, sign-in with "
                       "this name is paused in browsers it has not signed in from before: try "
                       "again after 09:01"):
        accounts.sign_in(db, "ana", PW, policy=policy, now=t0 + timedelta(seconds=50),
                         client="192.0.2.1")
    assert accounts.get_user(db, "ana").locked_until is not None  # the Users page shows it
    # ana, in the browser where she signed in before, is not paused by the stranger
    assert accounts.sign_in(db, "ana", PW, policy=policy, now=t0 + timedelta(seconds=30),
                            device=home, client="10.0.0.9").user.name == "ana"
    # each further wrong password after a pause pauses again, twice as long, up to 15 minutes
    moment, ends = t0 + timedelta(minutes=1), []
    for _ in range(5):
        with pytest.raises(SignInRefused, match="times in a row") as info:
            accounts.sign_in(db, "ana", "guess-again", policy=policy, now=moment)
        ends.append(re.search(r"until (\d\d:\d\d) UTC", str(info.value)).group(1))
        moment += timedelta(minutes=15)
    assert ends == ["09:03", "09:20", "09:39", "10:01", "10:16"]
    signed = accounts.sign_in(db, "ana", PW, policy=policy, now=moment)
    assert signed.user.name == "ana"
    # a right password ends the count: four more wrong ones do not pause
    for attempt in range(4):
        with pytest.raises(SignInRefused, match="^wrong name or password$"):
            accounts.sign_in(db, "ana", f"again-{attempt}", policy=policy, now=moment)
    assert accounts.sign_in(db, "ana", PW, policy=policy, now=moment).user


@pytest.mark.slow
def test_a_stranger_cannot_lock_the_only_admin_out(db):
    accounts.add_user(db, "boss", "admin", password=PW)
    mine = accounts.sign_in(db, "boss", PW).device_token
    for _ in range(20):
        with pytest.raises(SignInRefused):
            accounts.sign_in(db, "boss", "guess-guess", client="192.0.2.10")
    with pytest.raises(SignInRefused, match="paused in browsers it has not signed in"):
        accounts.sign_in(db, "boss", PW, client="192.0.2.10")  # same address, no cookie
    assert accounts.sign_in(db, "boss", PW, client="192.0.2.10",
                            device=mine).user.role == "admin"


@pytest.mark.slow
def test_an_unknown_name_is_paused_exactly_like_a_real_one(db):
    accounts.add_user(db, "ana", "annotator", password=PW)
    t0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    said = {}
    for name in ("ana", "nobody-here"):
        answers = []
        for attempt in range(7):
            with pytest.raises(SignInRefused) as info:
                accounts.sign_in(db, name, f"guess-{attempt}", now=t0, client="10.0.0.9")
            answers.append(str(info.value))
        said[name] = answers
    assert said["ana"] == said["nobody-here"]
    assert said["ana"][4].startswith("wrong name or password, 5 times in a row: sign-in with "
                                     "this name is paused")
    stored = {r["login_key"] for r in db["sign_in_failures"].rows}
    assert "nobody-here" not in str(list(db["sign_in_failures"].rows))
    assert accounts.login_key("Nobody-Here ") in stored


@pytest.mark.slow
def test_a_success_resets_the_count_and_an_admin_can_unlock(db):
    accounts.add_user(db, "ana", "annotator", password=PW, email="ana@example.org")
    for _ in range(4):
        with pytest.raises(SignInRefused):
            accounts.sign_in(db, "ana", "nope-nope")
    accounts.sign_in(db, "ana", PW)
    for _ in range(4):
        with pytest.raises(SignInRefused, match="^wrong name or password$"):
            accounts.sign_in(db, "ana", "nope-nope")
    with pytest.raises(SignInRefused, match="paused"):
        accounts.sign_in(db, "ana", "nope-nope")
    for _ in range(5):  # by e-mail, from another client
        with pytest.raises(SignInRefused):
            accounts.sign_in(db, "ANA@example.org", "nope-nope", client="10.0.0.3")
    pauses.unlock(db, "ana")
    assert accounts.get_user(db, "ana").locked_until is None
    assert accounts.sign_in(db, "ana", PW).user.name == "ana"
    assert accounts.sign_in(db, "ana@example.org", PW, client="10.0.0.3").user.name == "ana"


@pytest.mark.slow
def test_unknown_names_and_wrong_passwords_get_the_same_answer(db):
    accounts.add_user(db, "ana", "annotator", password=PW)
    accounts.add_user(db, "sso", "annotator", email="sso@example.org")  # no password
    answers = set()
    for login, password in (("nobody", PW), ("ana", "wrong-one-1"), ("sso", PW), ("", PW)):
        with pytest.raises(SignInRefused) as info:
            accounts.sign_in(db, login, password)
        answers.add(str(info.value))
    assert answers == {"wrong name or password"}


@pytest.mark.slow
def test_a_disabled_account_cannot_sign_in_and_loses_its_sessions(db):
    accounts.add_user(db, "boss", "admin", password=PW)
    accounts.add_user(db, "ana", "annotator", password=PW)
    signed = accounts.sign_in(db, "ana", PW)
    accounts.set_disabled(db, "ana")
    assert accounts.resume(db, signed.token) is None
    with pytest.raises(SignInRefused, match="disabled"):
        accounts.sign_in(db, "ana", PW)
    with pytest.raises(SignInRefused, match="^wrong name or password$"):
        accounts.sign_in(db, "ana", "wrong-password")  # disabled is only said after a right password
    accounts.set_disabled(db, "ana", False)
    assert accounts.resume(db, accounts.sign_in(db, "ana", PW).token).name == "ana"


@pytest.mark.slow
def test_resetting_a_password_ends_sessions_and_clears_a_lock(db):
    accounts.add_user(db, "ana", "annotator", password=PW)
    signed = accounts.sign_in(db, "ana", PW)
    for _ in range(5):
        with pytest.raises(SignInRefused):
            accounts.sign_in(db, "ana", "wrong-password")
    accounts.reset_password(db, "ana", NEW_PW)
    assert accounts.resume(db, signed.token) is None
    with pytest.raises(SignInRefused):
        accounts.sign_in(db, "ana", PW)
    assert accounts.sign_in(db, "ana", NEW_PW).user.name == "ana"


@pytest.mark.slow
def test_users_change_their_own_password(db):
    ana = accounts.add_user(db, "ana", "annotator", password=PW)
    with pytest.raises(AccountError, match="current password is wrong"):
        accounts.change_password(db, ana, "not-it-at-all", NEW_PW)
    accounts.change_password(db, ana, PW, NEW_PW)
    assert accounts.sign_in(db, "ana", NEW_PW).user.id == ana.id


def test_account_rules_are_said_in_one_sentence_without_the_password(db):
    accounts.add_user(db, "Ana", "annotator", password=PW)
    with pytest.raises(AccountError, match="the name 'ana' is taken by account 'Ana'"):
        accounts.add_user(db, " ana ", "reviewer", password=PW)
    with pytest.raises(AccountError, match="role 'boss'"):
        accounts.add_user(db, "bob", "boss", password=PW)
    with pytest.raises(AccountError, match="not an e-mail address"):
        accounts.add_user(db, "bob", "annotator", email="bob-at-example")
    with pytest.raises(AccountError, match="needs a password or an e-mail"):
        accounts.add_user(db, "bob", "annotator")
    with pytest.raises(AccountError, match="unprintable"):
        accounts.add_user(db, "bo\u202eb", "annotator", password=PW)
    with pytest.raises(PasswordRejected) as info:
        accounts.add_user(db, "bob", "annotator", password="short7!")
    assert "short7!" not in str(info.value) and "at least 8 characters" in str(info.value)
    with pytest.raises(PasswordRejected, match="not be the account name"):
        accounts.add_user(db, "bobby-tables", "annotator", password="Bobby-Tables")
    accounts.add_user(db, "bob", "annotator", email="BOB@example.org")
    with pytest.raises(AccountError, match="e-mail 'bob@example.org' is taken"):
        accounts.add_user(db, "robert", "annotator", email="bob@example.org")
    assert [u.name for u in accounts.list_users(db)] == ["Ana", "bob"]


def test_the_last_active_admin_stays(db):
    boss = accounts.add_user(db, "boss", "admin", password=PW)
    with pytest.raises(AccountError, match="last active admin"):
        accounts.set_disabled(db, "boss")
    with pytest.raises(AccountError, match="last active admin"):
        accounts.set_role(db, "boss", "reviewer")
    accounts.add_user(db, "deputy", "admin", password=PW)
    with pytest.raises(AccountError, match="your own account"):
        accounts.set_disabled(db, "boss", actor=boss)
    assert accounts.set_role(db, "boss", "reviewer").role == "reviewer"


def test_only_admins_manage_accounts(db):
    accounts.add_user(db, "boss", "admin", password=PW)
    rita = accounts.add_user(db, "rita", "reviewer", email="rita@example.org")
    for call in (lambda: accounts.add_user(db, "x1", "admin", password=PW, actor=rita),
                 lambda: accounts.list_users(db, actor=rita),
                 lambda: accounts.set_role(db, "rita", "admin", actor=rita),
                 lambda: accounts.reset_password(db, "boss", NEW_PW, actor=rita)):
        with pytest.raises(PermissionDenied, match="rita is a reviewer and may not manage "
                                                   "accounts: that needs the admin role"):
            call()
    assert accounts.get_user(db, "x1") is None


@pytest.mark.slow
def test_no_password_or_token_appears_in_the_logs(db, caplog):
    caplog.set_level(logging.DEBUG)
    accounts.add_user(db, "boss", "admin", password=PW)
    accounts.add_user(db, "ana", "annotator", password=NEW_PW)
    with pytest.raises(SignInRefused):
        accounts.sign_in(db, NEW_PW, PW)  # a password typed into the name box
    for _ in range(5):
        with pytest.raises(SignInRefused):
            accounts.sign_in(db, "ana", PW)
    accounts.reset_password(db, "ana", PW + "-2")
    signed = accounts.sign_in(db, "ana", PW + "-2")
    accounts.resume(db, signed.token)
    accounts.sign_out(db, signed.token)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "wrong password for 'ana'" in text and "paused for" in text  # the log is written...
    for secret in (PW, NEW_PW, PW + "-2", signed.token, accounts.token_hash(signed.token)):
        assert secret not in text  # ...without any secret


def run_cli(*args: str, stdin: str = "", db=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "needlework", *args, "--db", str(db)],
                          input=stdin, capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.mark.slow
def test_cli_users_add_list_disable_reset(tmp_path):
    path = tmp_path / "team.db"
    out = run_cli("users", "add", "boss", "--role", "admin", "--password-stdin",
                  stdin=PW + "\n", db=path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "added admin 'boss'"
    out = run_cli("users", "add", "ana", "--role", "annotator", "--email", "ana@example.org",
                  "--password-stdin", stdin=NEW_PW + "\n", db=path)
    assert out.returncode == 0, out.stderr
    # without --password-stdin and no terminal: refused, nothing created
    out = run_cli("users", "add", "bob", "--role", "annotator", stdin=PW + "\n", db=path)
    assert out.returncode == 1 and "--password-stdin" in out.stderr
    # there is no way to give a password on the command line
    out = run_cli("users", "add", "bob", "--role", "annotator", "--password", PW, db=path)
    assert out.returncode == 2
    out = run_cli("users", "list", "--json", db=path)
    listed = json.loads(out.stdout)
    assert [(u["name"], u["role"], u["email"], u["password"]) for u in listed] == [
        ("ana", "annotator", "ana@example.org", True), ("boss", "admin", None, True)]
    db = store.connect(path)
    assert accounts.sign_in(db, "ana", NEW_PW).user.name == "ana"
    out = run_cli("users", "reset", "ana", "--password-stdin", stdin="fresh-Pass-2207\n", db=path)
    assert out.returncode == 0, out.stderr
    assert accounts.sign_in(db, "ana", "fresh-Pass-2207").user.name == "ana"
    out = run_cli("users", "disable", "ana", db=path)
    assert out.returncode == 0 and out.stdout.strip() == "ana: disabled"
    with pytest.raises(SignInRefused, match="disabled"):
        accounts.sign_in(db, "ana", "fresh-Pass-2207")
    out = run_cli("users", "disable", "boss", db=path)
    assert out.returncode == 1 and "last active admin" in out.stderr
    out = run_cli("users", "reset", "nobody", "--password-stdin", stdin=PW + "\n", db=path)
    assert out.returncode == 1 and "no account named 'nobody'" in out.stderr
    out = run_cli("users", "add", "cy", "--role", "annotator", "--password-stdin", stdin="2short\n",
                  db=path)
    assert out.returncode == 1 and "at least 8 characters" in out.stderr
    out = run_cli("users", "list", db=path)
    assert "ana\tannotator\tana@example.org\t(disabled)" in out.stdout
    db.conn.close()
    stored = db_bytes(path)
    for secret in (PW, NEW_PW, "fresh-Pass-2207", "2short"):
        assert secret.encode() not in stored
