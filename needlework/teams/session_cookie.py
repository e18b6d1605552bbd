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
token expires (lock-out, :mod:`needlework.teams.accounts`). A ``DELETE`` to the same
route ends the session the cookie names in the database and clears the session cookie
(sign-out); the device cookie stays, so the browser stays one its owner signed in from.

Both are state-changing, so both check that the request comes from the app's own page:
an ``Origin`` header equal to the request's own origin, no ``Sec-Fetch-Site`` other than
``same-origin``, and a JSON body (which a cross-site form cannot send without a
preflight). Anything else gets 403 and changes nothing.

Tickets live in this process's memory only (the server that ran the sign-in is the one
the page posts to); the tokens are never written anywhere but the cookies and, as SHA-256, the
``sessions`` and ``device_cookies`` tables.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from needlework.teams import accounts
from needlework.web import is_https, same_origin_refusal

ROUTE = "/_nw/session"
TICKET_SECONDS = 120.0
_MAX_BODY = 4096


class _Tickets:
    """One-time tickets: ``ticket -> (token, max_age, device, good until)``, in memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[str, tuple[str, int, tuple[str, int] | None, float]] = {}

    def offer(self, token: str, max_age: int, *, device: tuple[str, int] | None = None,
              now: float | None = None) -> str:
        moment = time.monotonic() if now is None else now
        ticket = secrets.token_urlsafe(32)
        with self._lock:
            self._held = {k: v for k, v in self._held.items() if v[3] > moment}
            self._held[ticket] = (token, max_age, device, moment + TICKET_SECONDS)
        return ticket

    def redeem(self, ticket: Any, *, now: float | None = None,
               ) -> tuple[str, int, tuple[str, int] | None] | None:
        if not isinstance(ticket, str):
            return None
        moment = time.monotonic() if now is None else now
        with self._lock:
            held = self._held.pop(ticket, None)
        if held is None or held[3] <= moment:
            return None
        return held[0], held[1], held[2]


_TICKETS = _Tickets()


def offer(token: str, max_age: int, *, device: tuple[str, int] | None = None,
          now: float | None = None) -> str:
    """A ticket the page exchanges at :data:`ROUTE` for the cookie holding ``token`` (kept
    ``max_age`` seconds) and, with ``device=(device token, max_age)``, the device
    cookie; good once, for :data:`TICKET_SECONDS`."""
    return _TICKETS.offer(token, max_age, device=device, now=now)


def redeem(ticket: Any, *, now: float | None = None,
           ) -> tuple[str, int, tuple[str, int] | None] | None:
    """``(token, max_age, device)`` of a ticket not yet used nor expired (and never
    again), else ``None``; ``device`` is ``(device token, max_age)`` or ``None``."""
    return _TICKETS.redeem(ticket, now=now)


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
    ``connect()`` opens the database (in a worker thread, per sign-out)."""

    def sign_out(token: str) -> None:
        db = connect()
        try:
            accounts.sign_out(db, token)
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
        held = redeem(_ticket(await request.body()))
        if held is None:
            return JSONResponse({"error": "unknown, used or expired ticket"}, status_code=404)
        response = JSONResponse({"kept": True})
        response.headers.append("set-cookie", cookie_header(held[0], held[1], secure=secure))
        if held[2] is not None:
            response.headers.append("set-cookie", cookie_header(
                held[2][0], held[2][1], secure=secure, name=accounts.DEVICE_COOKIE))
        return response

    return [Route(ROUTE, endpoint, methods=["POST", "DELETE"])]
