"""The judge's requests sent through a bounded pool, for every kind of run (the pairs'
trials, :mod:`needlework.judges.sending`; the RAG answers' metrics, :mod:`needlework.rag.calls`):
at most ``connection.concurrency`` in flight, each answer handed to the caller on the calling
thread as it arrives (so it is committed to the cache at once), the run stopped by the
first error that no other request can get past, or by too many failures before any answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

from needlework.judges import cache
from needlework.judges.client import Answer, JudgeClient
from needlework.judges.connection import Connection
from needlework.judges.errors import (
    NO_ANSWER_LIMIT,
    RUN_ERRORS,
    JudgeCancelled,
    JudgeError,
    no_answer_error,
)
from needlework.judges.parse import Parsed
from store import judges as store

R = TypeVar("R")
ShouldStop = Callable[[], bool]


def send_all(client: JudgeClient, pending: Mapping[str, R], *, concurrency: int,
             messages: Callable[[R], list[dict[str, str]]],
             schema: Callable[[R], dict[str, Any] | None],
             answered: Callable[[str, R, Answer], None], done: Callable[[str], None],
             errors: dict[str, JudgeError], should_stop: ShouldStop | None,
             answered_before: int = 0, name: str = "needlework-judge") -> int:
    """Send each of ``pending`` (by key) and return how many got an answer.

    ``answered(key, request, answer)`` takes each answer as it comes; a request that fails
    on its own goes into ``errors`` (never to ``answered``); ``done(key)`` follows either.
    An error of :data:`~needlework.judges.errors.RUN_ERRORS` stops the run and is raised
    once the requests in flight are back, and so is the failure
    :data:`~needlework.judges.errors.NO_ANSWER_LIMIT` failed requests before any answer
    make (``answered_before``: answers the run already had from the cache). ``should_stop``
    (or a request cancelled) ends the run with :class:`JudgeCancelled`, saying how many
    answers came and how many requests were not sent."""
    queue = list(pending.items())
    failure: JudgeError | None = None
    stopped = False
    got = 0
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=name) as pool:
        running: dict[Future[Answer], tuple[str, R]] = {}
        while queue or running:
            while queue and len(running) < concurrency and failure is None and not stopped:
                if should_stop is not None and should_stop():
                    stopped = True
                    break
                key, request = queue.pop(0)
                future = pool.submit(client.complete, messages(request), should_stop=should_stop,
                                     schema=schema(request))
                running[future] = (key, request)
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
                    if exc.kind in RUN_ERRORS:
                        failure = failure or exc
                        continue
                    errors[key] = exc
                    done(key)
                    if not got and not answered_before and len(errors) >= NO_ANSWER_LIMIT:
                        failure = failure or no_answer_error(errors.values(), len(errors))
                    continue
                answered(key, request, answer)
                got += 1
                done(key)
    if failure is not None:
        raise failure
    if stopped:
        raise JudgeCancelled(f"cancelled: {got} new answers saved, {len(queue)} requests not "
                             "sent; a re-run resumes from the cache")
    return got


def save_answer(db: Any, connection: Connection, key: str, messages: list[dict[str, str]],
                parsed: Parsed, answer: Answer, params: dict[str, Any]) -> None:
    """Commit one answer to the judge cache under ``key`` (the parameters it was asked
    with): the raw text, what was read from it, the tokens, the time, the reasoning."""
    store.save_call(db, key, endpoint=connection.endpoint, model=connection.model,
                    params=params, prompt_hash=cache.prompt_hash(messages), raw=answer.text,
                    parsed=parsed.as_dict(), valid=parsed.valid,
                    prompt_tokens=answer.prompt_tokens,
                    completion_tokens=answer.completion_tokens, latency_s=answer.latency_s,
                    attempts=answer.attempts, finish_reason=answer.finish_reason,
                    reasoning=answer.reasoning, reasoning_tokens=answer.reasoning_tokens)
