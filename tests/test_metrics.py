"""Reward-model metrics: hand-computed cases (with ties) and the RM-Bench reference."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from needlework.cli import main
from needlework.figures import metrics

RMBENCH_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "rm-bench"
ROOT = Path(__file__).resolve().parents[1]


def entry(id_, subset, chosen, rejected, **extra):
    return {"id": id_, "subset": subset, "chosen_scores": chosen, "rejected_scores": rejected,
            **extra}


# -- best-of-n and pairwise ---------------------------------------------------------------

BON_ENTRIES = [
    entry("a", "QA", [2.0], [1.0, 0.5, 1.9]),  # correct
    entry("b", "QA", [2.0], [1.0, 2.0, 0.0]),  # tie with a rejected: wrong
    entry("c", "RAG", [3.0], [1.0, 2.0, 4.0]),  # one rejected above: wrong
    entry("d", "RAG", [1.0], [0.0, -1.0, 0.5]),  # correct
    entry("e", "Reasoning", [0.0], [0.0]),  # tie: wrong
]


def test_best_of_n_hand_computed_with_ties():
    result = metrics.best_of_n(BON_ENTRIES)
    assert result["n"] == 5 and result["correct"] == 2
    assert result["accuracy"] == pytest.approx(2 / 5)  # mean over entries, not subsets
    assert result["subsets"]["QA"] == {"accuracy": 0.5, "correct": 1, "n": 2, "missing": 0}
    assert result["subsets"]["RAG"]["accuracy"] == 0.5
    assert result["subsets"]["Reasoning"]["accuracy"] == 0.0


def test_best_of_n_overall_is_mean_over_entries_not_subsets():
    entries = [entry(i, "QA", [1.0], [0.0]) for i in range(3)] + [entry("x", "Chat", [0.0], [1.0])]
    result = metrics.best_of_n(entries)
    assert result["accuracy"] == 0.75  # a mean over subsets would give 0.5


def test_best_of_n_several_chosen_need_every_chosen_above_every_rejected():
    assert metrics.bon_correct([3.0, 2.0], [1.0, 1.5])
    assert not metrics.bon_correct([3.0, 1.5], [1.0, 1.5])  # the 1.5 tie
    assert not metrics.bon_correct([3.0, 1.0], [2.0])


def test_pairwise_hand_computed_with_ties():
    result = metrics.pairwise(BON_ENTRIES)
    # a: 3/3, b: 2/3 (tie), c: 2/3, d: 3/3, e: 0/1 (tie)  → 10 of 13
    assert result["pairs"] == 13 and result["correct"] == 10
    assert result["accuracy"] == pytest.approx(10 / 13)
    assert result["subsets"]["QA"]["accuracy"] == pytest.approx(5 / 6)


def test_missing_scores_follow_long_form_rewardbench(tmp_path):
    """cal_accuracy_from_file.py: an entry with a missing score is wrong and stays in the
    denominator; pairwise leaves out only the pairs with a missing score."""
    entries = BON_ENTRIES + [entry("f", "QA", [None], [1.0, 2.0, 3.0]),
                             entry("g", "QA", [5.0], [1.0, None, 0.0])]
    bon = metrics.best_of_n(entries)
    assert (bon["n"], bon["correct"], bon["missing"], bon["missing_scores"]) == (7, 2, 2, 2)
    assert bon["accuracy"] == pytest.approx(2 / 7)
    assert bon["scored_only"] == {"accuracy": pytest.approx(2 / 5), "correct": 2, "n": 5}
    assert bon["subsets"]["QA"] == {"accuracy": 0.25, "correct": 1, "n": 4, "missing": 2}
    pair = metrics.pairwise(entries)
    # f: 3 pairs left out; g: 5>1 and 5>0 count, the pair with the null is left out
    assert (pair["pairs"], pair["correct"], pair["missing_pairs"], pair["missing"]) == (15, 12, 4, 2)


def test_non_finite_scores_are_missing_wherever_they_sit():
    """NaN compares false both ways, so min/max comparisons counted it right or wrong by
    position; a non-finite score is a missing score (point 4 of issue 10)."""
    nan, inf = float("nan"), float("inf")
    entries = [entry("a", "QA", [nan], [0.0, 1.0, 2.0]), entry("b", "QA", [3.0], [nan, 1.0, 2.0]),
               entry("c", "QA", [3.0], [1.0, nan, 2.0]), entry("d", "QA", [3.0], [1.0, 2.0, nan]),
               entry("e", "QA", [inf], [1.0]), entry("f", "QA", [1.0], [-inf])]
    bon = metrics.best_of_n(entries)
    assert (bon["correct"], bon["n"], bon["missing"]) == (0, 6, 6)
    pair = metrics.pairwise(entries)
    assert (pair["correct"], pair["pairs"], pair["missing_pairs"]) == (6, 6, 8)
    assert metrics.missing(nan) and metrics.missing(-inf) and metrics.missing(None)
    assert not metrics.missing(0) and metrics.clean(2) == 2.0 and metrics.clean(nan) is None


def test_empty_score_lists_count_wrong_and_a_missing_subset_is_default_subset():
    result = metrics.best_of_n([entry("a", "QA", [1.0], []), {"id": "b", "chosen_scores": [2.0],
                                                              "rejected_scores": [1.0]}])
    assert (result["n"], result["correct"], result["missing"]) == (2, 1, 0)
    assert result["subsets"]["default_subset"]["correct"] == 1


# Golden figures: HuihuiChyan/Long-formRMB evaluation/cal_accuracy_from_file.py (commit
# ca4ef90, scoring mode) run on lfrb_fixture() written as JSONL. Per subset:
# (entries, correct best-of-n, pairs counted, correct pairs).
LFRB_OFFICIAL = {
    "Chat": (100, 35, 339, 214), "QA": (101, 38, 332, 200), "RAG": (100, 29, 334, 205),
    "Reasoning": (100, 57, 100, 67), "Writing": (100, 37, 327, 210), "default_subset": (1, 1, 3, 3),
}
LFRB_OFFICIAL_OVERALL = (502, 197, 1435, 899)  # 39.24 % best-of-n, 62.65 % pairwise

LFRB_SUBSETS = ("QA", "RAG", "Chat", "Writing", "Reasoning")


def lfrb_fixture(missing_value=None, n=500, holes=34, seed=11):
    """500 Long-form RewardBench output entries on a coarse grid (many ties), 34 of them
    with one missing score (``missing_value``), one without a subset, one with no rejected
    score."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        subset = LFRB_SUBSETS[k % len(LFRB_SUBSETS)]
        chosen = [round(rng.gauss(0.5, 1.0), 1) for _ in range(2 if k % 7 == 0 else 1)]
        rejected = [round(rng.gauss(0.0, 1.0), 1) for _ in range(1 if subset == "Reasoning" else 3)]
        out.append(entry(f"{subset}_{k}", subset, chosen, rejected))
    for k in rng.sample(range(n), holes):
        side = out[k]["chosen_scores"] if rng.random() < 0.3 else out[k]["rejected_scores"]
        side[rng.randrange(len(side))] = missing_value
    out.append({"id": "nosubset", "chosen_scores": [1.0], "rejected_scores": [0.5, 0.5, 0.2]})
    out.append(entry("empty", "QA", [2.0], []))
    return out


@pytest.mark.parametrize("missing_value", [None, float("nan"), float("inf"), float("-inf")])
def test_scores_file_equals_the_long_form_rewardbench_scorer(tmp_path, missing_value, capsys):
    entries = lfrb_fixture(missing_value)
    ties = sum(c == r for e in entries for c in e["chosen_scores"] for r in e["rejected_scores"])
    assert ties > 30  # the grid makes ties: they count wrong
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))  # NaN/Infinity literals
    assert main(["metrics", "--kind", "bon", "--scores", str(path), "--json"]) == 0
    bon = json.loads(capsys.readouterr().out)
    assert main(["metrics", "--kind", "pairwise", "--scores", str(path), "--json"]) == 0
    pair = json.loads(capsys.readouterr().out)
    n, correct, pairs, correct_pairs = LFRB_OFFICIAL_OVERALL
    assert (bon["n"], bon["correct"], bon["missing"]) == (n, correct, 34)
    assert f"{100 * bon['accuracy']:.2f}" == "39.24"
    assert (pair["pairs"], pair["correct"]) == (pairs, correct_pairs)
    assert f"{100 * pair['accuracy']:.2f}" == "62.65"
    for subset, (n, correct, pairs, correct_pairs) in LFRB_OFFICIAL.items():
        assert (bon["subsets"][subset]["n"], bon["subsets"][subset]["correct"]) == (n, correct)
        assert (pair["subsets"][subset]["pairs"], pair["subsets"][subset]["correct"]) == (
            pairs, correct_pairs)
    assert main(["metrics", "--kind", "bon", "--scores", str(path)]) == 0
    text = capsys.readouterr().out
    assert "bon: 39.2 % (197/502 entries), 95 % Wilson 35.1–43.6 %" in text
    assert "missing: 34 entries with a missing score" in text
    assert "scored entries only (not the benchmark figure): 42.1 % (197/468)" in text


# -- RM-Bench ------------------------------------------------------------------------------

def test_rmbench_matrix_and_triangles_hand_computed_with_ties():
    entries = [
        entry(1, "alpacaeval", [3.0, 2.0, 1.0], [2.5, 1.5, 0.5]),
        entry(2, "alpacaeval", [1.0, 1.0, 1.0], [1.0, 0.0, 2.0]),
    ]
    m = metrics.rmbench_matrix(entries)
    # entry 1: c0=3 beats all; c1=2 beats r1,r2 (not 2.5); c2=1 beats r2 only
    # entry 2: c=1 vs r0=1 tie (wrong), r1=0 wins, r2=2 loses, for every i
    assert m == [[0.5, 1.0, 0.5], [0.0, 1.0, 0.5], [0.0, 0.5, 0.5]]
    parts = metrics.rmbench_from_matrix(m)
    assert parts["hard"] == pytest.approx((1.0 + 0.5 + 0.5) / 3)
    assert parts["normal"] == pytest.approx((0.5 + 1.0 + 0.5) / 3)
    assert parts["easy"] == pytest.approx((0.0 + 0.0 + 0.5) / 3)
    assert parts["score"] == pytest.approx((2 / 3 + 2 / 3 + 1 / 6) / 3)


def test_rmbench_safety_pools_and_overall_is_mean_over_domains():
    entries = [
        entry(1, "alpacaeval", [1.0] * 3, [0.0] * 3),  # chat: all correct → 1.0
        entry(2, "refusals-dangerous", [1.0] * 3, [0.0] * 3),  # safety-refuse
        entry(3, "xstest-should-respond", [0.0] * 3, [1.0] * 3),  # safety-response, all wrong
        entry(4, "anything", [0.0] * 3, [0.0] * 3, domain="code"),  # domain field wins; ties
    ]
    result = metrics.rmbench(entries)
    assert set(result["domains"]) == {"chat", "safety", "code"}
    assert result["domains"]["safety"]["n"] == 2
    assert result["domains"]["safety"]["score"] == 0.5
    assert result["domains"]["code"]["score"] == 0.0
    assert result["accuracy"] == pytest.approx((1.0 + 0.5 + 0.0) / 3)


def test_rmbench_unknown_domain_is_a_clear_error():
    with pytest.raises(ValueError, match="add a 'domain' field"):
        metrics.rmbench([entry(1, "mystery", [1.0] * 3, [0.0] * 3)])


def test_rmbench_subsets_in_the_real_files_all_map_to_a_domain():
    expected = {"chat": "chat", "code": "code", "safety-refuse": "safety",
                "safety-response": "safety"}
    for path in sorted(RMBENCH_DIR.glob("*.json")):
        file_domain = path.name.split("_")[0]
        for subset in {r["subset"] for r in json.loads(path.read_text())}:
            assert metrics.rmbench_domain({"subset": subset}) == expected[file_domain], subset


# Golden figures: THU-KEG/RM-Bench scripts/utils.py compute_accuracy (commit 659399c) run
# per domain (its single-domain path: records without a ``domain`` field) on
# rmbench_fixture(seed, holes), with NaN where the fixture has a missing score.
RMBENCH_OFFICIAL = {
    (0, 0): {"chat": (0.5607235142118863, 0.5555555555555555, 0.5658914728682171),
             "code": (0.5482456140350878, 0.5745614035087719, 0.5818713450292398),
             "safety": (0.5487528344671202, 0.5578231292517007, 0.5578231292517006)},
    (1, 0): {"chat": (0.516795865633075, 0.5193798449612403, 0.5813953488372093),
             "code": (0.5336257309941521, 0.52046783625731, 0.5614035087719298),
             "safety": (0.544973544973545, 0.5328798185941043, 0.5608465608465609)},
    (2, 25): {"chat": (0.47803617571059426, 0.5245478036175711, 0.5529715762273902),
              "code": (0.5453216374269005, 0.5394736842105263, 0.5482456140350876),
              "safety": (0.5328798185941043, 0.5359032501889645, 0.5547996976568405)},
}
# Its total_dataset.json path (a ``domain`` field per record), all four domains present:
# the four real files (seed 3, 10 holes) plus the first 60 chat records as a stand-in
# "math" domain (seed 4, 3 holes). Without math that path raises IndexError upstream.
RMBENCH_OFFICIAL_TOTAL = {
    "chat": 0.5503875968992248, "math": 0.5685185185185185, "code": 0.5467836257309941,
    "safety": 0.5485008818342152, "hard_acc": 0.5595923293838139,
    "normal_acc": 0.5499112769002611, "easy_acc": 0.5511393609531396,
    "total_avg_acc": 0.5535476557457382,
}
RMBENCH_FILES = ("chat", "code", "safety-refuse", "safety-response")


def rmbench_fixture(records, seed, holes=0):
    """Deterministic scores with many exact ties (rounded to a coarse grid); ``holes``
    entries get one missing score (None)."""
    rng = random.Random(seed)
    out = [([round(rng.gauss(0.3, 1.0), 1) for _ in r["chosen"]],
            [round(rng.gauss(0.0, 1.0), 1) for _ in r["rejected"]]) for r in records]
    for k in rng.sample(range(len(out)), holes):
        side = out[k][rng.randrange(2)]
        side[rng.randrange(3)] = None
    return out


def rmbench_records(name):
    path = RMBENCH_DIR / f"{name}_filtered.json"
    assert path.is_file(), f"RM-Bench file not found: {path}"
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("seed", "holes"), sorted(RMBENCH_OFFICIAL))
def test_rmbench_equals_compute_accuracy_on_the_real_files(seed, holes):
    ours = []
    for name in RMBENCH_FILES:
        records = rmbench_records(name)
        for record, (chosen, rejected) in zip(records, rmbench_fixture(records, seed, holes),
                                              strict=True):
            ours.append(entry(record["id"], record["subset"], chosen, rejected))
    got = metrics.rmbench(ours)  # domains from the subset names, not from the file names
    assert got["missing"] == 4 * holes
    expected = RMBENCH_OFFICIAL[(seed, holes)]
    for domain, (hard, normal, easy) in expected.items():
        part = got["domains"][domain]
        assert (part["hard"], part["normal"], part["easy"]) == pytest.approx((hard, normal, easy),
                                                                             abs=1e-12)
        assert part["score"] == pytest.approx((hard + normal + easy) / 3, abs=1e-12)
    assert got["accuracy"] == pytest.approx(
        sum(sum(v) / 3 for v in expected.values()) / 3, abs=1e-12)
    assert got["domains_present"] == ["chat", "code", "safety"] and not got["comparable"]
    assert "math absent" in got["note"] and "not comparable" in got["note"]
    ties = sum(c == r for chosen, rejected in rmbench_fixture(rmbench_records("chat"), seed)
               for c in chosen for r in rejected)
    assert ties > 20  # the synthetic scores do exercise ties (129 chat entries)


def test_rmbench_total_equals_compute_accuracy_with_all_four_domains():
    ours = []
    for name in RMBENCH_FILES:
        records = rmbench_records(name)
        for record, (chosen, rejected) in zip(records, rmbench_fixture(records, 3, 10), strict=True):
            ours.append(entry(record["id"], record["subset"], chosen, rejected, domain=name))
    stand_in = rmbench_records("chat")[:60]
    for record, (chosen, rejected) in zip(stand_in, rmbench_fixture(stand_in, 4, 3), strict=True):
        ours.append(entry(f"m{record['id']}", "math-prm", chosen, rejected, domain="math"))
    got = metrics.rmbench(ours)
    ref = RMBENCH_OFFICIAL_TOTAL
    assert got["comparable"] and got["note"] is None
    assert got["accuracy"] == pytest.approx(ref["total_avg_acc"], abs=1e-12)
    assert (got["hard"], got["normal"], got["easy"]) == pytest.approx(
        (ref["hard_acc"], ref["normal_acc"], ref["easy_acc"]), abs=1e-12)
    for domain in ("chat", "math", "code", "safety"):
        assert got["domains"][domain]["score"] == pytest.approx(ref[domain], abs=1e-12)


def test_rmbench_with_a_domain_absent_names_the_domains_present(tmp_path, capsys):
    rows = [entry(1, "alpacaeval", [3.0, 2.0, 1.0], [2.5, 1.5, 0.5]),
            entry(2, "donotanswer", [1.0, 1.0, 1.0], [1.0, 0.0, None])]
    result = metrics.rmbench(rows)
    assert result["domains_present"] == ["chat", "safety"] and not result["comparable"]
    assert result["note"].startswith("overall = mean over chat, safety only (code, math absent)")
    assert result["domains"]["safety"]["matrix"][0] == [0.0, 1.0, 0.0]  # the null is not won
    path = tmp_path / "rm.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in rows))
    assert main(["metrics", "--kind", "rmbench", "--scores", str(path)]) == 0
    text = capsys.readouterr().out
    assert "domains present: chat, safety" in text
    assert "NOT COMPARABLE: overall = mean over chat, safety only" in text
    assert "missing: 1 entries with a missing score" in text


@pytest.mark.slow
def test_metrics_cli_reads_lfrb_output(tmp_path):
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in BON_ENTRIES))
    out = subprocess.run([sys.executable, "-m", "needlework", "metrics", "--kind", "bon",
                          "--scores", str(path), "--json"], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    assert json.loads(out.stdout)["accuracy"] == pytest.approx(0.4)


def test_metrics_cli_pairwise_rmbench_and_errors(tmp_path, capsys):
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in BON_ENTRIES))
    assert main(["metrics", "--kind", "pairwise", "--scores", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == pytest.approx(10 / 13)
    rows = [entry(1, "alpacaeval", [3.0, 2.0, 1.0], [2.5, 1.5, 0.5]),
            entry(2, "alpacaeval", [1.0, 1.0, 1.0], [1.0, 0.0, 2.0])]
    path.write_text("".join(json.dumps(e) + "\n" for e in rows))
    assert main(["metrics", "--kind", "rmbench", "--scores", str(path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["domains"]["chat"]["matrix"][0] == [0.5, 1.0, 0.5]
    assert main(["metrics", "--kind", "rmbench", "--scores", str(path)]) == 0
    assert "chat" in capsys.readouterr().out
    path.write_text('{"id": 1}\n{broken\n{"chosen_scores": ["1"], "rejected_scores": [0]}\n')
    assert main(["metrics", "--kind", "bon", "--scores", str(path)]) == 2
    err = capsys.readouterr().err
    assert "scores.jsonl:1: field chosen_scores is missing" in err
    assert "scores.jsonl:2: invalid JSON" in err
    assert "scores.jsonl:3: field chosen_scores[0] must be a number or null, got '1'" in err
