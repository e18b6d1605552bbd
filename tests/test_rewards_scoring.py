"""The scoring pipeline: batching, the score cache, long inputs, cancel, OOM, jobs."""

from __future__ import annotations

import json
import threading

import pytest
import torch

import store
from needlework.rewards import errors
from needlework.rewards.batching import plan_batches
from needlework.rewards.job import run_scoring_job, start_job_thread, submit_scoring_job
from needlework.rewards.pipeline import RewardPipeline
from needlework.rewards.runs import score_dataset
from store.datasets import NewItem, create_dataset
from store.scores import count_cached, get_job, item_scores, request_cancel
from tests import rewards_fixtures
from tests.rewards_fixtures import standin_paragraphs

# shared fixtures (pytest finds them as module attributes)
tiny_model_dir = rewards_fixtures.tiny_model_dir
tiny_rm = rewards_fixtures.tiny_rm


PARAGRAPHS = standin_paragraphs(60, seed=3)


def pairs(n: int, words: int = 40) -> list[tuple[str, str]]:
    return [(f"Question {k}?", " ".join(PARAGRAPHS[k % 60].split()[: words + k % 7]))
            for k in range(n)]


class ForwardCounter:
    """Counts forward passes of the model's transformer (the thing the cache must avoid):
    every scoring path runs it once per batch, through the model's forward or directly."""

    def __init__(self, model, monkeypatch, hook=None):
        self.calls = 0
        base = getattr(model, model.base_model_prefix)
        original = base.forward

        def counted(*args, **kwargs):
            self.calls += 1
            if hook:
                hook(self.calls, {"input_ids": args[0] if args else kwargs.get("input_ids"),
                                  **{k: v for k, v in kwargs.items() if k != "input_ids"}})
            return original(*args, **kwargs)

        monkeypatch.setattr(base, "forward", counted)


def test_plan_batches_sorts_by_length_under_the_budget():
    lengths = [10, 50, 20, 50, 5, 300]
    batches = plan_batches(lengths, batch_tokens=100)
    assert batches[0] == [5]  # longer than the budget: alone
    assert sorted(i for b in batches for i in b) == list(range(6))
    for batch in batches:
        assert len(batch) == 1 or max(lengths[i] for i in batch) * len(batch) <= 100
        assert [lengths[i] for i in batch] == sorted((lengths[i] for i in batch), reverse=True)


def test_batched_scores_equal_one_by_one(tiny_rm):
    texts = pairs(12)
    batched = RewardPipeline(tiny_rm, batch_tokens=2048, batching="batched").score_pairs(texts)
    single = RewardPipeline(tiny_rm, batch_tokens=1)
    for (p, r), got in zip(texts, batched, strict=True):
        assert got.score == pytest.approx(single.score(p, r).score, abs=1e-5)
    assert single.stats.forward_calls == 12


def test_a_causal_model_is_batched_without_a_mask_an_encoder_with_one(tiny_rm, tmp_path, monkeypatch):
    from transformers import BertConfig, BertForSequenceClassification  # noqa: PLC0415

    from needlework.rewards.loading import load_reward_model  # noqa: PLC0415

    tokenizer = rewards_fixtures.tiny_tokenizer()
    torch.manual_seed(0)
    bert = BertForSequenceClassification(BertConfig(
        vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=256, num_labels=1,
        pad_token_id=tokenizer.pad_token_id))
    bert.save_pretrained(tmp_path / "bert")
    tokenizer.save_pretrained(tmp_path / "bert")
    encoder = load_reward_model(tmp_path / "bert", device="cpu")
    assert tiny_rm.facts.causal and not encoder.facts.causal
    texts = pairs(8)
    for rm, expect_mask in ((tiny_rm, False), (encoder, True)):
        seen: list[bool] = []
        ForwardCounter(rm.model, monkeypatch,
                       lambda calls, kwargs, seen=seen: seen.append("attention_mask" in kwargs))
        batched = RewardPipeline(rm, batch_tokens=4096, batching="batched").score_pairs(texts)
        assert seen and set(seen) == {expect_mask}
        single = RewardPipeline(rm, batch_tokens=1)
        for (p, r), got in zip(texts, batched, strict=True):
            assert got.score == pytest.approx(single.score(p, r).score, abs=1e-5)
        monkeypatch.undo()


def test_a_repeated_run_makes_no_forward_pass(tiny_rm, monkeypatch):
    db = store.connect(":memory:")
    texts = pairs(20)
    counter = ForwardCounter(tiny_rm.model, monkeypatch)
    first = RewardPipeline(tiny_rm, db=db, batch_tokens=512).score_pairs(texts)
    assert counter.calls > 1 and count_cached(db, tiny_rm.facts.fingerprint) == 20
    calls = counter.calls
    again = RewardPipeline(tiny_rm, db=db, batch_tokens=512)
    second = again.score_pairs(texts)
    assert counter.calls == calls and again.stats.forward_calls == 0
    assert again.stats.cache_hits == 20
    assert [s.score for s in second] == pytest.approx([s.score for s in first])
    assert all(s.cached for s in second)


def test_duplicate_texts_are_scored_once(tiny_rm):
    pipeline = RewardPipeline(tiny_rm)
    scores = pipeline.score_pairs([("q", "same answer")] * 5 + [("q", "other")])
    assert pipeline.stats.unique_texts == 2 and pipeline.stats.scored == 2
    assert len({s.score for s in scores[:5]}) == 1


def test_long_inputs_are_reported_never_cut_silently(tiny_rm):
    db = store.connect(":memory:")
    long_text = " ".join(PARAGRAPHS[:8])  # far over a 64-token window
    texts = [("q", "short answer"), ("q", long_text)]
    skip = RewardPipeline(tiny_rm, db=db, max_length=64, truncation="skip")
    short, long_ = skip.score_pairs(texts)
    assert short.score is not None and not short.too_long
    assert long_.score is None and long_.skipped and long_.n_tokens > 64
    assert skip.stats.too_long == 1 and skip.stats.skipped == 1
    for policy in ("keep-end", "keep-start"):
        pipeline = RewardPipeline(tiny_rm, db=db, max_length=64, truncation=policy)
        result = pipeline.score_pairs(texts)[1]
        assert result.truncated and result.score is not None and pipeline.stats.truncated == 1
        shown = tiny_rm.tokenizer.apply_chat_template(
            [{"role": "user", "content": "q"}, {"role": "assistant", "content": long_text}],
            tokenize=False)
        ids = tiny_rm.tokenizer(shown, add_special_tokens=False)["input_ids"]
        kept = ids[-64:] if policy == "keep-end" else ids[:64]
        assert result.score == pytest.approx(pipeline.forward([kept])[0], abs=1e-5)
    # the cache keeps the views apart: the full-length score is never mixed with a cut one
    again = RewardPipeline(tiny_rm, db=db, max_length=64, truncation="keep-end")
    hit = again.score_pairs(texts)[1]
    assert hit.cached and hit.truncated and again.stats.forward_calls == 0


def test_cancel_keeps_what_was_scored(tiny_rm):
    db = store.connect(":memory:")
    texts = pairs(30)
    pipeline = RewardPipeline(tiny_rm, db=db, batch_tokens=128)
    seen = []

    def progress(done, total):
        seen.append(done)

    with pytest.raises(errors.ScoringCancelled, match="scored texts are cached"):
        pipeline.score_pairs(texts, progress=progress, should_stop=lambda: len(seen) > 3)
    cached = count_cached(db)
    assert 0 < cached < 30
    resumed = RewardPipeline(tiny_rm, db=db, batch_tokens=128)
    resumed.score_pairs(texts)
    assert resumed.stats.cache_hits == cached and resumed.stats.scored == 30 - cached


def test_out_of_memory_splits_the_batch_then_explains(tiny_rm, monkeypatch):
    def hook(calls, kwargs):
        if kwargs["input_ids"].shape[0] > 1:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    counter = ForwardCounter(tiny_rm.model, monkeypatch, hook)
    pipeline = RewardPipeline(tiny_rm, batch_tokens=4096, batching="batched")  # a batch, then halves
    scores = pipeline.score_pairs(pairs(4))
    assert all(s.score is not None for s in scores) and counter.calls > 4

    def always(calls, kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory")

    ForwardCounter(tiny_rm.model, monkeypatch, always)
    with pytest.raises(errors.RewardModelOOMError, match="smaller dtype.*cpu.*batch-tokens"):
        RewardPipeline(tiny_rm).score("q", "a")


def insert_lfrb(db, name: str, n: int) -> None:
    items = []
    for k in range(n):
        record = {"id": f"QA_{k}", "subset": "QA" if k % 2 else "RAG", "prompt": f"Question {k}?",
                  "chosen": [" ".join(PARAGRAPHS[k % 60].split()[:30])],
                  "rejected": [" ".join(PARAGRAPHS[(k + j) % 60].split()[:25 + j])
                               for j in (1, 2, 3)]}
        items.append(NewItem(record["id"], record, record["subset"], record["prompt"]))
    create_dataset(db, name, "preference", "lfrb", items)


def test_score_dataset_writes_item_scores_and_lfrb_output(tiny_rm, tmp_path):
    db = store.connect(tmp_path / "db.sqlite")
    insert_lfrb(db, "lf", 6)
    out = tmp_path / "scores.jsonl"
    summary = score_dataset(db, tiny_rm, "lf", out=out)
    assert summary["items"] == 6 and summary["texts"] == 24 and summary["cache_hits"] == 0
    assert summary["metrics"]["bon"]["n"] == 6
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0].keys() >= {"id", "subset", "chosen_scores", "rejected_scores", "model"}
    assert len(lines[0]["rejected_scores"]) == 3
    rows = item_scores(db, "lf", tiny_rm.facts.fingerprint)
    assert len(rows) == 6 and rows[0]["chosen_scores"][0] == pytest.approx(
        next(x for x in lines if x["id"] == rows[0]["item_key"])["chosen_scores"][0])
    again = score_dataset(db, tiny_rm, "lf")
    assert again["cache_hits"] == 24 and again["forward_calls"] == 0


def test_background_job_runs_and_reports(tiny_rm, tmp_path):
    path = tmp_path / "db.sqlite"
    db = store.connect(path)
    insert_lfrb(db, "lf", 8)
    job_id = submit_scoring_job(db, str(tiny_rm.facts.name), "lf", batch_tokens=256)
    thread = start_job_thread(path, job_id, reward_model=tiny_rm)
    thread.join(timeout=120)
    job = get_job(db, job_id)
    assert job["status"] == "done", job["error"]
    assert job["done"] == job["total"] == 32
    assert job["result"]["metrics"]["bon"]["n"] == 8


def test_background_job_loads_its_model(tiny_model_dir, tmp_path):
    path = tmp_path / "db.sqlite"
    db = store.connect(path)
    insert_lfrb(db, "lf", 2)
    job_id = submit_scoring_job(db, str(tiny_model_dir), "lf", device="cpu", dtype="fp32")
    assert run_scoring_job(path, job_id)["status"] == "done"


def test_background_job_cancel_keeps_partial_results(tiny_rm, tmp_path, monkeypatch):
    path = tmp_path / "db.sqlite"
    db = store.connect(path)
    insert_lfrb(db, "lf", 10)
    job_id = submit_scoring_job(db, "tiny", "lf", batch_tokens=64)
    other = store.connect(path)  # the app's connection, in another thread

    def cancel_after_two(calls, kwargs):
        if calls == 2:
            request_cancel(other, job_id)

    ForwardCounter(tiny_rm.model, monkeypatch, cancel_after_two)
    job = run_scoring_job(path, job_id, reward_model=tiny_rm)
    assert job["status"] == "cancelled" and "cached" in job["error"]
    assert 0 < count_cached(db) < 40


def test_a_cancelled_run_saves_the_items_scored_in_full(tiny_rm, tmp_path, monkeypatch):
    path = tmp_path / "db.sqlite"
    db = store.connect(path)
    insert_lfrb(db, "lf", 10)  # 40 texts, one per forward pass at this budget
    job_id = submit_scoring_job(db, "tiny", "lf", batch_tokens=64)
    other = store.connect(path)
    counter = ForwardCounter(tiny_rm.model, monkeypatch,
                             lambda calls, kwargs: calls == 36 and request_cancel(other, job_id))
    job = run_scoring_job(path, job_id, reward_model=tiny_rm)
    assert job["status"] == "cancelled" and counter.calls == 36
    saved = item_scores(db, "lf", tiny_rm.facts.fingerprint, "fp32|skip:256")
    # 4 texts are left, so at most 4 items are incomplete: 6 to 9 items are saved, no gaps
    assert 6 <= len(saved) <= 9, len(saved)
    assert f"the {len(saved)} of 10 items scored in full are saved" in job["error"]
    assert all(None not in r["chosen_scores"] + r["rejected_scores"] for r in saved)
    finished = score_dataset(db, tiny_rm, "lf")  # resume: only the 4 missing texts
    assert finished["scored"] == 4 and finished["cache_hits"] == 36
    full = {r["item_key"]: r for r in item_scores(db, "lf", tiny_rm.facts.fingerprint, "fp32|skip:256")}
    assert len(full) == 10
    for r in saved:
        assert full[r["item_key"]]["rejected_scores"] == pytest.approx(r["rejected_scores"])


def test_runs_under_another_policy_or_window_are_saved_apart(tiny_rm, tmp_path):
    """The run identity holds the window policy and the window: under skip a smaller
    window leaves other items unscored, so its results must not overwrite the others."""
    db = store.connect(tmp_path / "db.sqlite")
    insert_lfrb(db, "lf", 3)
    whole = score_dataset(db, tiny_rm, "lf")
    skipped = score_dataset(db, tiny_rm, "lf", max_length=20)
    cut = score_dataset(db, tiny_rm, "lf", max_length=20, truncation="keep-end")
    assert whole["variant"] == "fp32|skip:256" and skipped["variant"] == "fp32|skip:20"
    assert cut["variant"] == "fp32|keep-end:20"
    assert {r["variant"] for r in store.scores.scored_models(db, "lf")} == {
        "fp32|skip:256", "fp32|skip:20", "fp32|keep-end:20"}
    full = item_scores(db, "lf", tiny_rm.facts.fingerprint, "fp32|skip:256")
    assert all(None not in r["chosen_scores"] + r["rejected_scores"] for r in full)
    assert all(None in r["chosen_scores"] + r["rejected_scores"]
               for r in item_scores(db, "lf", tiny_rm.facts.fingerprint, "fp32|skip:20"))


def test_failed_job_records_the_error(tiny_rm, tmp_path):
    path = tmp_path / "db.sqlite"
    db = store.connect(path)
    job_id = submit_scoring_job(db, "tiny", "no-such-dataset")
    job = run_scoring_job(path, job_id, reward_model=tiny_rm)
    assert job["status"] == "failed" and "no dataset named" in job["error"]
    with pytest.raises(ValueError, match="unknown scoring options"):
        submit_scoring_job(db, "tiny", "lf", batch_size=3)


def test_jobs_can_run_in_threads_next_to_the_app(tiny_rm, tmp_path):
    path = tmp_path / "db.sqlite"
    db = store.connect(path)
    insert_lfrb(db, "lf", 4)
    ids = [submit_scoring_job(db, "tiny", "lf") for _ in range(2)]
    threads = [threading.Thread(target=run_scoring_job, args=(path, i),
                                kwargs={"reward_model": tiny_rm}) for i in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert [get_job(db, i)["status"] for i in ids] == ["done", "done"], [get_job(db, i)["error"] for i in ids]


def test_non_finite_scores_are_missing_reported_and_never_cached(tiny_model_dir, tmp_path):
    """A model that returns NaN or inf for some texts (an fp16 overflow): those scores are
    missing (null in the output, counted in the metrics' missing), reported, not cached."""
    from needlework.rewards.loading import load_reward_model  # noqa: PLC0415

    rm = load_reward_model(tiny_model_dir, dtype="fp32", device="cpu")
    poison = rm.tokenizer.convert_tokens_to_ids("<|system|>")
    with torch.no_grad():
        rm.model.model.embed_tokens.weight[poison] = float("nan")
    db = store.connect(tmp_path / "db.sqlite")
    items = []
    for k in range(4):
        record = {"id": f"QA_{k}", "subset": "QA", "prompt": f"Question {k}?",
                  "chosen": [" ".join(PARAGRAPHS[k].split()[:20])],
                  "rejected": [" ".join(PARAGRAPHS[k + 10].split()[:20]) + (" <|system|>" if k < 2 else "")
                               for _ in range(3)]}
        items.append(NewItem(record["id"], record, record["subset"], record["prompt"]))
    create_dataset(db, "lf", "preference", "lfrb", items)
    out = tmp_path / "scores.jsonl"
    summary = score_dataset(db, rm, "lf", out=out)
    assert summary["non_finite"] == 2  # the poisoned text of items 0 and 1 (deduplicated)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0]["rejected_scores"] == [None, None, None] and lines[0]["non_finite"][0]["value"] == "nan"
    assert None not in lines[2]["rejected_scores"] + lines[3]["rejected_scores"]
    bon = summary["metrics"]["bon"]
    assert bon["n"] == 4 and bon["missing"] == 2 and bon["correct"] <= 2
    assert summary["metrics"]["pairwise"]["missing_pairs"] == 6
    again = score_dataset(db, rm, "lf")
    assert again["scored"] == 2 and again["cache_hits"] == len({t for i in items for t in
                                                               i.record["chosen"] + i.record["rejected"]}) - 2
