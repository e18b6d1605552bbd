"""What a judge connection may be set to: the limits and defaults of its numbers, and the
named connections an admin sets up for the team.

:data:`LIMITS` bounds every number a connection holds, for the page's form, the command
line and ``needlework.toml`` alike (:class:`needlework.judges.connection.Connection` refuses
a value outside them when it is made).

In team mode only an admin types a judge's base URL or names where its API key is read;
reviewers pick one of these connections by name. They live in ``needlework.toml``, one
table each, never with the key itself::

    [judges.gpt4o-mini]
    base_url = "https://api.openai.com/v1"
    model = "gpt-4o-mini"
    key_env = "OPENAI_API_KEY"   # the server's environment variable that holds the key
    max_tokens = 1024            # the most a reviewer may ask for (default 512)
    concurrency = 4              # requests in flight at most (default 4)
    timeout = 120                # seconds (default 120)
    context_window = 128000      # tokens (default 0: unknown, not checked)
    input_price = 0.15           # per million prompt tokens (optional: cost estimates)
    output_price = 0.60          # per million completion tokens (optional)

The key is read from ``key_env`` when a request is made and sent only to ``base_url``:
a reviewer chooses the connection, never where it points. The numbers are held to
:data:`LIMITS`. This module imports nothing of ours: the team's config
(:mod:`needlework.teams.config`) reads the tables here, and the judges
(:func:`needlework.judges.connection.named_connection`) turn one into a connection.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

DEFAULT_MAX_TOKENS = 512
DEFAULT_CONCURRENCY = 4
#: ``(lowest, highest)`` of each number a connection holds (a context window of 0 is unknown)
LIMITS: dict[str, tuple[float, float]] = {
    "temperature": (0.0, 2.0), "max_tokens": (1, 32768), "timeout": (0.1, 3600.0),
    "concurrency": (1, 64), "context_window": (0, 10_000_000)}

_KEYS = ("base_url", "model", "key_env", "max_tokens", "concurrency", "timeout", "context_window",
         "input_price", "output_price")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._ -]{0,63}$")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


class NamedJudgeError(ValueError):
    """A ``[judges.NAME]`` table holds a wrong value (the message names the file and key)."""


@dataclass(frozen=True)
class NamedJudge:
    """One judge connection an admin configured; the limits bound what a reviewer asks."""

    name: str
    base_url: str
    model: str
    key_env: str | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = 120.0
    context_window: int = 0
    input_price: float | None = None
    output_price: float | None = None

    def describe(self) -> str:
        """``name: model at endpoint (key: $VAR)`` for the picker (never a key's value)."""
        key = f"key from ${self.key_env}" if self.key_env else "no key"
        return f"{self.name}: {self.model} at {self.base_url} ({key})"


def _positive(table: dict[str, Any], key: str, where: str, default: float | None, *,
              whole: bool, zero: bool = False) -> Any:
    value = table.get(key, default)
    if value is None:
        return None
    ok = isinstance(value, int) if whole else isinstance(value, int | float)
    if isinstance(value, bool) or not ok or not math.isfinite(value) or value < 0 \
            or (value == 0 and not zero):
        kind = "a whole number" if whole else "a number"
        floor = "0 or more" if zero else "above 0"
        raise NamedJudgeError(f"{where}: {key} must be {kind} {floor}, got {value!r}")
    high = LIMITS[key][1] if key in LIMITS else None
    if high is not None and value > high:
        raise NamedJudgeError(f"{where}: {key} must be at most {high:,.0f}, got {value!r}")
    return value


def parse_named_judges(data: Any, where: str) -> tuple[NamedJudge, ...]:
    """The ``[judges]`` table of a config (``data``: its parsed TOML value) as connections;
    ``where`` names the file in errors. Raises :class:`NamedJudgeError`."""
    if data is None:
        return ()
    if not isinstance(data, dict):
        raise NamedJudgeError(f"{where}: [judges] must hold one table per connection, "
                              "e.g. [judges.gpt4o-mini]")
    judges = []
    for name, table in data.items():
        at = f"{where} [judges.{name}]"
        if not _NAME.match(name):
            raise NamedJudgeError(f"{at}: a connection's name is letters, digits, '.', '_', "
                                  "'-' or spaces (at most 64)")
        if not isinstance(table, dict):
            raise NamedJudgeError(f"{at}: must be a table with base_url and model")
        unknown = sorted(set(table) - set(_KEYS))
        if unknown:
            raise NamedJudgeError(f"{at}: unknown key {unknown[0]} (expected {', '.join(_KEYS)})")
        base_url, model = table.get("base_url"), table.get("model")
        if not isinstance(base_url, str) or urlsplit(base_url).scheme not in ("http", "https") \
                or not urlsplit(base_url).hostname:
            raise NamedJudgeError(f"{at}: base_url must be an http:// or https:// address, "
                                  f"got {base_url!r}")
        parts = urlsplit(base_url)
        if parts.username or parts.password or parts.query or parts.fragment:
            raise NamedJudgeError(f"{at}: base_url must carry no user, password, query or "
                                  "fragment (the key goes in key_env)")
        if not isinstance(model, str) or not model.strip():
            raise NamedJudgeError(f"{at}: model must be the model's name, got {model!r}")
        key_env = table.get("key_env")
        if key_env is not None and (not isinstance(key_env, str) or not _ENV.match(key_env)):
            raise NamedJudgeError(f"{at}: key_env must be an environment variable's name, "
                                  f"got {key_env!r}")
        judge = NamedJudge(
            name=name, base_url=base_url.rstrip("/"), model=model.strip(), key_env=key_env,
            max_tokens=_positive(table, "max_tokens", at, DEFAULT_MAX_TOKENS, whole=True),
            concurrency=_positive(table, "concurrency", at, DEFAULT_CONCURRENCY, whole=True),
            timeout=float(_positive(table, "timeout", at, 120.0, whole=False)),
            context_window=_positive(table, "context_window", at, 0, whole=True, zero=True),
            input_price=_positive(table, "input_price", at, None, whole=False, zero=True),
            output_price=_positive(table, "output_price", at, None, whole=False, zero=True))
        if judge.context_window and judge.context_window <= judge.max_tokens:
            raise NamedJudgeError(f"{at}: context_window ({judge.context_window}) must exceed "
                                  f"max_tokens ({judge.max_tokens})")
        judges.append(judge)
    return tuple(judges)
