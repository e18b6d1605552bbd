"""Lock-out by device cookie (OWASP), the client address behind trusted proxies, and the
admin's view of pauses: a stranger's wrong passwords pause the name for browsers that
never signed in with it, never the browser where its owner did; a browser's own wrong
passwords pause that browser only; unknown names answer exactly like real ones;
``[server] trusted_proxies`` decides whose ``X-Forwarded-For`` is believed."""

from __future__ import annotations

import ipaddress
import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

import store
from needlework.teams import accounts, pauses
from needlework.teams.accounts import AccountError, SignInRefused
from needlework.teams.audit import event_records
from needlework.teams.config import ConfigError, Policy, parse_config
from needlework.teams.permissions import PermissionDenied
from needlework.teams.proxies import client_address, forwarded_hops, parse_address
from tests.conftest import ROOT

PW = "cobalt-Heron-4417"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
POLICY = Policy(lock_failures=5, lock_minutes=15)


@pytest.fixture
def db(tmp_path):
    db = store.connect(tmp_path / "lock.db")
    accounts.add_user(db, "boss", "admin", password=PW)
    accounts.add_user(db, "ana", "annotator", password=PW + "-ana", email="ana@example.org")
    return db


def _refused(db, login, password, **kw) -> str:
    with pytest.raises(SignInRefused) as info:
        accounts.sign_in(db, login, password, policy=POLICY, **kw)
    return str(info.value)


def nets(*texts: str) -> tuple:
    return tuple(ipaddress.ip_network(t, strict=False) for t in texts)


# --- the client address -------------------------------------------------------------

def test_a_peer_that_is_not_a_trusted_proxy_is_the_client_whatever_it_forwards():
    trusted = nets("10.0.0.0/24")
    assert client_address("203.0.113.9", [], trusted) == "203.0.113.9"
    # a spoofed header from an untrusted peer is ignored
    assert client_address("203.0.113.9", ["1.2.3.4"], trusted) == "203.0.113.9"
    assert client_address("203.0.113.9", ["1.2.3.4, 10.0.0.5"], trusted) == "203.0.113.9"
    assert client_address("203.0.113.9", ["1.2.3.4"], ()) == "203.0.113.9"


def test_a_loopback_peer_is_127_0_0_1_and_its_header_counts_only_when_loopback_is_trusted():
    assert client_address(None, [], ()) == "127.0.0.1"
    assert client_address(None, ["198.51.100.4"], (), server_trusts="") == "127.0.0.1"
    assert client_address(None, ["198.51.100.4"], nets("127.0.0.1")) == "198.51.100.4"
    assert client_address(None, ["198.51.100.4"], nets("::1")) == "198.51.100.4"  # either
    # Streamlit's server already put its pick of the header in the peer's place
    assert client_address("198.51.100.4", ["198.51.100.4"], (), server_trusts=None) == "127.0.0.1"
    assert client_address("198.51.100.4", ["198.51.100.4"], nets("127.0.0.1/8"),
                          server_trusts=None) == "198.51.100.4"
    # where the server's trust is configured, its peer is taken as it is
    assert client_address("198.51.100.4", ["198.51.100.4"], (),
                          server_trusts="10.1.1.1") == "198.51.100.4"


def test_behind_trusted_proxies_the_client_is_the_right_most_untrusted_entry():
    trusted = nets("10.0.0.0/24", "192.168.7.7")
    # whatever the client wrote on the left is not believed
    assert client_address("10.0.0.5", ["6.6.6.6, 203.0.113.50"], trusted) == "203.0.113.50"
    # a chain of trusted proxies is walked through
    assert client_address("10.0.0.5", ["6.6.6.6, 203.0.113.50, 192.168.7.7"],
                          trusted) == "203.0.113.50"
    # several headers are one list, in order
    assert client_address("10.0.0.5", ["6.6.6.6", "203.0.113.50, 10.0.0.9"],
                          trusted) == "203.0.113.50"
    # ports, brackets, IPv6, IPv4-mapped IPv6
    assert client_address("[::ffff:10.0.0.5]:443", ["203.0.113.50:5123"], trusted) == "203.0.113.50"
    assert client_address("10.0.0.5", ["[2001:db8::7]:443"], trusted) == "2001:db8::7"
    # an entry that is not an address stops the walk at the nearest trusted hop
    assert client_address("10.0.0.5", ["<script>, 10.0.0.9"], trusted) == "10.0.0.9"
    assert client_address("10.0.0.5", ["", " "], trusted) == "10.0.0.5"
    assert client_address("not-an-ip", [], trusted) == ""


def test_parsing_helpers():
    assert str(parse_address(" 1.2.3.4:80 ")) == "1.2.3.4"
    assert str(parse_address("[::1]:8501")) == "::1"
    assert parse_address("[::1") is None and parse_address(None) is None
    assert forwarded_hops(["a, b", " c ,", None]) == ["a", "b", "c"]
    assert len(forwarded_hops([", ".join(["1.1.1.1"] * 100)])) == 32


# --- the setting ----------------------------------------------------------------------

def test_trusted_proxies_is_read_from_the_server_table():
    config = parse_config('[server]\nmode = "team"\ntrusted_proxies = ["127.0.0.1", '
                          '"10.0.0.0/24", "::1", " 192.168.1.9 ", "10.1.2.3/16"]\n')
    assert config.trusted_proxies == nets("127.0.0.1", "10.0.0.0/24", "::1", "192.168.1.9",
                                          "10.1.0.0/16")
    assert parse_config('[server]\nmode = "team"\n').trusted_proxies == ()


@pytest.mark.parametrize(("text", "message"), [
    ('[server]\ntrusted_proxies = "10.0.0.1"\n',
     "cfg.toml: server.trusted_proxies must be a list of IP addresses or networks"),
    ('[server]\ntrusted_proxies = ["10.0.0.1", "proxy.lan"]\n',
     "cfg.toml: server.trusted_proxies entry 2 must be an IP address or network such as "
     "10.0.0.5 or 10.0.0.0/24, got 'proxy.lan'"),
    ('[server]\ntrusted_proxies = [10]\n', "server.trusted_proxies entry 1 must be an IP"),
    ('[server]\ntrusted_proxies = ["10.0.0.0/33"]\n', "got '10.0.0.0/33'"),
    ('[server]\ntrusted_proxie = []\n', "unknown key server.trusted_proxie"),
])
def test_a_wrong_trusted_proxies_is_refused_naming_file_and_key(text, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_config(text, "cfg.toml")


# --- device cookies -------------------------------------------------------------------

@pytest.mark.slow
def test_a_device_token_is_given_kept_as_a_hash_bound_to_the_account_and_replaced(db):
    first = accounts.sign_in(db, "ana", PW + "-ana", now=T0)
    token = first.device_token
    assert token.startswith("nwd_") and token not in repr(first)
    assert first.device_expires_at == accounts.iso(T0 + timedelta(days=accounts.DEVICE_DAYS))
    stored = [r["token_hash"] for r in db["device_cookies"].rows]
    assert stored == [accounts.token_hash(token)] and token not in json.dumps(list(db["device_cookies"].rows))
    # the next sign-in with it retires it and gives a new one
    second = accounts.sign_in(db, "ana@example.org", PW + "-ana", device=token, now=T0)
    assert second.device_token != token
    assert [r["token_hash"] for r in db["device_cookies"].rows] == [accounts.token_hash(second.device_token)]
    [ok] = [e for e in event_records(db) if e["action"] == "sign_in"][-1:]
    assert ok["after"]["device_cookie"] is True
    # bound to ana: typed with boss's name it counts for nothing, boss is an untrusted client
    for _ in range(5):
        _refused(db, "boss", "wrong-wrong", device=second.device_token, now=T0)
    assert "not signed in from before" in _refused(db, "boss", PW, device=second.device_token,
                                                   now=T0)
    # expired: an untrusted client
    later = T0 + timedelta(days=accounts.DEVICE_DAYS, seconds=1)
    for _ in range(5):
        _refused(db, "ana", "wrong-wrong", device=second.device_token, now=later)
    assert "not signed in from before" in _refused(db, "ana", PW + "-ana",
                                                   device=second.device_token, now=later)


@pytest.mark.slow
def test_wrong_passwords_with_a_device_cookie_pause_that_browser_alone(db):
    mine = accounts.sign_in(db, "ana", PW + "-ana", now=T0).device_token
    other = accounts.sign_in(db, "ana", PW + "-ana", now=T0).device_token  # a second browser
    for attempt in range(4):
        assert _refused(db, "ana", f"typo-{attempt}", device=mine, now=T0) == "wrong name or password"
    said = _refused(db, "ana", "typo-4", device=mine, now=T0)
    assert said == ("wrong name or password, 5 times in a row: sign-in with this name is paused "
                    "in this browser until 09:01 UTC on 2026-03-02")
    assert "5 wrong passwords in a row, sign-in with this name is paused in this browser:" in _refused(
        db, "ana", PW + "-ana", device=mine, now=T0 + timedelta(seconds=30))
    # not the name: another browser of hers, and a browser that never signed in, go on
    assert accounts.sign_in(db, "ana", PW + "-ana", device=other, now=T0).user.name == "ana"
    assert accounts.sign_in(db, "ana", PW + "-ana", now=T0).user.name == "ana"
    # the pause ends; the right password resets that browser (and replaces its token)
    again = accounts.sign_in(db, "ana", PW + "-ana", device=mine, now=T0 + timedelta(minutes=1))
    for attempt in range(4):
        _refused(db, "ana", f"typo-{attempt}", device=again.device_token, now=T0 + timedelta(minutes=2))
    assert accounts.sign_in(db, "ana", PW + "-ana", device=again.device_token,
                            now=T0 + timedelta(minutes=2)).user


@pytest.mark.slow
def test_a_stranger_pauses_the_name_for_untrusted_clients_only(db):
    home = accounts.sign_in(db, "boss", PW, now=T0 - timedelta(hours=1)).device_token
    answers = [_refused(db, "boss", f"guess-{i}", client="203.0.113.7", now=T0)
               for i in range(20)]
    assert answers[:4] == ["wrong name or password"] * 4
    assert answers[4].startswith("wrong name or password, 5 times in a row: sign-in with this "
                                 "name is paused in browsers it has not signed in from before")
    assert all("paused in browsers it has not signed in from before" in a for a in answers[5:])
    # the admin, from her own browser, at once; a new browser (any address) must wait
    signed = accounts.sign_in(db, "boss", PW, device=home, client="203.0.113.7", now=T0)
    assert signed.user.role == "admin"
    assert "paused" in _refused(db, "boss", PW, client="192.0.2.1", now=T0)
    # a device token of another account does not make the stranger trusted
    ana = accounts.sign_in(db, "ana", PW + "-ana", now=T0).device_token
    assert "paused" in _refused(db, "boss", PW, device=ana, now=T0)
    assert "paused" in _refused(db, "boss", PW, device="nwd_" + "x" * 43, now=T0)


@pytest.mark.slow
def test_an_unknown_name_answers_exactly_like_a_real_one_with_or_without_a_cookie(db):
    boss_cookie = accounts.sign_in(db, "boss", PW, now=T0 - timedelta(hours=1)).device_token
    said = {}
    for name in ("ana", "nobody-here"):
        said[name] = [_refused(db, name, f"guess-{i}", device=boss_cookie, now=T0,
                               client="10.0.0.9") for i in range(8)]
        said[name] += [_refused(db, name, "guess-x", now=T0 + timedelta(minutes=1, seconds=1))]
    assert said["ana"] == said["nobody-here"]
    refused = [e for e in event_records(db) if e["action"] == "sign_in.refused"]
    text = json.dumps(refused)
    assert "nobody-here" not in text and "guess-" not in text
    assert {e["after"]["device_cookie"] for e in refused} == {False}
    assert {e["after"]["client"] for e in refused} == {"10.0.0.9", ""}


@pytest.mark.slow
def test_an_admin_lists_and_lifts_pauses_with_events(db):
    boss = accounts.get_user(db, "boss")
    ana_cookie = accounts.sign_in(db, "ana", PW + "-ana", now=T0).device_token
    for _ in range(5):
        _refused(db, "ana", "nope-nope", device=ana_cookie, now=T0)  # her browser
        _refused(db, "ANA@example.org", "nope-nope", now=T0)  # her e-mail, untrusted
        _refused(db, "ghost", "nope-nope", now=T0)  # no such account
    with pytest.raises(PermissionDenied):
        pauses.list_pauses(db, actor=accounts.get_user(db, "ana"), now=T0)
    in_force = pauses.list_pauses(db, actor=boss, now=T0)
    assert sorted((p.kind, p.account, p.failures) for p in in_force) == [
        ("browser", "ana", 5), ("name", "", 5), ("name", "ana", 5)]
    assert {p.about for p in in_force} == {
        "a name or e-mail no account has", "its e-mail, in browsers it has not signed in from before",
        f"one browser where it signed in on {T0.date()}"}
    assert "ghost" not in repr(in_force)
    assert accounts.get_user(db, "ana").locked_until == accounts.iso(T0 + timedelta(minutes=1))
    browser = next(p for p in in_force if p.kind == "browser")
    pauses.lift_pause(db, browser.id, actor=boss, now=T0)
    assert accounts.sign_in(db, "ana", PW + "-ana", device=ana_cookie, now=T0).user
    assert "paused" in _refused(db, "ana@example.org", PW + "-ana", now=T0)
    with pytest.raises(AccountError, match="not in force"):
        pauses.lift_pause(db, browser.id, actor=boss, now=T0)
    assert pauses.lift_all_pauses(db, actor=boss, now=T0) == 2
    assert pauses.list_pauses(db, actor=boss, now=T0) == []
    assert accounts.get_user(db, "ana").locked_until is None
    assert accounts.sign_in(db, "ana@example.org", PW + "-ana", now=T0).user
    lifted = [(e["by"], e["target"], e["before"]["kind"]) for e in event_records(db)
              if e["action"] == "sign_in.pause_lifted"]
    assert sorted(lifted) == [("boss", "", "name"), ("boss", "ana", "browser"),
                              ("boss", "ana", "name")]


@pytest.mark.slow
def test_unlock_lifts_the_names_and_every_browser_of_the_account(db):
    cookie = accounts.sign_in(db, "ana", PW + "-ana", now=T0).device_token
    for _ in range(5):
        _refused(db, "ana", "nope-nope", device=cookie, now=T0)
        _refused(db, "ana", "nope-nope", now=T0)
    pauses.unlock(db, "ana")
    assert pauses.list_pauses(db, now=T0) == []
    assert accounts.sign_in(db, "ana", PW + "-ana", device=cookie, now=T0).user
    assert accounts.sign_in(db, "ana", PW + "-ana", now=T0).user
    [event] = [e for e in event_records(db) if e["action"] == "account.unlocked"]
    assert event["before"] == {"pauses": 2}


@pytest.mark.slow
def test_users_unlock_on_the_command_line_lifts_a_browser_pause(tmp_path):
    path = tmp_path / "cli.db"
    db = store.connect(path)
    accounts.add_user(db, "ana", "annotator", password=PW)
    cookie = accounts.sign_in(db, "ana", PW).device_token
    for _ in range(5):
        with pytest.raises(SignInRefused):
            accounts.sign_in(db, "ana", "nope-nope", device=cookie)
    assert [p.kind for p in pauses.list_pauses(db)] == ["browser"]
    db.conn.close()
    done = subprocess.run([sys.executable, "-m", "needlework", "users", "unlock", "ana", "--db",
                           str(path)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ana: unlocked", done.stderr
    db = store.connect(path)
    assert pauses.list_pauses(db) == []
    assert accounts.sign_in(db, "ana", PW, device=cookie).user.name == "ana"


@pytest.mark.slow
def test_a_count_forgets_wrong_passwords_older_than_a_day(db):
    cookie = accounts.sign_in(db, "ana", PW + "-ana", now=T0).device_token
    for _ in range(4):
        _refused(db, "ana", "nope-nope", device=cookie, now=T0)
        _refused(db, "ana", "nope-nope", now=T0)
    later = T0 + accounts.FAILURE_MEMORY + timedelta(seconds=1)
    assert _refused(db, "ana", "nope-nope", device=cookie, now=later) == "wrong name or password"
    assert _refused(db, "ana", "nope-nope", now=later) == "wrong name or password"
    for _ in range(3):  # counted again from there: the 5th in a day pauses
        _refused(db, "ana", "nope-nope", now=later)
    assert "5 times in a row" in _refused(db, "ana", "nope-nope", now=later)
