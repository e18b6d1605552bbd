"""Per-token rewards of one chosen and one rejected response, compared, and remembered.

The reward page and the needle lab draw a pair's reward token by token; computing it
takes one forward pass per response for a head-method model and many prefix passes
otherwise (:mod:`needlework.rewards.per_token`), so the last pairs and their pass
plans are kept for the process (a rerun or another tab asking again gets them at once).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from needlework.rewards.curves import CurveComparison, PerTokenResult, compare_curves
from needlework.rewards.loading import RewardModel
from needlework.rewards.per_token import (
    DEFAULT_MAX_PASSES,
    PrefixPlan,
    per_token_rewards,
    prefix_plan,
)
from needlework.rewards.templates import render, text_hash


@dataclass
class TokenPair:
    """Per-token rewards of one chosen and one rejected response, and where they differ."""

    chosen: PerTokenResult
    rejected: PerTokenResult
    comparison: CurveComparison
    chosen_text: str  # the rendered text from the response start (what ``tokens`` cover)
    rejected_text: str


_PAIRS: OrderedDict[tuple, TokenPair] = OrderedDict()
_PAIRS_LOCK = threading.Lock()


def _tail(rm: RewardModel, prompt: str, response: str) -> str:
    shown = render(rm.tokenizer, prompt, response)
    return shown.text[shown.response_start or 0:]


def _pair_key(rm: RewardModel, prompt: str, chosen: str, rejected: str, truncation: str,
              stride: int) -> tuple:
    return (rm.facts.fingerprint, rm.facts.dtype, rm.facts.device, truncation, stride,
            text_hash(prompt), text_hash(chosen), text_hash(rejected))


def cached_token_pair(rm: RewardModel, prompt: str, chosen: str, rejected: str,
                      truncation: str = "skip", stride: int = 1) -> TokenPair | None:
    """The pair :func:`token_pair` computed earlier with these arguments, or ``None``."""
    key = _pair_key(rm, prompt, chosen, rejected, truncation, stride)
    with _PAIRS_LOCK:
        if key in _PAIRS:
            _PAIRS.move_to_end(key)
            return _PAIRS[key]
    return None


def token_pair(rm: RewardModel, prompt: str, chosen: str, rejected: str,
               truncation: str = "skip", *, stride: int = 1,
               max_passes: int = DEFAULT_MAX_PASSES,
               progress: Callable[[int, int], None] | None = None) -> TokenPair:
    """Per-token rewards of both responses, cached per model, texts, policy and stride.

    One forward pass per response for a head-method model; prefix passes otherwise
    (``stride``, ``max_passes`` and ``progress(done, total)`` over both responses, see
    :func:`needlework.rewards.per_token.per_token_rewards`). Raises the engine's errors
    (``InputTooLongError`` under ``skip``, ``PerTokenTooCostlyError``,
    ``PerTokenMismatchError``, ``PerTokenUnsupportedError``).
    """
    found = cached_token_pair(rm, prompt, chosen, rejected, truncation, stride)
    if found is not None:
        return found
    results: list[PerTokenResult] = []
    done = [0, 0]

    def step(k: int) -> Callable[[int, int], None] | None:
        if progress is None:
            return None

        def report(d: int, t: int) -> None:
            done[k] = d
            totals[k] = t
            progress(sum(done), sum(totals))
        return report

    totals = [0, 0]
    for k, response in enumerate((chosen, rejected)):
        results.append(per_token_rewards(rm, prompt, response, truncation=truncation, stride=stride,
                                         max_passes=max_passes, progress=step(k)))
    c, r = results
    pair = TokenPair(c, r, compare_curves(c, r), _tail(rm, prompt, chosen), _tail(rm, prompt, rejected))
    key = _pair_key(rm, prompt, chosen, rejected, truncation, stride)
    with _PAIRS_LOCK:
        _PAIRS[key] = pair
        while len(_PAIRS) > 8:
            _PAIRS.popitem(last=False)
    return pair


_PLANS: OrderedDict[tuple, tuple[PrefixPlan, PrefixPlan]] = OrderedDict()


def prefix_plans(rm: RewardModel, prompt: str, chosen: str, rejected: str, truncation: str = "skip",
                 stride: int = 1) -> tuple[PrefixPlan, PrefixPlan]:
    """The prefix-pass plans of both responses (one timed pass each), remembered."""
    key = ("plan", *_pair_key(rm, prompt, chosen, rejected, truncation, stride))
    with _PAIRS_LOCK:
        if key in _PLANS:
            return _PLANS[key]
    plans = (prefix_plan(rm, prompt, chosen, stride=stride, truncation=truncation),
             prefix_plan(rm, prompt, rejected, stride=stride, truncation=truncation))
    rates = [p.seconds_per_token for p in plans if p.seconds_per_token is not None]
    if rates:  # one model, one device: the steadier (lower) measured rate for both
        plans = (plans[0].at_rate(min(rates)), plans[1].at_rate(min(rates)))
    with _PAIRS_LOCK:
        _PLANS[key] = plans
        while len(_PLANS) > 32:
            _PLANS.popitem(last=False)
    return plans
