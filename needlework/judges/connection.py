"""Where a judge lives and how to talk to it: :class:`Connection`.

A connection is plain data: base URL, model name, where the API key comes from,
generation parameters (temperature, max tokens), the request timeout, how many
requests may run at once, and optionally the judge's context window in tokens and its
prices per million input and output tokens. :data:`LIMITS` bounds the numbers, for the
page's form and the command line alike (``needlework/judge_settings.py``, with the
defaults and the connections an admin names): a connection outside them is refused when
it is made, before any request. :func:`named_connection` makes one from a named judge.

The API key is never stored in the connection's fields as text. It is either read
from an environment variable *when a request is made* (``key_env``, default
``OPENAI_API_KEY``), or held in memory in a :class:`Secret`, whose ``repr`` and
``str`` are ``'***'``. :meth:`Connection.describe` is what runs and logs record:
it names the variable, never the value. :func:`redact` removes a key from any text
(an error message from a server that echoes it, for instance) before it is shown.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from needlework.judge_settings import DEFAULT_CONCURRENCY, DEFAULT_MAX_TOKENS, LIMITS, NamedJudge

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
NO_KEY = "no-key"  # sent when no key is configured: local servers ignore it
MASK = "***"
#: the default length limit of a reasoning model (a connection with ``reasoning_effort``):
#: its reasoning tokens count against the limit before the first word of the answer
REASONING_MAX_TOKENS = 8192
#: the values of ``reasoning_effort`` (OpenAI's; sent only when set)
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high")
MAX_TOKENS_CAP = int(LIMITS["max_tokens"][1])


def check_limit(name: str, value: float) -> None:
    """Raise ``ValueError`` naming ``name`` when ``value`` is outside :data:`LIMITS`."""
    low, high = LIMITS[name]
    if isinstance(value, bool) or not math.isfinite(value) or not low <= value <= high:
        raise ValueError(f"{name.replace('_', ' ')} must be from {_number(low)} to "
                         f"{_number(high)}, got {value!r}")


def _number(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:g}"


class Secret:
    """A value that prints as ``***`` (repr, str, format) and is read with :meth:`reveal`.

    ``Secret`` objects compare by identity and refuse to be pickled, so a key cannot
    travel into a cache, a session file or a subprocess by accident.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({MASK})"

    def __str__(self) -> str:
        return MASK

    def __format__(self, spec: str) -> str:
        return MASK

    def __bool__(self) -> bool:
        return bool(self._value)

    def __reduce__(self) -> Any:
        raise TypeError("a Secret cannot be pickled")


def redact(text: str, secrets: list[str | None]) -> str:
    """``text`` with every occurrence of each (non-trivial) secret replaced by ``***``."""
    for secret in secrets:
        if secret and len(secret) >= 4 and secret != NO_KEY:
            text = text.replace(secret, MASK)
    return text


def clean_endpoint(base_url: str) -> str:
    """The base URL without user info, query or fragment, and without a trailing slash:
    the form that is stored and shown (a URL may carry credentials: they never are)."""
    parts = urlsplit(base_url.strip())
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


@dataclass(frozen=True)
class Connection:
    """An OpenAI-compatible chat-completions endpoint and how to call it.

    ``base_url`` is the API root (``https://api.openai.com/v1``,
    ``http://127.0.0.1:8000/v1`` for vLLM, ``http://127.0.0.1:11434/v1`` for Ollama).
    ``key_env`` names the environment variable holding the key (``None``: no variable);
    ``key`` holds a key in memory instead (a :class:`Secret`, e.g. from Streamlit
    secrets), and wins over the variable. ``context_window`` is the judge's window in
    tokens when known (prompts longer than it are handled by the run's context
    policy); ``None`` means unknown and unchecked. ``input_price`` and ``output_price``
    are what a million prompt and completion tokens cost (``None``: not set; used only
    for cost estimates, never part of a cache key).
    """

    base_url: str
    model: str
    key_env: str | None = DEFAULT_KEY_ENV
    key: Secret | None = field(default=None, repr=False, compare=False)
    temperature: float = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    timeout: float = 120.0
    concurrency: int = DEFAULT_CONCURRENCY
    max_retries: int = 4
    context_window: int | None = None
    #: the name of the answer's length limit: ``max_tokens``, ``max_completion_tokens``
    #: (OpenAI's reasoning models), or ``auto`` (the first, the second once refused)
    token_param: str = "auto"
    #: ask for structured output (a JSON schema, OpenAI's ``response_format``) where a
    #: prompt has one; an endpoint that refuses it is asked without
    structured: bool = False
    input_price: float | None = None
    output_price: float | None = None
    #: how hard a reasoning model thinks (:data:`REASONING_EFFORTS`); ``None``: not sent
    reasoning_effort: str | None = None

    def __post_init__(self) -> None:
        if not self.base_url.strip():
            raise ValueError("base URL is empty (e.g. http://127.0.0.1:8000/v1)")
        if urlsplit(self.base_url.strip()).scheme not in ("http", "https"):
            raise ValueError(f"base URL must start with http:// or https://, got {self.endpoint!r}")
        if not self.model.strip():
            raise ValueError("model name is empty")
        if self.key is not None and not isinstance(self.key, Secret):
            raise TypeError("pass an in-memory key as Secret(value), never as plain text")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.max_tokens < 1:
            raise ValueError(f"max tokens must be at least 1, got {self.max_tokens}")
        if self.timeout <= 0:
            raise ValueError(f"timeout must be positive, got {self.timeout}")
        for name in ("temperature", "max_tokens", "concurrency", "timeout"):
            check_limit(name, getattr(self, name))
        if self.context_window is not None:
            check_limit("context_window", self.context_window)
        for name in ("input_price", "output_price"):
            price = getattr(self, name)
            if price is not None and (isinstance(price, bool) or not math.isfinite(price)
                                      or price < 0):
                raise ValueError(f"{name.replace('_', ' ')} must be a number of 0 or more "
                                 f"(per million tokens), got {price!r}")
        if self.max_retries < 0:
            raise ValueError(f"max retries cannot be negative, got {self.max_retries}")
        if self.token_param not in ("auto", "max_tokens", "max_completion_tokens"):
            raise ValueError(f"token parameter must be auto, max_tokens or max_completion_tokens, "
                             f"not {self.token_param!r}")
        if self.reasoning_effort is not None and self.reasoning_effort not in REASONING_EFFORTS:
            raise ValueError(f"reasoning effort must be one of {', '.join(REASONING_EFFORTS)}, "
                             f"not {self.reasoning_effort!r}")
        if self.context_window is not None and self.context_window <= self.max_tokens:
            raise ValueError(f"context window ({self.context_window}) must exceed max tokens "
                             f"({self.max_tokens})")

    @property
    def endpoint(self) -> str:
        """The base URL as stored and shown (see :func:`clean_endpoint`)."""
        return clean_endpoint(self.base_url)

    def api_key(self) -> str | None:
        """The key to send, read now: the in-memory one, else the variable's value, else None."""
        if self.key is not None:
            return self.key.reveal() or None
        if self.key_env:
            return os.environ.get(self.key_env) or None
        return None

    def key_source(self) -> str:
        """Where the key comes from, in words (never the key)."""
        if self.key is not None:
            return "a key held in memory"
        if self.key_env:
            state = "set" if os.environ.get(self.key_env) else "not set"
            return f"${self.key_env} ({state})"
        return "no key"

    def params(self) -> dict[str, Any]:
        """The generation parameters that change an answer (part of the cache key;
        ``structured`` and ``reasoning_effort`` only when set, so that earlier keys stay
        valid)."""
        out: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.reasoning_effort:
            out["reasoning_effort"] = self.reasoning_effort
        return {**out, "structured": True} if self.structured else out

    def describe(self) -> dict[str, Any]:
        """A JSON-ready record of the connection for runs and logs: no key, only its source."""
        return {"endpoint": self.endpoint, "model": self.model, "key_env": self.key_env,
                "key_in_memory": self.key is not None, **self.params(), "timeout": self.timeout,
                "concurrency": self.concurrency, "max_retries": self.max_retries,
                "context_window": self.context_window, "token_param": self.token_param,
                "structured": self.structured, "reasoning_effort": self.reasoning_effort,
                "input_price": self.input_price,
                "output_price": self.output_price}

    def with_options(self, **changes: Any) -> Connection:
        """A copy with some fields changed."""
        return replace(self, **changes)


def default_max_tokens(reasoning_effort: str | None = None) -> int:
    """The length limit a connection starts with when none is asked for: room for the
    reasoning of a reasoning model (:data:`REASONING_MAX_TOKENS`) when ``reasoning_effort``
    is set, else :data:`DEFAULT_MAX_TOKENS`."""
    return REASONING_MAX_TOKENS if reasoning_effort else DEFAULT_MAX_TOKENS


def named_connection(judge: NamedJudge, *, temperature: float = 0.0,
                     max_tokens: int | None = None, concurrency: int | None = None) -> Connection:
    """The :class:`Connection` to an admin's named judge; ``max_tokens`` and ``concurrency``
    are what the reviewer asked for, held to the judge's limits."""
    tokens = judge.max_tokens if max_tokens is None else max(1, min(int(max_tokens), judge.max_tokens))
    inflight = judge.concurrency if concurrency is None else max(1, min(int(concurrency),
                                                                         judge.concurrency))
    return Connection(judge.base_url, judge.model, key_env=judge.key_env,
                      temperature=float(temperature), max_tokens=tokens, timeout=judge.timeout,
                      concurrency=inflight, context_window=judge.context_window or None,
                      input_price=judge.input_price, output_price=judge.output_price)


class LocalEndpoint:
    """What a judge server on this machine offers (``host``, ``port`` and ``model``
    set by the class that mixes it in): its base URL and a keyless connection."""

    model: str

    if TYPE_CHECKING:  # read-only here: a field or a property of the class that mixes it in
        @property
        def host(self) -> str: ...

        @property
        def port(self) -> int: ...

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def connection(self, **options: Any) -> Connection:
        """A :class:`Connection` to this server (no key: it needs none)."""
        return Connection(self.base_url, self.model, key_env=None, **options)
