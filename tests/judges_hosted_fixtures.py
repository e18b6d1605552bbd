"""Real HTTP servers on 127.0.0.1 that behave as hosted judges do when things go wrong.

:class:`HostedJudgeServer` speaks the OpenAI chat-completions API for the real ``openai``
client, like :class:`tests.judges_fixtures.FakeJudgeServer`, with the behaviours of
issue 48 chosen by its arguments:

- ``reasoning=True``: an OpenAI reasoning model (gpt-5, o-series): a ``temperature``
  other than 1 is refused with OpenAI's exact HTTP 400 body, ``max_tokens`` too (use
  ``max_completion_tokens``), and each answer reports reasoning tokens
  (``completion_tokens_details.reasoning_tokens``);
- ``refuse_all``: every chat completion is refused with this HTTP 400 message;
- ``fail_every=k``: the k-th, 2k-th, ... distinct prompt (in the order they first
  arrive) gets HTTP 500 every time it is asked, retries included;
- ``cut_off``: the answer stops at the length limit (``finish_reason: length``);
- ``unsupported``: request parameters refused as OpenAI refuses one it does not know
  ("Unsupported parameter: ...", ``param`` set).

Every request is recorded (``requests``: body and the status answered), so a test can
recount each figure from what the server saw.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.judges_fixtures import chat_tokens, free_port, last_user_text, text_tokens

TEMPERATURE_REFUSAL = {"error": {
    "message": "Unsupported value: 'temperature' does not support 0 with this model. Only the "
               "default (1) value is supported.",
    "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}}
MAX_TOKENS_REFUSAL = {"error": {
    "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
               "'max_completion_tokens' instead.",
    "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}}
REASONING_TOKENS = 64


class HostedJudgeServer:
    """A small OpenAI-compatible server in a thread (use as a context manager)."""

    def __init__(self, answer: Callable[[dict[str, Any]], str], *, model: str = "judge",
                 reasoning: bool = False, refuse_all: str | None = None,
                 fail_every: int | None = None, cut_off: bool = False,
                 unsupported: tuple[str, ...] = ()) -> None:
        self.unsupported = unsupported
        self.answer = answer
        self.model = model
        self.reasoning = reasoning
        self.refuse_all = refuse_all
        self.fail_every = fail_every
        self.cut_off = cut_off
        self.requests: list[dict[str, Any]] = []
        self.prompts: list[str] = []  # distinct prompts, in the order they first came
        self.lock = threading.Lock()
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: Any, body: dict[str, Any]) -> None:
                with server.lock:
                    server.requests.append({"body": body, "status": status})
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                prompt = last_user_text(body)
                with server.lock:
                    if prompt not in server.prompts:
                        server.prompts.append(prompt)
                    ordinal = server.prompts.index(prompt) + 1
                if server.refuse_all is not None:
                    self._send(400, {"error": {"message": server.refuse_all,
                                               "type": "invalid_request_error", "param": None,
                                               "code": "request_refused"}}, body)
                    return
                for name in server.unsupported:
                    if name in body:
                        self._send(400, {"error": {
                            "message": f"Unsupported parameter: '{name}' is not supported with "
                                       "this model.", "type": "invalid_request_error",
                            "param": name, "code": "unsupported_parameter"}}, body)
                        return
                if server.reasoning and "max_tokens" in body:
                    self._send(400, MAX_TOKENS_REFUSAL, body)
                    return
                if server.reasoning and body.get("temperature", 1) != 1:
                    self._send(400, TEMPERATURE_REFUSAL, body)
                    return
                if server.fail_every and ordinal % server.fail_every == 0:
                    self._send(500, {"error": {"message": "The server had an error while "
                                               "processing your request. Sorry about that!",
                                               "type": "server_error"}}, body)
                    return
                text = "" if server.cut_off else server.answer(body)
                prompt_tokens = chat_tokens(body["messages"])
                thinking = REASONING_TOKENS if server.reasoning or server.cut_off else 0
                completion = text_tokens(text) + thinking
                self._send(200, {
                    "id": "cmpl-test", "object": "chat.completion", "created": 0,
                    "model": body.get("model"),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                 "finish_reason": "length" if server.cut_off else "stop"}],
                    "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                              "total_tokens": prompt_tokens + completion,
                              "completion_tokens_details": {"reasoning_tokens": thinking}}},
                    body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def answered(self) -> list[dict[str, Any]]:
        """The requests answered with 200, in order."""
        return [r for r in self.requests if r["status"] == 200]

    def failed_prompts(self) -> set[str]:
        """The prompts that never got a 200."""
        ok = {last_user_text(r["body"]) for r in self.answered()}
        return {last_user_text(r["body"]) for r in self.requests} - ok

    def __enter__(self) -> HostedJudgeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
