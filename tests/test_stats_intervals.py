"""Intervals that mean what they say: Wilson's interval recounted by its formula, McNemar's
test by the binomial, Wilcoxon's by enumerating the signs, no zero-width interval on fewer
than 30 units, every interval unchanged when the rows are shuffled, and one rounding rule
for percentages (21 of 40 is 52.5 %)."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pandas as pd
import pytest

from needlework.figures import paired, stats, stats_text
from needlework.judges.evaluate import accuracy_intervals
from needlework.needle import analysis
from needlework.rag.metrics import intervals as rag_intervals
from needlework.results.compare import compare
from needlework.rewards.results import bon_intervals, pairwise_intervals, rmbench_intervals

Z = 1.959963984540054  # the normal quantile at 0.975


def wilson_by_hand(k: int, n: int) -> tuple[float, float]:
    p = k / n
    denom = 1 + Z * Z / n
    centre = (p + Z * Z / (2 * n)) / denom
    half = Z / denom * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


# -- Wilson -------------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "n"), [(0, 5), (5, 5), (6, 6), (0, 9), (3, 10), (21, 40), (1, 1)])
def test_wilson_is_its_formula_and_never_collapses(k: int, n: int) -> None:
    got = stats.bootstrap_mean([1] * k + [0] * (n - k))
    assert got.method == "wilson" and got.right == k and got.n == n
    assert got.estimate == k / n
    assert (got.low, got.high) == pytest.approx(wilson_by_hand(k, n), abs=1e-12)
    assert got.high - got.low > 0.05


def test_wilson_at_the_ends_as_the_issue_counts_them() -> None:
    # 0 of 5: z² / (5 + z²) = 3.84146 / 8.84146 = 0.43448
    assert stats_text.percent_range(stats.wilson(0, 5)) == "0.0–43.4 %"
    # 6 of 6: 6 / (6 + z²) = 6 / 9.84146 = 0.60966
    assert stats_text.percent_range(stats.wilson(6, 6)) == "61.0–100.0 %"
    # 0 of 9: z² / (9 + z²) = 3.84146 / 12.84146 = 0.29914
    assert stats_text.percent_range(stats.wilson(0, 9)) == "0.0–29.9 %"
    assert stats.wilson(0, 0).estimate is None


def test_no_zero_width_interval_on_fewer_than_30_units() -> None:
    rng = random.Random(3)
    for n in range(1, 30):
        for values in ([0.0] * n, [1.0] * n, [0.5] * n, [rng.choice([0, 1]) for _ in range(n)],
                       [rng.choice([0, 0.5, 1]) for _ in range(n)]):
            got = stats.bootstrap_mean(values)
            assert got.low is None or got.high - got.low > 0, (n, values, got)
            assert got.low is not None, (n, values, got)  # shares in [0, 1]: always one
            # weighted, the same rule
            weighted = stats.bootstrap_mean(values, weights=[1 + k % 3 for k in range(n)])
            assert weighted.low is None or weighted.high - weighted.low > 0, (n, values)
    # every unit at 0.5 (an always-A judge): Wilson at 0.5 over the 4 units (issue 59)
    assert stats_text.percent_range(stats.bootstrap_mean([0.5] * 4)) == \
        stats_text.percent_range(stats.wilson(2, 4))
    # a score outside [0, 1], alike on 4 units: no interval, and why
    assert stats_text.percent_range(stats.bootstrap_mean([2.0] * 4)) == "–"
    assert "no interval" in stats_text.how(stats.bootstrap_mean([2.0] * 4))


# -- McNemar and Wilcoxon -----------------------------------------------------------------


@pytest.mark.parametrize(("b", "c"), [(10, 1), (5, 2), (0, 6), (3, 3), (9, 0), (13, 10)])
def test_mcnemar_is_the_binomial_on_the_discordant_pairs(b: int, c: int) -> None:
    m = b + c
    tail = sum(Fraction(math.comb(m, k), 2 ** m) for k in range(min(b, c) + 1))
    assert paired.mcnemar_p(b, c) == min(Fraction(1), 2 * tail)
    first = [1] * b + [0] * c + [1] * 4 + [0] * 3
    second = [0] * b + [1] * c + [1] * 4 + [0] * 3
    got = paired.paired(first, second)
    assert got.test == "McNemar's exact test"
    assert (got.first_better, got.second_better, got.tied) == (b, c, 7)
    assert got.p_value == float(min(Fraction(1), 2 * tail))
    assert got.significant == (min(Fraction(1), 2 * tail) < Fraction(1, 20))


def test_wilcoxon_by_enumerating_every_sign() -> None:
    first = [1.0, 0.5, 1.0, 0.5, 0.0, 1.0, 2 / 3, 1.0, 0.5]
    second = [0.5, 0.5, 0.0, 0.0, 0.5, 0.0, 1 / 3, 0.0, 0.0]
    d = [a - b for a, b in zip(first, second, strict=True)]
    nonzero = [x for x in d if x != 0]
    magnitudes = sorted(abs(x) for x in nonzero)
    ranks = {m: (magnitudes.index(m) + 1 + len(magnitudes) - magnitudes[::-1].index(m)) / 2
             for m in set(magnitudes)}
    w_plus = sum(ranks[abs(x)] for x in nonzero if x > 0)
    sums = [sum(ranks[abs(x)] for x, s in zip(nonzero, signs, strict=True) if s)
            for signs in itertools.product((0, 1), repeat=len(nonzero))]
    low = sum(1 for s in sums if s <= w_plus + 1e-9) / len(sums)
    high = sum(1 for s in sums if s >= w_plus - 1e-9) / len(sums)
    got = paired.paired(first, second)
    assert got.test == "Wilcoxon signed-rank test"
    assert got.p_value == pytest.approx(min(1.0, 2 * min(low, high)), abs=1e-12)
    assert (got.first_better, got.second_better, got.tied) == (7, 1, 1)
    assert got.significant == (got.p_value < 0.05)


def test_the_sentence_follows_the_sign_of_the_difference() -> None:
    # B better on more items, A better by more: A leads, and the sentence says so first
    first = [1.0] * 4 + [0.5] * 6
    second = [0.0] * 4 + [2 / 3] * 6
    got = paired.paired(first, second)
    assert got.difference > 0 and (got.first_better, got.second_better) == (4, 6)
    sentence = stats_text.verdict(got, "A", "B")
    assert sentence.startswith("On the 10 items both judged, A is ahead of B by 30.0 points")
    assert "A better on 4 items, B better on 6 items, tied on 0 items" in sentence
    assert "Wilcoxon signed-rank test p = " in sentence


# -- row order ----------------------------------------------------------------------------


def shuffled(rows: list, seed: int) -> list:
    out = list(rows)
    random.Random(seed).shuffle(out)
    return out


def entries() -> list[dict]:
    """16 items in two subsets, chosen beating 0 to 3 of 3 rejected, one missing score."""
    out = []
    for k in range(16):
        wins = (k * 7) % 4
        out.append({"id": f"i{k:02d}", "subset": "a" if k % 3 else "b", "chosen_scores": [2.0],
                    "rejected_scores": [1.0] * wins + [3.0] * (3 - wins)})
    out[5]["rejected_scores"][0] = None
    return out


def test_reward_intervals_do_not_move_with_row_order() -> None:
    rows = entries()
    for fn in (bon_intervals, pairwise_intervals):
        first = fn(rows)
        for seed in range(4):
            assert fn(shuffled(rows, seed)) == first
            assert fn(list(reversed(rows))) == first
    rm = [{"id": f"r{k}", "subset": "chat" if k % 2 else "math",
           "chosen_scores": [3.0, 2.0, 1.0], "rejected_scores": [2.5 - (k % 3), 1.5, 0.5]}
          for k in range(12)]
    first = rmbench_intervals(rm)
    assert rmbench_intervals(shuffled(rm, 1)) == first


def test_judge_intervals_do_not_move_with_row_order() -> None:
    results = []
    for k in range(12):
        for t in range(1 + k % 3):  # unequal trials: a weighted bootstrap
            results.append({"item_key": f"i{k:02d}", "subset": "s" if k % 2 else "t",
                            "members": ["chosen[0]", "rejected[0]"], "skipped": False,
                            "valid": True, "picked": (k + t) % 2, "trial": t})
    first = accuracy_intervals(results, "selection")
    assert first["overall"]["method"] == "bootstrap"
    for seed in range(3):
        assert accuracy_intervals(shuffled(results, seed), "selection") == first


def test_rag_intervals_do_not_move_with_row_order() -> None:
    from needlework.rag import bergen  # noqa: PLC0415

    rows = [{"judged": True, "eligible": k % 3 > 0, "factual": True, "factuality": k % 2 == 0,
             "relevant_factual": k % 4 == 0, "raf": k % 5 == 0, "deflected": k % 7 == 0,
             "needs_deflection": k % 6 == 0, "llmeval": k % 3 - 1,
             "bergen": {name: (k % 5) / 5 for name in bergen.METRICS},
             "attribution": {"precision": (k % 3) / 2, "recall": 1.0, "f1": (k % 4) / 3}}
            for k in range(14)]
    first = rag_intervals(rows)
    assert first["unadjusted_factuality"]["method"] == "wilson"  # 14 of 14: not 100.0–100.0 %
    assert first["unadjusted_factuality"]["low"] < 1.0
    assert first["Rouge-L"]["method"] == "bootstrap"
    for seed in range(3):
        assert rag_intervals(shuffled(rows, seed)) == first


def test_needle_cells_do_not_move_with_row_order() -> None:
    rows = [{"id": f"p{k}", "chosen_score": float(k % 3), "rejected_score": 1.0,
             "length_tokens": 1000, "tagged_position": 0.01, "site_index": 0,
             "needle_id": "n", "haystack_id": "h", "model": "m"} for k in range(10)]
    frame = analysis.results_frame(rows)
    first = analysis._cell_intervals(frame)
    again = analysis._cell_intervals(frame.sample(frac=1, random_state=4))
    assert again == first
    assert isinstance(frame, pd.DataFrame)


def test_compare_does_not_move_with_row_order_and_its_counts_agree() -> None:
    a = {f"i{k}": {"subset": "s", "outcome": [0, 0.5, 1][k % 3]} for k in range(20)}
    b = {f"i{k}": {"subset": "s", "outcome": [1, 0.5, 0][(k * 2) % 3]} for k in range(20)}
    first = compare(a, b)
    keys = shuffled(list(a), 7)
    again = compare({k: a[k] for k in keys}, {k: b[k] for k in reversed(keys)})
    assert again == first
    overall = first["rows"][-1]
    assert overall["only_first"] + overall["only_second"] == len(first["differ"])
    assert overall["only_first"] + overall["only_second"] + overall["tied"] == overall["items"]
    assert overall["paired"]["test"] == "Wilcoxon signed-rank test"


def test_a_mapping_is_the_same_as_its_values() -> None:
    values = {f"k{k}": (k % 4) / 3 for k in range(20)}
    assert stats.bootstrap_mean(values) == stats.bootstrap_mean(list(values.values())[::-1])
    with pytest.raises(ValueError, match="same keys"):
        stats.bootstrap_mean(values, weights={"k0": 1.0})


# -- rounding -----------------------------------------------------------------------------


def test_one_rounding_rule_half_up_on_the_exact_value() -> None:
    assert stats_text.percent(21, 40) == "52.5 %"
    assert stats_text.percent(21, 40, digits=0) == "53 %"  # half up, not to even
    assert stats_text.percent(Fraction(21, 40), digits=0, space=False) == "53%"
    assert stats_text.percent(1, 8, digits=1) == "12.5 %" and stats_text.percent(1, 8, digits=0) == "13 %"
    assert stats_text.percent(1, 3) == "33.3 %" and stats_text.percent(2, 3) == "66.7 %"
    assert stats_text.percent(0, 0) == "–" and stats_text.percent(None) == "–"
    assert stats_text.percent(0.125, digits=0) == "13 %"  # 0.125 is exact in binary
    assert stats_text.percent(Fraction(-1, 8), digits=0, sign=True) == "-13 %"
    assert stats_text.percent(Fraction(1, 8), digits=0, sign=True) == "+13 %"
    # a bound is rounded on its exact binary value: 0.375 is exact, 37.5 -> 38 at no decimal
    assert stats_text.percent_range({"low": 0.375, "high": 0.5}, 0) == "38–50 %"
    assert stats_text.round_half_up(Fraction(5, 2), 0) == "3" and stats_text.round_half_up(2.5, 0) == "3"
    assert stats_text.round_half_up(-0.0001, 1) == "0.0"


def test_wilcoxon_agrees_with_scipys_exact_test_without_ties() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = random.Random(8)
    for m in (5, 9, 14, 20):
        d = [rng.choice((-1, 1)) * (k + 1 + rng.random() / 2) for k in range(m)]
        rng.shuffle(d)
        assert paired.wilcoxon_p(d) == pytest.approx(
            scipy_stats.wilcoxon(d, method="exact").pvalue, abs=1e-12)
