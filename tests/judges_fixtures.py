"""Real HTTP servers on 127.0.0.1 for the judge tests (no mocked client).

:class:`FakeJudgeServer` speaks enough of the OpenAI chat-completions API for the
real ``openai`` client: ``POST /v1/chat/completions`` answers with ``answer(body)``,
or with a scripted status (500, 429, ...) for the first requests, after an optional
delay; ``GET /v1/models`` lists ``models``. Every request is recorded (path,
headers, body) so tests can count requests and look for leaked keys. Its answers report
usage as OpenAI counts it (:func:`chat_tokens`, :func:`text_tokens`).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from needlework.tokens import count_tokens


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def last_user_text(body: dict[str, Any]) -> str:
    return body["messages"][-1]["content"]


def text_tokens(text: str) -> int:
    """Tokens of ``text`` by the project's counter (o200k_base where it is available)."""
    return count_tokens(text).tokens


def chat_tokens(messages: list[dict[str, Any]]) -> int:
    """A chat's prompt tokens as OpenAI counts them: each message's content, 3 tokens of
    format per message and 3 that prime the reply."""
    return sum(text_tokens(str(m.get("content") or "")) + 3 for m in messages) + 3


class FakeJudgeServer:
    """A small OpenAI-compatible server in a thread (use as a context manager)."""

    def __init__(self, answer: Callable[[dict[str, Any]], str] = lambda body: "[[A]]", *,
                 statuses: list[int] | None = None, delay: float = 0.0,
                 models: tuple[str, ...] = ("judge",), model: str | None = "judge",
                 require_key: str | None = None, error_body: Callable[[int, dict], Any] | None = None,
                 retry_after: str | None = None, refuse: str | None = None) -> None:
        self.answer = answer
        self.statuses = list(statuses or [])
        self.delay = delay
        self.models = models
        self.model = model
        self.require_key = require_key
        self.error_body = error_body
        self.retry_after = retry_after
        self.refuse = refuse  # a request parameter refused with a 400, as OpenAI refuses
        # max_tokens for its reasoning models
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first (a timeout or a cancel under test)

            def do_GET(self) -> None:
                with server.lock:
                    server.requests.append({"path": self.path, "headers": dict(self.headers), "body": None})
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in server.models]})
                else:
                    self._send(404, {"error": {"message": "no such path"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    status = server.statuses.pop(0) if server.statuses else 200
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    if server.delay:
                        time.sleep(server.delay)
                    if not self.path.rstrip("/").endswith("/chat/completions"):
                        self._send(404, {"error": {"message": f"no route {self.path}"}})
                        return
                    if server.require_key is not None and \
                            self.headers.get("authorization") != f"Bearer {server.require_key}":
                        self._send(401, {"error": {"message": "Incorrect API key provided",
                                                   "type": "invalid_request_error"}})
                        return
                    if server.model is not None and body.get("model") != server.model:
                        self._send(404, {"error": {"message": f"The model `{body.get('model')}` does not exist",
                                                   "code": "model_not_found"}})
                        return
                    if server.refuse is not None and server.refuse in body:
                        other = ("max_completion_tokens" if server.refuse == "max_tokens"
                                 else "max_tokens")
                        self._send(400, {"error": {
                            "message": f"Unsupported parameter: '{server.refuse}' is not supported "
                                       f"with this model. Use '{other}' instead.",
                            "type": "invalid_request_error", "param": server.refuse,
                            "code": "unsupported_parameter"}})
                        return
                    if status != 200:
                        payload = (server.error_body(status, body) if server.error_body
                                   else {"error": {"message": f"scripted {status}"}})
                        headers = {"retry-after": server.retry_after} if server.retry_after and status == 429 else None
                        self._send(status, payload, headers)
                        return
                    text = server.answer(body)
                    # an answer may be a message (a dict): content plus other fields, such
                    # as a reasoning model's reasoning_content
                    message = ({"role": "assistant", **text} if isinstance(text, dict)
                               else {"role": "assistant", "content": text})
                    written = (message.get("content") or "") + str(
                        message.get("reasoning_content") or "")
                    prompt, completion = chat_tokens(body["messages"]), text_tokens(written)
                    self._send(200, {
                        "id": "cmpl-test", "object": "chat.completion", "created": 0,
                        "model": body.get("model"),
                        "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                  "total_tokens": prompt + completion}})
                finally:
                    with server.lock:
                        server.in_flight -= 1

        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["body"] is not None]

    def __enter__(self) -> FakeJudgeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def build_tiny_causal_lm(folder) -> str:
    """A tiny random ``LlamaForCausalLM`` with a locally trained tokenizer and a chat
    template, saved to ``folder`` (no hub); returns the folder as a string."""
    import torch  # noqa: PLC0415
    from transformers import LlamaConfig, LlamaForCausalLM  # noqa: PLC0415

    from needlework.rewards.demo_model import build_tokenizer  # noqa: PLC0415

    texts = ["Which response is better? [[A]] [[B]] Response A Response B Rating: 7",
             "The quick brown fox jumps over the lazy dog. Thanks for reading, friend."] * 20
    tokenizer = build_tokenizer(texts, vocab_size=400, model_max_length=2048)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, intermediate_size=64,
                         max_position_embeddings=2048, pad_token_id=tokenizer.pad_token_id,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    model = LlamaForCausalLM(config)
    model.generation_config.max_new_tokens = 8
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)
