"""Figures that explain themselves (issue 59, point 4): a paired sentence says its verdict
follows the test when the interval says otherwise; an always-A judge's 50 % has an interval
as the fair judge's 100 % has; a missing interval says why; an overview with equal thirds
says it is flat."""

from __future__ import annotations

from needlework.figures import paired, stats
from needlework.figures.lines import share_words
from needlework.figures.stats_text import verdict
from needlework.needle import analysis, findings


def test_the_verdict_says_it_follows_the_test_when_the_interval_excludes_zero() -> None:
    split = paired.Paired(0.6, 0.4, 0.2, 0.041, 0.375, 12, 5, 1, 0.0639, False, "item",
                         test=paired.WILCOXON)
    sentence = verdict(split, "a", "b")
    assert "+4.1 to +37.5" in sentence
    assert "p = 0.0639: not significant at 5 % (it may be chance). The verdict follows the " \
           "test, not the interval: the paired bootstrap interval, computed another way, " \
           "excludes 0 here, so the difference is near the 5 % line." in sentence
    other = paired.Paired(0.6, 0.4, 0.2, -0.01, 0.3, 12, 5, 1, 0.04, True, "item",
                         test=paired.MCNEMAR, interval="newcombe")
    assert "the Newcombe's paired interval, computed another way, includes 0 here" in \
        verdict(other, "a", "b")
    agreeing = paired.Paired(0.6, 0.4, 0.2, 0.05, 0.35, 30, 8, 1, 0.01, True, "item")
    assert "The verdict follows" not in verdict(agreeing, "a", "b")


def test_an_always_a_judge_gets_an_interval_as_a_fair_judge_does() -> None:
    # 28 items, each right in 1 of its 2 trials (always A) or in both (fair)
    half = stats.bootstrap_mean([0.5] * 28, weights=[2] * 28)
    whole = stats.bootstrap_mean([1.0] * 28, weights=[2] * 28)
    assert whole.method == half.method == "wilson"
    assert (half.low, half.high) == stats.wilson_share_bounds(0.5, 28)
    assert 0.3 < half.low < 0.5 < half.high < 0.7
    line = share_words(0.5, 28, 56, half, unit="trials")
    assert line == "50.0 % (28/56 trials), 95 % Wilson over 28 items 32.6–67.4 %", line
    # the reason, where there is none: domains each constant (RM-Bench's strata)
    grouped = stats.bootstrap_mean([1.0, 1.0, 1.0, 0.0], strata=["chat", "chat", "chat", "math"])
    assert share_words(0.5, None, 4, grouped, unit="items").endswith(
        "no interval (every resample of the 4 items gives the same mean (they are alike, "
        "within each group where grouped), and under 30 items that cannot stand for the "
        "uncertainty)")


def test_an_overview_with_equal_thirds_says_it_is_flat() -> None:
    rows = [{"id": f"p{k}", "chosen_score": float((k // 10) % 2), "rejected_score": 0.5,
             "length_tokens": 500 if k < 20 else 1000, "tagged_position": (k % 10) / 10 + 0.05}
            for k in range(40)]
    text = findings.overview(analysis.results_frame(rows))
    assert "accuracy is flat: 50 % in the first third of the answer and in the last" in text, text
    assert "goes from 50 %" not in text
