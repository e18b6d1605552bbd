"""The rules judge (:mod:`needlework.rag.rules_judge`) behind an OpenAI-compatible endpoint.

A small HTTP server on 127.0.0.1 (the standard library's threading server, in a
thread of this process) that speaks the two routes a judge client uses:

- ``GET /v1/models``: the one model, :data:`~needlework.judges.local.RULES_MODEL`;
- ``POST /v1/chat/completions``: ``{"model", "messages", ...}`` answered with one
  ``chat.completion`` whose text is :func:`~needlework.rag.rules_judge.reply`. Another
  model name is a 404, a streamed request or a body that is not a chat a 400, each with
  an OpenAI-style ``{"error": {"message"}}``. Generation parameters are accepted and
  have no effect: the rules are deterministic. The reply's ``usage`` is counted with the
  project's token counter (:func:`needlework.judges.cost.prompt_tokens`, as a run's
  estimate counts), the rules having no tokenizer of their own.

So the RAG answers page and ``rag-eval`` use it like any judge, through the real
``openai`` client, the call cache and the parsers. :data:`RULES` keeps one server per
process for the app (:meth:`RulesJudges.start`, idempotent); from a terminal::

    python -m needlework serve-rules-judge     # prints the base URL and model name
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from needlework import tokens
from needlework.judges import cost
from needlework.judges.connection import LocalEndpoint
from needlework.judges.local import RULES_MODEL
from needlework.rag import rules_judge

MAX_BODY = 8 * 1024 * 1024


def _error(status: int, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"error": {"message": message, "type": "invalid_request_error", "code": status}}


def answer(body: bytes) -> tuple[int, dict[str, Any]]:
    """``(HTTP status, JSON body)`` for a chat completion request's ``body``."""
    try:
        request = json.loads(body or b"null")
    except (ValueError, UnicodeDecodeError):
        return _error(400, "the body is not JSON")
    if not isinstance(request, dict):
        return _error(400, "the body must be a JSON object")
    model = request.get("model")
    if model != RULES_MODEL:
        return _error(404, f"model {model!r}: this server has {RULES_MODEL!r} only")
    if request.get("stream"):
        return _error(400, "stream: this server answers whole completions only")
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages or not all(
            isinstance(m, dict) and isinstance(m.get("content", ""), str) for m in messages):
        return _error(400, "messages: expected a non-empty list of {role, content} objects")
    text = rules_judge.reply(messages)
    # it has no tokenizer: usage is counted as a run's estimate counts (same counter,
    # same chat-format tokens), so before and after agree in kind
    prompt, _ = cost.prompt_tokens([{"content": str(m.get("content") or "")} for m in messages])
    completion = tokens.count_tokens(text).tokens
    return 200, {
        "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion",
        "created": int(time.time()), "model": RULES_MODEL,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion},
    }


class _Handler(BaseHTTPRequestHandler):
    server_version = "needlework-rules"

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
        if self.path.rstrip("/") == "/v1/models":
            self._send(200, {"object": "list", "data": [
                {"id": RULES_MODEL, "object": "model", "created": 0, "owned_by": "needlework"}]})
        else:
            self._send(*_error(404, f"no route {self.path}"))

    def do_POST(self) -> None:  # noqa: N802
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(*_error(404, f"no route {self.path}"))
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._send(*_error(413, f"the body is over {MAX_BODY} bytes"))
            return
        self._send(*answer(self.rfile.read(length)))

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Quiet: requests carry data, and the app's log is not the place for it."""


@dataclass
class RulesServer(LocalEndpoint):
    """A running rules judge server (a thread of this process)."""

    httpd: ThreadingHTTPServer
    thread: threading.Thread
    model: str = RULES_MODEL

    @property
    def host(self) -> str:
        return str(self.httpd.server_address[0])

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def alive(self) -> bool:
        return self.thread.is_alive()

    def stop(self) -> None:
        """Stop serving and free the port (idempotent)."""
        if self.thread.is_alive():
            self.httpd.shutdown()
            self.thread.join(10)
        self.httpd.server_close()

    def __enter__(self) -> RulesServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


#: Where the rules judge listens when the port is free (``$NEEDLEWORK_RULES_JUDGE_PORT``
#: overrides it). A judge's answers are cached by its address, so one that stays put is
#: not asked again after a restart.
PREFERRED_PORT = 8565


def preferred_port() -> int:
    """:data:`PREFERRED_PORT`, or ``$NEEDLEWORK_RULES_JUDGE_PORT`` when set."""
    return int(os.environ.get("NEEDLEWORK_RULES_JUDGE_PORT") or PREFERRED_PORT)


def start_rules_server(host: str = "127.0.0.1", port: int | None = None) -> RulesServer:
    """Serve the rules judge on ``host:port`` in a daemon thread. ``port`` ``None``:
    :func:`preferred_port` when it is free, else a free port; ``0``: a free port."""
    if port is None:
        try:
            return start_rules_server(host, preferred_port())
        except OSError:  # taken (another app, another process of ours)
            port = 0
    httpd = ThreadingHTTPServer((host, port), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, name="needlework-rules-judge",
                              daemon=True)
    thread.start()
    return RulesServer(httpd, thread)


class RulesJudges:
    """One rules judge server per process, shared by every session of the app."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._server: RulesServer | None = None

    def start(self) -> RulesServer:
        """The running server, started now if there is none."""
        with self._lock:
            if self._server is None or not self._server.alive():
                self._server = start_rules_server()
            return self._server

    def running(self) -> RulesServer | None:
        with self._lock:
            server = self._server
        return server if server is not None and server.alive() else None

    def stop(self) -> None:
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.stop()


#: The rules judge server of this process.
RULES = RulesJudges()
