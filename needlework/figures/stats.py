"""Confidence intervals for the accuracy and RAG figures.

Every figure here is a **mean of per-unit values**, and the unit is named with it: an
*item* of a preference dataset (accuracy = the mean of 0/1 per item), a *question* of a
grounding dataset, a needle *pair*, a *comparison*. Units are what an interval counts, so
values that are not independent (the trials of one item, the pairs of one item's
responses) travel together inside their unit.

- :func:`bootstrap_mean` (also :func:`mean_interval`): the 95 % interval of such a mean,
  by the method the data calls for, named in the result's ``method``:

  * ``wilson``: every value is 0 or 1, unweighted and unstratified (a plain proportion,
    ``k`` of ``n``): the Wilson score interval (:func:`wilson`), which stays inside
    [0, 1] and does not collapse at 0 or ``n`` (0 of 5: 0–43.4 %).
  * ``bootstrap``: anything else (shares of an item's trials, weighted ratios, strata):
    the percentile bootstrap. ``resamples`` sets of ``n`` units are drawn with
    replacement (default :data:`RESAMPLES` = 1,000) by a ``numpy.random.Generator``
    seeded with ``seed`` (default :data:`SEED` = 0); the interval is the 2.5th and 97.5th
    percentiles of the resampled means (``numpy.quantile``, linear interpolation).
    ``weights`` make it a ratio (Σ wᵢvᵢ / Σ wᵢ), ``strata`` resample within each group
    and average the groups' means with equal weight (RM-Bench's mean over domains).
  * A bootstrap of zero width (every unit the same value, or each stratum constant)
    says nothing about the uncertainty: when every unit is 0, or every unit 1, it is
    replaced by Wilson on the counts of units (0 or ``n`` of ``n``); when every unit has
    the same share in [0, 1] (an always-A judge, right in half of each item's trials),
    by Wilson at that share over the units (:func:`wilson_share_bounds`; for values in
    [0, 1] that is conservative, a 0/1 variable having the largest spread for its mean);
    otherwise (strata each constant, or values outside [0, 1]), under :data:`MIN_UNITS`
    units, by no interval (``method`` ``none``, ``low`` and ``high`` ``None``: it cannot
    be estimated, and :func:`needlework.figures.stats_text.no_interval` says why).

  **Order does not matter**: the units are put in a canonical order (by stratum, then
  value, then weight) before any draw, so the same units in any row order give the same
  interval, to the last bit. A mapping ``{key: value}`` may be passed instead of a list.
- Two results on the same units, their difference and a paired test:
  :mod:`needlework.figures.paired`.

The resampling draws integers only; the means are plain float sums in a fixed order, so
the same inputs give the same interval on any processor (no BLAS, no threads).
How a figure is written (the rounding rule, ranges, the method in words, a paired
comparison's sentence) is :mod:`needlework.figures.stats_text`. Nothing here reads or writes
anything but its arguments.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any, TypeVar

import numpy as np

RESAMPLES = 1000
SEED = 0
LEVEL = 0.95
MIN_UNITS = 30  # under this many units a constant sample gets no bootstrap interval
_CHUNK = 1 << 21  # resampled values drawn at once at most (bounds the memory: ~50 MB)

WILSON = "wilson"
BOOTSTRAP = "bootstrap"
NONE = "none"


@dataclass(frozen=True)
class Interval:
    """A mean over ``n`` units and its interval (``None`` for no unit, or when it cannot
    be estimated): ``method`` is ``wilson``, ``bootstrap`` or ``none``; ``right`` is the
    count of units at 1 for a Wilson interval (else ``None``)."""

    estimate: float | None
    low: float | None
    high: float | None
    n: int
    unit: str
    resamples: int = RESAMPLES
    seed: int = SEED
    level: float = LEVEL
    method: str = BOOTSTRAP
    right: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: every field by name; ``resamples`` and ``seed`` only for a bootstrap
        (``None`` for Wilson's interval or none: nothing was resampled)."""
        return interval_dict(asdict(self))


def interval_dict(interval: Mapping[str, Any]) -> dict[str, Any]:
    """An interval as a dict (:meth:`Interval.as_dict`, or one stored before this rule)
    that names only its own method: ``resamples`` and ``seed`` are ``None`` unless its
    ``method`` is the bootstrap (a Wilson interval stored with ``"resamples": 1000``
    resampled nothing)."""
    out = dict(interval)
    if out.get("method", BOOTSTRAP) != BOOTSTRAP:
        out["resamples"] = out["seed"] = None
    return out


def as_array(values: Sequence[float], name: str) -> np.ndarray:
    """``values`` as a flat array of finite numbers (``name`` says which in an error)."""
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


def _canonical(values: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """The indices that put units in canonical order: by value, then weight."""
    if weights is None:
        return np.argsort(values, kind="stable")
    return np.lexsort((weights, values))


def _z(level: float) -> float:
    return NormalDist().inv_cdf(1.0 - (1.0 - level) / 2.0)


def wilson_bounds(right: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The Wilson score interval of ``right`` out of ``n``: with p = right / n and z the
    normal quantile of the level (1.959964 at 95 %), centre (p + z²/2n) / (1 + z²/n) ±
    z / (1 + z²/n) · √(p(1 − p)/n + z²/4n²), clipped to [0, 1]; ``(0, 1)`` for ``n`` 0."""
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= right <= n:
        raise ValueError(f"right must be between 0 and n ({n}), got {right}")
    return wilson_share_bounds(right / n, n, level)


def wilson_share_bounds(p: float, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The Wilson score interval at the share ``p`` (in [0, 1]) over ``n`` units, by the
    formula of :func:`wilson_bounds` (which is this at ``p = right / n``)."""
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= p <= 1:
        raise ValueError(f"p must be between 0 and 1, got {p}")
    z = _z(level)
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low = 0.0 if p == 0 else max(0.0, centre - half)
    high = 1.0 if p == 1 else min(1.0, centre + half)
    return low, high


def wilson(right: int, n: int, *, unit: str = "item", level: float = LEVEL) -> Interval:
    """``right`` of ``n`` units as a proportion with its Wilson score interval
    (:func:`wilson_bounds`); no unit: every figure ``None``."""
    if n <= 0:
        return Interval(None, None, None, 0, unit, level=level, method=WILSON, right=0)
    low, high = wilson_bounds(right, n, level)
    return Interval(right / n, low, high, n, unit, level=level, method=WILSON, right=right)


def is_binary(v: np.ndarray) -> bool:
    """Whether every value is 0 or 1."""
    return bool(np.all((v == 0) | (v == 1)))


_Key = TypeVar("_Key", bound=Hashable)


def _unpack(values: Sequence[float] | Mapping[_Key, float],
            weights: Sequence[float] | Mapping[_Key, float] | None,
            strata: Sequence[Hashable] | Mapping[_Key, Hashable] | None
            ) -> tuple[list[float], list[float] | None, list[Hashable] | None]:
    """Mappings ``{key: value}`` (and the same keys for weights and strata) as lists in
    sorted key order."""
    if not isinstance(values, Mapping):
        if isinstance(weights, Mapping) or isinstance(strata, Mapping):
            raise ValueError("weights and strata are mappings only when values is one")
        return list(values), None if weights is None else list(weights), \
            None if strata is None else list(strata)
    keys = sorted(values, key=repr)
    for name, part in (("weights", weights), ("strata", strata)):
        if part is not None and (not isinstance(part, Mapping) or set(part) != set(values)):
            raise ValueError(f"{name} must be a mapping with the same keys as values")
    assert weights is None or isinstance(weights, Mapping)
    assert strata is None or isinstance(strata, Mapping)
    return ([values[k] for k in keys], None if weights is None else [weights[k] for k in keys],
            None if strata is None else [strata[k] for k in keys])


def bootstrap_mean(values: Sequence[float] | Mapping[_Key, float], *, unit: str = "item",
                   weights: Sequence[float] | Mapping[_Key, float] | None = None,
                   strata: Sequence[Hashable] | Mapping[_Key, Hashable] | None = None,
                   resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL) -> Interval:
    """The mean of ``values`` (one per unit, or ``{key: value}``) and its 95 % interval by
    the method the data calls for (see the module docstring: Wilson for a plain proportion,
    else the percentile bootstrap in canonical unit order, never a zero-width bootstrap).

    ``weights`` (positive, one per unit): the estimate is Σ wᵢvᵢ / Σ wᵢ and each resample
    the same ratio over its draw. ``strata`` (one label per unit): units are drawn within
    their stratum (each keeps its size) and the estimate is the plain mean of the strata's
    means, strata in sorted order. No unit: every figure ``None``.
    """
    v, w, labels = _checked(values, weights, strata, resamples, level)
    n = len(v)
    if n == 0:
        return Interval(None, None, None, 0, unit, resamples, seed, level)
    binary = is_binary(v)
    if binary and w is None and (labels is None or len(set(labels)) == 1):
        return wilson(int(v.sum()), n, unit=unit, level=level)
    estimate, means = _resampled(np.random.default_rng(seed), v, w, labels, resamples)
    low, high = _bounds(means, level)
    # a float sum may land a hair outside the values' range; the bounds never do
    low, high = max(low, float(v.min())), min(high, float(v.max()))
    zero_width = (_zero_width(estimate, v, labels, binary, unit, resamples, seed, level)
                  if high - low <= 0 else None)
    return zero_width or Interval(estimate, low, high, n, unit, resamples, seed, level)


def _checked(values: Sequence[float] | Mapping[_Key, float],
             weights: Sequence[float] | Mapping[_Key, float] | None,
             strata: Sequence[Hashable] | Mapping[_Key, Hashable] | None, resamples: int,
             level: float) -> tuple[np.ndarray, np.ndarray | None, list[Hashable] | None]:
    """``(values, weights, strata)`` of :func:`bootstrap_mean`, checked: arrays in key
    order, equal weights dropped (the plain mean, drawn the same way, computed faster)."""
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    listed, weighed, labels = _unpack(values, weights, strata)
    v = as_array(listed, "values")
    w = None if weighed is None else as_array(weighed, "weights")
    if w is not None and (len(w) != len(v) or np.any(w <= 0)):
        raise ValueError("weights must be positive, one per value")
    if w is not None and len(w) and np.all(w == w[0]):
        w = None
    if len(v) and labels is not None and len(labels) != len(v):
        raise ValueError("strata must give one label per value")
    return v, w, labels


def _resampled(rng: np.random.Generator, v: np.ndarray, w: np.ndarray | None,
               strata: list[Hashable] | None, resamples: int) -> tuple[float, np.ndarray]:
    """``(estimate, resampled means)``: plain, or within each stratum (the strata's means
    averaged with equal weight), every draw in canonical unit order."""
    if strata is None:
        order = _canonical(v, w)
        v = v[order]
        w = None if w is None else w[order]
        return _point(v, w), _resampled_means(rng, v, w, resamples)
    labels = sorted(set(strata), key=repr)
    parts = []
    for label in labels:
        p = np.asarray([k for k, s in enumerate(strata) if s == label])
        parts.append(p[_canonical(v[p], None if w is None else w[p])])
    estimate = sum(_point(v[p], None if w is None else w[p]) for p in parts) / len(parts)
    totals = np.zeros(resamples, dtype=np.float64)
    for p in parts:
        totals += _resampled_means(rng, v[p], None if w is None else w[p], resamples)
    return estimate, totals / len(parts)


def _zero_width(estimate: float, v: np.ndarray, strata: list[Hashable] | None, binary: bool,
                unit: str, resamples: int, seed: int, level: float) -> Interval | None:
    """What stands for a bootstrap of zero width (the module docstring's rules): Wilson on
    the counts, Wilson at the common share, or no interval; ``None``: the bootstrap's."""
    n = len(v)
    if binary and v.min() == v.max():
        return Interval(estimate, *wilson_bounds(int(v.sum()), n, level), n, unit,
                        resamples, seed, level, WILSON, int(v.sum()))
    if (strata is None or len(set(strata)) == 1) and 0 <= v.min() and v.max() <= 1:
        # every unit the same share (an always-A judge: each item right in half its
        # trials): Wilson at that share over the units, as for all 0 or all 1
        return Interval(estimate, *wilson_share_bounds(estimate, n, level), n, unit,
                        resamples, seed, level, WILSON)
    if n < MIN_UNITS:
        return Interval(estimate, None, None, n, unit, resamples, seed, level, NONE)
    return None


mean_interval = bootstrap_mean
