"""The session cookie, set and cleared by the server so that no script can read it.

A sign-in happens inside a Streamlit run, which talks to the browser over its websocket
and cannot answer with a ``Set-Cookie`` header. So the run hands the new session token
(and, after a password sign-in, the browser's new device token) to this module
(:func:`offer`) and gets back a **ticket**: random, good once, for
:data:`TICKET_SECONDS`. The page posts the ticket (never a token) to
:data:`ROUTE`; :func:`routes`' handler redeems it and answers with the cookie
:data:`needlework.teams.accounts.SESSION_COOKIE` = token, ``HttpOnly``,
``SameSite=Strict``, ``Path=/``, ``Max-Age`` = the session's time left, and ``Secure``
when the request came over HTTPS (directly or through a proxy that says so in
``X-Forwarded-Proto``), and likewise the cookie
:data:`needlework.teams.accounts.DEVICE_COOKIE` = device token, kept until the device
token expires (lock-out, :mod:`needlework.teams.lockout`). A ``DELETE`` to the same
route ends the session the cookie names in the database and clears the session cookie
(sign-out); the device cookie stays, so the browser stays one its owner signed in from.

Both are state-changing, so both check that the request comes from the app's own page:
an ``Origin`` header equal to the request's own origin, no ``Sec-Fetch-Site`` other than
``same-origin``, and a JSON body (which a cross-site form cannot send without a
preflight). Anything else gets 403 and changes nothing.

Tickets live in the database (``session_tickets``, :mod:`store.users`), so that the POST
may reach another server process than the one that ran the sign-in (several processes
behind a proxy): a row holds the SHA-256 of the ticket, never the ticket, and the tokens
sealed under it (XORed with SHAKE-256 of the ticket: one key, used once, that only the
browser holding the ticket has), so the database alone gives no token. Redeeming deletes
the row in one statement: of two requests with the same ticket, from any processes, exactly
one gets the cookie. Times are Unix seconds (``time.time()``), one clock for every process
of the machine. Otherwise the tokens are never written anywhere but the cookies and, as
SHA-256, the ``sessions`` and ``device_cookies`` tables.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from collections.abc import Callable
from typing import Any

from sqlite_utils import Database
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from needlework.teams import accounts
from needlework.web import is_https, same_origin_refusal
from store import users as store_users
from store.db import thread_connection

ROUTE = "/_nw/session"
TICKET_SECONDS = 120.0
_MAX_BODY = 4096


_SEAL = b"needlework session ticket\0"  # what the sealing key is made from, before the ticket


def _hash(ticket: str) -> str:
    return hashlib.sha256(ticket.encode("utf-8")).hexdigest()


def _seal(ticket: str, plain: bytes) -> str:
    """``plain`` XORed with as many bytes of SHAKE-256(label + ticket), in base64: without
    the ticket it says nothing; the same function opens it."""
    key = hashlib.shake_256(_SEAL + ticket.encode("utf-8")).digest(len(plain))
    return base64.urlsafe_b64encode(bytes(a ^ b for a, b in zip(plain, key, strict=True))
                                    ).decode("ascii")


def _open(ticket: str, sealed: str) -> bytes:
    data = base64.urlsafe_b64decode(sealed.encode("ascii"))
    key = hashlib.shake_256(_SEAL + ticket.encode("utf-8")).digest(len(data))
    return bytes(a ^ b for a, b in zip(data, key, strict=True))


def offer(token: str, max_age: int, *, device: tuple[str, int] | None = None,
          now: float | None = None, db: Database | None = None) -> str:
    """A ticket the page exchanges at :data:`ROUTE` for the cookie holding ``token`` (kept
    ``max_age`` seconds) and, with ``device=(device token, max_age)``, the device
    cookie; good once, for :data:`TICKET_SECONDS`, from any process on ``db`` (default:
    the calling thread's connection to the app's database)."""
    moment = time.time() if now is None else now
    ticket = secrets.token_urlsafe(32)
    plain = json.dumps({"token": token, "device": device[0] if device else None}).encode()
    store_users.insert_ticket(db if db is not None else thread_connection(),
                              ticket_hash=_hash(ticket), sealed=_seal(ticket, plain),
                              max_age=int(max_age),
                              device_max_age=int(device[1]) if device else None,
                              expires_at=moment + TICKET_SECONDS, now=moment)
    return ticket


def redeem(ticket: Any, *, now: float | None = None, db: Database | None = None,
           ) -> tuple[str, int, tuple[str, int] | None] | None:
    """``(token, max_age, device)`` of a ticket not yet used nor expired (and never
    again), else ``None``; ``device`` is ``(device token, max_age)`` or ``None``. ``db``
    as in :func:`offer`."""
    if not isinstance(ticket, str) or not ticket:
        return None
    moment = time.time() if now is None else now
    row = store_users.take_ticket(db if db is not None else thread_connection(), _hash(ticket))
    if row is None or row["expires_at"] <= moment:
        return None
    try:
        held = json.loads(_open(ticket, row["sealed"]))
    except ValueError:  # not base64, not UTF-8 or not JSON: not what offer wrote
        return None
    token, device = (held.get("token"), held.get("device")) if isinstance(held, dict) else (0, 0)
    if not isinstance(token, str):
        return None
    return (token, int(row["max_age"]),
            (device, int(row["device_max_age"])) if isinstance(device, str)
            and row["device_max_age"] is not None else None)


def cookie_header(token: str, max_age: int, *, secure: bool,
                  name: str = accounts.SESSION_COOKIE) -> str:
    """The ``Set-Cookie`` value keeping ``token`` (in the cookie ``name``: the session's,
    or :data:`needlework.teams.accounts.DEVICE_COOKIE`)."""
    return (f"{name}={token}; Max-Age={max(0, int(max_age))}; Path=/; "
            f"HttpOnly; SameSite=Strict" + ("; Secure" if secure else ""))


def clearing_header(*, secure: bool) -> str:
    """The ``Set-Cookie`` value that removes the cookie."""
    return (f"{accounts.SESSION_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict"
            + ("; Secure" if secure else ""))


def _headers(request: Request) -> dict[str, str]:
    return {k.lower(): v for k, v in request.headers.items()}


def _ticket(body: bytes) -> Any:
    if len(body) > _MAX_BODY:
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data.get("ticket") if isinstance(data, dict) else None


def routes(connect: Callable[[], Any]) -> list[Route]:
    """The Starlette route of :data:`ROUTE` (``POST`` a ticket, ``DELETE`` to sign out);
    ``connect()`` opens the database (in a worker thread, per ticket and per sign-out,
    closed after)."""

    def sign_out(token: str) -> None:
        db = connect()
        try:
            accounts.sign_out(db, token)
        finally:
            db.conn.close()

    def take(ticket: Any) -> tuple[str, int, tuple[str, int] | None] | None:
        if not isinstance(ticket, str) or not ticket:
            return None
        db = connect()
        try:
            return redeem(ticket, db=db)
        finally:
            db.conn.close()

    async def endpoint(request: Request) -> Response:
        headers = _headers(request)
        refusal = same_origin_refusal(request.url.scheme, headers)
        if refusal:
            return JSONResponse({"error": refusal}, status_code=403)
        secure = is_https(request.url.scheme, headers)
        if request.method == "DELETE":
            token = request.cookies.get(accounts.SESSION_COOKIE)
            if token:
                await run_in_threadpool(sign_out, token)
            response: Response = JSONResponse({"signed_out": True})
            response.headers["set-cookie"] = clearing_header(secure=secure)
            return response
        held = await run_in_threadpool(take, _ticket(await request.body()))
        if held is None:
            return JSONResponse({"error": "unknown, used or expired ticket"}, status_code=404)
        response = JSONResponse({"kept": True})
        response.headers.append("set-cookie", cookie_header(held[0], held[1], secure=secure))
        if held[2] is not None:
            response.headers.append("set-cookie", cookie_header(
                held[2][0], held[2][1], secure=secure, name=accounts.DEVICE_COOKIE))
        return response

    return [Route(ROUTE, endpoint, methods=["POST", "DELETE"])]
