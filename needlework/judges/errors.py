"""What can go wrong talking to a judge, each as one line a person can act on.

Every :class:`JudgeError` has a ``kind`` (a stable word for code and tests) and a
message that names the endpoint and what to check. Messages are built from the
connection's *description* and the server's reply with the key removed
(:func:`needlework.judges.connection.redact`): a server that echoes the key back
cannot put it on a page or in a log through us.
"""

from __future__ import annotations

import re
from typing import Any

import openai

from needlework.judges.connection import Connection, redact

KINDS = ("server_down", "timeout", "bad_key", "wrong_model", "not_found", "rate_limited",
         "server_error", "bad_request", "cancelled", "config")
RETRYABLE_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
_SPACE = re.compile(r"\s+")


class JudgeError(RuntimeError):
    """A judge request failed; ``kind`` is one of :data:`KINDS`, ``status`` the HTTP status."""

    def __init__(self, kind: str, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


class JudgeCancelled(JudgeError):
    """The run was asked to stop; answers received before the stop are in the cache."""

    def __init__(self, message: str = "cancelled") -> None:
        super().__init__("cancelled", message)


def one_line(text: str, limit: int = 240) -> str:
    """Collapse whitespace and cut to ``limit`` characters (with an ellipsis)."""
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def server_message(exc: openai.APIStatusError) -> str:
    """The human part of an error reply: ``error.message``, ``detail``, or the body text."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            for name in ("message", "detail", "error"):
                if isinstance(inner.get(name), str):
                    return inner[name]
        if isinstance(inner, str):
            return inner
        if isinstance(body.get("detail"), str):
            return body["detail"]
    try:
        return exc.response.text or exc.message
    except Exception:  # a streamed body that cannot be read again
        return exc.message


def retryable(exc: BaseException) -> bool:
    """True for a timeout or an HTTP status worth retrying (408, 409, 429, 5xx)."""
    if isinstance(exc, openai.APITimeoutError):
        return True
    return isinstance(exc, openai.APIStatusError) and exc.status_code in RETRYABLE_STATUS


def mentions_model(text: str, model: str) -> bool:
    """Does an error text say that the model is unknown (not just any 'not found')?"""
    low = text.lower()
    if model and model.lower() in low:
        return True
    return "model" in low and any(w in low for w in ("not found", "does not exist", "not exist",
                                                      "unknown", "pinned", "no such", "invalid"))


def classify(exc: BaseException, connection: Connection, attempts: int = 1) -> JudgeError:
    """Turn an ``openai`` exception into a one-line :class:`JudgeError` (key removed)."""
    where = connection.endpoint
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    secrets = [connection.api_key()]
    if isinstance(exc, JudgeError):
        return exc
    if isinstance(exc, openai.APITimeoutError):
        return JudgeError("timeout", f"timeout: {where} gave no answer within "
                          f"{connection.timeout:g} s{tries} (a slow or overloaded server; raise "
                          "the timeout or lower the concurrency)")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = one_line(redact(str(cause or exc), secrets), 120)
        return JudgeError("server_down", f"server down: nothing answers at {where} ({detail}); "
                          "start the server or check the base URL")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        text = one_line(redact(server_message(exc), secrets))
        if status in (401, 403):
            source = connection.key_source()
            return JudgeError("bad_key", f"bad key: {where} refused the API key from {source} "
                              f"(HTTP {status}: {text})", status)
        if status == 429:
            return JudgeError("rate_limited", f"rate limited: {where} answered HTTP 429{tries} "
                              f"({text}); lower the concurrency or wait", status)
        if status in (400, 404, 422) and mentions_model(text, connection.model):
            return JudgeError("wrong_model", f"wrong model name: {where} does not serve "
                              f"{connection.model!r} (HTTP {status}: {text})", status)
        if status == 404:
            return JudgeError("not_found", f"not found: {where}/chat/completions does not exist "
                              f"(HTTP 404: {text}); the base URL usually ends in /v1", status)
        if status >= 500:
            return JudgeError("server_error", f"server error: {where} answered HTTP {status}"
                              f"{tries} ({text})", status)
        return JudgeError("bad_request", f"bad request: {where} answered HTTP {status} ({text})",
                          status)
    return JudgeError("server_error", f"unexpected error from {where}: {type(exc).__name__}: "
                      f"{one_line(redact(str(exc), secrets))}")


#: failures that concern the whole endpoint: the run stops at the first one
RUN_ERRORS = ("server_down", "bad_key", "wrong_model", "not_found", "config")
#: failures of one request (refused, timed out, a server error or rate limit after the
#: retries): that trial failed, the run goes on
ITEM_ERRORS = ("bad_request", "timeout", "server_error", "rate_limited")
#: a run whose first this many requests all failed, with no answer yet, stops
NO_ANSWER_LIMIT = 8
FAILURE_WORDS = {"bad_request": "refused", "timeout": "timed out", "server_error": "server error",
                 "rate_limited": "rate limited"}


def no_answer_error(failures: Any, sent: int) -> JudgeError:
    """The one-line error of a run in which no request got an answer: how many failed and
    the endpoint's sentence of the most common failure (key removed)."""
    failures = list(failures)
    if not failures:
        return JudgeError("server_error", "no answers: no request got an answer; nothing stored")
    kinds: dict[str, list[JudgeError]] = {}
    for exc in failures:
        kinds.setdefault(exc.kind, []).append(exc)
    kind, group = max(kinds.items(), key=lambda kv: len(kv[1]))
    word = FAILURE_WORDS.get(kind, kind.replace("_", " "))
    return JudgeError(kind, one_line(
        f"no answers: {len(failures)} of {sent} requests failed, {len(group)} {word}: "
        f"{group[0]}; nothing stored", 400), group[0].status)
