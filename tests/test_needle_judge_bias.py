"""A judge's position bias stated from its figures, one rule for thin cells (pairs), and
judge runs named by what tells them apart (issue 51)."""

from __future__ import annotations

import json
import math
import random

import pandas as pd
import pytest

from needlework.cli import main
from needlework.formats.preference import Preference
from needlework.judges.connection import DEFAULT_MAX_TOKENS, Connection
from needlework.judges.local import DEMO_SETTINGS, with_start_settings
from needlework.judges.plan import select_items
from needlework.judges.prompts import DEMO_REPORT
from needlework.needle import analysis, findings, labels, order_bias, subset


def _trials(outcomes: dict[tuple[int, int, int], list[tuple[bool, bool]]]) -> pd.DataFrame:
    """A judge's frame: per (length, bucket, count) cell, pairs with (right chosen first,
    right chosen second)."""
    records, trials = [], []
    k = 0
    for (length, bucket, _), pairs in outcomes.items():
        for first, second in pairs:
            pid = f"p{k}"
            k += 1
            records.append({"id": pid, "prompt": "q", "chosen": ["c"], "rejected": ["r"],
                            "length_tokens": length, "tagged_position": (bucket + 0.5) / 10})
            for chosen_at, right in ((0, first), (1, second)):
                picked = chosen_at if right else 1 - chosen_at
                trials.append({"entry": {"item_key": pid, "members": ["chosen[0]", "rejected[0]"],
                                         "chosen_positions": [chosen_at], "valid": True,
                                         "picked": picked, "trial": chosen_at}, "raw": "[[A]]"})
    return analysis.judge_results(records, trials, "judge j")


def test_always_a_is_biased_and_the_sentence_says_so():
    frame = _trials({(500, 2, 0): [(True, False)] * 20})
    bias = order_bias.position_bias(frame)
    assert bias is not None and bias.pairs == 20
    assert (bias.first, bias.second, bias.gap) == (1.0, 0.0, 1.0)
    assert bias.low > 0.5 and bias.high == 1.0 and bias.biased
    sentence = findings.bias_sentence(bias)
    assert sentence.startswith("Position bias: right 100 % of the time with the chosen response "
                               "shown first (A) and 0 % with it shown second (B), over 20 pairs")
    assert "favours the first response shown (A)" in sentence
    assert "No position bias" not in sentence
    chance = findings.chance_sentence(frame, "Why: tiny.")
    assert chance.startswith("At chance: with the chosen response shown second (B) this judge is "
                             "right 0 %") and chance.endswith("Why: tiny.")


def test_an_unbiased_judge_reads_no_position_bias():
    # right in both orders on 18 pairs, only first on 1, only second on 1
    frame = _trials({(500, 2, 0): [(True, True)] * 18 + [(True, False), (False, True)]})
    bias = order_bias.position_bias(frame)
    assert bias is not None and bias.gap == 0 and bias.low < 0 < bias.high and not bias.biased
    sentence = findings.bias_sentence(bias)
    assert sentence.startswith("No position bias shown: right 95 % of the time with the chosen "
                               "response shown first (A) and 95 % with it shown second (B)")
    assert findings.chance_sentence(frame) == ""  # above chance with both orders
    lines = findings.findings(frame)
    assert any(line.startswith("No position bias shown") for line in lines)


def test_newcombe_interval_by_hand():
    # Newcombe (1998) table: a=8 both, b=5 only first, c=0 only second, d=1 neither (n=14)
    gap, low, high = order_bias.paired_gap_interval(8, 5, 0, 1)
    p1, p2, n = 13 / 14, 8 / 14, 14
    l1, u1 = order_bias.wilson_interval(13, n)
    l2, u2 = order_bias.wilson_interval(8, n)
    phi = (8 * 1 - 5 * 0) / math.sqrt(13 * 1 * 8 * 6)
    want_low = (p1 - p2) - math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    want_high = (p1 - p2) + math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    assert gap == pytest.approx(5 / 14)
    assert (low, high) == (pytest.approx(want_low), pytest.approx(want_high))
    assert 0 < low < 5 / 14 < high < 1


def test_a_reward_models_frame_has_no_bias_line():
    frame = analysis.results_frame([{"id": "a", "chosen_score": 1, "rejected_score": 0,
                                     "length_tokens": 500, "tagged_position": 0.1}])
    assert order_bias.position_bias(frame) is None
    assert findings.judge_lines(frame) == []


def test_thin_cells_are_counted_in_pairs_for_a_judge():
    # 250 tokens, bucket 3: 3 pairs (6 trials), 1 of 6 right: thin, never the lowest named
    cells = {(250, 3, 0): [(False, False), (False, False), (True, False)],
             (500, 0, 0): [(True, True)] * 4 + [(True, False)],  # 5 pairs, 90 %
             (500, 1, 0): [(True, True)] * 3 + [(True, False)] * 3}  # 6 pairs, 75 %
    frame = _trials(cells)
    grid = analysis.heatmap_frame(frame)
    thin = grid.set_index(["length_tokens", "bucket"])
    assert (thin.loc[(250, 3), "n"], thin.loc[(250, 3), "pairs"]) == (6, 3)
    assert bool(thin.loc[(250, 3), "thin"]) and not bool(thin.loc[(500, 0), "thin"])
    line = findings.finding(frame)
    assert line.startswith("Accuracy is lowest at 500 tokens, positions 10–20 % (75 %, n=12 trials, "
                           "6 pairs)")
    assert "fewer than 5 pairs are left out: the lowest of them, 17 % at 250 tokens, positions " \
           "30–40 % (n=6 trials, 3 pairs)" in line
    assert "Grey: fewer than 5 pairs" in findings.cell_key(frame)


def test_the_lowest_cell_never_has_fewer_pairs_than_the_rule():
    rng = random.Random(3)
    for _ in range(30):
        cells = {}
        for length in (250, 500):
            for bucket in range(4):
                pairs = rng.randint(1, 8)
                cells[(length, bucket, 0)] = [(rng.random() < 0.6, rng.random() < 0.4)
                                              for _ in range(pairs)]
        frame = _trials(cells)
        grid = analysis.heatmap_frame(frame)
        line = findings.finding(frame).split(" Cells with fewer")[0]
        for row in grid.itertuples():
            where = f"{analysis.length_label(row.length_tokens)} tokens, positions " \
                    f"{analysis.bucket_label(row.bucket)}"
            if row.pairs < analysis.THIN_CELL and "tied" not in line:
                assert where not in line, (where, line)


def _run(model: str, endpoint: str, temperature: float, max_tokens: int, per: int | None = None):
    return {"model": model, "endpoint": endpoint,
            "options": {"connection": {"endpoint": endpoint, "model": model,
                                       "temperature": temperature, "max_tokens": max_tokens},
                        "per_subset": per},
            "summary": {"selection": {"per_subset": per} if per else None}}


def test_run_labels_name_what_tells_runs_apart():
    runs = [_run("o-fake", "http://127.0.0.1:8001/v1", 0.0, 16),
            _run("o-fake", "http://127.0.0.1:8002/v1", 0.7, 16),
            _run("/x/data/demo-judge", "http://127.0.0.1:9/v1", 0.0, 16, per=5)]
    names = labels.judge_run_labels(runs)
    assert names == ["judge o-fake · endpoint 127.0.0.1:8001/v1 · temperature 0",
                     "judge o-fake · endpoint 127.0.0.1:8002/v1 · temperature 0.7",
                     "judge demo-judge"]
    assert labels.judge_run_details(runs[2]) == ("endpoint 127.0.0.1:9/v1 · temperature 0 · "
                                                 "max tokens 16 · 5 pairs per length")
    same = labels.judge_run_labels([_run("m", "http://h/v1", 0.0, 16), _run("m", "http://h/v1", 0.0, 512)])
    assert same == ["judge m · max tokens 16", "judge m · max tokens 512"]


def test_demo_limitation_names_the_training_lengths():
    report = {"parameters": 1688448, "settings": {"min_tokens": 40, "max_tokens": 120},
              "heldout_selection": {"accuracy_chosen_first": 1.0, "accuracy_chosen_second": 0.97,
                                    "response_tokens": 100}}
    text = labels.demo_limitation(report, [250, 2000])
    assert "trained for a few minutes on responses of 40–120 tokens" in text
    assert "right 100 % with the chosen first and 97 % with it second" in text
    assert "responses of 250–2,000 tokens, longer than it was trained on" in text


# -- a judge's first run on part of a needle set: stratified over positions ----------------


def _needles(per_bucket: dict[int, int], lengths=(250, 500)) -> list[tuple[str, dict]]:
    out = []
    for length in lengths:
        for bucket, count in per_bucket.items():
            for j in range(count):
                rid = f"n-{length}-{bucket}-{j}"
                out.append((rid, {"id": rid, "length_tokens": length,
                                  "tagged_position": (bucket + (j + 0.5) / (count + 1)) / 10}))
    return out


def test_the_subset_spreads_each_length_over_the_positions():
    items = _needles({b: 6 for b in range(10)})
    taken = subset.stratified_needles(items, [m for _, m in items], 20, seed=0)
    for length in (250, 500):
        mine = [m for _, m in taken if m["length_tokens"] == length]
        assert len(mine) == 20
        assert sorted({analysis.position_bucket(m["tagged_position"]) for m in mine}) == list(range(10))
        assert all(sum(1 for m in mine if analysis.position_bucket(m["tagged_position"]) == b) == 2
                   for b in range(10))
    # the first 20 of each length in import order would cover positions 0–40 % only
    first = [m for _, m in items if m["length_tokens"] == 250][:20]
    assert max(analysis.position_bucket(m["tagged_position"]) for m in first) == 3
    # in the items' order, seeded: the same sample whatever the import order
    assert [k for k, _ in taken] == [k for k, _ in items if k in {t for t, _ in taken}]
    again = subset.stratified_needles(items[::-1], [m for _, m in items[::-1]], 20, seed=0)
    assert {k for k, _ in again} == {k for k, _ in taken}
    other = subset.stratified_needles(items, [m for _, m in items], 20, seed=1)
    assert {k for k, _ in other} != {k for k, _ in taken}


def test_the_subset_fills_from_other_buckets_and_grows_monotonically():
    items = _needles({0: 1, 1: 8, 5: 2, 9: 8}, lengths=(1000,))
    meta = [m for _, m in items]
    seven = subset.stratified_needles(items, meta, 7)
    counts = {b: sum(1 for _, m in seven if analysis.position_bucket(m["tagged_position"]) == b)
              for b in (0, 1, 5, 9)}
    assert counts[0] == 1 and counts[5] == 2 and sum(counts.values()) == 7
    assert abs(counts[1] - counts[9]) <= 1
    previous: set[str] = set()
    for n in range(1, 20):
        now = {k for k, _ in subset.stratified_needles(items, meta, n)}
        assert len(now) == min(n, 19) and previous <= now
        previous = now
    with pytest.raises(ValueError, match="at least 1"):
        subset.stratified_needles(items, meta, 0)


def test_select_items_stratifies_needle_items():
    items = _needles({b: 4 for b in range(10)})
    prefs = [(k, Preference(k, str(m["length_tokens"]), "q", ["c"], ["r"], m)) for k, m in items]
    chosen = select_items(prefs, per_subset=10)
    assert len(chosen) == 20
    assert {analysis.position_bucket(p.meta["tagged_position"]) for _, p in chosen} == set(range(10))
    only = select_items(prefs, per_subset=10, subsets=["500"])
    assert {p.meta["length_tokens"] for _, p in only} == {500} and len(only) == 10


def test_grid_words_describe_the_grid_as_it_is():
    full = [{"length_tokens": n, "tagged_position": (b + 0.5) / 10}
            for n in (250, 500) for b in range(10) for _ in range(3)]
    assert findings.grid_words(full) == ("60 pairs, every one of the 20 cells filled (2 lengths × "
                                         "10 positions, 3 pairs each)")
    thin = [r for r in full if not (r["length_tokens"] == 250 and r["tagged_position"] > 0.8)]
    thin = thin + [{"length_tokens": 500, "tagged_position": 0.05}] * 4
    # 250 tokens loses positions 80–100 % (6 pairs); 500 tokens, 0–10 % gains 4 (7: not thin)
    assert findings.grid_words(thin) == ("58 pairs in 18 of the 20 cells (2 lengths × 10 "
                                         "positions); 17 cells hold fewer than 5 pairs; 250 tokens "
                                         "has the fewest, 24 pairs (the other lengths 34)")


def test_needle_report_states_a_judges_bias(tmp_path, capsys):
    frame = _trials({(500, 2, 0): [(True, False)] * 12, (500, 7, 0): [(True, False)] * 12})
    csv = tmp_path / "judge.csv"
    csv.write_text(analysis.results_csv(frame), encoding="utf-8")
    back = analysis.read_results_csv(csv)
    assert list(back["order"]) == list(frame["order"])
    assert main(["needle", "report", "--results", str(csv), "--out-dir", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "Position bias: right 100 % of the time with the chosen response shown first (A) and " \
           "0 % with it shown second (B), over 24 pairs" in out
    assert "At chance: with the chosen response shown second (B)" in out
    assert main(["needle", "report", "--results", str(csv), "--out-dir", str(tmp_path / "r"),
                 "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    bias = got["position_bias"]["judge j"]
    assert bias["biased"] and bias["gap"] == 1.0 and bias["gap_low"] > 0.8
    assert got["thin_rule"] == "fewer than 5 pairs"


def test_the_page_sends_the_command_lines_length_limit(tmp_path):
    folder = tmp_path / "demo-judge"
    folder.mkdir()
    (folder / DEMO_REPORT).write_text("{}", encoding="utf-8")
    form = Connection("http://127.0.0.1:9/v1", str(folder), key_env=None)
    assert form.max_tokens == DEFAULT_MAX_TOKENS
    sent = with_start_settings(form)
    assert sent.max_tokens == DEMO_SETTINGS["max_tokens"] == 16
    assert sent.params() == Connection("http://127.0.0.1:9/v1", str(folder), key_env=None,
                                       max_tokens=16).params()
    chosen = Connection("http://127.0.0.1:9/v1", str(folder), key_env=None, max_tokens=64)
    assert with_start_settings(chosen).max_tokens == 64  # a limit set by hand is kept
    other = Connection("http://127.0.0.1:9/v1", "gpt-x", key_env=None)
    assert with_start_settings(other) is other


def test_few_pairs_are_not_shown_above_chance_rather_than_at_chance():
    frame = _trials({(500, 2, 0): [(True, True)] * 3})  # 3 of 3 in both orders: 44–100 %
    line = findings.chance_sentence(frame)
    assert line.startswith("Not shown above chance: with the chosen response shown first (A) "
                           "this judge is right 100 % of the time (95 % interval 44–100 %, over 3 "
                           "pairs), an interval that reaches 50 %")
    assert not findings.bias_sentence(order_bias.position_bias(frame)).startswith("Position bias")
    always_a = findings.chance_sentence(_trials({(500, 2, 0): [(True, False)] * 20}))
    assert always_a.startswith("At chance: with the chosen response shown second (B) this judge "
                               "is right 0 % of the time (95 % interval 0–16 %, over 20 pairs), "
                               "100 % with the other order: it names one position")
