"""Two models or judges on the **same units** (see :mod:`needlework.figures.stats` for what
a unit is): :func:`paired` gives the difference of their means with a paired interval and a
test.

The difference of the two means with a paired bootstrap interval (the units' differences
resampled together, in canonical order; for 0/1 outcomes Newcombe's paired interval from the
two Wilson intervals, which does not collapse when the two agree everywhere), and a test
named in ``test``: with 0/1 outcomes (each unit right or wrong once per side) **McNemar's
exact test**: with ``b`` units where the first is right and the second wrong and ``c`` the
other way, p = min(1, 2 · P(X ≤ min(b, c))), X ~ Binomial(b + c, ½), exactly
(:func:`mcnemar_p`); with outcomes in between (a judge's share of its trials) the **Wilcoxon
signed-rank test** on the units' differences (zero differences dropped, tied magnitudes
given their mean rank, the exact distribution of the rank sum given those ranks;
:func:`wilcoxon_p`). ``significant`` is p < 0.05 (McNemar's decided in exact rational
arithmetic).

Units are put in canonical order before any draw, as in :mod:`needlework.figures.stats`, so
the same units in any row order give the same figures. How a comparison is written in a
sentence is :func:`needlework.figures.stats_text.verdict`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import Any

import numpy as np

from needlework.figures.stats import (
    BOOTSTRAP,
    LEVEL,
    NONE,
    RESAMPLES,
    SEED,
    as_array,
    bootstrap_mean,
    is_binary,
    wilson_bounds,
)

ALPHA = Fraction(1, 20)  # "significant at 5 %": p < 1/20, compared exactly
_EXACT_RANKS = 400  # Wilcoxon: the exact distribution up to this many nonzero differences
MCNEMAR = "McNemar's exact test"
WILCOXON = "Wilcoxon signed-rank test"


@dataclass(frozen=True)
class Paired:
    """Two results on the same ``n`` units: ``difference`` = first − second (means), its
    interval (``interval``: ``bootstrap``, ``newcombe`` or ``none``), how many units each
    did better on and how many are tied, and ``test``'s p-value."""

    first: float | None
    second: float | None
    difference: float | None
    low: float | None
    high: float | None
    n: int
    first_better: int
    second_better: int
    p_value: float
    significant: bool
    unit: str
    resamples: int = RESAMPLES
    seed: int = SEED
    level: float = LEVEL
    test: str = MCNEMAR
    interval: str = BOOTSTRAP
    tied: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: every field by name; ``resamples`` and ``seed`` only for a paired
        bootstrap interval (``None`` for Newcombe's or none)."""
        out = asdict(self)
        if self.interval != BOOTSTRAP:
            out["resamples"] = out["seed"] = None
        return out



def mcnemar_p(first_better: int, second_better: int) -> Fraction:
    """McNemar's exact two-sided p-value for ``b`` and ``c`` discordant units, exactly:
    min(1, 2 · Σ_{k ≤ min(b, c)} C(b + c, k) / 2^(b + c)); 1 when none differ."""
    m = first_better + second_better
    if m == 0:
        return Fraction(1)
    tail = sum(math.comb(m, k) for k in range(min(first_better, second_better) + 1))
    return min(Fraction(1), Fraction(2 * tail, 2 ** m))


sign_test_p = mcnemar_p


def _midranks(magnitudes: np.ndarray) -> np.ndarray:
    """Ranks 1..m of ``magnitudes`` (ties share their mean rank), doubled to integers."""
    order = np.argsort(magnitudes, kind="stable")
    ranks2 = np.empty(len(magnitudes), dtype=np.int64)
    sorted_m = magnitudes[order]
    i = 0
    while i < len(sorted_m):
        j = i
        while j + 1 < len(sorted_m) and sorted_m[j + 1] == sorted_m[i]:
            j += 1
        ranks2[order[i:j + 1]] = (i + 1) + (j + 1)  # 2 × the mean of ranks i+1 .. j+1
        i = j + 1
    return ranks2


def wilcoxon_p(differences: Sequence[float]) -> float:
    """The Wilcoxon signed-rank test's two-sided p-value of paired ``differences``: zero
    differences are dropped, the rest ranked by magnitude (ties share their mean rank);
    W⁺ is the sum of the positive differences' ranks and p = min(1, 2 · min(P(W ≤ W⁺),
    P(W ≥ W⁺))) under the exact distribution of W (each rank's sign a fair coin) up to
    400 nonzero differences, else its normal approximation with the tie correction.
    1 when every difference is zero."""
    d = as_array(differences, "differences")
    d = d[d != 0]
    m = len(d)
    if m == 0:
        return 1.0
    ranks2 = _midranks(np.abs(d))
    w2 = int(ranks2[d > 0].sum())  # 2 × W⁺
    if m <= _EXACT_RANKS:
        total = int(ranks2.sum())
        dist = np.zeros(total + 1, dtype=np.float64)
        dist[0] = 1.0
        for r in ranks2:
            shifted = np.zeros_like(dist)
            shifted[r:] = dist[:len(dist) - r]
            dist = 0.5 * (dist + shifted)
        low, high = float(dist[:w2 + 1].sum()), float(dist[w2:].sum())
        return min(1.0, 2.0 * min(low, high))
    ranks = ranks2 / 2.0
    mean = ranks.sum() / 2.0
    var = (ranks ** 2).sum() / 4.0
    z = (w2 / 2.0 - mean) / math.sqrt(var)
    return min(1.0, 2.0 * NormalDist().cdf(-abs(z)))


def newcombe_paired(both: int, only_first: int, only_second: int, neither: int,
                    level: float = LEVEL) -> tuple[float, float, float]:
    """``(difference, low, high)`` of two paired proportions (right with the first minus
    right with the second, over the same units): Newcombe's (1998, method 10) interval from
    the two Wilson intervals and the phi correlation of the 2 × 2 table (0 when a margin is
    empty)."""
    n = both + only_first + only_second + neither
    if n == 0:
        return 0.0, -1.0, 1.0
    p1, p2 = (both + only_first) / n, (both + only_second) / n
    l1, u1 = wilson_bounds(both + only_first, n, level)
    l2, u2 = wilson_bounds(both + only_second, n, level)
    margins = ((both + only_first) * (only_second + neither) * (both + only_second)
               * (only_first + neither))
    phi = (both * neither - only_first * only_second) / math.sqrt(margins) if margins else 0.0
    gap = p1 - p2
    low = gap - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = gap + math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return gap, max(-1.0, low), min(1.0, high)


def paired(first: Sequence[float], second: Sequence[float], *, unit: str = "item",
           resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL) -> Paired:
    """Two results on the same units, in the same order (any order: the figures depend on
    the units only; see the module docstring)."""
    a, b = as_array(first, "first"), as_array(second, "second")
    if len(a) != len(b):
        raise ValueError(f"paired results need the same units: {len(a)} and {len(b)} values")
    n = len(a)
    better_a, better_b = int(np.sum(a > b)), int(np.sum(b > a))
    tied = n - better_a - better_b
    if n == 0:
        return Paired(None, None, None, None, None, 0, 0, 0, 1.0, False, unit, resamples, seed,
                      level, MCNEMAR, NONE, 0)
    first_mean, second_mean = float(a.sum() / n), float(b.sum() / n)
    if is_binary(a) and is_binary(b):
        exact = mcnemar_p(better_a, better_b)
        both = int(np.sum((a == 1) & (b == 1)))
        diff, low, high = newcombe_paired(both, better_a, better_b, n - both - better_a - better_b,
                                          level)
        return Paired(first_mean, second_mean, first_mean - second_mean, low, high, n, better_a,
                      better_b, float(exact), exact < ALPHA, unit, resamples, seed, level,
                      MCNEMAR, "newcombe", tied)
    diff_interval = bootstrap_mean(a - b, unit=unit, resamples=resamples, seed=seed, level=level)
    p = wilcoxon_p(a - b)
    return Paired(first_mean, second_mean, first_mean - second_mean, diff_interval.low,
                  diff_interval.high, n, better_a, better_b, p, p < float(ALPHA), unit, resamples,
                  seed, level, WILCOXON, diff_interval.method, tied)


def paired_by_key(first: Mapping[str, float], second: Mapping[str, float], *,
                  unit: str = "item", **options: Any) -> Paired:
    """:func:`paired` on the keys both mappings have (in sorted key order)."""
    keys = sorted(k for k in first if k in second)
    return paired([first[k] for k in keys], [second[k] for k in keys], unit=unit, **options)
