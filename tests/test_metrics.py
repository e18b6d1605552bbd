"""Reward-model metrics: hand-computed cases (with ties) and the RM-Bench reference."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from needlework import metrics
from needlework.cli import main

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
    assert result["subsets"]["QA"] == {"accuracy": 0.5, "correct": 1, "n": 2}
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


def test_missing_scores_are_left_out_and_counted():
    entries = BON_ENTRIES + [entry("f", "QA", [None], [1.0, 2.0, 3.0])]
    assert metrics.best_of_n(entries)["missing"] == 1
    assert metrics.best_of_n(entries)["n"] == 5
    assert metrics.pairwise(entries)["pairs"] == 13


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


def reference_compute_accuracy(results):
    """RM-Bench's ``compute_accuracy`` (scripts/utils.py upstream), reimplemented with numpy.

    Upstream splits by ``domain`` prefix over chat/math/code/safety; domains with no
    data are dropped here (upstream would divide by zero: there is no math file).
    """
    if "domain" in results[0]:
        split = {d: [r for r in results if r["domain"].startswith(d)]
                 for d in ("chat", "math", "code", "safety")}
        per_domain = {d: reference_compute_accuracy([{k: v for k, v in r.items() if k != "domain"}
                                                     for r in rs])
                      for d, rs in split.items() if rs}
        out = {d: float(np.mean(list(v.values()))) for d, v in per_domain.items()}
        for key in ("hard_acc", "normal_acc", "easy_acc"):
            out[key] = float(np.mean([v[key] for v in per_domain.values()]))
        out["total_avg_acc"] = float(np.mean([out[d] for d in per_domain]))
        return out
    size = 3
    acc = np.zeros((size, size))
    for r in results:
        for i in range(len(r["score_chosen"])):
            for j in range(len(r["score_rejected"])):
                if r["score_chosen"][i] > r["score_rejected"][j]:
                    acc[i][j] += 1
    acc /= len(results)
    pairs = size * (size - 1) / 2
    return {"hard_acc": np.sum(np.triu(acc, 1)) / pairs, "normal_acc": np.mean(np.diag(acc)),
            "easy_acc": np.sum(np.tril(acc, -1)) / pairs}


def synthetic_scores(records, seed):
    """Deterministic scores with many exact ties (rounded to a coarse grid)."""
    rng = random.Random(seed)
    return [([round(rng.gauss(0.3, 1.0), 1) for _ in r["chosen"]],
             [round(rng.gauss(0.0, 1.0), 1) for _ in r["rejected"]]) for r in records]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rmbench_equals_the_reference_on_the_real_files(seed):
    files = sorted(RMBENCH_DIR.glob("*.json"))
    assert len(files) >= 4, f"RM-Bench files not found in {RMBENCH_DIR}"
    reference_rows, ours = [], []
    for path in files:
        records = json.loads(path.read_text(encoding="utf-8"))
        file_domain = path.name.split("_")[0]  # chat, code, safety-refuse, safety-response
        for record, (chosen, rejected) in zip(records, synthetic_scores(records, seed),
                                              strict=True):
            reference_rows.append({"domain": file_domain, "score_chosen": chosen,
                                   "score_rejected": rejected})
            ours.append(entry(record["id"], record["subset"], chosen, rejected))
    ref = reference_compute_accuracy(reference_rows)
    got = metrics.rmbench(ours)  # domains from subset names, not from the file names
    assert got["accuracy"] == pytest.approx(ref["total_avg_acc"], abs=1e-12)
    assert got["hard"] == pytest.approx(ref["hard_acc"], abs=1e-12)
    assert got["normal"] == pytest.approx(ref["normal_acc"], abs=1e-12)
    assert got["easy"] == pytest.approx(ref["easy_acc"], abs=1e-12)
    for domain in ("chat", "code", "safety"):
        assert got["domains"][domain]["score"] == pytest.approx(ref[domain], abs=1e-12)
    ties = sum(c == r for row in reference_rows for c in row["score_chosen"]
               for r in row["score_rejected"])
    assert ties > 100  # the synthetic scores do exercise ties


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
    path.write_text('{"id": 1}\n{broken\n')
    assert main(["metrics", "--kind", "bon", "--scores", str(path)]) == 2
    assert "scores.jsonl:2: invalid JSON" in capsys.readouterr().err
