"""Exceptions raised by the reward-model engine, one class per case.

Every message says what went wrong and what to try next, so the CLI and the app
can show it as is.
"""

from __future__ import annotations


class RewardModelError(Exception):
    """Base class of every reward-model error (catch this one in callers)."""


class MissingConfigError(RewardModelError):
    """The model folder has no ``config.json``."""


class BadConfigError(RewardModelError):
    """``config.json`` is not valid JSON, or not a config transformers can read."""


class RemoteCodeRequiredError(RewardModelError):
    """The checkpoint ships its own Python code and ``trust_remote_code`` is off."""


class BadCheckpointError(RewardModelError):
    """The weights (or the model class) could not be loaded: a truncated or corrupt file."""


class MissingWeightsError(RewardModelError):
    """The model folder has no weights file (``*.safetensors`` / ``pytorch_model*.bin``)."""


class MissingTokenizerError(RewardModelError):
    """The model folder has no tokenizer files."""


class ModelNotFoundError(RewardModelError):
    """The path is not a folder and the hub id could not be loaded."""


class NotASequenceClassifierError(RewardModelError):
    """The checkpoint is not an ``AutoModelForSequenceClassification`` model."""


class WrongNumLabelsError(RewardModelError):
    """The classifier has ``num_labels != 1``: not a scalar reward model."""


class RewardModelOOMError(RewardModelError):
    """Out of memory while loading or scoring."""


class PerTokenUnsupportedError(RewardModelError):
    """The model's head cannot be applied position by position."""


class ScoringCancelled(RewardModelError):
    """A scoring run stopped because a cancel was requested (partial results are kept)."""


OOM_ADVICE = (
    "try a smaller dtype (--dtype bf16 or fp16), the CPU (--device cpu), "
    "or fewer tokens per batch (--batch-tokens)"
)


def is_oom(exc: BaseException) -> bool:
    """True when ``exc`` is an out-of-memory error from torch, the allocator or Python."""
    if isinstance(exc, MemoryError):
        return True
    name = type(exc).__name__
    if name in ("OutOfMemoryError", "OutOfMemory"):
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and (
        "out of memory" in text or "can't allocate memory" in text or "mps backend out of memory" in text
    )


def oom_error(where: str, exc: BaseException) -> RewardModelOOMError:
    """A :class:`RewardModelOOMError` for an OOM that happened while ``where``."""
    return RewardModelOOMError(f"out of memory while {where}: {exc}. {OOM_ADVICE[0].upper()}{OOM_ADVICE[1:]}.")


class InputTooLongError(RewardModelError):
    """A single text is longer than the window and the policy is ``skip``."""


class PerTokenTooCostlyError(PerTokenUnsupportedError):
    """Per-token rewards by prefix passes would take more passes than the cap allows."""


class PerTokenMismatchError(PerTokenUnsupportedError):
    """The per-token value at the pooled position is not the model's score: no curve."""
