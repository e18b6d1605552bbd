"""One chat completion at a time, through the real ``openai`` client, with retries.

:class:`JudgeClient` wraps ``openai.OpenAI`` (its own retries turned off) and adds:

- retries on timeouts (not from a judge served on this machine: see ``served_here``),
  408/409/429 and 5xx answers, with exponential backoff and
  full jitter (``delay = uniform(0.5, 1) × min(cap, base × 2^attempt)``), honouring a
  ``Retry-After`` header up to the cap;
- a stop check (``should_stop()``) between attempts and during the waits, so a
  cancelled run ends within a fraction of a second plus one in-flight request;
- a request counter (``requests``), thread-safe: what the benchmark and the
  resume tests count;
- the answer's length limit under the name the endpoint takes: ``max_tokens``, or
  ``max_completion_tokens`` (OpenAI's reasoning models refuse the first). With the
  connection's ``token_param`` ``auto`` the first refusal naming the parameter switches
  this client to the other name for good, and the request goes again at once;
- reasoning kept apart from the answer: a ``reasoning_content`` (vLLM, DeepSeek) or
  ``reasoning`` (Ollama, OpenRouter) field of the message, and ``<think>…</think>``
  blocks in its text (an unclosed one is all reasoning), become :attr:`Answer.reasoning`;
  :attr:`Answer.text` is what is left, the only text a parser reads;
- structured output: with the connection's ``structured`` on, a prompt's JSON schema goes
  as ``response_format`` (``json_schema``, strict); an endpoint that refuses the
  parameter is asked without it from then on (the prompts ask for the same JSON in
  words, and the parsers read it either way);
- any other optional parameter the endpoint refuses as unsupported (OpenAI's reasoning
  models answer ``temperature`` 0 with HTTP 400, ``param: temperature``, "Only the
  default (1) value is supported."; the same for ``top_p``, ``seed``,
  ``reasoning_effort``) is dropped on the first refusal, for every later request of this
  client, and the request goes again at once: :attr:`JudgeClient.dropped` holds each
  dropped parameter with the value that was refused, :meth:`JudgeClient.provider_defaults`
  says so in words, and :meth:`JudgeClient.effective_params` is what a cache key must
  hold (a request sent without ``temperature`` is not the one sent with it);
- ``reasoning_effort`` sent only when the connection sets it.

It is safe to share between the threads of one request pool.

:func:`check_connection` checks an endpoint with one tiny chat completion, and, when
that fails in a way that could be a wrong model name, asks ``/models`` as a second
opinion. It does not rely on ``/models`` alone: ``transformers serve`` answers it
with a 500 for a local model folder while its chat completions work.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, cast

import openai

from needlework.judges.connection import NO_KEY, Connection, redact
from needlework.judges.errors import (
    JudgeCancelled,
    JudgeError,
    classify,
    one_line,
    retryable,
    server_message,
)
from needlework.judges.local import LOCAL_ENDPOINT, cache_endpoint

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

Message = dict[str, str]
ShouldStop = Callable[[], bool]


@dataclass(frozen=True)
class Answer:
    """A judge's answer: the text (reasoning removed), its reasoning, and what it cost."""

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str | None
    latency_s: float
    attempts: int
    reasoning: str | None = None
    #: the generation parameters this answer was asked with (:meth:`JudgeClient.effective_params`)
    params: dict[str, Any] | None = None
    #: the reasoning tokens the server reported among the completion tokens, if it did
    reasoning_tokens: int | None = None
    #: the length limit the request went with
    budget: int | None = None

    @property
    def cut_off(self) -> bool:
        """Whether the answer stopped at the length limit (``finish_reason`` ``length``)."""
        return self.finish_reason == "length"


_THINK = re.compile(r"<think>(.*?)</think>", re.S | re.I)
_OPEN_THINK = re.compile(r"<think>(.*)$", re.S | re.I)
TOKEN_PARAMS = ("max_tokens", "max_completion_tokens")
#: the request's parameters that are never dropped (the length limit switches its name instead)
KEPT = frozenset({"model", "messages"})
#: a dropped request parameter → the key of :meth:`Connection.params` it stands for
PARAM_KEYS = {"response_format": "structured"}
_REFUSAL_WORDS = ("unsupported", "not supported", "unrecognized", "unknown", "instead",
                  "only the default", "does not support")


def split_reasoning(text: str) -> tuple[str, str | None]:
    """``(answer, reasoning)``: the ``<think>`` blocks of ``text`` taken out (joined, in
    order) and what is left, stripped; an unclosed ``<think>`` runs to the end (a reasoning
    cut by the length limit: no answer)."""
    found = [m.strip() for m in _THINK.findall(text)]
    rest = _THINK.sub("", text)
    if (m := _OPEN_THINK.search(rest)) is not None:
        found.append(m.group(1).strip())
        rest = rest[:m.start()]
    if not found:
        return text, None
    return rest.strip(), "\n\n".join(part for part in found if part) or None


def refused_parameter(exc: BaseException, name: str) -> bool:
    """Whether ``exc`` is an endpoint refusing the request parameter ``name`` (a 400 whose
    message names it as unsupported, e.g. OpenAI's "Unsupported parameter: 'max_tokens'
    is not supported with this model. Use 'max_completion_tokens' instead.")."""
    if not isinstance(exc, openai.BadRequestError):
        return False
    if getattr(exc, "param", None) == name:
        return True
    text = str(exc).lower()
    return name in text and any(w in text for w in _REFUSAL_WORDS)


def refused_among(exc: BaseException, sent: Mapping[str, Any]) -> str | None:
    """The parameter of the request ``sent`` that ``exc`` refuses as unsupported (the
    error's ``param`` first, then its message, the length limit's name last: "use
    'max_tokens' instead" names the one it wants), or ``None``."""
    if not isinstance(exc, openai.BadRequestError):
        return None
    names = sorted((k for k in sent if k not in KEPT), key=lambda k: k in TOKEN_PARAMS)
    param = getattr(exc, "param", None)
    if isinstance(param, str) and param in names:
        return param
    return next((k for k in names if refused_parameter(exc, k)), None)


def _value_words(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict):
        return str(value.get("type") or "a schema")
    return str(value)


def default_words(name: str, refused: Any) -> str:
    """``temperature: provider default (refused 0)``."""
    return f"{name}: provider default (refused {_value_words(refused)})"


class JudgeClient:
    """A retrying chat-completions client for one :class:`Connection`."""

    def __init__(self, connection: Connection, *, backoff_base: float = 0.5,
                 backoff_cap: float = 20.0, seed: int | None = None,
                 dropped: Mapping[str, Any] | None = None) -> None:
        self.connection = connection
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.requests = 0
        self.retries = 0
        self._client = openai.OpenAI(
            api_key=connection.api_key() or NO_KEY, base_url=connection.base_url.strip(),
            timeout=connection.timeout, max_retries=0)
        #: the name the length limit goes under (``auto`` starts with ``max_tokens``)
        self.token_param = ("max_tokens" if connection.token_param == "auto"
                            else connection.token_param)
        #: whether a prompt's schema goes as ``response_format`` (off once refused)
        self.schemas = connection.structured
        #: a judge this project serves on this machine: ``transformers serve`` goes on
        #: generating for a request its client gave up on, so a timed-out request is not
        #: sent again (each retry would add one more generation to a busy server)
        self.served_here = cache_endpoint(connection.endpoint, connection.model) == LOCAL_ENDPOINT
        #: request parameters this endpoint refused as unsupported → the value refused;
        #: they are not sent again (``dropped``: refusals known from earlier runs)
        self.dropped: dict[str, Any] = dict(dropped or {})
        #: the endpoint's sentence for each refusal (one line, key removed)
        self.refusals: dict[str, str] = {}
        if "response_format" in self.dropped:
            self.schemas = False

    def assume_refused(self, known: Mapping[str, Any]) -> None:
        """Leave out the parameters in ``known`` (``{param: value refused}``, e.g. from
        ``store.judges.refusals``) from the first request on."""
        with self._lock:
            for name, value in known.items():
                self.dropped.setdefault(name, value)
            if "response_format" in self.dropped:
                self.schemas = False

    def effective_params(self, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``params`` (default the connection's :meth:`~Connection.params`) less those this
        endpoint refused: the parameters the requests actually go with, for cache keys."""
        params = self.connection.params() if params is None else params
        with self._lock:
            dropped = set(self.dropped)
        return _without(params, dropped)

    def provider_defaults(self) -> list[dict[str, Any]]:
        """The parameters left to the provider's default, each ``{param, refused, words,
        message}`` (``words``: "temperature: provider default (refused 0)")."""
        with self._lock:
            dropped, messages = dict(self.dropped), dict(self.refusals)
        return [{"param": name, "refused": value, "words": default_words(name, value),
                 "message": messages.get(name)} for name, value in sorted(dropped.items())]

    def _drop(self, name: str, value: Any, exc: BaseException) -> None:
        with self._lock:
            self.dropped.setdefault(name, value)
            if name not in self.refusals:
                text = server_message(exc) if isinstance(exc, openai.APIStatusError) else str(exc)
                self.refusals[name] = one_line(redact(text, [self.connection.api_key()]))
            if name == "response_format":
                self.schemas = False

    def __repr__(self) -> str:
        return f"JudgeClient({self.connection.endpoint!r}, model={self.connection.model!r})"

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> JudgeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _count(self, retry: bool) -> None:
        with self._lock:
            self.requests += 1
            self.retries += int(retry)

    def delay(self, attempt: int, exc: BaseException) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based) after ``exc``."""
        wait = min(self.backoff_cap, self.backoff_base * (2 ** attempt))
        with self._lock:
            wait *= self._rng.uniform(0.5, 1.0)
        if isinstance(exc, openai.APIStatusError):
            header = exc.response.headers.get("retry-after")
            try:
                wait = max(wait, min(self.backoff_cap, float(header))) if header else wait
            except ValueError:
                pass
        return wait

    def _wait(self, seconds: float, should_stop: ShouldStop | None) -> None:
        end = time.monotonic() + seconds
        while True:
            if should_stop is not None and should_stop():
                raise JudgeCancelled("cancelled while waiting to retry")
            left = end - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(0.1, left))

    def complete(self, messages: Sequence[Message], *, max_tokens: int | None = None,
                 should_stop: ShouldStop | None = None,
                 schema: dict[str, Any] | None = None) -> Answer:
        """Send ``messages``; the answer, or a :class:`JudgeError` after the last retry.
        ``schema``: the JSON schema of the answer (``{"name", "schema"}``), sent when the
        connection asks for structured output."""
        conn = self.connection
        attempt = 0
        started = time.perf_counter()
        tried: set[str] = set()  # length-limit names refused by this endpoint
        budget = max_tokens or conn.max_tokens
        while True:
            if should_stop is not None and should_stop():
                raise JudgeCancelled()
            self._count(retry=attempt > 0)
            param = self.token_param
            with self._lock:
                dropped = set(self.dropped)
            extra: dict[str, Any] = {param: budget}
            if "temperature" not in dropped:
                extra["temperature"] = conn.temperature
            if conn.reasoning_effort and "reasoning_effort" not in dropped:
                extra["reasoning_effort"] = conn.reasoning_effort
            structured = bool(schema) and self.schemas
            if structured and schema is not None:
                extra["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": schema["name"], "schema": schema["schema"], "strict": True}}
            try:
                # openai types each role's message apart; ours are plain {role, content}
                sent = cast("list[ChatCompletionMessageParam]", list(messages))
                response = self._client.chat.completions.create(
                    model=conn.model, messages=sent, **extra)
            except Exception as exc:  # every openai/httpx error is classified below
                other = TOKEN_PARAMS[1 - TOKEN_PARAMS.index(param)]
                refused = refused_among(exc, extra)
                if conn.token_param == "auto" and other not in tried and refused == param:
                    tried.add(param)
                    with self._lock:  # the other name from now on, for every thread
                        self.token_param = other
                    continue
                if refused is not None and refused not in TOKEN_PARAMS:
                    self._drop(refused, extra[refused], exc)  # the provider's default from now on
                    continue
                timed_out = isinstance(exc, openai.APITimeoutError)
                if retryable(exc) and attempt < conn.max_retries and not (
                        timed_out and self.served_here):
                    self._wait(self.delay(attempt, exc), should_stop)
                    attempt += 1
                    continue
                error = classify(exc, conn, attempt + 1)
                if timed_out and self.served_here:
                    raise JudgeError(error.kind, f"{error} Not sent again: a judge served on "
                                     "this machine goes on working on a request it timed out "
                                     "on.") from None
                raise error from None
            params = conn.params() if max_tokens is None else {**conn.params(),
                                                                "max_tokens": max_tokens}
            answer = _answer(response, time.perf_counter() - started, attempt + 1)
            return replace(answer, params=_without(params, dropped), budget=budget)


def _without(params: Mapping[str, Any], dropped: set[str]) -> dict[str, Any]:
    gone = {PARAM_KEYS.get(name, name) for name in dropped}
    return {k: v for k, v in params.items() if k not in gone}


def _answer(response: Any, latency: float, attempts: int) -> Answer:
    choices = getattr(response, "choices", None) or []
    if not choices:
        raise JudgeError("bad_request", "the server's answer has no choices")
    message = choices[0].message
    text = message.content if message is not None and message.content is not None else ""
    text, thought = split_reasoning(text)
    field = None
    if message is not None:
        extra = getattr(message, "model_extra", None) or {}
        field = next((v for k in ("reasoning_content", "reasoning")
                      if isinstance(v := extra.get(k, getattr(message, k, None)), str)
                      and v.strip()), None)
    reasoning = "\n\n".join(part for part in (field, thought) if part) or None
    usage = getattr(response, "usage", None)
    details = getattr(usage, "completion_tokens_details", None)
    thinking = getattr(details, "reasoning_tokens", None)
    return Answer(text=text, reasoning_tokens=thinking if isinstance(thinking, int) else None,
                  prompt_tokens=getattr(usage, "prompt_tokens", None),
                  completion_tokens=getattr(usage, "completion_tokens", None),
                  finish_reason=choices[0].finish_reason, latency_s=round(latency, 4),
                  attempts=attempts, reasoning=reasoning)


@dataclass(frozen=True)
class ConnectionCheck:
    """The result of :func:`check_connection`: ``ok``, a ``kind`` and one line for people."""

    ok: bool
    kind: str
    message: str
    latency_s: float | None = None
    listed_models: tuple[str, ...] | None = None
    #: parameters the endpoint refused as unsupported (each "temperature: provider default
    #: (refused 0)"): it answered without them
    provider_defaults: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def listed_models(connection: Connection, timeout: float = 10.0) -> tuple[str, ...] | None:
    """Model ids from ``GET {base}/models``, or ``None`` when that endpoint fails."""
    client = openai.OpenAI(api_key=connection.api_key() or NO_KEY,
                           base_url=connection.base_url.strip(),
                           timeout=min(timeout, connection.timeout), max_retries=0)
    try:
        return tuple(m.id for m in client.models.list())
    except Exception:  # a second opinion only: its failure says nothing by itself
        return None
    finally:
        client.close()


PROBE = [{"role": "user", "content": "Reply with the single word: ready"}]


def check_connection(connection: Connection) -> ConnectionCheck:
    """Check that ``connection`` answers a chat completion; one line saying what is wrong.

    The line starts with the kind of failure: ``server down``, ``timeout``, ``bad key``,
    ``wrong model name``, ``not found``, ``rate limited``, ``server error`` or
    ``bad request``. ``/models`` is consulted only to tell a wrong model name from
    another failure, never instead of the chat completion. A parameter the endpoint
    refuses as unsupported (``temperature`` for a reasoning model) is dropped as in a run,
    and the ``ok`` line names it ("temperature: provider default (refused 0)").
    """
    probe = connection.with_options(max_retries=0)
    client = JudgeClient(probe)
    try:
        answer = client.complete(PROBE, max_tokens=min(8, connection.max_tokens))
    except JudgeError as exc:
        error = exc
    else:
        defaults = tuple(d["words"] for d in client.provider_defaults())
        return ConnectionCheck(True, "ok", f"ok: {connection.model!r} at {connection.endpoint} "
                               f"answered in {answer.latency_s:.2f} s"
                               + "".join(f"; {words}" for words in defaults),
                               answer.latency_s, None, defaults)
    finally:
        client.close()
    listed: tuple[str, ...] | None = None
    if error.kind in ("server_error", "bad_request", "not_found", "wrong_model"):
        listed = listed_models(connection)
        if listed is not None and connection.model not in listed and error.kind != "wrong_model":
            names = ", ".join(listed[:5]) + (", …" if len(listed) > 5 else "") or "none"
            error = JudgeError("wrong_model", f"wrong model name: {connection.endpoint} does not "
                               f"serve {connection.model!r} (it lists: {names}); first error: "
                               f"{one_line(str(error), 160)}", error.status)
    return ConnectionCheck(False, error.kind, str(error), None, listed)
