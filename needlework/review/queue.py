"""Which comparisons to review, in what order, and moving through them.

A comparison is chosen[i] vs rejected[j] of one item. Long-form RewardBench
items have 1 × 3, plain pairs and needles 1 × 1, RM-Bench items 3 × 3; with the
``same-style`` scope an RM-Bench item gives only its diagonal (chosen[i] vs
rejected[i]: the near-identical pairs that differ by the injected error).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

SCOPES = {
    "all": "every chosen × every rejected",
    "same-style": "same style only (chosen i vs rejected i)",
}


@dataclass(frozen=True, order=True)
class Comparison:
    """chosen[i] vs rejected[j] of the item ``item`` at import ``position``."""

    position: int
    item: str
    i: int
    j: int

    @property
    def ident(self) -> tuple[str, int, int]:
        """``(item, i, j)``: how verdicts are keyed."""
        return (self.item, self.i, self.j)


def item_comparisons(n_chosen: int, n_rejected: int, scope: str = "all") -> list[tuple[int, int]]:
    """The ``(i, j)`` pairs of one item under ``scope``."""
    if scope == "same-style" and n_chosen == n_rejected and n_chosen > 1:
        return [(i, i) for i in range(n_chosen)]
    return [(i, j) for i in range(n_chosen) for j in range(n_rejected)]


def build_queue(
    items: Iterable[tuple[int, str, int, int]], scope: str = "all"
) -> list[Comparison]:
    """Every comparison of ``items`` (``(position, key, n_chosen, n_rejected)``) in
    reading order: item by item, then chosen index, then rejected index."""
    out = [
        Comparison(position, key, i, j)
        for position, key, n_chosen, n_rejected in items
        for i, j in item_comparisons(n_chosen, n_rejected, scope)
    ]
    out.sort()
    return out


def index_of(queue: Sequence[Comparison], current: Comparison | None) -> int | None:
    """Where ``current`` is in ``queue`` (``None`` when it is not there)."""
    if current is None:
        return None
    k = bisect_left(queue, current)
    return k if k < len(queue) and queue[k] == current else None


def step(queue: Sequence[Comparison], current: Comparison | None, delta: int) -> Comparison | None:
    """The comparison ``delta`` places after (or before) ``current``, stopping at the
    ends. When ``current`` is not in the queue (filtered out), the nearest one in
    that direction is taken."""
    if not queue:
        return None
    if current is None:
        return queue[0] if delta >= 0 else queue[-1]
    k = index_of(queue, current)
    if k is None:
        k = bisect_right(queue, current) if delta > 0 else bisect_left(queue, current) - 1
        delta -= 1 if delta > 0 else -1 if delta < 0 else 0
    return queue[max(0, min(len(queue) - 1, k + delta))]


def next_unreviewed(
    queue: Sequence[Comparison],
    current: Comparison | None,
    reviewed: Collection[tuple[str, int, int]],
    include_current: bool = False,
) -> Comparison | None:
    """The first comparison after ``current`` (wrapping around to the start) that
    is not in ``reviewed``; ``None`` when every one is reviewed."""
    if not queue:
        return None
    start = 0 if current is None else bisect_left(queue, current)
    if current is not None and not include_current and start < len(queue) and queue[start] == current:
        start += 1
    for k in range(len(queue)):
        candidate = queue[(start + k) % len(queue)]
        if candidate.ident not in reviewed:
            return candidate
    return None


def unreviewed_count(queue: Iterable[Comparison], reviewed: Collection[tuple[str, int, int]]) -> int:
    """How many comparisons of ``queue`` are not in ``reviewed``."""
    return sum(1 for c in queue if c.ident not in reviewed)
