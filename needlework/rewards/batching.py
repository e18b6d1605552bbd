"""How :class:`~needlework.rewards.pipeline.RewardPipeline` batches texts: packing them
under a token budget (:func:`plan_batches`), the length bucket a batch belongs to, the
measured choice between a batch and one text per pass (:class:`BatchChoices`, kept per
model and device in :data:`CHOICES`), and padding a batch's rows (:func:`pad_batch`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from needlework.rewards.pooling import pad_rows

# Batches are kept only when measured at least 15 % faster per token than one text per pass:
# on the 2-core CPU a first-batch measurement strays by up to about ±12 % from the steady
# ratio (demo model, 256 to 8,192 tokens), and a GPU's batches win by far more than this.
BATCH_MARGIN = 1.15
SINGLE_FIRST = 3  # rows of a bucket's first batch timed alone, one after the other


def plan_batches(lengths: Sequence[int], batch_tokens: int) -> list[list[int]]:
    """Indices grouped longest first so that rows × longest row ≤ ``batch_tokens``.

    A text longer than the budget gets a batch of its own.
    """
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        width = lengths[current[0]] if current else lengths[index]
        if current and width * (len(current) + 1) > batch_tokens:
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def length_bucket(width: int) -> int:
    """The length bucket of a batch whose longest row has ``width`` tokens: the power of
    two at or above it (``length_bucket(1000) == 1024``, ``length_bucket(1025) == 2048``)."""
    return 1 << max(0, (max(1, width) - 1).bit_length())


@dataclass(frozen=True)
class BatchChoice:
    """One bucket's decision: ``batched`` (one pass per planned batch) or not (one text
    per pass), from the measured throughputs in real (unpadded) tokens per second."""

    batched: bool
    single_rate: float
    batch_rate: float

    @property
    def speedup(self) -> float:
        """Batched throughput over one-text-per-pass throughput, as measured."""
        return self.batch_rate / self.single_rate if self.single_rate > 0 else float("inf")

    def describe(self) -> str:
        """``batches (1.32× one text per pass)`` or ``one text per pass (batches 0.81×)``."""
        if self.batched:
            return f"batches ({self.speedup:.2f}× one text per pass)"
        return f"one text per pass (batches {self.speedup:.2f}×)"


def decide(single_rate: float, batch_rate: float, margin: float = BATCH_MARGIN) -> BatchChoice:
    """Batches when their measured throughput is at least ``margin`` times one text per
    pass (a tie, or a gain inside timing noise, keeps the simpler single pass)."""
    return BatchChoice(batch_rate >= margin * single_rate, single_rate, batch_rate)


@dataclass
class _Measuring:
    """Timings gathered so far for a bucket not yet decided (tokens/s)."""

    single: list[float] = field(default_factory=list)
    batch: list[float] = field(default_factory=list)


class BatchChoices:
    """The batching decisions of this process, per bucket key (model fingerprint, dtype,
    device, scoring path, torch threads, token budget, length bucket); thread-safe.
    Every pipeline of a model on a device shares them, so each bucket is measured once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made: dict[tuple[Any, ...], BatchChoice] = {}
        self._measuring: dict[tuple[Any, ...], _Measuring] = {}

    def get(self, key: tuple[Any, ...]) -> BatchChoice | None:
        """The decision for ``key``, or ``None`` while it is being measured."""
        with self._lock:
            return self._made.get(key)

    def timings(self, key: tuple[Any, ...]) -> tuple[int, int]:
        """How many single and batch timings ``key`` has so far (undecided keys)."""
        with self._lock:
            m = self._measuring.get(key)
            return (len(m.single), len(m.batch)) if m else (0, 0)

    def add(self, key: tuple[Any, ...], single: Sequence[float] = (),
            batch: Sequence[float] = ()) -> BatchChoice | None:
        """Record timings (tokens/s); decide once both ways have one: the best single
        rate (the first pass of a size pays one-off costs; back-to-back passes, as a loop
        of single texts runs, are the fair comparison) against the batch rate."""
        with self._lock:
            if key in self._made:
                return self._made[key]
            m = self._measuring.setdefault(key, _Measuring())
            m.single.extend(single)
            m.batch.extend(batch)
            if not (m.single and m.batch):
                return None
            choice = decide(max(m.single), max(m.batch))
            self._made[key] = choice
            del self._measuring[key]
            return choice

    def decided(self) -> dict[tuple[Any, ...], BatchChoice]:
        """Every decision made so far."""
        with self._lock:
            return dict(self._made)

    def clear(self) -> None:
        """Forget every decision (a new measurement on the next batches)."""
        with self._lock:
            self._made.clear()
            self._measuring.clear()


CHOICES = BatchChoices()


def pad_batch(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ``input_ids`` and ``attention_mask`` tensors (training helpers; scoring
    pads through :func:`needlework.rewards.pooling.score_rows`)."""
    return pad_rows(rows, pad_id)
