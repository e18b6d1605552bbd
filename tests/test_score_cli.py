"""The ``score``, ``score-text``, ``model-info`` and ``demo-model`` verbs, and resuming
a ``score`` run killed with SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import store
from needlework.cli import main
from needlework.rewards.demo_model import DemoSettings, build_demo_model
from needlework.rewards.loading import load_reward_model
from store.datasets import NewItem, create_dataset
from store.scores import count_cached
from tests import rewards_fixtures
from tests.rewards_fixtures import standin_paragraphs

# shared fixtures (pytest finds them as module attributes)
tiny_model_dir = rewards_fixtures.tiny_model_dir


ROOT = Path(__file__).resolve().parents[1]
PARAGRAPHS = standin_paragraphs(50, seed=9)


class Result:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def cli(capsys):
    """Run a verb in this process (torch is imported once): ``cli(*args, check=True)``."""

    def run(*args: str, check: bool = True) -> Result:
        capsys.readouterr()
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        if check:
            assert code == 0, captured.err
        return Result(code, captured.out, captured.err)

    return run


def make_dataset(db_path: Path, name: str, n: int) -> int:
    """An LFRB dataset of ``n`` items (1 chosen, 3 rejected); returns the number of texts."""
    db = store.connect(db_path)
    items = []
    for k in range(n):
        words = PARAGRAPHS[k % 50].split()
        record = {"id": f"RAG_{k}", "subset": "RAG", "prompt": f"Question number {k}?",
                  "chosen": [" ".join(words[:12])],
                  "rejected": [" ".join(words[j : j + 12 + k % 3]) for j in (2, 4, 6)]}
        items.append(NewItem(record["id"], record, "RAG", record["prompt"]))
    create_dataset(db, name, "preference", "lfrb", items)
    db.conn.close()
    return 4 * n


def score_args(model: Path, db_path: Path, name: str, *extra: str) -> list[str]:
    return ["score", "--model", str(model), "--dataset", name, "--db", str(db_path),
            "--dtype", "fp32", "--device", "cpu", "--json", *extra]


def test_score_json_summary_out_file_and_cached_rerun(tiny_model_dir, tmp_path, cli):
    db_path = tmp_path / "db.sqlite"
    texts = make_dataset(db_path, "lf", 5)
    out = tmp_path / "scores.jsonl"
    first = json.loads(cli(*score_args(tiny_model_dir, db_path, "lf", "--out", str(out))).stdout)
    assert first["texts"] == texts and first["cache_hits"] == 0 and first["forward_calls"] > 0
    assert first["metrics"]["bon"]["n"] == 5 and first["too_long"] == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 5 and lines[0]["model"] == str(tiny_model_dir)
    assert set(lines[0]) >= {"id", "subset", "chosen_scores", "rejected_scores"}
    second = json.loads(cli(*score_args(tiny_model_dir, db_path, "lf")).stdout)
    assert second["cache_hits"] == second["unique_texts"] and second["forward_calls"] == 0
    metrics = json.loads(cli("metrics", "--kind", "bon", "--scores", str(out), "--json").stdout)
    assert metrics["accuracy"] == first["metrics"]["bon"]["accuracy"]


def test_score_reports_too_long_inputs(tiny_model_dir, tmp_path, cli):
    db_path = tmp_path / "db.sqlite"
    make_dataset(db_path, "lf", 2)
    run = cli(*score_args(tiny_model_dir, db_path, "lf", "--max-length", "30"))
    summary = json.loads(run.stdout)
    assert summary["too_long"] > 0 and summary["skipped"] == summary["too_long"]
    assert "over the window of 30: skipped" in run.stderr
    assert summary["too_long_items"][0]["action"] == "skipped"


def test_score_errors_are_clear(tiny_model_dir, tmp_path, cli):
    db_path = tmp_path / "db.sqlite"
    missing = cli(*score_args(tiny_model_dir, db_path, "nope"), check=False)
    assert missing.returncode == 1 and "no dataset named 'nope'" in missing.stderr
    make_dataset(db_path, "lf", 1)
    bad = cli(*score_args(tmp_path / "no-model-here", db_path, "lf"), check=False)
    assert bad.returncode == 2 and "no such folder" in bad.stderr


@pytest.mark.slow
def test_score_killed_with_sigkill_resumes_without_redoing_cached_rows(tiny_model_dir, tmp_path, cli):
    db_path = tmp_path / "db.sqlite"
    texts = make_dataset(db_path, "big", 400)
    args = [sys.executable, "-m", "needlework",
            *score_args(tiny_model_dir, db_path, "big", "--batch-tokens", "64", "--no-progress")]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    watcher = store.connect(db_path)
    deadline = time.monotonic() + 240
    try:
        while count_cached(watcher) < 5:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "no score was cached in time"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    cached = count_cached(watcher)
    assert 0 < cached < texts, "the run was not interrupted mid-way"
    summary = json.loads(cli(*score_args(tiny_model_dir, db_path, "big", "--no-progress")).stdout)
    assert summary["unique_texts"] == texts
    assert summary["cache_hits"] == cached  # every row written before the kill is reused
    assert summary["scored"] == texts - cached  # and only the rest is scored
    assert count_cached(watcher) == texts


def test_score_text_per_token_json(tiny_model_dir, tmp_path, cli):
    prompt, response = tmp_path / "p.txt", tmp_path / "r.txt"
    prompt.write_text("What is a needle?")
    response.write_text("A needle is a small error hidden in a long answer.")
    base = ["score-text", "--model", str(tiny_model_dir), "--prompt-file", str(prompt),
            "--response-file", str(response), "--device", "cpu", "--json"]
    out = json.loads(cli(*base, "--per-token").stdout)
    assert isinstance(out["score"], float)
    assert len(out["tokens"]) == len(out["per_token"]) > 5
    assert out["per_token"][-1] == pytest.approx(out["score"], abs=1e-5)
    assert "".join(out["tokens"]).startswith("A needle is")
    pooled = json.loads(cli(*base).stdout)
    assert pooled["score"] == pytest.approx(out["score"], abs=1e-5)
    assert out["method"] == "head" and "one forward pass" in out["method_label"]
    assert out["per_token"][out["pooled_token"]] == pytest.approx(out["score"], abs=1e-5)
    text = cli(*base[:-1], "--per-token").stdout
    assert "method: score head read at every token" in text and "(marked *)" in text
    assert sum("*\t" in line for line in text.splitlines()) == 1


def test_score_text_per_token_of_an_encoder_uses_prefix_passes(tmp_path, cli):
    """A BERT classifier: the old path printed head(hidden_t) and a last value that was not
    the score; now prefix passes, an estimate first, the cap and the stride (issue 10, point 2)."""
    from tests.rewards_fixtures import save_encoder  # noqa: PLC0415

    folder = save_encoder(tmp_path / "bert", "bert")
    prompt, response = tmp_path / "p.txt", tmp_path / "r.txt"
    prompt.write_text("What is a needle?")
    response.write_text("the model reads a long answer and gives each response one score")
    base = ["score-text", "--model", str(folder), "--prompt-file", str(prompt),
            "--response-file", str(response), "--device", "cpu", "--json", "--per-token"]
    done = cli(*base)
    out = json.loads(done.stdout)
    assert out["method"] == "prefix" and "per-token by prefix passes" in done.stderr
    assert "prefix passes over" in done.stderr and "tokens, about" in done.stderr
    pooled = json.loads(cli(*base[:-1]).stdout)["score"]
    assert out["score"] == pytest.approx(pooled, abs=1e-5)
    assert out["per_token"][-1] == pytest.approx(pooled, abs=1e-4)
    refused = cli(*base, "--max-passes", "3", check=False)
    assert refused.returncode == 2 and "over the cap of 3 passes" in refused.stderr and "--stride" in refused.stderr
    strided = json.loads(cli(*base, "--stride", "5").stdout)
    assert strided["stride"] == 5 and strided["passes"] < out["passes"]
    assert cli(*base, "--method", "head", check=False).returncode == 2


def test_model_info_json(tiny_model_dir, cli):
    facts = json.loads(cli("model-info", "--model", str(tiny_model_dir), "--device", "cpu",
                           "--json").stdout)
    assert facts["architecture"] == "LlamaForSequenceClassification"
    assert facts["context_length"] == 256 and len(facts["fingerprint"]) == 32


def test_demo_model_if_missing_keeps_an_existing_model(tmp_path, cli):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "needlework_demo.json").write_text(json.dumps({"demo": True, "x": 1}))
    out = cli("demo-model", "--out", str(tmp_path), "--if-missing", "--json")
    assert json.loads(out.stdout) == {"demo": True, "x": 1}


@pytest.mark.slow
def test_build_a_small_demo_model(tmp_path):
    settings = DemoSettings(vocab_size=600, hidden=32, layers=1, heads=2, intermediate=64,
                            max_positions=1024, max_steps=30, batch_pairs=4,
                            min_tokens=48, max_tokens=160, eval_pairs=16, eval_tokens=160)
    paragraphs = standin_paragraphs(40, seed=1)
    report = build_demo_model(tmp_path, settings, texts=paragraphs, paragraphs=paragraphs)
    assert report["demo"] is True and 0.0 <= report["heldout_safety"]["accuracy"] <= 1.0
    assert report["training"]["steps"] == 30
    saved = json.loads((tmp_path / "needlework_demo.json").read_text())
    assert saved["settings"]["hidden"] == 32
    rm = load_reward_model(tmp_path, device="cpu")
    assert rm.facts.demo and rm.facts.architecture == "LlamaForSequenceClassification"
    assert rm.facts.context_length == 1024 and not rm.facts.template_fallback
    assert rm.model.config.num_labels == 1 and rm.model.config.pad_token_id is not None
