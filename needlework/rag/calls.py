"""Judge calls for answer evaluation, through the judge engine's cache and client.

A :class:`Request` is one prompt with its parser. :func:`run_requests` sends a list of
them the way the judge engine sends trials (``needlework.judges.engine``):

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
  as a whole (server down, bad key, wrong model, timeouts or 5xx after the retries)
  goes up as :class:`~needlework.judges.errors.JudgeError` the same way; a request
  refused for its own content (HTTP 400) becomes an invalid answer with the reason;
- with ``connection.context_window`` set, a prompt that does not fit the window less
  the answer's ``max_tokens`` and a template margin is **not sent** and is reported as
  too long (counted token by token with the project's counter, whose method is kept).

Cached answers are re-parsed on every run, so a parser fix applies without a request.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from needlework.judges import cache
from needlework.judges.client import Answer, JudgeClient
from needlework.judges.connection import Connection
from needlework.judges.context import TEMPLATE_MARGIN, count
from needlework.judges.errors import JudgeCancelled, JudgeError
from needlework.judges.parse import Parsed, invalid
from store import judges as store

ItemErrors = ("bad_request",)  # refused for the prompt itself: an invalid answer, the run goes on
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

    def as_dict(self) -> dict[str, Any]:
        out = {"key": self.key, "raw": self.raw, "parsed": self.parsed.as_dict(),
               "cached": self.cached, "error": self.error}
        return {**out, "reasoning": self.reasoning} if self.reasoning else out


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

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def request_key(connection: Connection, messages: list[dict[str, str]]) -> str:
    """The call-cache key of ``messages`` sent through ``connection``."""
    return cache.connection_key(connection, messages)


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
    """Answer every request (cache first); ``progress(done, total)`` counts requests."""
    stats = CallStats()
    keys = {r.id: request_key(connection, r.messages) for r in requests}
    skipped = {r.id: reason for r in requests if (reason := too_long(connection, r.messages))}
    stats.too_long = len(skipped)
    found = store.cached_calls(db, [keys[r.id] for r in requests if r.id not in skipped])
    pending: dict[str, Request] = {}
    for r in requests:
        key = keys[r.id]
        if r.id not in skipped and key not in found and key not in pending:
            pending[key] = r
    total = len(requests)
    waiting = {r.id for r in requests if keys[r.id] in pending}
    done = total - len(waiting)
    stats.cached = sum(1 for r in requests if r.id not in skipped and keys[r.id] in found)
    if progress is not None:
        progress(done, total)
    errors: dict[str, str] = {}
    own = client is None
    client = client or JudgeClient(connection)
    before = (client.requests, client.retries)
    counter = _Counter(requests, keys, done, total, progress)
    try:
        fresh = _send(db, client, connection, pending, errors, counter, should_stop)
    finally:
        stats.requests = client.requests - before[0]
        stats.retries = client.retries - before[1]
        if own:
            client.close()
    found.update(fresh)
    stats.sent, stats.errors = len(pending), len(errors)
    for row in fresh.values():
        if row["prompt_tokens"] is None and row["completion_tokens"] is None:
            stats.unreported += 1
        stats.prompt_tokens += row["prompt_tokens"] or 0
        stats.completion_tokens += row["completion_tokens"] or 0
    outcomes: dict[str, Outcome] = {}
    for r in requests:
        key = keys[r.id]
        if r.id in skipped:
            outcomes[r.id] = Outcome(r.id, key, None, invalid(skipped[r.id], "too long"), False,
                                     skipped[r.id])
        elif key in found:
            raw = found[key]["raw"]
            outcomes[r.id] = Outcome(r.id, key, raw, r.parse(raw), key not in fresh,
                                     reasoning=found[key].get("reasoning"))
        else:
            reason = f"no answer: {errors.get(key, 'not sent')}"
            outcomes[r.id] = Outcome(r.id, key, None, invalid(reason, "error"), False, reason)
    return outcomes, stats


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
          errors: dict[str, str], counter: _Counter,
          should_stop: ShouldStop | None) -> dict[str, dict[str, Any]]:
    fresh: dict[str, dict[str, Any]] = {}
    queue = list(pending.items())
    failure: JudgeError | None = None
    stopped = False
    with ThreadPoolExecutor(max_workers=connection.concurrency,
                            thread_name_prefix="needlework-rag-judge") as pool:
        running: dict[Future[Answer], tuple[str, Request]] = {}
        while queue or running:
            while queue and len(running) < connection.concurrency and failure is None \
                    and not stopped:
                if should_stop is not None and should_stop():
                    stopped = True
                    break
                key, request = queue.pop(0)
                running[pool.submit(client.complete, request.messages, should_stop=should_stop,
                                    schema=request.schema)] = (key, request)
            if not running:
                break
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                key, request = running.pop(future)
                try:
                    answer = future.result()
                except JudgeCancelled:
                    stopped = True
                    continue
                except JudgeError as exc:
                    if exc.kind in ItemErrors:
                        errors[key] = str(exc)
                        counter.answered(key)
                    else:
                        failure = failure or exc
                    continue
                parsed = request.parse(answer.text)
                store.save_call(db, key, endpoint=connection.endpoint, model=connection.model,
                                params=connection.params(),
                                prompt_hash=cache.prompt_hash(request.messages), raw=answer.text,
                                parsed=parsed.as_dict(), valid=parsed.valid,
                                prompt_tokens=answer.prompt_tokens,
                                completion_tokens=answer.completion_tokens,
                                latency_s=answer.latency_s, attempts=answer.attempts,
                                finish_reason=answer.finish_reason,
                                reasoning=answer.reasoning)
                fresh[key] = {"key": key, "raw": answer.text, "reasoning": answer.reasoning,
                              "prompt_tokens": answer.prompt_tokens,
                              "completion_tokens": answer.completion_tokens}
                counter.answered(key)
    if failure is not None:
        raise failure
    if stopped:
        raise JudgeCancelled(f"cancelled: {len(fresh)} new answers saved, {len(queue)} requests "
                             "not sent; a re-run resumes from the cache")
    return fresh
