"""How the figures of :mod:`needlework.figures.stats` and :mod:`~needlework.figures.paired`
are written: the one rounding rule every page and command uses for a percentage, interval
ranges, the method in words, and the one sentence on a paired comparison.

:func:`percent` and :func:`percent_range` round half up on the exact value (21 of 40 is
52.5 %, and 52.5 at no decimal is 53). Nothing here reads or writes anything but its
arguments.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Any

from needlework.figures.paired import Paired
from needlework.figures.stats import (
    BOOTSTRAP,
    LEVEL,
    MIN_UNITS,
    NONE,
    RESAMPLES,
    SEED,
    WILSON,
    Interval,
)


def _method_words(method: str, resamples: int, seed: int, level: float) -> str:
    pct = f"{round(level * 100)} %"
    if method == WILSON:
        return f"{pct} Wilson score interval"
    if method == NONE:
        return "no interval (every unit the same value, too few units to estimate one)"
    return f"{pct} percentile bootstrap, {resamples:,} resamples, seed {seed}"


def how(*shown: Interval | Mapping[str, Any] | None, resamples: int = RESAMPLES,
        seed: int = SEED, level: float = LEVEL) -> str:
    """The method of the intervals ``shown`` (``95 % Wilson score interval``, ``95 %
    percentile bootstrap, 1,000 resamples, seed 0``, both joined by ``;`` when both are
    shown); with none given, the rule: ``95 % Wilson score interval for a share of 0/1
    outcomes, else 95 % percentile bootstrap, 1,000 resamples, seed 0``."""
    methods: list[str] = []
    for interval in shown:
        if interval is None:
            continue
        got = interval.get("method") if isinstance(interval, Mapping) else interval.method
        words = _method_words(str(got or BOOTSTRAP), resamples, seed, level)
        if words not in methods:
            methods.append(words)
    if methods:
        return "; ".join(methods)
    return (f"{_method_words(WILSON, resamples, seed, level)} for a share of 0/1 outcomes, "
            f"else {_method_words(BOOTSTRAP, resamples, seed, level)}")


def no_interval(interval: Interval | Mapping[str, Any] | None) -> str:
    """Why an interval has no bounds, in a few words: ``no item counted``, or ``every
    resample of the 4 items gives the same mean (…), and under 30 items that cannot stand
    for the uncertainty``; ``""`` when it has bounds."""
    if interval is None:
        return ""
    low, high = _lh(interval)
    if low is not None and high is not None:
        return ""
    get = interval.get if isinstance(interval, Mapping) else lambda k: getattr(interval, k)
    n, unit = int(get("n") or 0), str(get("unit") or "unit")
    if n == 0:
        return f"no {unit} counted"
    if get("method") == NONE:
        units = f"{n} {unit}{'s' if n != 1 else ''}"
        return (f"every resample of the {units} gives the same mean (they are alike, within "
                f"each group where grouped), and under {MIN_UNITS} {unit}s that cannot stand "
                "for the uncertainty")
    return "it could not be estimated"


def method_label(interval: Interval | Mapping[str, Any] | None) -> str:
    """A short name of an interval's method for beside a figure: ``95 % Wilson``,
    ``95 % bootstrap``, ``not estimable`` or ``–``."""
    if interval is None:
        return "–"
    got = interval.get("method") if isinstance(interval, Mapping) else interval.method
    level = (interval.get("level") if isinstance(interval, Mapping) else interval.level) or LEVEL
    if got == NONE:
        return "not estimable"
    return f"{round(float(level) * 100)} % {'Wilson' if got == WILSON else 'bootstrap'}"


def _exact(value: float | int | Fraction | Decimal) -> Decimal:
    if isinstance(value, Fraction):
        return Decimal(value.numerator) / Decimal(value.denominator)
    return Decimal(value)  # a float converts exactly (its binary value)


def round_half_up(value: float | int | Fraction | Decimal, digits: int = 1) -> str:
    """``value`` with ``digits`` decimals, halves rounded away from zero on its exact value
    (``52.5`` at 0 digits is ``53``; ``-0.0`` prints ``0``)."""
    quantum = Decimal(1).scaleb(-digits)
    if isinstance(value, Fraction):
        # exact: scale, round the rational half up, then place the point
        scaled = value * 10 ** digits
        whole = math.floor(abs(scaled) + Fraction(1, 2))
        text = str(Decimal(whole).scaleb(-digits).quantize(quantum))
        return ("-" + text) if scaled < 0 and whole else text
    out = _exact(value).quantize(quantum, rounding=ROUND_HALF_UP)
    if out == 0:
        out = abs(out)
    return str(out)


def signed(value: float, digits: int = 4) -> str:
    """``value`` with its sign and ``digits`` decimals (``+0.0948``, ``-1.5177``), or, where
    those would read 0 though it is not, as many decimals as its first three significant
    figures need (``-0.0000343``), so a margin that is not a tie never reads as one;
    ``0`` only for zero itself."""
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return str(value)
    shown = digits
    if float(round_half_up(abs(value), digits)) == 0:
        shown = -math.floor(math.log10(abs(value))) + 2
    text = format(Decimal(round_half_up(value, shown)), "f")  # never 1.00E-9
    return text if text.startswith("-") else "+" + text


def percent(value: float | int | Fraction | None, of: int | None = None, digits: int = 1, *,
            space: bool = True, sign: bool = False) -> str:
    """A share as a percentage, rounded half up on its exact value: ``percent(21, 40)`` is
    ``52.5 %`` (the fraction 21/40 exactly); ``percent(0.525)`` the same; ``–`` for
    ``None`` or a zero denominator. ``space=False`` gives ``52.5%``; ``sign=True``
    ``+52.5 %``."""
    if value is None or (of is not None and of == 0):
        return "–"
    if of is not None:
        share: Fraction | float = Fraction(int(value), int(of))
    elif isinstance(value, float) and not math.isfinite(value):
        return "–"
    else:
        share = value if isinstance(value, Fraction) else Fraction(value)
    text = round_half_up(share * 100, digits)
    if sign and not text.startswith("-"):
        text = "+" + text
    return text + (" %" if space else "%")


def percent_range(interval: Interval | Mapping[str, Any] | None, digits: int = 1) -> str:
    """``41.2–58.8 %``, or ``–`` when there is no interval (rounded as :func:`percent`)."""
    low, high = _lh(interval)
    if low is None or high is None:
        return "–"
    return f"{round_half_up(Fraction(low) * 100, digits)}–{round_half_up(Fraction(high) * 100, digits)} %"


def number_range(interval: Interval | Mapping[str, Any] | None, digits: int = 3) -> str:
    """``0.412–0.588``, or ``–`` when there is no interval (rounded as :func:`percent`)."""
    low, high = _lh(interval)
    if low is None or high is None:
        return "–"
    return f"{round_half_up(low, digits)}–{round_half_up(high, digits)}"


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
    """One sentence on a paired comparison: who is ahead by how much (the sign of the
    difference of the means), its interval in the same direction (of the one ahead minus
    the other: "fake3 is ahead of demo-judge by 72.5 points (… interval of fake3 −
    demo-judge: +65.0 to +80.0)"), on how many units each did better and how many are
    tied, the test by name with its p, and whether it is significant at 5 %."""
    if result.n == 0 or result.difference is None:
        return f"No {result.unit} was judged by both {first} and {second}: nothing to compare."
    as_percent = percent

    def fmt(x: float) -> str:
        return (f"{round_half_up(Fraction(x) * 100, 1)} points" if as_percent
                else round_half_up(x, 3))

    def rng(x: float) -> str:
        text = round_half_up(Fraction(x) * 100, 1) if as_percent else round_half_up(x, 3)
        return text if text.startswith("-") or text.strip("0.") == "" else "+" + text

    def units(k: int) -> str:
        return f"{k:,} {result.unit}{'s' if k != 1 else ''}"

    diff = result.difference
    # the interval reads in the sentence's direction: of the one ahead minus the other
    ahead, behind, low, high = first, second, result.low, result.high
    if fmt(abs(diff)) == fmt(0.0):
        lead = f"{first} and {second} are level"
    elif diff > 0:
        lead = f"{first} is ahead of {second} by {fmt(diff)}"
    else:
        lead = f"{second} is ahead of {first} by {fmt(-diff)}"
        ahead, behind = second, first
        low, high = (None if result.high is None else -result.high,
                     None if result.low is None else -result.low)
    kind = "Newcombe's paired" if result.interval == "newcombe" else "paired bootstrap"
    if low is None or high is None:
        spread = f"{ahead} − {behind}: no interval (the differences are all the same)"
    else:
        spread = (f"95 % {kind} interval of {ahead} − {behind}: "
                  f"{rng(low)} to {rng(high)}")
    head = (f"On the {units(result.n)} both judged, {lead} ({spread}). "
            f"{first} better on {units(result.first_better)}, {second} better on "
            f"{units(result.second_better)}, tied on {units(result.tied)}. "
            f"{result.test} p = {result.p_value:.3g}: ")
    tail = (head + "the difference is significant at 5 %." if result.significant
            else head + "not significant at 5 % (it may be chance).")
    if result.low is None or result.high is None:
        return tail
    excludes = result.low > 0 or result.high < 0
    if excludes == result.significant:
        return tail
    # the interval and the test are computed differently and may disagree near the line
    return (tail + f" The verdict follows the test, not the interval: the {kind} interval, "
            f"computed another way, {'excludes' if excludes else 'includes'} 0 here, so the "
            "difference is near the 5 % line.")
