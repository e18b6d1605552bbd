"""An LLM judge's position bias on a needle run (:func:`needlework.needle.analysis.judge_results`
gives the trials): its accuracy with the chosen response shown first and shown second, each
with a Wilson interval, and the paired gap between the two orders with its interval and test
(:func:`position_bias`); the accuracy per order alone (:func:`order_accuracy`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from needlework.figures import paired, stats
from needlework.needle.analysis import ORDER_NAMES


def wilson_interval(correct: int, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of ``correct`` out of ``n``
    (:func:`needlework.figures.stats.wilson_bounds`); ``(0, 1)`` when ``n`` is 0."""
    return stats.wilson_bounds(correct, n)


@dataclass(frozen=True)
class PositionBias:
    """A judge's accuracy by the order shown, over the ``pairs`` judged in both orders:
    ``first`` (chosen shown first, as A) and ``second`` (shown second, as B), each with its
    95 % Wilson interval; ``gap`` = first − second and its 95 % interval (Newcombe's
    interval for a paired difference, from the two Wilson intervals and the correlation of
    the two orders' outcomes: sound at 0 and at n, unlike a bootstrap of a constant).
    ``both`` / ``only_first`` / ``only_second`` / ``neither``: the pairs right in both
    orders, only with chosen first, only with chosen second, in neither."""

    pairs: int
    first: float
    second: float
    first_interval: tuple[float, float]
    second_interval: tuple[float, float]
    gap: float
    low: float
    high: float
    both: int
    only_first: int
    only_second: int
    neither: int

    @property
    def biased(self) -> bool:
        """Whether the gap's interval excludes 0 (no difference)."""
        return self.low > 0 or self.high < 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, with ``biased`` and the method named."""
        return {"pairs": self.pairs, "accuracy_chosen_first": self.first,
                "accuracy_chosen_second": self.second,
                "chosen_first_interval": list(self.first_interval),
                "chosen_second_interval": list(self.second_interval),
                "gap": self.gap, "gap_low": self.low, "gap_high": self.high,
                "biased": self.biased, "right_in_both": self.both,
                "right_only_first": self.only_first, "right_only_second": self.only_second,
                "right_in_neither": self.neither,
                "method": "Wilson intervals (95 %); gap: Newcombe's paired interval (95 %)"}


def paired_gap_interval(both: int, only_first: int, only_second: int,
                        neither: int) -> tuple[float, float, float]:
    """``(gap, low, high)``: right with the first condition minus right with the second,
    over the same units, with Newcombe's paired interval
    (:func:`needlework.figures.paired.newcombe_paired`)."""
    return paired.newcombe_paired(both, only_first, only_second, neither)


def position_bias(frame: pd.DataFrame) -> PositionBias | None:
    """A judge frame's position bias (:class:`PositionBias`) over the pairs it judged in
    both orders (a pair's orders are each right when every trial of that order is), or
    ``None`` when no pair has both orders (not a judge's frame, or nothing judged)."""
    if "order" not in frame.columns or frame.empty:
        return None
    rows = frame[frame["order"].isin(ORDER_NAMES)]
    per = rows.groupby(["id", "order"])["correct"].all().unstack("order")
    if any(name not in per.columns for name in ORDER_NAMES):
        return None
    per = per.dropna().sort_index()
    first = per[ORDER_NAMES[0]].astype(bool)
    second = per[ORDER_NAMES[1]].astype(bool)
    both, neither = int((first & second).sum()), int((~first & ~second).sum())
    only_first, only_second = int((first & ~second).sum()), int((~first & second).sum())
    n = len(per)
    if n == 0:
        return None
    gap, low, high = paired_gap_interval(both, only_first, only_second, neither)
    return PositionBias(n, (both + only_first) / n, (both + only_second) / n,
                        wilson_interval(both + only_first, n), wilson_interval(both + only_second, n),
                        gap, low, high, both, only_first, only_second, neither)


def order_accuracy(frame: pd.DataFrame) -> dict[str, float]:
    """A judge frame's accuracy by the order shown (position bias: equal figures mean the
    order does not matter)."""
    if "order" not in frame.columns or frame.empty:
        return {}
    return {str(k): float(v) for k, v in frame.groupby("order")["correct"].mean().items()}
