"""Keys of the judge call cache and of judge runs (the rows live in ``store.judges``).

A call's key is the SHA-256 of its endpoint, model, generation parameters and prompt
hash, so two runs that would send the same request share one cached answer, and any
change that could change the answer (another model, temperature, max tokens, prompt
wording) makes a new key. The API key is not part of any key: the same request with
another key gets the same answer. The judges this project serves on this machine (the
rules judge, the demo judge) are keyed by their model wherever they listen, not by the
port they happen to get (:func:`needlework.judges.local.cache_endpoint`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from needlework.judges.connection import Connection
from needlework.judges.local import cache_endpoint


def _digest(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def prompt_hash(messages: Sequence[Mapping[str, str]]) -> str:
    """SHA-256 of the messages (roles and contents, in order)."""
    return _digest([{"role": m["role"], "content": m["content"]} for m in messages])


def call_key(endpoint: str, model: str, params: Mapping[str, Any], prompt: str) -> str:
    """The cache key of one request (``prompt`` is a :func:`prompt_hash`)."""
    return _digest({"endpoint": endpoint, "model": model, "params": dict(params), "prompt": prompt})


def connection_key(connection: Connection, messages: Sequence[Mapping[str, str]],
                   params: Mapping[str, Any] | None = None) -> str:
    """The cache key of ``messages`` sent through ``connection`` (``params``: its generation
    parameters unless given), under :func:`~needlework.judges.local.cache_endpoint`."""
    return call_key(cache_endpoint(connection.endpoint, connection.model), connection.model,
                    connection.params() if params is None else params, prompt_hash(messages))


def run_key(**identity: Any) -> str:
    """The identity of a judge run: a hash of everything that changes its answers."""
    return _digest(identity)
