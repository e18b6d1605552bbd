"""Loaded reward models, shared by every session of the server process.

Streamlit reruns a page script on every click and starts a new session per browser
tab: a model loaded in one tab is in :data:`MODELS` for every other tab and every
rerun until it is unloaded. Models are keyed by :class:`ModelKey` (path or hub id,
dtype, device, attention implementation, trust_remote_code); loading a key twice at
once loads it once. :meth:`ModelRegistry.memory` says what each model holds.

This module is light (no torch import): pages that only ask which models are loaded
(the review page's token counter) use it without loading the engine; the loader is
imported when a model is first loaded.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from needlework.rewards.loading import RewardModel


@dataclass(frozen=True)
class ModelKey:
    """How a model is loaded; two sessions asking for the same key share one model."""

    name: str
    dtype: str = "auto"
    device: str = "auto"
    attn_implementation: str | None = None
    trust_remote_code: bool = False

    @classmethod
    def of(cls, name: str, dtype: str = "auto", device: str = "auto",
           attn_implementation: str | None = None, trust_remote_code: bool = False) -> ModelKey:
        """A key with ``name`` normalised: a local folder becomes its absolute path."""
        name = name.strip()
        folder = Path(name).expanduser()
        if name and folder.is_dir():
            name = str(folder.resolve())
        return cls(name, dtype, device, attn_implementation or None, trust_remote_code)

    def describe(self) -> str:
        """``name · dtype · device[ · attn][ · remote code]`` for lists."""
        parts = [self.name, self.dtype, self.device]
        if self.attn_implementation:
            parts.append(self.attn_implementation)
        if self.trust_remote_code:
            parts.append("remote code")
        return " · ".join(parts)

    def load_options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`needlework.rewards.loading.load_reward_model`."""
        return {"dtype": self.dtype, "device": self.device,
                "attn_implementation": self.attn_implementation,
                "trust_remote_code": self.trust_remote_code}


Loader = Callable[..., "RewardModel"]


def refreeze() -> None:
    """Collect garbage once, then move every live object out of the collector's reach.

    A full collection (Streamlit's after each script run when ``runner.postScriptGC`` is
    on, Python's own when its thresholds say so) walks every tracked object: with torch,
    transformers and a model loaded about half a million, ~0.7 s of holding the GIL, which
    slowed a running scoring thread three-fold. Frozen objects are still freed by reference
    counting; :meth:`ModelRegistry.unload` unfreezes so that a dropped model's
    reference cycles are collected.
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def model_bytes(rm: Any) -> int:
    """Bytes held by a loaded model's parameters and buffers (0 when it has none)."""
    module = getattr(rm, "model", None)
    if module is None or not hasattr(module, "parameters"):
        return 0
    tensors = [*module.parameters(), *module.buffers()]
    return sum(t.numel() * t.element_size() for t in tensors)


class ModelRegistry:
    """Loaded models shared by every session; loading the same key twice waits for the first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models: OrderedDict[ModelKey, RewardModel] = OrderedDict()
        self._loading: dict[ModelKey, threading.Lock] = {}

    def get(self, key: ModelKey) -> RewardModel | None:
        """The loaded model for ``key``, or ``None``."""
        with self._lock:
            return self._models.get(key)

    def load(self, key: ModelKey, loader: Loader | None = None) -> RewardModel:
        """The model for ``key``, loading it once (errors from ``loader`` propagate;
        the default loader is :func:`needlework.rewards.loading.load_reward_model`)."""
        with self._lock:
            if key in self._models:
                return self._models[key]
            gate = self._loading.setdefault(key, threading.Lock())
        with gate:
            found = self.get(key)
            if found is not None:
                return found
            if loader is None:
                from needlework.rewards.loading import load_reward_model  # noqa: PLC0415  (torch)

                loader = load_reward_model
            rm = loader(key.name, **key.load_options())
            with self._lock:
                self._models[key] = rm
                self._loading.pop(key, None)
            refreeze()
            return rm

    def loaded(self) -> list[tuple[ModelKey, RewardModel]]:
        """Every loaded model, the most recently loaded first."""
        with self._lock:
            return list(reversed(self._models.items()))

    def memory(self) -> dict[ModelKey, int]:
        """Bytes each loaded model holds (parameters and buffers), newest first."""
        return {key: model_bytes(rm) for key, rm in self.loaded()}

    def unload(self, key: ModelKey) -> bool:
        """Forget a model and free its memory; False when it was not loaded."""
        with self._lock:
            rm = self._models.pop(key, None)
        if rm is None:
            return False
        device = str(rm.facts.device)
        del rm
        refreeze()
        if device.startswith("cuda"):
            import torch  # noqa: PLC0415

            torch.cuda.empty_cache()
        return True

    def clear(self) -> None:
        """Forget every model (tests)."""
        with self._lock:
            self._models.clear()
            self._loading.clear()


#: The models of this server process.
MODELS = ModelRegistry()


def newest_token_counter(registry: ModelRegistry = MODELS) -> tuple[Callable[[str], int] | None, str]:
    """The tokenizer of the newest loaded model as a token counter, with the model's
    name; ``(None, "model")`` when no model (or no usable tokenizer) is loaded."""
    loaded = registry.loaded()
    model = loaded[0][1] if loaded else None
    tokenizer = getattr(model, "tokenizer", None)
    if tokenizer is None or not hasattr(tokenizer, "encode"):
        return None, "model"
    name = str(getattr(getattr(model, "facts", None), "name", "") or "model")
    return (lambda text: len(tokenizer.encode(text, add_special_tokens=False))), name
