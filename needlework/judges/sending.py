"""The judge's requests (:mod:`needlework.judges.engine` runs a dataset through them): the
pending trials of a run sent through a bounded pool, each answer parsed and committed to
the cache by the calling thread as it arrives (:func:`send_pending`); one cached call
outside a run (:func:`ask`); the JSON schema an answer is asked in (:func:`answer_schema`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from needlework.judges import cache
from needlework.judges.client import Answer, JudgeClient
from needlework.judges.connection import Connection
from needlework.judges.errors import JudgeError
from needlework.judges.parse import Parsed, parse_score, parse_selection
from needlework.judges.plan import Trial
from needlework.judges.pool import save_answer, send_all
from needlework.judges.prompts import SCORE_HIGH, SCORE_LOW
from store import judges as store

Progress = Callable[[int, int], None]
ShouldStop = Callable[[], bool]


def parse_answer(trial: Trial, text: str) -> Parsed:
    """The parse of ``text`` for ``trial``'s mode."""
    if trial.mode == "selection":
        return parse_selection(text, len(trial.members))
    return parse_score(text, SCORE_LOW, SCORE_HIGH)


def send_pending(db: Any, client: JudgeClient, connection: Connection,
                 pending: dict[str, Trial], done: int, total: int,
                 errors: dict[str, JudgeError], progress: Progress | None,
                 should_stop: ShouldStop | None,
                 answered_before: int = 0) -> dict[str, dict[str, Any]]:
    """Send the pending trials through the bounded pool (:func:`needlework.judges.pool.send_all`,
    with its rules for failures and cancelling); cache each answer as it comes, under the
    key of the parameters it was asked with."""
    fresh: dict[str, dict[str, Any]] = {}
    if not pending:
        return fresh
    count = [done]

    def answered(key: str, trial: Trial, answer: Answer) -> None:
        parsed = parse_answer(trial, answer.text)
        params = answer.params if answer.params is not None else connection.params()
        saved = cache.connection_key(connection, trial.messages, params)
        save_answer(db, connection, saved, trial.messages, parsed, answer, params)
        fresh[key] = {"key": saved, "raw": answer.text, "prompt_tokens": answer.prompt_tokens,
                      "completion_tokens": answer.completion_tokens,
                      "latency_s": answer.latency_s, "finish_reason": answer.finish_reason,
                      "params": params, "reasoning_tokens": answer.reasoning_tokens}

    def one_done(_: str) -> None:
        count[0] += 1
        if progress is not None:
            progress(count[0], total)

    send_all(client, pending, concurrency=connection.concurrency,
             messages=lambda t: t.messages, schema=answer_schema, answered=answered,
             done=one_done, errors=errors, should_stop=should_stop,
             answered_before=answered_before, name="needlework-judge")
    return fresh


def answer_schema(trial: Trial) -> dict[str, Any]:
    """The JSON schema of a trial's answer (structured output, where asked for): the
    letter of the best response for a selection, a 1-10 rating for scoring; the parsers
    read these keys (``verdict``, ``score``) as they read the words."""
    if trial.mode == "selection":
        names = [chr(ord("A") + k) for k in range(len(trial.members))]
        return {"name": "selection", "schema": {
            "type": "object", "properties": {"verdict": {"type": "string", "enum": names}},
            "required": ["verdict"], "additionalProperties": False}}
    return {"name": "rating", "schema": {
        "type": "object", "properties": {"score": {"type": "number"}},
        "required": ["score"], "additionalProperties": False}}


def ask(db: Any, client: JudgeClient, messages: list[dict[str, str]],
        parse: Callable[[str], Parsed], *, should_stop: ShouldStop | None = None,
        max_tokens: int | None = None) -> tuple[str, Parsed, bool]:
    """One cached call outside a dataset run (the needle writer's rewrite and check):
    ``(raw answer, parse, came from the cache)``. The answer is committed at once."""
    conn = client.connection
    params = conn.params() if max_tokens is None else {**conn.params(), "max_tokens": max_tokens}
    digest = cache.prompt_hash(messages)
    key = cache.connection_key(conn, messages, client.effective_params(params))
    row = store.cached_calls(db, [key]).get(key)
    if row is not None:
        return row["raw"], parse(row["raw"]), True
    answer = client.complete(messages, max_tokens=max_tokens, should_stop=should_stop)
    parsed = parse(answer.text)
    if answer.params is not None:  # what it was really asked with (a refused one dropped)
        params = answer.params
        key = cache.connection_key(conn, messages, params)
    store.save_call(db, key, endpoint=conn.endpoint, model=conn.model, params=params,
                    prompt_hash=digest, raw=answer.text, parsed=parsed.as_dict(),
                    valid=parsed.valid, prompt_tokens=answer.prompt_tokens,
                    completion_tokens=answer.completion_tokens, latency_s=answer.latency_s,
                    attempts=answer.attempts, finish_reason=answer.finish_reason,
                    reasoning=answer.reasoning, reasoning_tokens=answer.reasoning_tokens)
    return answer.text, parsed, False
