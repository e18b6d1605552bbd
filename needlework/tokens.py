"""Token counts: tiktoken ``o200k_base`` where it is available, else a stated fallback.

``o200k_base`` needs a one-time download that this machine may not be able to
make. The encoding is loaded once per process in a background thread with a
timeout, so nothing ever waits on the network: while it is unavailable, counts
come from a fallback (a given tokenizer, else an estimate) and say so.

:func:`chat_counter` counts a chat request's prompt as one model counts it: its own
tokenizer and chat template where they are on disk, else the encoding tiktoken knows for an
OpenAI model name (``None`` when neither: the caller approximates and says so).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

ENCODING = "o200k_base"
LOAD_TIMEOUT_S = 3.0
_WORDISH = re.compile(r"\w+|[^\w\s]", re.UNICODE)

_lock = threading.Lock()


class _State(TypedDict):
    encoding: Any  # a tiktoken Encoding once loaded
    error: str | None
    thread: threading.Thread | None


_state: _State = {"encoding": None, "error": None, "thread": None}


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
    loading = _state["thread"]
    if loading is not None and loading.is_alive():
        loading.join(timeout)
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


# -- a chat request's prompt tokens, as the judge's own tokenizer counts them --------------

#: tokens OpenAI's chat format adds around each message and to prime the reply
CHAT_MESSAGE_OVERHEAD = 3
CHAT_REPLY_OVERHEAD = 3


@dataclass(frozen=True)
class ChatCounter:
    """Counts a chat request's prompt tokens for one model. ``method``: ``tokenizer:NAME``
    (the model's own tokenizer and chat template, from disk), ``tiktoken:ENCODING`` (the
    encoding tiktoken gives the model's name), or ``None`` from :func:`chat_counter` when
    neither is known."""

    count: Callable[[list[dict[str, str]]], int]
    method: str


def _special(config: dict, key: str) -> str | None:
    value = config.get(key)
    return value.get("content") if isinstance(value, dict) else value


def _template_counter(folder: Path) -> ChatCounter | None:
    """The counter of a transformers model folder (or cached snapshot) with a
    ``tokenizer.json``: its chat template rendered as transformers renders it (Jinja,
    ``trim_blocks``, ``lstrip_blocks``, ``add_generation_prompt``), then encoded without
    added special tokens, which is what ``apply_chat_template`` and so ``transformers
    serve`` send to the model. Without a chat template: the messages' contents joined by
    new lines, with the tokenizer's special tokens."""
    import json  # noqa: PLC0415

    from tokenizers import Tokenizer  # noqa: PLC0415  (Rust; no PyTorch)

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.is_file() else {}
    template_path = folder / "chat_template.jinja"
    source = (template_path.read_text(encoding="utf-8") if template_path.is_file()
              else config.get("chat_template"))
    name = f"tokenizer:{folder.name}"
    if not isinstance(source, str):
        return ChatCounter(lambda messages: len(tokenizer.encode(
            "\n".join(str(m.get("content") or "") for m in messages)).ids), name)
    from jinja2.ext import loopcontrols  # noqa: PLC0415
    from jinja2.sandbox import ImmutableSandboxedEnvironment  # noqa: PLC0415

    def raise_exception(message: str) -> None:
        raise ValueError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])
    env.globals["raise_exception"] = raise_exception
    template = env.from_string(source)
    specials = {k: _special(config, k) for k in ("bos_token", "eos_token", "pad_token",
                                                   "unk_token")}

    def count(messages: list[dict[str, str]]) -> int:
        text = template.render(messages=messages, add_generation_prompt=True, **specials)
        return len(tokenizer.encode(text, add_special_tokens=False).ids)

    return ChatCounter(count, name)


def _folder_of(model: str) -> Path | None:
    """The folder on disk with ``model``'s tokenizer: ``model`` itself when it is a folder
    with a ``tokenizer.json``, else the Hugging Face cache's snapshot of a hub id (looked
    up on disk only, never downloaded)."""
    path = Path(model).expanduser()
    if path.is_dir():
        return path if (path / "tokenizer.json").is_file() else None
    if model.count("/") != 1 or model.startswith(("/", ".")):
        return None
    try:
        from huggingface_hub import try_to_load_from_cache  # noqa: PLC0415

        found = try_to_load_from_cache(model, "tokenizer.json")
    except Exception:  # not a valid hub id, or no hub library: not known
        return None
    return Path(found).parent if isinstance(found, str) else None


def _tiktoken_counter(model: str, timeout: float) -> ChatCounter | None:
    """OpenAI's count for a model name tiktoken knows: its encoding over each message's
    content, :data:`CHAT_MESSAGE_OVERHEAD` per message and :data:`CHAT_REPLY_OVERHEAD`."""
    try:
        from tiktoken.model import encoding_name_for_model  # noqa: PLC0415

        name = encoding_name_for_model(model)
    except Exception:  # a name tiktoken does not know, or no tiktoken
        return None
    if name == ENCODING:
        enc = encoding(timeout)
    else:
        try:
            import tiktoken  # noqa: PLC0415

            enc = tiktoken.get_encoding(name)
        except Exception:  # no network, no cache
            enc = None
    if enc is None:
        return None

    def count(messages: list[dict[str, str]]) -> int:
        return sum(len(enc.encode(str(m.get("content") or ""), disallowed_special=()))
                   + CHAT_MESSAGE_OVERHEAD for m in messages) + CHAT_REPLY_OVERHEAD

    return ChatCounter(count, f"tiktoken:{name}")


def _stamp(folder: Path) -> tuple[float, ...]:
    return tuple(p.stat().st_mtime if p.is_file() else 0.0
                 for p in (folder / "tokenizer.json", folder / "tokenizer_config.json",
                           folder / "chat_template.jinja"))


_counters: dict[tuple[str, tuple[float, ...]], ChatCounter | None] = {}


def chat_counter(model: str, timeout: float = LOAD_TIMEOUT_S) -> ChatCounter | None:
    """The counter of ``model``'s prompt tokens: its own tokenizer and chat template where
    they are on disk (a model folder, or a hub id in the Hugging Face cache), else the
    encoding tiktoken knows for the name (OpenAI models), else ``None`` (count with
    :func:`count_tokens` and call it approximate). A tokenizer that cannot be read counts
    as not known. Kept per model and per file version."""
    folder = _folder_of(model)
    key = (str(folder) if folder is not None else model,
           _stamp(folder) if folder is not None else ())
    if key in _counters:
        return _counters[key]
    found: ChatCounter | None = None
    if folder is not None:
        try:
            found = _template_counter(folder)
        except Exception:  # an unreadable tokenizer or template: not known
            found = None
    if found is None:
        found = _tiktoken_counter(model, timeout)
        if found is None and folder is None:
            return None  # tiktoken's encoding may load later: do not keep the miss
    _counters[key] = found
    return found
