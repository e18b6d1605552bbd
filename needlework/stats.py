"""Confidence intervals and paired comparisons for the accuracy and RAG figures.

Every figure here is a **mean of per-unit values**, and the unit is named with it: an
*item* of a preference dataset (accuracy = the mean of 0/1 per item), a *question* of a
grounding dataset, a needle *pair*, a *comparison*. Units are what the bootstrap
resamples, so values that are not independent (the trials of one item, the pairs of one
item's responses) travel together inside their unit.

- :func:`bootstrap_mean`: the percentile bootstrap of such a mean. ``resamples`` sets
  of ``n`` units are drawn with replacement (default :data:`RESAMPLES` = 1,000) by a
  ``numpy.random.Generator`` seeded with ``seed`` (default :data:`SEED` = 0); the
  interval is the 2.5th and 97.5th percentiles of the resampled means (``numpy.quantile``,
  linear interpolation). ``weights`` make it a ratio (Σ wᵢvᵢ / Σ wᵢ: accuracy per trial
  with the item's trials as its weight), ``strata`` resample within each group and
  average the groups' means with equal weight (RM-Bench's mean over domains).
- :func:`paired`: two models or judges on the **same units**. The difference of their
  means with a paired bootstrap interval (the units' differences resampled together,
  same seed and count), and McNemar's exact test on the units where they differ: with
  ``b`` units where the first did better and ``c`` where the second did, p = the
  two-sided binomial tail P(X ≤ min(b, c)) × 2, X ~ Binomial(b + c, ½), capped at 1.
  For 0/1 outcomes that is McNemar's exact test; for outcomes in between (a judge's
  share of trials) it is the same exact sign test on the units whose outcomes differ.
  ``significant`` is p < 0.05, decided in exact rational arithmetic.

The resampling draws integers only; the means are plain float sums in a fixed order, so
the same inputs give the same interval on any processor (no BLAS, no threads). Nothing
here reads or writes anything but its arguments.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

import numpy as np

RESAMPLES = 1000
SEED = 0
LEVEL = 0.95
ALPHA = Fraction(1, 20)  # "significant at 5 %": p < 1/20, compared exactly
_CHUNK = 1 << 21  # resampled values drawn at once at most (bounds the memory: ~50 MB)


@dataclass(frozen=True)
class Interval:
    """A mean over ``n`` units and its percentile bootstrap interval (``None`` for no unit)."""

    estimate: float | None
    low: float | None
    high: float | None
    n: int
    unit: str
    resamples: int = RESAMPLES
    seed: int = SEED
    level: float = LEVEL

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: every field by name."""
        return asdict(self)


@dataclass(frozen=True)
class Paired:
    """Two results on the same ``n`` units: ``difference`` = first − second (means), its
    paired bootstrap interval, how many units each did better on, McNemar's exact p."""

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

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: every field by name."""
        return asdict(self)


def _array(values: Sequence[float], name: str) -> np.ndarray:
    out = np.asarray(values, dtype=np.float64)
    if out.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence of numbers")
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name} must be finite numbers (a missing value is the caller's to decide)")
    return out


def _resampled_means(rng: np.random.Generator, values: np.ndarray, weights: np.ndarray | None,
                     resamples: int) -> np.ndarray:
    """``resamples`` means of ``len(values)`` units drawn with replacement (weighted: the
    ratio Σ w v / Σ w of each draw), in blocks of at most :data:`_CHUNK` draws."""
    n = len(values)
    rows = max(1, _CHUNK // n)
    out = np.empty(resamples, dtype=np.float64)
    done = 0
    while done < resamples:
        b = min(rows, resamples - done)
        idx = rng.integers(0, n, size=(b, n))
        if weights is None:
            out[done:done + b] = values[idx].sum(axis=1) / n
        else:
            w = weights[idx]
            out[done:done + b] = (w * values[idx]).sum(axis=1) / w.sum(axis=1)
        done += b
    return out


def _bounds(means: np.ndarray, level: float) -> tuple[float, float]:
    tail = round((1.0 - level) / 2.0, 12)  # 0.025, not 0.025000000000000022
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


def _point(values: np.ndarray, weights: np.ndarray | None) -> float:
    if weights is None:
        return float(values.sum() / len(values))
    return float((weights * values).sum() / weights.sum())


def bootstrap_mean(values: Sequence[float], *, unit: str = "item",
                   weights: Sequence[float] | None = None,
                   strata: Sequence[Hashable] | None = None, resamples: int = RESAMPLES,
                   seed: int = SEED, level: float = LEVEL) -> Interval:
    """The mean of ``values`` (one per unit) and its percentile bootstrap interval.

    ``weights`` (positive, one per unit): the estimate is Σ wᵢvᵢ / Σ wᵢ and each resample
    the same ratio over its draw. ``strata`` (one label per unit): units are drawn within
    their stratum (each keeps its size) and the estimate is the plain mean of the strata's
    means, strata in sorted order. No unit: every figure ``None``. One unit: the interval
    is that value.
    """
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    v = _array(values, "values")
    w = None if weights is None else _array(weights, "weights")
    if w is not None and (len(w) != len(v) or np.any(w <= 0)):
        raise ValueError("weights must be positive, one per value")
    if w is not None and len(w) and np.all(w == w[0]):
        w = None  # equal weights: the plain mean, drawn the same way, computed faster
    n = len(v)
    if n == 0:
        return Interval(None, None, None, 0, unit, resamples, seed, level)
    rng = np.random.default_rng(seed)
    if strata is None:
        estimate = _point(v, w)
        means = _resampled_means(rng, v, w, resamples)
    else:
        if len(strata) != n:
            raise ValueError("strata must give one label per value")
        labels = sorted(set(strata), key=repr)
        parts = [np.asarray([k for k, s in enumerate(strata) if s == label]) for label in labels]
        estimate = sum(_point(v[p], None if w is None else w[p]) for p in parts) / len(parts)
        totals = np.zeros(resamples, dtype=np.float64)
        for p in parts:
            totals += _resampled_means(rng, v[p], None if w is None else w[p], resamples)
        means = totals / len(parts)
    low, high = _bounds(means, level)
    # a float sum may land a hair outside the values' range; the bounds never do
    return Interval(estimate, max(low, float(v.min())), min(high, float(v.max())), n, unit,
                    resamples, seed, level)


def sign_test_p(first_better: int, second_better: int) -> Fraction:
    """McNemar's exact two-sided p-value for ``b`` and ``c`` discordant units, exactly:
    min(1, 2 · Σ_{k ≤ min(b, c)} C(b + c, k) / 2^(b + c)); 1 when none differ."""
    m = first_better + second_better
    if m == 0:
        return Fraction(1)
    tail = sum(math.comb(m, k) for k in range(min(first_better, second_better) + 1))
    return min(Fraction(1), Fraction(2 * tail, 2 ** m))


def paired(first: Sequence[float], second: Sequence[float], *, unit: str = "item",
           resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL) -> Paired:
    """Two results on the same units, in the same order (see the module docstring)."""
    a, b = _array(first, "first"), _array(second, "second")
    if len(a) != len(b):
        raise ValueError(f"paired results need the same units: {len(a)} and {len(b)} values")
    better_a, better_b = int(np.sum(a > b)), int(np.sum(b > a))
    p = sign_test_p(better_a, better_b)
    diff = bootstrap_mean(a - b, unit=unit, resamples=resamples, seed=seed, level=level)
    n = len(a)
    return Paired(float(a.sum() / n) if n else None, float(b.sum() / n) if n else None,
                  diff.estimate, diff.low, diff.high, n, better_a, better_b, float(p),
                  p < ALPHA, unit, resamples, seed, level)


def paired_by_key(first: Mapping[str, float], second: Mapping[str, float], *,
                  unit: str = "item", **options: Any) -> Paired:
    """:func:`paired` on the keys both mappings have (in sorted key order)."""
    keys = sorted(k for k in first if k in second)
    return paired([first[k] for k in keys], [second[k] for k in keys], unit=unit, **options)


# -- words --------------------------------------------------------------------------------


def how(resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL) -> str:
    """``95 % percentile bootstrap, 1,000 resamples, seed 0``."""
    return f"{round(level * 100)} % percentile bootstrap, {resamples:,} resamples, seed {seed}"


def percent_range(interval: Interval | Mapping[str, Any] | None, digits: int = 1) -> str:
    """``41.2–58.8 %``, or ``–`` when there is no interval."""
    low, high = _lh(interval)
    if low is None or high is None:
        return "–"
    return f"{100 * low:.{digits}f}–{100 * high:.{digits}f} %"


def number_range(interval: Interval | Mapping[str, Any] | None, digits: int = 3) -> str:
    """``0.412–0.588``, or ``–`` when there is no interval."""
    low, high = _lh(interval)
    if low is None or high is None:
        return "–"
    return f"{low:.{digits}f}–{high:.{digits}f}"


def _lh(interval: Interval | Mapping[str, Any] | None) -> tuple[float | None, float | None]:
    if interval is None:
        return None, None
    if isinstance(interval, Mapping):
        low, high = interval.get("low"), interval.get("high")
    else:
        low, high = interval.low, interval.high
    known = [None if x is None or not math.isfinite(x) else float(x) for x in (low, high)]
    return known[0], known[1]


def verdict(result: Paired, first: str, second: str, *, percent: bool = True) -> str:
    """One sentence on a paired comparison: the difference, its interval, McNemar's p
    and whether it is significant at 5 %."""
    if result.n == 0 or result.difference is None:
        return f"No {result.unit} was judged by both {first} and {second}: nothing to compare."

    def fmt(x: float) -> str:
        return f"{100 * x:+.1f} points" if percent else f"{x:+.3f}"

    def rng(x: float) -> str:
        return f"{100 * x:+.1f}" if percent else f"{x:+.3f}"

    units = f"{result.n:,} {result.unit}{'s' if result.n != 1 else ''}"
    head = (f"On the {units} both judged, {first} − {second} = {fmt(result.difference)} "
            f"(95 % paired bootstrap interval {rng(result.low or 0.0)} to {rng(result.high or 0.0)}; "
            f"{first} better on {result.first_better}, {second} on {result.second_better}); "
            f"McNemar's exact test p = {result.p_value:.3g}: ")
    if result.significant:
        return head + "the difference is significant at 5 %."
    return head + "not significant at 5 % (it may be chance)."
