"""Judge calls for answer evaluation, through the judge engine's cache and client.

A :class:`Request` is one prompt with its parser. :func:`run_requests` sends a list of
them the way the judge engine sends trials (``needlework.judges.sending``):

- each request's cache key is computed with :func:`needlework.judges.cache.connection_key`
  (endpoint, model, generation parameters, prompt hash; the judges this project serves
  keyed without their port); keys already answered in
  ``judge_calls`` are not sent again, so a re-run makes no request and a killed run
  resumes; two requests with the same prompt are sent once;
- the rest go through a bounded pool of ``connection.concurrency`` threads, at most
  that many in flight; each answer is committed to the cache by the calling thread as
  soon as it arrives (the pool threads only talk HTTP);
- ``should_stop()`` is checked before each submission and between retries: on a stop
  no new request starts, those in flight finish and are cached, and
  :class:`~needlework.judges.errors.JudgeCancelled` goes up; a failure of the endpoint
  as a whole (:data:`~needlework.judges.errors.RUN_ERRORS`: server down, bad key, wrong
  model, no such path) goes up as :class:`~needlework.judges.errors.JudgeError` the same
  way;
- a request that fails on its own (refused with a 4xx, timed out, a 5xx or 429 after the
  retries) is **not an answer**: it is never cached (a re-run asks again), its outcome has
  no ``raw`` text, ``failure`` names the kind (:data:`FAILURE_KINDS`) and ``error`` the
  endpoint's sentence (one line, key removed); :class:`CallStats` counts them by kind.
  When no request gets an answer (or the first
  :data:`~needlework.judges.errors.NO_ANSWER_LIMIT` sent all fail before any answer, with
  none from the cache) a one-line :class:`~needlework.judges.errors.JudgeError` goes up
  (:func:`~needlework.judges.errors.no_answer_error`): a run with no answer stores nothing;
- a parameter the endpoint refuses as unsupported (``temperature`` for OpenAI's reasoning
  models) is dropped by the client and remembered per endpoint as the judge engine does;
  each answer is cached under the key of the parameters it was really asked with;
- with ``connection.context_window`` set, a prompt that does not fit the window less
  the answer's ``max_tokens`` and a template margin is **not sent** and is reported as
  too long (counted token by token with the project's counter, whose method is kept).

Cached answers are re-parsed on every run, so a parser fix applies without a request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from needlework.judges import cache
from needlework.judges.client import Answer, JudgeClient
from needlework.judges.connection import Connection
from needlework.judges.context import TEMPLATE_MARGIN, count
from needlework.judges.errors import (
    FAILURE_WORDS,
    JudgeError,
    no_answer_error,
    one_line,
)
from needlework.judges.local import cache_endpoint
from needlework.judges.parse import Parsed, invalid
from needlework.judges.pool import save_answer, send_all
from store import judges as store

#: How failed requests are counted apart, by the error's kind: refused (a 4xx that is no
#: answer), timed out, and the rest (server errors, rate limits after the retries).
FAILURE_KINDS = ("refused", "timed_out", "failed")
Progress = Callable[[int, int], None]
ShouldStop = Callable[[], bool]


@dataclass(frozen=True)
class Request:
    """One judge prompt: ``id`` is the caller's name for it, ``parse`` reads the answer,
    ``schema`` is the answer's JSON schema (sent where the connection asks for structured
    output)."""

    id: str
    messages: list[dict[str, str]]
    parse: Callable[[str], Parsed]
    schema: dict[str, Any] | None = None


@dataclass(frozen=True)
class Outcome:
    """A request's answer: ``raw`` text (``None`` when none came), its parse, the cache
    key, whether it came from the cache, why there is no answer (``error``) and what the
    judge reasoned before answering (``reasoning``, never parsed)."""

    id: str
    key: str
    raw: str | None
    parsed: Parsed
    cached: bool
    error: str | None = None
    reasoning: str | None = None
    failure: str | None = None  # one of FAILURE_KINDS when the request failed

    @property
    def failed(self) -> bool:
        """The request was sent and got no answer (not an answer: counted apart)."""
        return self.failure is not None

    def as_dict(self) -> dict[str, Any]:
        out = {"key": self.key, "raw": self.raw, "parsed": self.parsed.as_dict(),
               "cached": self.cached, "error": self.error}
        if self.failure is not None:
            out["failure"] = self.failure
        return {**out, "reasoning": self.reasoning} if self.reasoning else out


def failure_kind(error: JudgeError) -> str:
    """Which of :data:`FAILURE_KINDS` a failed request counts as."""
    if error.kind == "bad_request":
        return "refused"
    if error.kind == "timeout":
        return "timed_out"
    return "failed"


def failure_message(error: JudgeError) -> str:
    """The endpoint's sentence for a failed request, in one line (the key was removed
    when the error was made: :func:`needlework.judges.errors.classify`)."""
    word = FAILURE_WORDS.get(error.kind, error.kind.replace("_", " "))
    return one_line(f"no answer ({word}): {error}")


@dataclass
class CallStats:
    """What a batch of requests cost: the usage the server reported for the answers sent
    (``unreported``: answers that came without it)."""

    requests: int = 0
    retries: int = 0
    cached: int = 0
    sent: int = 0
    errors: int = 0
    too_long: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    unreported: int = 0
    refused: int = 0
    timed_out: int = 0
    failed: int = 0
    #: one example sentence per failure kind (:data:`FAILURE_KINDS`), one line, no key
    failure_messages: dict[str, str] = field(default_factory=dict)
    #: parameters left to the provider's default (``JudgeClient.provider_defaults``)
    provider_defaults: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["failure_messages"] = dict(self.failure_messages)
        out["provider_defaults"] = list(self.provider_defaults)
        return out

    def add_failure(self, error: JudgeError) -> None:
        kind = failure_kind(error)
        setattr(self, kind, getattr(self, kind) + 1)
        self.failure_messages.setdefault(kind, failure_message(error))


def failure_words(calls: Mapping[str, Any]) -> str | None:
    """The failed requests of a :meth:`CallStats.as_dict` in one line (``None`` when none
    failed): ``3 requests failed, not answers: 1 refused, 2 timed out; refused: "..."``."""
    counts = [(k, int(calls.get(k) or 0)) for k in FAILURE_KINDS]
    total = sum(n for _, n in counts)
    if not total:
        return None
    parts = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in counts if n)
    messages = calls.get("failure_messages") or {}
    said = "; ".join(f"{k.replace('_', ' ')}: {messages[k]}" for k, _ in counts
                     if k in messages)
    return (f"{total} request{'s' if total != 1 else ''} failed, not answers: {parts}"
            + (f"; {said}" if said else ""))


def request_key(connection: Connection, messages: list[dict[str, str]],
                params: Mapping[str, Any] | None = None) -> str:
    """The call-cache key of ``messages`` sent through ``connection`` (``params``: the
    parameters sent, default the connection's)."""
    return cache.connection_key(connection, messages, params)


def too_long(connection: Connection, messages: list[dict[str, str]]) -> str | None:
    """Why ``messages`` do not fit the judge's window, or ``None`` (always ``None`` when
    the window is unknown)."""
    window = connection.context_window
    if window is None:
        return None
    tokens, method = count("\n".join(m["content"] for m in messages))
    room = window - connection.max_tokens - TEMPLATE_MARGIN
    if tokens <= room:
        return None
    return (f"prompt of {tokens} tokens ({method}) is over the {room} tokens the judge's "
            f"window of {window} leaves: not sent")


def run_requests(db: Any, connection: Connection, requests: Sequence[Request], *,
                 progress: Progress | None = None, should_stop: ShouldStop | None = None,
                 client: JudgeClient | None = None) -> tuple[dict[str, Outcome], CallStats]:
    """Answer every request (cache first); ``progress(done, total)`` counts requests.
    Raises :class:`JudgeError` when no request got an answer (see the module docstring)."""
    stats = CallStats()
    own = client is None
    client = client or JudgeClient(connection)
    where = cache_endpoint(connection.endpoint, connection.model)
    client.assume_refused(store.refusals(db, where, connection.model))
    keys, skipped, found, pending = _lookup(db, connection, requests, client.effective_params())
    total = len(requests)
    waiting = {r.id for r in requests if keys[r.id] in pending}
    done = total - len(waiting)
    stats.too_long = len(skipped)
    stats.cached = sum(1 for r in requests if r.id not in skipped and keys[r.id] in found)
    if progress is not None:
        progress(done, total)
    errors: dict[str, JudgeError] = {}
    before = (client.requests, client.retries)
    counter = _Counter(requests, keys, done, total, progress)
    try:
        fresh = _send(db, client, connection, pending, errors, counter, should_stop,
                      answered_before=len(found))
    finally:
        stats.requests = client.requests - before[0]
        stats.retries = client.retries - before[1]
        stats.provider_defaults = client.provider_defaults()
        for entry in stats.provider_defaults:
            store.save_refusal(db, where, connection.model, entry["param"], entry["refused"],
                               entry["message"])
        if own:
            client.close()
    if pending and not fresh and not found:
        raise no_answer_error(errors.values(), len(pending))
    _count_sent(stats, len(pending), errors, fresh)
    return _outcomes(requests, keys, skipped, found, fresh, errors), stats


def _lookup(db: Any, connection: Connection, requests: Sequence[Request],
            params: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str],
                                                dict[str, dict[str, Any]], dict[str, Request]]:
    """``(keys, skipped, found, pending)``: each request's cache key by id, the requests
    too long to send (id: why), the cached answers by key, and the requests to send by
    key (one per prompt)."""
    keys = {r.id: request_key(connection, r.messages, params) for r in requests}
    skipped = {r.id: reason for r in requests if (reason := too_long(connection, r.messages))}
    found = store.cached_calls(db, [keys[r.id] for r in requests if r.id not in skipped])
    pending: dict[str, Request] = {}
    for r in requests:
        key = keys[r.id]
        if r.id not in skipped and key not in found and key not in pending:
            pending[key] = r
    return keys, skipped, found, pending


def _count_sent(stats: CallStats, sent: int, errors: Mapping[str, JudgeError],
                fresh: Mapping[str, Any]) -> None:
    """Add the requests sent, their failures by kind and their tokens to ``stats``."""
    stats.sent, stats.errors = sent, len(errors)
    for error in errors.values():
        stats.add_failure(error)
    for row in fresh.values():
        if row["prompt_tokens"] is None and row["completion_tokens"] is None:
            stats.unreported += 1
        stats.prompt_tokens += row["prompt_tokens"] or 0
        stats.completion_tokens += row["completion_tokens"] or 0


def _outcomes(requests: Sequence[Request], keys: Mapping[str, str], skipped: Mapping[str, str],
              found: Mapping[str, Any], fresh: Mapping[str, Any],
              errors: Mapping[str, JudgeError]) -> dict[str, Outcome]:
    """One :class:`Outcome` per request: too long, answered (now or from the cache) or
    failed."""
    outcomes: dict[str, Outcome] = {}
    for r in requests:
        key = keys[r.id]
        if r.id in skipped:
            outcomes[r.id] = Outcome(r.id, key, None, invalid(skipped[r.id], "too long"), False,
                                     skipped[r.id])
        elif key in fresh or key in found:
            row = fresh.get(key) or found[key]
            raw = row["raw"]
            outcomes[r.id] = Outcome(r.id, row.get("key", key), raw, r.parse(raw),
                                     key not in fresh, reasoning=row.get("reasoning"))
        else:
            sent_error = errors.get(key)
            reason = (failure_message(sent_error) if sent_error is not None
                      else "no answer: not sent")
            outcomes[r.id] = Outcome(r.id, key, None, invalid(reason, "error"), False, reason,
                                     failure=failure_kind(sent_error) if sent_error is not None
                                     else "failed")
    return outcomes


class _Counter:
    """Progress over requests: a fresh answer completes every request with its key."""

    def __init__(self, requests: Sequence[Request], keys: dict[str, str], done: int, total: int,
                 progress: Progress | None) -> None:
        self.per_key: dict[str, int] = {}
        for r in requests:
            self.per_key[keys[r.id]] = self.per_key.get(keys[r.id], 0) + 1
        self.done, self.total, self.progress = done, total, progress

    def answered(self, key: str) -> None:
        self.done += self.per_key.get(key, 1)
        if self.progress is not None:
            self.progress(min(self.done, self.total), self.total)


def _send(db: Any, client: JudgeClient, connection: Connection, pending: dict[str, Request],
          errors: dict[str, JudgeError], counter: _Counter,
          should_stop: ShouldStop | None, answered_before: int = 0) -> dict[str, dict[str, Any]]:
    """Send ``pending`` through the bounded pool (:func:`needlework.judges.pool.send_all`,
    with its rules for failures and cancelling); cache each answer as it comes, under the
    key of the parameters it was asked with (found under its planned key in the result)."""
    fresh: dict[str, dict[str, Any]] = {}

    def answered(key: str, request: Request, answer: Answer) -> None:
        parsed = request.parse(answer.text)
        params = answer.params if answer.params is not None else connection.params()
        saved = request_key(connection, request.messages, params)
        save_answer(db, connection, saved, request.messages, parsed, answer, params)
        fresh[key] = {"key": saved, "raw": answer.text, "reasoning": answer.reasoning,
                      "prompt_tokens": answer.prompt_tokens,
                      "completion_tokens": answer.completion_tokens}

    send_all(client, pending, concurrency=connection.concurrency,
             messages=lambda r: r.messages, schema=lambda r: r.schema, answered=answered,
             done=counter.answered, errors=errors, should_stop=should_stop,
             answered_before=answered_before, name="needlework-rag-judge")
    return fresh
