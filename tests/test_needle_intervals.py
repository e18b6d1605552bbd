"""The needle heatmap's cells with their counts and 95 % intervals: the pair is the unit
(a judge's two orders of a pair resampled together), each readable cell shows its n, the
tooltip gives the interval, and ``needle report --json`` lists every cell with it."""

from __future__ import annotations

import json

import pytest

from needlework.cli import main
from needlework.figures.stats import bootstrap_mean
from needlework.figures.stats_text import percent_range
from needlework.needle import analysis, charts


def row(id, c, r, length, pos, model="m"):
    return {"id": id, "chosen_score": c, "rejected_score": r, "length_tokens": length,
            "tagged_position": pos, "site_index": 0, "needle_id": "safety:3", "haystack_id": "h",
            "model": model}


# 1K tokens, bucket 0: six pairs, four right (a: right, b: a tie, wrong, ..., f: missing)
PAIRS = [row("a", 2.0, 1.0, 1000, 0.01), row("b", 1.0, 1.0, 1000, 0.02),
         row("c", 3.0, 0.0, 1000, 0.03), row("d", 5.0, 4.0, 1000, 0.04),
         row("e", 9.0, 1.0, 1000, 0.05), row("f", None, 1.0, 1000, 0.06),
         row("g", 0.0, 1.0, 2000, 0.55)]


def wilson_by_hand(k: int, n: int) -> tuple[float, float]:
    z = 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    return centre - half, centre + half


def test_a_cells_interval_is_wilsons_over_its_pairs() -> None:
    cells = analysis.heatmap_frame(analysis.results_frame(PAIRS), intervals=True).set_index(["length_tokens", "bucket"])
    cell = cells.loc[(1000, 0)]
    hand = bootstrap_mean([1, 0, 1, 1, 1, 0], unit="pair")  # a..f in id order
    assert (cell["n"], cell["n_correct"], cell["pairs"]) == (6, 4, 6)
    assert (cell["low"], cell["high"]) == (hand.low, hand.high)
    # 4 of 6 right, one row per pair: a plain proportion, Wilson's interval by its formula
    assert (cell["low"], cell["high"]) == pytest.approx(wilson_by_hand(4, 6))
    assert cell["low"] < cell["accuracy"] < cell["high"]
    one = cells.loc[(2000, 5)]
    # one pair, wrong: not 0.0–0.0 but Wilson's 0 of 1, 0 to z² / (1 + z²)
    z2 = 1.959963984540054 ** 2
    assert (one["low"], one["pairs"]) == (0.0, 1)
    assert one["high"] == pytest.approx(z2 / (1 + z2))


def test_a_judges_two_orders_of_a_pair_are_resampled_together() -> None:
    # p1 right in both orders, p2 in one, p3 in neither: 3 of 6 trials
    trials = [row(p, c, 1.0 - c, 1000, 0.35) for p, c in
              (("p1", 1.0), ("p1", 1.0), ("p2", 1.0), ("p2", 0.0), ("p3", 0.0), ("p3", 0.0))]
    cell = analysis.heatmap_frame(analysis.results_frame(trials), intervals=True).iloc[0]
    assert (cell["n"], cell["pairs"], cell["accuracy"]) == (6, 3, 0.5)
    by_pair = bootstrap_mean([1.0, 0.5, 0.0], weights=[2, 2, 2], unit="pair")
    assert (cell["low"], cell["high"]) == (by_pair.low, by_pair.high)
    by_trial = bootstrap_mean([1, 1, 1, 0, 0, 0], unit="trial")  # what splitting pairs would give
    assert (by_trial.low, by_trial.high) != (by_pair.low, by_pair.high)


def test_each_cell_shows_its_count_and_its_interval_in_the_tooltip() -> None:
    frame = analysis.results_frame(PAIRS)
    for chart in (charts.heatmap(frame), charts.heatmap_panel(frame)):
        spec = chart.to_dict()
        layers = spec["layer"]
        tooltip = {t["field"]: t.get("title") for t in layers[0]["encoding"]["tooltip"]}
        assert tooltip["interval"] == "95 % interval"
        data = next(iter(spec["datasets"].values()))
        by_cell = {(d["length_tokens"], d["bucket"]): d for d in data}
        hand = bootstrap_mean([1, 0, 1, 1, 1, 0], unit="pair")
        assert by_cell[(1000, 0)]["label"] == "67 %\nn=6"  # the count under the accuracy
        assert by_cell[(1000, 0)]["short"] == "67"  # a narrow panel: the tooltip has the count
        assert by_cell[(1000, 0)]["interval"] == f"{percent_range(hand, 0)} (Wilson over 6 pairs)"
        assert by_cell[(2000, 5)]["label"] == "n=1"  # thin: its n only


def test_needle_report_json_lists_every_cell_with_its_interval(tmp_path, capsys) -> None:
    csv = tmp_path / "results.csv"
    csv.write_text(analysis.results_csv(analysis.results_frame(PAIRS)), encoding="utf-8")
    code = main(["needle", "report", "--results", str(csv), "--out-dir", str(tmp_path / "r"),
                 "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    report = json.loads(out)
    assert report["interval"] == {"level": 0.95, "unit": "pair", "resamples": 1000, "seed": 0,
                                  "method": "95 % Wilson score interval for a share of 0/1 "
                                            "outcomes, else 95 % percentile bootstrap, 1,000 "
                                            "resamples, seed 0"}
    cell = next(c for c in report["cells"] if (c["length_tokens"], c["bucket"]) == (1000, 0))
    hand = bootstrap_mean([1, 0, 1, 1, 1, 0], unit="pair")
    assert (cell["n"], cell["correct"], cell["missing"]) == (6, 4, 1)
    assert (cell["low"], cell["high"]) == pytest.approx((hand.low, hand.high))
    assert cell["method"] == "wilson"  # one 0/1 outcome per pair: 4 of 6
    assert (cell["low"], cell["high"]) == pytest.approx(wilson_by_hand(4, 6))
    assert any(p.endswith("heatmap.png") for p in report["written"]) and report["findings"]
