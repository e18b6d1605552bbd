"""Token counts: tiktoken ``o200k_base`` where it is available, else a stated fallback.

``o200k_base`` needs a one-time download that this machine may not be able to
make. The encoding is loaded once per process in a background thread with a
timeout, so nothing ever waits on the network: while it is unavailable, counts
come from a fallback (a given tokenizer, else an estimate) and say so.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass

ENCODING = "o200k_base"
LOAD_TIMEOUT_S = 3.0
_WORDISH = re.compile(r"\w+|[^\w\s]", re.UNICODE)

_lock = threading.Lock()
_state: dict[str, object] = {"encoding": None, "error": None, "thread": None}


@dataclass(frozen=True)
class TokenCount:
    """A count and how it was made: ``o200k_base``, ``tokenizer:NAME`` or ``estimate``."""

    tokens: int
    method: str

    @property
    def exact(self) -> bool:
        return self.method != "estimate"

    def __str__(self) -> str:
        return f"{self.tokens:,} tokens" + ("" if self.exact else " (estimate)")


def _load() -> None:
    try:
        import tiktoken  # noqa: PLC0415

        _state["encoding"] = tiktoken.get_encoding(ENCODING)
    except Exception as e:  # no network, no cache: fall back
        _state["error"] = f"{type(e).__name__}: {e}"


def encoding(timeout: float = LOAD_TIMEOUT_S):
    """The ``o200k_base`` encoding, or ``None`` when it could not be loaded within
    ``timeout`` seconds (the load goes on in the background; later calls see it)."""
    with _lock:
        if _state["encoding"] is None and _state["error"] is None and _state["thread"] is None:
            thread = threading.Thread(target=_load, name="tiktoken-load", daemon=True)
            _state["thread"] = thread
            thread.start()
    thread = _state["thread"]
    if thread is not None and thread.is_alive():
        thread.join(timeout)
    return _state["encoding"]


def unavailable_reason() -> str | None:
    """Why ``o200k_base`` is not in use (None when it is)."""
    if _state["encoding"] is not None:
        return None
    return str(_state["error"] or "still loading (no network or cache)")


def estimate(text: str) -> int:
    """A tokenizer-free estimate: one token per word or punctuation mark (plus one
    per paragraph break): a rough figure, always labelled as an estimate."""
    return len(_WORDISH.findall(text)) + text.count("\n\n")


def count_tokens(
    text: str,
    fallback: Callable[[str], int] | None = None,
    fallback_name: str = "model",
    timeout: float = LOAD_TIMEOUT_S,
) -> TokenCount:
    """Count ``text`` with o200k_base, else ``fallback`` (e.g. the loaded reward
    model's tokenizer), else :func:`estimate`; the result names its method."""
    enc = encoding(timeout)
    if enc is not None:
        return TokenCount(len(enc.encode(text, disallowed_special=())), ENCODING)
    if fallback is not None:
        return TokenCount(fallback(text), f"tokenizer:{fallback_name}")
    return TokenCount(estimate(text), "estimate")
