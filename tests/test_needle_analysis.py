"""Needle analysis: heatmap frame by hand, findings from data, scores-file import, charts, exports."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from needlework.formats import FormatError
from needlework.needle import analysis, charts, findings, order_bias


def row(id, c, r, length, pos, model="m", **extra):
    return {"id": id, "chosen_score": c, "rejected_score": r, "length_tokens": length,
            "tagged_position": pos, "site_index": 0, "needle_id": "safety:3", "haystack_id": "h",
            "model": model, **extra}


HAND = [
    row("a", 2.0, 1.0, 1000, 0.00),   # bucket 0, correct
    row("b", 1.0, 1.0, 1000, 0.05),   # bucket 0, tie → wrong
    row("c", 3.0, -1.0, 1000, 0.099),  # bucket 0, correct
    row("d", 0.0, 1.0, 1000, 0.45),   # bucket 4, wrong
    row("e", 5.0, 4.0, 2000, 1.0),    # bucket 9 (position 1.0 is clamped), correct
    row("f", 5.0, 4.0, 2000, 0.95),   # bucket 9, correct
    row("g", 1.0, 4.0, 2000, 0.91),   # bucket 9, wrong
]


def test_results_frame_correct_is_strict_and_buckets_follow_the_rule():
    frame = analysis.results_frame(HAND)
    assert frame["correct"].tolist() == [True, False, True, False, True, True, False]
    assert frame["bucket"].tolist() == [0, 0, 0, 4, 9, 9, 9]
    assert list(frame.columns[:10]) == analysis.RESULT_COLUMNS
    assert analysis.position_bucket(0.3) == 3 and analysis.position_bucket(0.7) == 7


def test_heatmap_frame_equals_the_hand_computed_case():
    cells = analysis.heatmap_frame(analysis.results_frame(HAND), thin=3)
    got = {(r.length_tokens, r.bucket): (r.n, r.n_correct, round(r.accuracy, 4), r.thin)
           for r in cells.itertuples()}
    assert got == {(1000, 0): (3, 2, 0.6667, False), (1000, 4): (1, 0, 0.0, True),
                   (2000, 9): (3, 2, 0.6667, False)}
    assert cells.loc[cells["bucket"] == 4, "position"].item() == "40–50 %"
    assert set(cells["length"]) == {"1K", "2K"}


def _grid(acc: dict[tuple[int, int], tuple[int, int]], model="m"):
    """Rows giving (correct, n) per (length, bucket)."""
    rows = []
    for (length, bucket), (good, n) in acc.items():
        for k in range(n):
            c = 1.0 if k < good else -1.0
            rows.append(row(f"{model}-{length}-{bucket}-{k}", c, 0.0, length, bucket / 10 + 0.05, model))
    return analysis.results_frame(rows)


def test_finding_is_computed_from_the_data():
    frame = _grid({(2000, 9): (10, 10), (8000, 4): (6, 10), (8000, 0): (9, 10), (4000, 5): (0, 2)})
    assert findings.finding(frame) == (
        "Accuracy is lowest at 8K tokens, positions 40–50 % (60 %, n=10), 40 points below the "
        "highest at 2K tokens, positions 90–100 % (100 %, n=10)."
        # 6 of 10 and 10 of 10: their 95 % Wilson intervals overlap, so the gap may be chance
        " With so few pairs the gap may be chance: the 95 % intervals overlap (31–83 % and 72–100 %)."
        # the thinner, lower cell on screen is named, with why (issue 18, 17)
        " Cells with fewer than 5 pairs are left out: the lowest of them, "
        "0 % at 4K tokens, positions 50–60 % (n=2), is too thin to say.")
    moved = _grid({(2000, 9): (10, 10), (8000, 4): (9, 10), (1000, 2): (3, 5)})
    assert findings.finding(moved).startswith("Accuracy is lowest at 1K tokens, positions 20–30 % (60 %, n=5), "
                                              "40 points below")
    flat = _grid({(1000, 0): (5, 5), (2000, 3): (4, 4)})
    assert findings.finding(flat).startswith("Accuracy is 100 % in every cell with at least 5 pairs (1 cells)")
    assert "left out: the lowest of them, 100 %" not in findings.finding(flat)
    assert "left out" not in findings.finding(moved)  # no thin cell below the lowest
    assert findings.finding(_grid({(1000, 0): (1, 2)})).startswith("Not enough data")
    two = analysis.combine([frame, _grid({(1000, 1): (1, 5), (1000, 2): (5, 5)}, model="other")])
    lines = findings.findings(two)
    assert lines[0].startswith("m: Accuracy is lowest at 8K") and lines[1].startswith("other: ")
    trend = findings.position_trend(frame)
    assert trend.endswith("overall over 32 pairs.") and "in the last third (n=10)" in trend
    assert findings.length_trend(frame) == ("Accuracy by length: 100 % at 2K tokens (n=10), "
                                            "0 % at 4K tokens (n=2), 75 % at 8K tokens (n=20).")


def test_finding_names_ties_as_ties_and_says_nothing_of_chance_when_the_gap_is_clear():
    """Issue 29: six cells at 33 % and 28 at 100 % are not one worst and one best cell."""
    ties = _grid({(1000, 3): (5, 10), (1000, 4): (5, 10), (1000, 5): (5, 10), (1000, 7): (5, 10),
                  (2000, 3): (5, 10), (2000, 0): (9, 10), (500, 0): (20, 20), (500, 1): (20, 20)})
    assert findings.finding(ties) == (
        "Accuracy is lowest, 50 %, in 5 tied cells: 1K tokens, positions 30–60 % and 70–80 %; "
        "2K tokens, positions 30–40 % (n=10 each), 50 points below the highest, 100 %, in 2 tied "
        "cells: 500 tokens, positions 0–20 % (n=20 each).")  # 25 of 50 against 40 of 40: no caveat
    four = _grid({(n, 0): (5, 5) for n in (250, 500, 1000, 2000)} | {(8000, 5): (1, 5)})
    assert "in 4 tied cells: 250 tokens, positions 0–10 %; 500 tokens, positions 0–10 %; " \
           "1K tokens, positions 0–10 %; and at 1 more length (n=5 each)" in findings.finding(four)
    # too scattered to name (5 runs of positions): counted instead
    many = _grid({(n, 0): (5, 5) for n in (250, 500, 1000, 2000, 4000)} | {(8000, 5): (1, 5)})
    assert "highest, 100 %, in 5 of the 6 cells (n=5 each)." in findings.finding(many)


def test_overview_states_the_pattern_over_whole_rows_and_thirds():
    frame = _grid({(1000, 0): (9, 10), (1000, 5): (5, 10), (1000, 9): (2, 10),
                   (2000, 0): (8, 10), (2000, 5): (4, 10), (2000, 9): (3, 10)})
    # thirds: first 17/20, last 5/20; lengths: 1K 16/30 = 53 %, 2K 15/30 = 50 %
    assert findings.overview(frame) == (
        "By position, accuracy goes from 85 % in the first third of the answer to 25 % in the "
        "last (n=20 and 20); by length it is lowest at 2K tokens (50 %, n=30) and highest at "
        "1K tokens (53 %, n=30).")
    even = _grid({(1000, 0): (5, 10), (2000, 0): (5, 10), (4000, 0): (9, 10)})
    assert findings.overview(even) == (  # one third only: the lengths alone
        "By length it is lowest, 50 %, at 1K and 2K tokens (n=10 each) and highest at 4K tokens (90 %, n=10).")


def test_wilson_interval_by_hand():
    # p = 0.6, n = 10, z = 1.96: centre (0.6 + 0.19208) / 1.38416 = 0.57225; half-width
    # 1.96 * sqrt(0.024 + 0.009604) / 1.38416 = 0.25958
    low, high = findings.wilson_interval(6, 10)
    assert (round(low, 4), round(high, 4)) == (0.3127, 0.8318)
    assert findings.wilson_interval(10, 10)[1] == 1.0 and round(findings.wilson_interval(10, 10)[0], 4) == 0.7225
    assert findings.wilson_interval(0, 0) == (0.0, 1.0)


def test_cell_listing_and_selection():
    frame = analysis.results_frame(HAND)
    cell = analysis.cell_rows(frame, 2000, 9)
    assert cell["id"].tolist() == ["g", "e", "f"]  # worst margin first
    records = [{"id": r["id"], "prompt": "P", "chosen": ["C " + r["id"]], "rejected": ["R"], "needle_char": 2}
               for r in HAND]
    pairs = analysis.cell_pairs(frame, records, 1000, 0)
    assert [p["id"] for p in pairs] == ["b", "a", "c"] and pairs[0]["chosen"] == "C b"
    assert analysis.selected_cell({"selection": {"cell": [{"length_tokens": 2000, "bucket": 9}]}}) == (2000, 9)
    assert analysis.selected_cell({"selection": {"cell": []}}) is None

    class Event:
        selection = {"cell": [{"length_tokens": "1000", "bucket": 4.0}]}

    assert analysis.selected_cell(Event()) == (1000, 4)


def test_scores_file_gives_the_same_frame(tmp_path):
    lines = [{"id": r["id"], "subset": "needle", "chosen_scores": [r["chosen_score"]],
              "rejected_scores": [r["rejected_score"]], "tagged_position": r["tagged_position"],
              "length_tokens": r["length_tokens"], "model": "m", "site_index": 0, "needle_id": "safety:3",
              "haystack_id": "h"} for r in HAND]
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    imported = analysis.read_scores(str(path))
    pd.testing.assert_frame_equal(imported, analysis.results_frame(HAND))
    # Positions and lengths may come from the needle records instead; best-of-n with lists.
    bare = [{"id": "a", "chosen_scores": [2.0, 3.0], "rejected_scores": [1.0, 2.5]}]
    records = [{"id": "a", "tagged_position": 0.5, "length_tokens": 3000}]
    frame = analysis.read_scores(json.dumps(bare[0]).encode(), "s.jsonl", model="x", records=records)
    assert frame.iloc[0][["chosen_score", "rejected_score", "correct", "bucket", "model"]].tolist() == \
        [2.0, 2.5, False, 5, "x"]


def test_scores_file_errors_name_file_line_and_field(tmp_path):
    bad = [
        {"id": "a", "chosen_scores": [1.0], "rejected_scores": [0.0], "tagged_position": 0.5, "length_tokens": 1000},
        {"id": "b", "chosen_scores": [], "rejected_scores": [0.0], "tagged_position": 0.5, "length_tokens": 1000},
        {"id": "c", "chosen_scores": [1.0], "rejected_scores": ["x"], "tagged_position": 1.5, "length_tokens": 1000},
        {"id": "d", "chosen_scores": [1.0], "rejected_scores": [0.0], "length_tokens": 0},
        {"id": "a", "chosen_scores": [1.0], "rejected_scores": [0.0], "tagged_position": 0.1, "length_tokens": 1000},
        {"chosen_scores": [1.0], "rejected_scores": [None], "tagged_position": 0.1, "length_tokens": 1000},
    ]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in bad) + "{oops\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        analysis.read_scores(str(path))
    assert [str(p) for p in info.value.problems] == ["run.jsonl line 7: invalid JSON: Expecting property name "
                                                     "enclosed in double quotes at column 2"]
    path.write_text("".join(json.dumps(x) + "\n" for x in bad), encoding="utf-8")
    with pytest.raises(FormatError) as info:
        analysis.read_scores(str(path))
    assert [str(p) for p in info.value.problems] == [
        "run.jsonl line 2: chosen_scores must be a non-empty list of numbers (null for a missing score)",
        "run.jsonl line 3: rejected_scores[0] must be a number or null, got 'x'",
        "run.jsonl line 3: tagged_position must be a number in [0, 1], got 1.5",
        "run.jsonl line 4: tagged_position is missing",
        "run.jsonl line 4: length_tokens must be a positive integer, got 0",
        "run.jsonl line 5: id 'a' is a duplicate (first seen on line 1)",
        "run.jsonl line 6: id is missing",
    ]


MISSING = HAND + [
    row("h", None, 1.0, 1000, 0.02),  # skipped as too long: bucket 0, wrong, kept
    row("i", float("nan"), 0.0, 2000, 0.93),  # NaN from the model: bucket 9, wrong, kept
    row("j", 3.0, float("inf"), 2000, 0.92),  # inf: missing too
]


def test_missing_scores_count_wrong_and_stay_in_every_denominator(tmp_path):
    """Long-form RewardBench's scorer: a pair with a missing score is wrong, in the denominator."""
    frame = analysis.results_frame(MISSING)
    assert frame["missing"].tolist() == [False] * 7 + [True] * 3
    assert frame["correct"].tolist()[7:] == [False, False, False]
    cells = analysis.heatmap_frame(frame, thin=3)
    got = {(r.length_tokens, r.bucket): (r.n, r.n_correct, r.n_missing) for r in cells.itertuples()}
    assert got == {(1000, 0): (4, 2, 1), (1000, 4): (1, 0, 0), (2000, 9): (5, 2, 2)}
    lengths = analysis.length_frame(frame)
    assert lengths.set_index("length_tokens")["n_missing"].to_dict() == {1000: 1, 2000: 2}
    assert "40 % overall over 10 pairs" in findings.position_trend(frame)
    path = tmp_path / "results.csv"
    path.write_text(analysis.results_csv(frame), encoding="utf-8")
    back = analysis.read_results_csv(path)
    assert back["missing"].tolist() == frame["missing"].tolist()
    assert back["correct"].tolist() == frame["correct"].tolist()
    lines = [{"id": "a", "chosen_scores": [1.0, None], "rejected_scores": [0.0], "tagged_position": 0.5,
              "length_tokens": 1000},
             {"id": "b", "chosen_scores": [2.0], "rejected_scores": [None], "tagged_position": 0.5,
              "length_tokens": 1000},
             {"id": "c", "chosen_scores": [2.0], "rejected_scores": [1.0], "tagged_position": 0.5,
              "length_tokens": 1000}]
    imported = analysis.read_scores("".join(json.dumps(x) + "\n" for x in lines).encode(), "s.jsonl")
    assert imported["missing"].tolist() == [True, True, False]
    assert imported["correct"].tolist() == [False, False, True]


def test_stored_results_keep_the_records_with_a_missing_score():
    import store  # noqa: PLC0415
    from store.scores import save_item_scores  # noqa: PLC0415

    db = store.connect(":memory:")
    save_item_scores(db, "needles", "f" * 32, "fp32|skip:8", "m", [
        {"item_key": "a", "subset": "1000", "chosen_scores": [1.0], "rejected_scores": [0.0]},
        {"item_key": "b", "subset": "1000", "chosen_scores": [None], "rejected_scores": [0.0]}])
    records = [{"id": "a", "tagged_position": 0.1, "length_tokens": 1000},
               {"id": "b", "tagged_position": 0.2, "length_tokens": 1000}]
    frame = analysis.stored_results(db, "needles", records, "f" * 32)
    assert frame["id"].tolist() == ["a", "b"] and frame["missing"].tolist() == [False, True]
    assert analysis.heatmap_frame(frame)["n"].sum() == 2


def _spec_params(spec):
    found = list(spec.get("params", []))
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for sub in spec.get(key, []):
            found += _spec_params(sub)
    if "spec" in spec:
        found += _spec_params(spec["spec"])
    return found


def test_heatmap_has_the_cell_selection_thin_marks_and_a_fixed_scale():
    frame = analysis.results_frame(HAND)
    spec = charts.heatmap(frame).to_dict()
    params = [p for p in _spec_params(spec) if p.get("select")]
    assert [p["name"] for p in params] == ["cell"]
    assert params[0]["select"]["fields"] == ["length_tokens", "bucket"]
    layers = spec["layer"]
    assert layers[0]["encoding"]["color"]["scale"]["domain"] == [0, 1]
    assert any(t.get("filter") == "datum.thin" for layer in layers for t in layer.get("transform", []))
    tooltip_fields = {t["field"] for t in layers[0]["encoding"]["tooltip"]}
    assert {"count", "n_correct", "accuracy"} <= tooltip_fields
    data = next(iter(spec["datasets"].values()))
    assert {d["label"] for d in data} == {"n=3", "n=1"}  # both thin (under 5): the count only
    assert {d["count"] for d in data} == {"3, too few to read (under 5 pairs)",
                                         "1, too few to read (under 5 pairs)"}
    assert layers[0]["encoding"]["color"]["condition"]["test"] == "datum.thin"  # grey, off the scale


def test_two_models_side_by_side_share_one_colour_scale():
    a = analysis.results_frame(HAND)
    b = analysis.results_frame([dict(r, model="other") for r in HAND])
    spec = charts.compare_heatmaps(a, b).to_dict()
    assert spec["facet"]["column"]["field"] == "model"
    assert spec["resolve"]["scale"]["color"] == "shared"
    assert spec["spec"]["layer"][0]["encoding"]["color"]["scale"]["domain"] == [0, 1]
    with pytest.raises(ValueError, match="same model"):
        charts.compare_heatmaps(a, a)


@pytest.mark.slow
def test_exports_png_svg_and_csv(tmp_path):
    frame = analysis.results_frame(HAND)
    png = charts.to_png(charts.heatmap(frame), scale=1)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert charts.to_svg(charts.accuracy_lines(frame)).lstrip().startswith("<svg")
    written = charts.export_all(frame, tmp_path / "out")
    assert sorted(p.name for p in written) == ["heatmap.png", "heatmap.svg", "lines.png", "lines.svg", "results.csv"]
    back = analysis.read_results_csv(tmp_path / "out" / "results.csv")
    pd.testing.assert_frame_equal(back, frame, check_dtype=False)
    pdf = charts.save_chart(charts.heatmap(frame, title="Q3 needles"), tmp_path / "x.pdf")
    assert pdf.read_bytes()[:5] == b"%PDF-"  # issue 29: the heatmap as PDF too
    with pytest.raises(ValueError, match=r"png, \.svg or \.pdf"):
        charts.save_chart(charts.heatmap(frame), tmp_path / "x.jpg")


# -- an LLM judge's needle run ---------------------------------------------------------------

NEEDLE_RECORDS = [{"id": "p1", "tagged_position": 0.05, "length_tokens": 1000, "site_index": 0,
                   "needle_id": "safety:1", "haystack_id": "h"},
                  {"id": "p2", "tagged_position": 0.55, "length_tokens": 1000, "site_index": 5,
                   "needle_id": "safety:2", "haystack_id": "h"}]


def trial(item, number, chosen_at, *, picked=None, valid=True, skipped=False, raw="[[A]]"):
    """A ``store.judges.run_results`` row of a pairwise selection trial."""
    members = ["chosen[0]", "rejected[0]"] if chosen_at == 0 else ["rejected[0]", "chosen[0]"]
    return {"item_key": item, "trial": number, "raw": raw,
            "entry": {"item_key": item, "trial": number, "members": members,
                      "chosen_positions": [chosen_at], "picked": picked, "valid": valid,
                      "skipped": skipped, "reason": "prompt over the window: skipped" if skipped else None}}


def test_a_judge_run_is_one_row_per_trial_and_invalid_or_skipped_is_wrong():
    trials = [trial("p1", 0, 0, picked=0, raw="A is better [[A]]"),    # named chosen (shown first)
              trial("p1", 1, 1, picked=0, raw="[[A]]"),                # named rejected (shown first)
              trial("p2", 0, 0, picked=None, valid=False, raw="both are fine"),  # invalid: wrong
              trial("p2", 1, 1, skipped=True, raw=None),               # too long: missing, wrong
              trial("gone", 0, 0, picked=0)]                           # not in the set: left out
    frame = analysis.judge_results(NEEDLE_RECORDS, trials, "judge x")
    assert frame["id"].tolist() == ["p1", "p1", "p2", "p2"]
    assert frame["correct"].tolist() == [True, False, False, False]
    assert frame["missing"].tolist() == [False, False, False, True]
    assert frame["order"].tolist() == [analysis.ORDER_NAMES[0], analysis.ORDER_NAMES[1]] * 2
    assert frame["judge_answer"].tolist() == ["A is better [[A]]", "[[A]]", "both are fine",
                                              "prompt over the window: skipped"]
    assert set(frame["model"]) == {"judge x"} and frame["bucket"].tolist() == [0, 0, 5, 5]
    cells = analysis.heatmap_frame(frame, thin=3)
    got = {(r.length_tokens, r.bucket): (r.n, r.n_correct, r.n_missing) for r in cells.itertuples()}
    assert got == {(1000, 0): (2, 1, 0), (1000, 5): (2, 0, 1)}  # a cell counts trials, two per pair
    # position bias: the judge always names the response shown first
    assert order_bias.order_accuracy(frame) == {analysis.ORDER_NAMES[0]: 0.5, analysis.ORDER_NAMES[1]: 0.0}
    assert order_bias.order_accuracy(analysis.results_frame(HAND)) == {}  # a reward model: no orders


@pytest.mark.slow
def test_heatmap_panel_fits_its_column_on_the_fixed_scale_with_lengths_as_written():
    spec = charts.heatmap_panel(analysis.results_frame(HAND), title="m").to_dict()
    assert spec["width"] == "container" and spec["autosize"]["type"] == "fit"
    assert spec["layer"][0]["encoding"]["color"]["scale"]["domain"] == [0, 1]
    assert spec["layer"][0]["encoding"]["color"]["legend"]["orient"] == "bottom"
    assert spec["layer"][0]["encoding"]["y"]["axis"]["labelExpr"] == charts.LENGTH_LABEL
    assert [p["name"] for p in _spec_params(spec) if p.get("select")] == ["cell"]
    png = charts.to_png(charts.heatmap_panel(analysis.results_frame(HAND)).properties(width=500), scale=1)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"  # a valid spec (vl-convert renders it)
