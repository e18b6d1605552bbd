"""The action route: key actions committed the moment they arrive, outside the rerun cycle.

The browser's outbox (``components/js/outbox_core.js``) POSTs its pending actions to
:data:`ROUTE` on the app's own server (``serve.py``);
:func:`needlework.actions.service.apply_actions` applies them in order in one transaction and the response acknowledges them
(:func:`answer`). Same ids, same idempotence, same durable browser queue as before; the
page's rerun only redraws what is saved.

Who acts: in team mode the session the browser's HttpOnly cookie names
(:func:`needlework.teams.accounts.resume`), with the same role and assignment checks as
every write; no live session is a 401 and nothing is applied (the browser keeps the
actions). In local mode nobody signs in (the server listens on this machine only).

Every request must come from the app's own page (:func:`needlework.web.same_origin_refusal`),
be at most :data:`MAX_BODY` bytes, and each browser at most :data:`RATE` requests in a
second (a browser: its session cookie, or its address without one; several annotators
behind one proxy or on one machine share an address) and each address at most
:data:`HOST_RATE` (more: 429, the browser waits and sends again). A programming error
while the batch applies is a 500 (logged by :mod:`needlework.actions.service`): the browser
keeps the actions and sends them again.

The rate limits are counted in each server process's memory: with several processes
behind a proxy (one database), a browser whose requests the proxy spreads over N
processes gets up to N times :data:`RATE`. That is acceptable: they bound a runaway
script, not an attacker (the cookie's affinity keeps one browser on one process), and
everything an action changes is in the database, which every process shares.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from needlework.actions.service import INTERNAL, MAX_BATCH, Delivery, apply_actions
from needlework.teams import accounts
from needlework.teams.config import load_config
from needlework.web import same_origin_refusal

ROUTE = "/_nw/actions"
MAX_BODY = 512 * 1024
RATE = 40  # requests per browser (its session cookie, else its address) per second
HOST_RATE = 400  # requests per address per second, whatever the cookies


def answer(delivery: Delivery) -> dict[str, Any]:
    """What the browser needs of a batch's outcome: the ids it may forget, the refusals
    with their sentence, what an undo or redo reverted, what to tell the person, each
    move's position ``seq`` (0: refused), and a database error (then nothing was
    acknowledged: it sends them again)."""
    return {
        "acks": delivery.acked,
        "rejected": [{"id": o.id, "message": o.message} for o in delivery.rejected],
        "undone": [{"id": o.id, "item": o.item, "field": o.field} for o in delivery.outcomes
                   if o.item and o.status == "applied"],
        "told": [{"id": o.id, "message": o.message} for o in delivery.outcomes if o.tell],
        "moved": [{"id": o.id, "seq": o.seq} for o in delivery.outcomes if o.seq is not None],
        "error": delivery.error,
    }


class _Rate:
    """At most ``limit`` requests per client in any one-second window, in this process
    (not shared with the other server processes of the database: see the module)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._seen: dict[str, list[float]] = {}

    def allow(self, client: str, now: float | None = None) -> bool:
        moment = time.monotonic() if now is None else now
        with self._lock:
            if len(self._seen) > 10_000:  # forget idle clients
                self._seen = {k: v for k, v in self._seen.items() if v and v[-1] > moment - 1}
            recent = [t for t in self._seen.get(client, []) if t > moment - 1.0]
            if len(recent) >= self.limit:
                self._seen[client] = recent
                return False
            recent.append(moment)
            self._seen[client] = recent
            return True


def _parse(body: bytes) -> list[Any] | None:
    try:
        data = json.loads(body)
    except ValueError:
        return None
    actions = data.get("actions") if isinstance(data, dict) else None
    return actions[:MAX_BATCH] if isinstance(actions, list) else None


def routes(connect: Callable[[], Any], *, team: Callable[[], bool] | None = None,
           rate: int = RATE, host_rate: int = HOST_RATE) -> list[Route]:
    """The Starlette route of :data:`ROUTE`. ``connect()`` gives the calling thread's
    database connection; ``team()`` says whether sign-in is required (default: the
    team config, read per request so a changed needlework.toml counts)."""
    limiter, host_limiter = _Rate(rate), _Rate(host_rate)
    is_team = team or (lambda: load_config().team)

    def apply(actions: list[Any], token: str | None) -> tuple[int, dict[str, Any]]:
        db = connect()
        actor = None
        if is_team():
            actor = accounts.resume(db, token)
            if actor is None:
                return 401, {"error": "signin"}
        delivery = apply_actions(db, actions, actor=actor)
        if delivery.error == INTERNAL:  # a bug, logged: the browser keeps every action
            return 500, {"error": INTERNAL, "message": "the server could not save"}
        return 200, answer(delivery)

    async def endpoint(request: Request) -> Response:
        refusal = same_origin_refusal(request.url.scheme,
                                      {k.lower(): v for k, v in request.headers.items()})
        if refusal:
            return JSONResponse({"error": "refused", "message": refusal}, status_code=403)
        host = request.client.host if request.client else ""
        cookie = request.cookies.get(accounts.SESSION_COOKIE)
        browser = ("session:" + hashlib.sha256(cookie.encode()).hexdigest()[:16]) if cookie else host
        if not host_limiter.allow(host) or not limiter.allow(browser):
            return JSONResponse({"error": "busy", "message": "too many requests"},
                                status_code=429, headers={"retry-after": "1"})
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > MAX_BODY:
            return JSONResponse({"error": "refused", "message": "request too large"},
                                status_code=413)
        body = await request.body()
        if len(body) > MAX_BODY:
            return JSONResponse({"error": "refused", "message": "request too large"},
                                status_code=413)
        actions = _parse(body)
        if actions is None:
            return JSONResponse({"error": "refused", "message": 'send {"actions": [...]}'},
                                status_code=400)
        status, payload = await run_in_threadpool(
            apply, actions, request.cookies.get(accounts.SESSION_COOKIE))
        return JSONResponse(payload, status_code=status,
                            headers={"cache-control": "no-store"})

    return [Route(ROUTE, endpoint, methods=["POST"])]
