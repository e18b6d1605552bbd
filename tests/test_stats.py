"""needlework.figures.stats: the seeded percentile bootstrap by hand, McNemar's exact test by hand,
a paired comparison that is significant and one that is not, Wilcoxon on shares."""

from __future__ import annotations

from fractions import Fraction

import pytest

from needlework.figures import paired, stats, stats_text


def test_bootstrap_equals_the_hand_computed_case() -> None:
    # Five items with shares 1, 0, 0.5, 1, 0 (not a plain proportion: the bootstrap). They
    # are resampled in canonical order, sorted by value: [0, 0, 0.5, 1, 1]. With seed 7 and
    # 10 resamples,
    #   numpy.random.default_rng(7).integers(0, 5, size=(10, 5)).tolist() ==
    #   [[4,3,3,4,2], [3,4,1,0,1], [1,4,4,0,2], [4,0,3,0,2], [4,1,1,1,3],
    #    [1,4,2,2,2], [2,2,2,4,4], [3,3,3,1,4], [2,1,4,0,4], [3,0,0,2,0]]
    # and those draws have the means (e.g. the first: 1 + 1 + 1 + 1 + 0.5 = 4.5, / 5)
    #   0.9 0.4 0.5 0.5 0.4 0.5 0.7 0.8 0.5 0.3
    # sorted: 0.3 0.4 0.4 0.5 0.5 0.5 0.5 0.7 0.8 0.9. numpy.quantile (linear) at 0.025 is
    # at position 0.025 * 9 = 0.225: 0.3 + 0.225 * (0.4 - 0.3) = 0.3225; at 0.975, position
    # 8.775: 0.8 + 0.775 * (0.9 - 0.8) = 0.8775.
    got = stats.bootstrap_mean([1, 0, 0.5, 1, 0], resamples=10, seed=7)
    assert got.estimate == pytest.approx(0.5) and got.method == "bootstrap"
    assert got.low == pytest.approx(0.3225, abs=1e-12) and got.high == pytest.approx(0.8775, abs=1e-12)
    assert (got.n, got.unit, got.resamples, got.seed, got.level) == (5, "item", 10, 7, 0.95)
    assert got.as_dict()["low"] == got.low
    # any row order gives the same interval, to the bit
    assert stats.bootstrap_mean([0, 1, 0, 0.5, 1], resamples=10, seed=7) == got


def test_the_same_inputs_give_the_same_interval_and_the_seed_matters() -> None:
    values = [(k % 3) / 2 for k in range(3000)]  # 3,000 units: the draws come in two blocks
    first = stats.bootstrap_mean(values)
    assert first == stats.bootstrap_mean(values)
    assert (first.resamples, first.seed) == (1000, 0)  # the stated defaults
    assert first.low < first.estimate < first.high
    assert stats.bootstrap_mean(values, seed=1) != first


def test_weights_make_the_estimate_a_ratio_and_keep_units_whole() -> None:
    # items with 2, 2, 3, 3 and 4 trials, right on 1, 1, 1, 1 and 2 of them: 6 of 14 trials
    got = stats.bootstrap_mean([1 / 2, 1 / 2, 1 / 3, 1 / 3, 2 / 4], weights=[2, 2, 3, 3, 4])
    assert got.estimate == pytest.approx(6 / 14)
    # a resample of these items is never outside the lowest and highest item share
    assert 1 / 3 <= got.low <= got.estimate <= got.high <= 1 / 2
    with pytest.raises(ValueError, match="positive"):
        stats.bootstrap_mean([1, 0], weights=[1, 0])


def test_strata_average_the_groups_with_equal_weight() -> None:
    # one stratum of 4 items all at 0.75, one of 2 items all at 0.25: (0.75 + 0.25) / 2,
    # whatever the draw, since every resample keeps each stratum's size; a bootstrap of
    # zero width on 6 items is no interval (it cannot be estimated)
    got = stats.bootstrap_mean([0.75] * 4 + [0.25] * 2, strata=["a", "a", "a", "a", "b", "b"])
    assert (got.estimate, got.low, got.high, got.method) == (0.5, None, None, "none")
    # with 30 items or more the constant bootstrap stands
    many = stats.bootstrap_mean([0.75] * 20 + [0.25] * 10, strata=["a"] * 20 + ["b"] * 10)
    assert (many.estimate, many.low, many.high, many.method) == (0.5, 0.5, 0.5, "bootstrap")
    # two strata of 0/1 values, each constant: not a proportion of the items (4 of 6),
    # so no interval either
    split = stats.bootstrap_mean([1, 1, 1, 1, 0, 0], strata=["a", "a", "a", "a", "b", "b"])
    assert (split.estimate, split.low, split.method) == (0.5, None, "none")
    # weighted and all 0: Wilson on the counts of items, 0 of 3
    zero = stats.bootstrap_mean([0, 0, 0], weights=[1, 2, 3])
    assert (zero.estimate, zero.method, zero.right) == (0.0, "wilson", 0)
    assert (zero.low, zero.high) == stats.wilson_bounds(0, 3)


def test_no_unit_and_one_unit() -> None:
    none = stats.bootstrap_mean([])
    assert (none.estimate, none.low, none.high, none.n) == (None, None, None, 0)
    assert stats_text.percent_range(none) == "–"
    # one unit at a share in [0, 1]: Wilson at that share over one unit (issue 59)
    one = stats.bootstrap_mean([0.25])
    assert (one.estimate, one.method) == (0.25, "wilson")
    assert (one.low, one.high) == stats.wilson_share_bounds(0.25, 1)
    # outside [0, 1] (a score): it cannot be estimated
    score = stats.bootstrap_mean([2.5])
    assert (score.estimate, score.low, score.high, score.method) == (2.5, None, None, "none")
    # 1 of 1: Wilson's centre (1 + z²/2) / (1 + z²) minus its half width (z²/2) / (1 + z²)
    right = stats.bootstrap_mean([1])
    z2 = 1.959963984540054 ** 2
    assert (right.low, right.high, right.method) == (pytest.approx(1 / (1 + z2)), 1.0, "wilson")


def test_mcnemar_exact_by_hand() -> None:
    # b = 10, c = 1: 2 * (C(11,0) + C(11,1)) / 2**11 = 2 * 12 / 2048 = 0.01171875
    assert paired.sign_test_p(10, 1) == Fraction(24, 2048)
    # b = 5, c = 2: 2 * (1 + 7 + 21) / 2**7 = 58 / 128 = 0.453125
    assert paired.sign_test_p(5, 2) == Fraction(58, 128)
    assert paired.sign_test_p(3, 3) == 1 and paired.sign_test_p(0, 0) == 1  # capped; none differ


def test_a_significant_paired_comparison() -> None:
    # 30 items: both right on 15, the first alone right on 10, the second alone on 1
    first = [1] * 15 + [1] * 10 + [0] * 1 + [0] * 4
    second = [1] * 15 + [0] * 10 + [1] * 1 + [0] * 4
    got = paired.paired(first, second)
    assert (got.first_better, got.second_better, got.n) == (10, 1, 30)
    assert got.p_value == pytest.approx(24 / 2048)
    assert got.significant
    assert got.difference == pytest.approx(9 / 30)
    assert 0 < got.low <= got.difference <= got.high  # the interval leaves 0 out too
    sentence = stats_text.verdict(got, "A", "B")
    assert "A is ahead of B by 30.0 points" in sentence and "p = 0.0117" in sentence
    assert "A better on 10 items, B better on 1 item, tied on 19 items" in sentence
    assert got.test == "McNemar's exact test" and "McNemar's exact test p" in sentence
    assert sentence.endswith("the difference is significant at 5 %.")


def test_a_paired_comparison_that_is_not_significant() -> None:
    first = [1] * 15 + [1] * 5 + [0] * 2 + [0] * 8
    second = [1] * 15 + [0] * 5 + [1] * 2 + [0] * 8
    got = paired.paired(first, second)
    assert (got.first_better, got.second_better) == (5, 2)
    assert got.p_value == 0.453125 and not got.significant
    assert got.low < 0 < got.high
    assert "not significant at 5 %" in stats_text.verdict(got, "A", "B")


def test_fractional_outcomes_use_the_wilcoxon_signed_rank_test() -> None:
    # a judge's share of two orders (0, 0.5, 1) against a classifier's 0/1: differences
    # -0.5, 0, 0, +0.5; the zeros dropped, ranks 1.5 and 1.5, W+ = 1.5; of the 4 sign
    # patterns W+ is 0, 1.5, 1.5, 3: P(W <= 1.5) = 3/4, P(W >= 1.5) = 3/4, p = min(1, 1.5)
    got = paired.paired([0.5, 1, 0, 0.5], [1, 1, 0, 0])
    assert (got.first_better, got.second_better, got.tied) == (1, 1, 2) and got.p_value == 1.0
    assert got.test == "Wilcoxon signed-rank test"
    keyed = paired.paired_by_key({"b": 1.0, "a": 0.0, "c": 1.0}, {"a": 1.0, "b": 1.0})
    assert (keyed.n, keyed.first, keyed.second) == (2, 0.5, 1.0)  # c is left out
    with pytest.raises(ValueError, match="same units"):
        paired.paired([1, 0], [1])


def test_ranges_in_words() -> None:
    assert stats_text.percent_range({"low": 0.41234, "high": 0.5888}) == "41.2–58.9 %"
    assert stats_text.percent_range({"low": float("nan"), "high": 0.5}) == "–"
    assert stats_text.number_range({"low": 0.35, "high": 0.47}) == "0.350–0.470"
    assert stats_text.how() == ("95 % Wilson score interval for a share of 0/1 outcomes, else "
                           "95 % percentile bootstrap, 1,000 resamples, seed 0")
    assert stats_text.how(stats.wilson(1, 2)) == "95 % Wilson score interval"
    assert stats_text.how({"method": "bootstrap"}) == "95 % percentile bootstrap, 1,000 resamples, seed 0"
