"""Calling a Starlette route as an ASGI app, the way Streamlit's server calls it."""

from __future__ import annotations

import asyncio
import json
import threading

from needlework.teams import accounts

HOST = "127.0.0.1:8501"
OWN = f"http://{HOST}"


def call(app, method: str, body: dict | str | None = None, *, path: str,
         origin: str | None = OWN, headers: dict[str, str] | None = None,
         cookie: str | None = None, scheme: str = "http",
         client: str = "127.0.0.1") -> tuple[int, dict[str, str], dict]:
    """One HTTP request to the ASGI ``app`` as Streamlit's server would pass it; returns
    the status, the response headers (lower-case names; a repeated one's values joined
    by newlines) and the JSON body."""
    raw = body.encode() if isinstance(body, str) else json.dumps(body or {}).encode()
    sent = {"host": HOST, "content-type": "application/json", **(headers or {})}
    if origin is not None:
        sent["origin"] = origin
    if cookie is not None:
        sent["cookie"] = f"{accounts.SESSION_COOKIE}={cookie}"
    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(),
             "query_string": b"", "scheme": scheme,
             "server": ("127.0.0.1", 8501), "client": (client, 5000), "root_path": "",
             "http_version": "1.1",
             "headers": [(k.encode(), v.encode()) for k, v in sent.items()]}
    messages = [{"type": "http.request", "body": raw, "more_body": False}]
    out: list[dict] = []

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message):
        out.append(message)

    # in a thread of its own: Playwright's sync API (the browser tests of the same session)
    # leaves an event loop running in this one
    failure: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(app(scope, receive, send))
        except BaseException as exc:  # noqa: BLE001 - raised again below
            failure.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(60)
    if failure:
        raise failure[0]
    start = next(m for m in out if m["type"] == "http.response.start")
    got: dict[str, str] = {}
    for k, v in start["headers"]:  # a repeated header (two Set-Cookie): its values, one a line
        name = k.decode().lower()
        got[name] = (got[name] + "\n" if name in got else "") + v.decode()
    payload = b"".join(m.get("body", b"") for m in out if m["type"] == "http.response.body")
    try:
        answer = json.loads(payload or b"{}")
    except ValueError:  # Starlette's plain-text 405
        answer = {"text": payload.decode()}
    return start["status"], got, answer
