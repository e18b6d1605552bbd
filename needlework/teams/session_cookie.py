"""The session cookie, set and cleared by the server so that no script can read it.

A sign-in happens inside a Streamlit run, which talks to the browser over its websocket
and cannot answer with a ``Set-Cookie`` header. So the run hands the new session token to
this module (:func:`offer`) and gets back a **ticket**: random, good once, for
:data:`TICKET_SECONDS`. The page posts the ticket (never the token) to
:data:`ROUTE`; :func:`routes`' handler redeems it and answers with the cookie
:data:`needlework.teams.accounts.SESSION_COOKIE` = token, ``HttpOnly``,
``SameSite=Strict``, ``Path=/``, ``Max-Age`` = the session's time left, and ``Secure``
when the request came over HTTPS (directly or through a proxy that says so in
``X-Forwarded-Proto``). A ``DELETE`` to the same route ends the session the cookie names
in the database and clears the cookie (sign-out).

Both are state-changing, so both check that the request comes from the app's own page:
an ``Origin`` header equal to the request's own origin, no ``Sec-Fetch-Site`` other than
``same-origin``, and a JSON body (which a cross-site form cannot send without a
preflight). Anything else gets 403 and changes nothing.

Tickets live in this process's memory only (the server that ran the sign-in is the one
the page posts to); the token itself is never written anywhere but the cookie and, as a
SHA-256, the ``sessions`` table.
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
    """One-time tickets: ``ticket -> (token, max_age, good until)``, in memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[str, tuple[str, int, float]] = {}

    def offer(self, token: str, max_age: int, *, now: float | None = None) -> str:
        moment = time.monotonic() if now is None else now
        ticket = secrets.token_urlsafe(32)
        with self._lock:
            self._held = {k: v for k, v in self._held.items() if v[2] > moment}
            self._held[ticket] = (token, max_age, moment + TICKET_SECONDS)
        return ticket

    def redeem(self, ticket: Any, *, now: float | None = None) -> tuple[str, int] | None:
        if not isinstance(ticket, str):
            return None
        moment = time.monotonic() if now is None else now
        with self._lock:
            held = self._held.pop(ticket, None)
        if held is None or held[2] <= moment:
            return None
        return held[0], held[1]


_TICKETS = _Tickets()


def offer(token: str, max_age: int, *, now: float | None = None) -> str:
    """A ticket the page exchanges at :data:`ROUTE` for the cookie holding ``token`` (kept
    ``max_age`` seconds); good once, for :data:`TICKET_SECONDS`."""
    return _TICKETS.offer(token, max_age, now=now)


def redeem(ticket: Any, *, now: float | None = None) -> tuple[str, int] | None:
    """``(token, max_age)`` of a ticket not yet used nor expired (and never again), else
    ``None``."""
    return _TICKETS.redeem(ticket, now=now)


def cookie_header(token: str, max_age: int, *, secure: bool) -> str:
    """The ``Set-Cookie`` value keeping ``token``."""
    return (f"{accounts.SESSION_COOKIE}={token}; Max-Age={max(0, int(max_age))}; Path=/; "
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
        response.headers["set-cookie"] = cookie_header(held[0], held[1], secure=secure)
        return response

    return [Route(ROUTE, endpoint, methods=["POST", "DELETE"])]
