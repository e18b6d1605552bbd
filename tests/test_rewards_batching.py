"""The reward engine chooses, per length bucket, between one forward pass per planned batch
and one text per pass, from timings of its own first batches, remembers the choice, and
gives every text the score it has alone either way.

The demo reward model (models/, installed into data/), on the CPU."""

from __future__ import annotations

import pytest

from needlework.rewards.batching import (
    BATCH_MARGIN,
    SINGLE_FIRST,
    BatchChoices,
    decide,
    length_bucket,
    plan_batches,
)
from needlework.rewards.loading import load_reward_model
from needlework.rewards.pipeline import RewardPipeline

# fp32 on the CPU: a batch changes the order of the sums inside a matrix product, so a
# score may move in its last bits (measured: below 1e-6 on these texts); the pooling probe
# accepts batching at 1e-4 of the score's size, and so does this test.
TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def demo_rm(demo_models_dir):
    return load_reward_model(demo_models_dir / "demo-model", device="cpu")


def sentences(n: int, seed: int) -> str:
    words = ["reward", "model", "needle", "haystack", "answer", "checks", "every", "fact",
             "slowly", "and", "then", "says", "so"]
    return " ".join(words[(seed * 7 + k * 3) % len(words)] for k in range(n)) + "."


def pairs(count: int = 24) -> list[tuple[str, str]]:
    """Texts from a few tokens to about a thousand, in no order."""
    return [(f"Question {k}?", sentences(8 + (k * 97) % 700, k)) for k in range(count)]


def close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))


def test_every_way_of_batching_gives_the_single_pass_scores(demo_rm):
    texts = pairs()
    single = [s.score for s in RewardPipeline(demo_rm, batching="single",
                                              batch_tokens=4096).score_pairs(texts)]
    for batching in ("auto", "batched"):
        engine = RewardPipeline(demo_rm, batching=batching, batch_tokens=4096, choices=BatchChoices())
        got = [s.score for s in engine.score_pairs(texts)]
        assert all(close(a, b) for a, b in zip(got, single, strict=True)), batching
    forced = RewardPipeline(demo_rm, batching="single", batch_tokens=4096)
    forced.score_pairs(texts[:5])
    assert forced.stats.forward_calls == 5


def rows_of(demo_rm, n: int, tokens: int) -> list[list[int]]:
    """``n`` token-id rows of exactly ``tokens`` tokens (one length bucket)."""
    out = []
    for k in range(n):
        ids = demo_rm.tokenizer(sentences(tokens, k), add_special_tokens=False)["input_ids"]
        out.append(ids[:tokens])
    assert all(len(r) == tokens for r in out)
    return out


def test_a_bucket_is_measured_on_its_first_batch_then_remembered(demo_rm):
    choices = BatchChoices()
    engine = RewardPipeline(demo_rm, choices=choices)
    rows = rows_of(demo_rm, 6, 200)
    key = engine.choice_key(200)
    assert choices.get(key) is None
    first = engine.run_batch(rows)
    assert SINGLE_FIRST == 3 and engine.stats.forward_calls == 4  # three alone, three together
    choice = choices.get(key)
    assert choice is not None
    assert choice.batched == (choice.batch_rate >= BATCH_MARGIN * choice.single_rate)
    again = RewardPipeline(demo_rm, choices=choices)  # another pipeline of the same model
    second = again.run_batch(rows)
    assert again.stats.forward_calls == (1 if choice.batched else 6)
    assert all(close(a, b) for a, b in zip(first, second, strict=True))
    other = RewardPipeline(demo_rm, choices=choices).choice_key(600)
    assert choices.get(other) is None and length_bucket(600) == 1024  # another bucket: not yet


def test_a_bucket_of_two_row_batches_is_measured_over_two_batches(demo_rm):
    choices = BatchChoices()
    engine = RewardPipeline(demo_rm, choices=choices)
    rows = rows_of(demo_rm, 4, 300)
    key = engine.choice_key(300)
    engine.run_batch(rows[:2])  # both alone: no batch timing yet
    assert engine.stats.forward_calls == 2 and choices.get(key) is None
    assert choices.timings(key) == (2, 0)
    engine.run_batch(rows[2:])  # the next batch as one pass: now both ways are timed
    assert engine.stats.forward_calls == 3 and choices.get(key) is not None


def test_batches_must_win_by_the_margin():
    assert BATCH_MARGIN == 1.15
    assert not decide(100.0, 100.0).batched  # a tie keeps one text per pass
    assert not decide(100.0, 114.0).batched  # inside the measurement's noise
    assert decide(100.0, 116.0).batched
    assert decide(100.0, 50.0).describe() == "one text per pass (batches 0.50×)"
    assert [length_bucket(n) for n in (1, 2, 3, 1000, 1024, 1025)] == [1, 2, 4, 1024, 1024, 2048]


def test_the_plan_is_unchanged_longest_first(demo_rm):
    assert plan_batches([10, 30, 20, 30], 60) == [[1, 3], [2, 0]]
    with pytest.raises(ValueError, match="batching"):
        RewardPipeline(demo_rm, batching="sometimes")
