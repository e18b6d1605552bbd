"""The server's session-cookie route (needlework.teams.session_cookie), called as an ASGI
app the way Streamlit's server calls it: a one-time ticket becomes an HttpOnly cookie,
a request from another origin changes nothing, a DELETE ends the session in the
database and clears the cookie."""

from __future__ import annotations

import json
from functools import partial

import pytest
from starlette.routing import Router

import store
from needlework.teams import accounts, session_cookie
from tests.asgi_fixtures import HOST, OWN
from tests.asgi_fixtures import call as asgi_call

call = partial(asgi_call, path=session_cookie.ROUTE)


@pytest.fixture
def signed(tmp_path):
    path = tmp_path / "n.db"
    db = store.connect(path)
    user = accounts.add_user(db, "ana", "annotator", password="ana-passphrase-7")
    session = accounts.start_session(db, user)
    app = Router(routes=session_cookie.routes(lambda: store.connect(path, migrate=False)))
    return db, session, app


def test_a_ticket_becomes_an_httponly_strict_cookie_once(signed):
    db, session, app = signed
    ticket = session_cookie.offer(session.token, 3600, db=db)
    assert session.token not in ticket
    status, headers, _ = call(app, "POST", {"ticket": ticket})
    assert status == 200
    cookie = headers["set-cookie"]
    assert cookie.startswith(f"{accounts.SESSION_COOKIE}={session.token};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Max-Age=3600" in cookie
    assert "Secure" not in cookie  # plain http on localhost
    status, headers, body = call(app, "POST", {"ticket": ticket})  # used: never again
    assert status == 404 and "set-cookie" not in headers and "ticket" in body["error"]


def test_a_ticket_after_a_password_sign_in_also_sets_the_device_cookie(signed):
    db, _, app = signed
    signed_in = accounts.sign_in(db, "ana", "ana-passphrase-7")
    ticket = session_cookie.offer(signed_in.token, 3600, device=(signed_in.device_token, 7776000),
                                  db=db)
    status, headers, _ = call(app, "POST", {"ticket": ticket}, origin=f"https://{HOST}",
                              headers={"x-forwarded-proto": "https"})
    assert status == 200
    session, device = headers["set-cookie"].split("\n")
    assert session.startswith(f"{accounts.SESSION_COOKIE}={signed_in.token};")
    assert device == (f"{accounts.DEVICE_COOKIE}={signed_in.device_token}; Max-Age=7776000; "
                      "Path=/; HttpOnly; SameSite=Strict; Secure")
    # sign-out clears the session cookie only: the browser stays one ana signed in from
    status, headers, _ = call(app, "DELETE", cookie=signed_in.token)
    assert status == 200 and "\n" not in headers["set-cookie"]
    assert headers["set-cookie"].startswith(f"{accounts.SESSION_COOKIE}=;")
    assert accounts.DEVICE_COOKIE not in headers["set-cookie"]


def test_the_cookie_is_secure_behind_https(signed):
    db, session, app = signed
    ticket = session_cookie.offer(session.token, 60, db=db)
    status, headers, _ = call(app, "POST", {"ticket": ticket}, origin=f"https://{HOST}",
                              headers={"x-forwarded-proto": "https"})
    assert status == 200 and headers["set-cookie"].endswith("; Secure")


def test_a_ticket_expires(signed):
    db = signed[0]
    ticket = session_cookie.offer("nw_x", 60, now=1000.0, db=db)
    assert session_cookie.redeem(ticket, now=1000.0 + session_cookie.TICKET_SECONDS + 1,
                                 db=db) is None
    fresh = session_cookie.offer("nw_x", 60, now=1000.0, db=db)
    assert session_cookie.redeem(fresh, now=1001.0, db=db) == ("nw_x", 60, None)
    assert session_cookie.redeem(None, db=db) is None
    assert session_cookie.redeem(["x"], db=db) is None


@pytest.mark.parametrize(("origin", "headers", "body"), [
    (None, {}, None),  # no Origin (a non-browser client, or an old form post)
    ("http://evil.example", {}, None),
    ("http://127.0.0.1:9999", {}, None),  # another port is another origin
    (OWN, {"sec-fetch-site": "cross-site"}, None),
    (OWN, {"sec-fetch-site": "same-site"}, None),
    (OWN, {"content-type": "application/x-www-form-urlencoded"}, None),
    (OWN, {"content-type": "text/plain"}, None),
])
def test_requests_not_from_the_apps_page_change_nothing(signed, origin, headers, body):
    db, session, app = signed
    ticket = session_cookie.offer(session.token, 60, db=db)
    status, got, answer = call(app, "POST", {"ticket": ticket}, origin=origin, headers=headers)
    assert status == 403 and "set-cookie" not in got and answer["error"]
    status, got, _ = call(app, "DELETE", origin=origin, headers=headers, cookie=session.token)
    assert status == 403 and "set-cookie" not in got
    assert accounts.resume(db, session.token) is not None  # the session lives on
    assert session_cookie.redeem(ticket, db=db) is not None  # and the ticket was not spent


@pytest.mark.parametrize("body", ["not json", "[1, 2]", '{"ticket": 7}', "{}",
                                  json.dumps({"ticket": "x" * 5000})])
def test_a_malformed_body_is_refused(signed, body):
    _, _, app = signed
    status, headers, _ = call(app, "POST", body)
    assert status == 404 and "set-cookie" not in headers


def test_delete_ends_the_session_and_clears_the_cookie(signed):
    db, session, app = signed
    status, headers, _ = call(app, "DELETE", cookie=session.token)
    assert status == 200
    assert headers["set-cookie"].startswith(f"{accounts.SESSION_COOKIE}=;")
    assert "Max-Age=0" in headers["set-cookie"] and "HttpOnly" in headers["set-cookie"]
    assert accounts.resume(db, session.token) is None
    status, headers, _ = call(app, "DELETE")  # no cookie: nothing to end, cleared anyway
    assert status == 200 and "Max-Age=0" in headers["set-cookie"]


def test_get_is_not_a_way_in(signed):
    db, session, app = signed
    ticket = session_cookie.offer(session.token, 60, db=db)
    status, headers, _ = call(app, "GET", {"ticket": ticket})
    assert status == 405 and "set-cookie" not in headers
