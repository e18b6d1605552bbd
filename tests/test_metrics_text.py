"""The text output of ``metrics`` (issue 48, point 6): counts and intervals beside every
figure, overall and per subset, as ``--json`` has them; every number recounted by hand
(the Wilson interval from its textbook formula, the shares from the counts, rounded half
up), and the judge summary's lines (:func:`needlework.figures.lines.judge_lines`)."""

from __future__ import annotations

import json
import math
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from needlework.cli import main
from needlework.figures.lines import interval_words, judge_lines, share_words
from needlework.figures.stats import wilson


def hand_wilson(right: int, n: int) -> tuple[float, float]:
    z = 1.959963984540054
    p = right / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (0.0 if right == 0 else centre - half), (1.0 if right == n else centre + half)


def pct(x: float) -> str:
    return str(Decimal(repr(100 * x)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def entries() -> list[dict]:
    """26 one-chosen, two-rejected entries: 16 right (chosen above both rejected): subset A
    has 10 of 14 right, subset B 6 of 12; entry a13 is wrong by a tie, b11 by a missing
    score."""
    out = []
    for k in range(14):
        right = k < 10
        out.append({"id": f"a{k}", "subset": "A", "chosen_scores": [2.0 if right else 0.5],
                    "rejected_scores": [1.0, 0.0 if k != 13 else 0.5]})
    for k in range(12):
        right = k < 6
        out.append({"id": f"b{k}", "subset": "B", "chosen_scores": [3.0 if right else -1.0],
                    "rejected_scores": [0.0, None if k == 11 else 1.0]})
    return out


def write(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_bon_text_has_counts_and_wilson_intervals_overall_and_per_subset(tmp_path, capsys) -> None:
    path = write(tmp_path, entries())
    assert main(["metrics", "--kind", "bon", "--scores", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    lo, hi = hand_wilson(16, 26)
    assert lines[0] == f"bon: 61.5 % (16/26 entries), 95 % Wilson {pct(lo)}–{pct(hi)} %"
    assert lines[0] == "bon: 61.5 % (16/26 entries), 95 % Wilson 42.5–77.6 %"
    lo, hi = hand_wilson(10, 14)
    assert f"  A: 71.4 % (10/14 entries), 95 % Wilson {pct(lo)}–{pct(hi)} %" in lines
    lo, hi = hand_wilson(6, 12)
    assert f"  B: 50.0 % (6/12 entries), 95 % Wilson {pct(lo)}–{pct(hi)} %; missing 1" in lines
    assert "  missing: 1 entries with a missing score (1 scores), counted wrong" in lines
    assert "  scored entries only (not the benchmark figure): 64.0 % (16/25)" in lines
    assert lines[-1] == "  intervals: 95 % Wilson score interval, the unit the entry"
    # the same interval as --json
    assert main(["metrics", "--kind", "bon", "--scores", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    overall = report["intervals"]["overall"]
    assert (overall["method"], overall["right"], overall["n"]) == ("wilson", 16, 26)
    assert f"{pct(overall['low'])}–{pct(overall['high'])} %" == "42.5–77.6 %"


def test_pairwise_text_counts_pairs_and_names_the_bootstrap(tmp_path, capsys) -> None:
    path = write(tmp_path, entries())
    assert main(["metrics", "--kind", "pairwise", "--scores", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert main(["metrics", "--kind", "pairwise", "--scores", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    # pairs: A 28 (a0-a9 win both: 20; a10-a12 lose r0, win r1: 3; a13 loses both: 0);
    # B 23 counted (b0-b5 win both: 12; b6-b10 win neither: 0; b11 one pair, lost)
    assert (report["correct"], report["pairs"]) == (35, 51)
    ci = report["intervals"]["overall"]
    assert ci["method"] == "bootstrap"  # shares of an item's pairs: not a plain proportion
    assert ci["n"] == 26  # the items resampled, their pairs with them
    assert lines[0] == (f"pairwise: 68.6 % (35/51 pairs), 95 % bootstrap over 26 items "
                        f"{pct(ci['low'])}–{pct(ci['high'])} %")
    assert "  missing: 1 pairs left out (a score missing) in 1 entries" in lines
    assert any(line.startswith("  A: 82.1 % (23/28 pairs), 95 % ") for line in lines)
    assert lines[-1].startswith("  intervals: 95 % percentile bootstrap, 1,000 resamples, seed 0")


def test_rmbench_text_gives_n_and_the_stratified_interval(tmp_path, capsys) -> None:
    win = {"chosen_scores": [3.0, 3.0, 3.0], "rejected_scores": [1.0, 1.0, 1.0]}
    lose = {"chosen_scores": [0.0, 0.0, 0.0], "rejected_scores": [1.0, 1.0, 1.0]}
    rows = ([{"id": f"c{k}", "domain": "chat", **win} for k in range(3)]
            + [{"id": f"m{k}", "domain": "math", **(win if k else lose)} for k in range(2)])
    path = write(tmp_path, rows)
    assert main(["metrics", "--kind", "rmbench", "--scores", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert main(["metrics", "--kind", "rmbench", "--scores", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    # chat 1.0, math 0.5: overall (1 + 0.5) / 2
    ci = report["intervals"]["overall"]
    assert lines[0].startswith("rmbench: 75.0 % (n=5 entries), 95 % ")
    assert f"{pct(ci['low'])}–{pct(ci['high'])} %" in lines[0]
    # hard, normal and easy with their comparisons and intervals, then the 3 × 3 (issue 59):
    # chat's 3 items win their 3 hard comparisons each, math's one of two: 12 of 15, but
    # the figure is the mean over the domains, (1 + 0.5) / 2
    parts = report["intervals"]["parts"]
    for k, key in enumerate(("hard", "normal", "easy"), start=1):
        assert lines[k].startswith(f"  {key}: 75.0 % (the mean over domains; 12/15 comparisons "
                                   "in all), 95 % "), lines[k]
        assert f"{pct(parts[key]['overall']['low'])}–{pct(parts[key]['overall']['high'])} %" \
            in lines[k]
    assert lines[4].startswith("  matrix (share of entries where the chosen style, by row")
    assert lines[6].split()[:5] == ["chosen", "concise", "75.0", "%", "(4/5)"], lines[6]
    assert report["counts"]["hard"] == [12, 15] and report["wins"][0] == [4, 4, 4]
    lo, hi = hand_wilson(3, 3)
    assert f"  chat: 100.0 % (27/27 comparisons), 95 % Wilson over 3 items {pct(lo)}–{pct(hi)} %; " \
        "3 entries; hard 100.0 % (9/9), normal 100.0 % (9/9), easy 100.0 % (9/9)" in lines


def test_share_words_rounds_half_up_from_the_counts() -> None:
    assert share_words(None, 21, 40) == "52.5 % (21/40)"
    assert share_words(0.5, 1, 2, wilson(1, 2), unit="trials").startswith("50.0 % (1/2 trials), 95 % Wilson")
    assert share_words(None, 0, 0) == "– (nothing counted)"
    lo, hi = hand_wilson(0, 5)
    assert share_words(0.0, 0, 5, wilson(0, 5)) == f"0.0 % (0/5), 95 % Wilson 0.0–{pct(hi)} %"
    assert pct(hi) == "43.4"  # not a 0-width interval at 0 of 5
    assert interval_words({"method": "none", "low": None, "high": None}) == \
        "no interval (no unit counted)"
    # no interval says why (issue 59): its units alike, too few to estimate one
    assert interval_words({"method": "none", "low": None, "high": None, "n": 4, "unit": "item"}) \
        == ("no interval (every resample of the 4 items gives the same mean (they are alike, "
            "within each group where grouped), and under 30 items that cannot stand for the "
            "uncertainty)")
    assert interval_words(None) == "no interval"
    assert interval_words(wilson(3, 4), 12) == "95 % Wilson over 4 items 30.1–95.4 %"
    assert interval_words(wilson(3, 4), 4) == "95 % Wilson 30.1–95.4 %"


def test_judge_lines_count_the_answered_trials_and_show_the_intervals() -> None:
    summary = {
        "mode": "selection", "accuracy": 16 / 26,
        "metrics": {"bon": {"correct": 16, "n": 26}},
        "subsets": {"A": {"accuracy": 10 / 14, "correct": 10, "n": 14},
                    "B": {"accuracy": 6 / 12, "correct": 6, "n": 12}},
        "intervals": {"overall": wilson(16, 26).as_dict(),
                      "subsets": {"A": wilson(10, 14).as_dict(), "B": wilson(6, 12).as_dict()},
                      "trials_per_item": "equal"},
    }
    lines = judge_lines(summary)
    assert lines[0] == "accuracy 61.5 % (16/26 trials), 95 % Wilson 42.5–77.6 %"
    lo, hi = hand_wilson(6, 12)
    assert lines[2] == f"  B: 50.0 % (6/12 trials), 95 % Wilson {pct(lo)}–{pct(hi)} %"
    assert len(lines) == 3
    scoring = {**summary, "mode": "scoring"}
    assert judge_lines(scoring)[0].startswith("accuracy 61.5 % (16/26 items)")
