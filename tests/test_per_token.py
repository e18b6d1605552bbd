"""Per-token rewards: one forward pass, last value = pooled score, curve comparison."""

from __future__ import annotations

import pytest
import torch

from needlework.rewards import errors
from needlework.rewards.per_token import (
    batch_token_rewards,
    compare_curves,
    per_token_rewards,
    token_rewards,
)
from needlework.rewards.pipeline import RewardPipeline, pad_batch
from needlework.rewards.templates import render
from tests import rewards_fixtures
from tests.rewards_fixtures import standin_paragraphs

# shared fixtures (pytest finds them as module attributes)
tiny_model_dir = rewards_fixtures.tiny_model_dir
tiny_rm = rewards_fixtures.tiny_rm


TEXT = " ".join(standin_paragraphs(3, seed=5))


def test_last_per_token_value_equals_the_pooled_score(tiny_rm):
    result = per_token_rewards(tiny_rm, "Tell me.", TEXT)
    pooled = RewardPipeline(tiny_rm).score("Tell me.", TEXT).score
    assert result.rewards[-1] == pytest.approx(pooled, abs=1e-5)
    assert result.score == pytest.approx(pooled, abs=1e-5)
    assert len(result.tokens) == len(result.rewards) == len(result.token_ids)


def test_tokens_cover_the_response_and_the_template_tail(tiny_rm):
    result = per_token_rewards(tiny_rm, "Tell me.", TEXT)
    assert "".join(result.tokens) == TEXT + "<|end|>"
    shown = render(tiny_rm.tokenizer, "Tell me.", TEXT)
    ids = tiny_rm.tokenizer(shown.text, add_special_tokens=False)["input_ids"]
    assert result.prefix_tokens + len(result.tokens) == len(ids) == result.n_tokens


def test_last_values_equal_pooled_scores_with_right_padding(tiny_rm):
    tokenizer = tiny_rm.tokenizer
    responses = [TEXT[:40], TEXT, TEXT[:300]]
    rows = [tokenizer(render(tokenizer, "q", r).text, add_special_tokens=False)["input_ids"]
            for r in responses]
    assert len({len(r) for r in rows}) == 3
    per_row, pooled = batch_token_rewards(tiny_rm, rows)
    ids, mask = pad_batch(rows, tokenizer.pad_token_id)
    with torch.inference_mode():
        logits = tiny_rm.model(input_ids=ids, attention_mask=mask).logits[:, 0]
    for k, row in enumerate(rows):
        assert len(per_row[k]) == len(row)
        assert per_row[k][-1] == pytest.approx(float(logits[k]), abs=1e-5)
        assert pooled[k] == pytest.approx(float(logits[k]), abs=1e-5)
        alone = per_token_rewards(tiny_rm, "q", responses[k])
        assert alone.rewards[-1] == pytest.approx(per_row[k][-1], abs=1e-5)


def test_one_forward_pass_gives_every_prefix_score(tiny_rm):
    """The value at position t equals the pooled score of the text cut after t."""
    tokenizer = tiny_rm.tokenizer
    ids = tokenizer(render(tokenizer, "q", TEXT[:200]).text, add_special_tokens=False)["input_ids"]
    values = token_rewards(tiny_rm.model, torch.tensor([ids]), torch.ones(1, len(ids)).long())[0]
    pipeline = RewardPipeline(tiny_rm)
    for t in (5, len(ids) // 2, len(ids) - 1):
        assert float(values[t]) == pytest.approx(pipeline.forward([ids[: t + 1]])[0], abs=1e-5)


def test_compare_curves_finds_where_the_tokens_differ(tiny_rm):
    before, after = TEXT[:250], TEXT[250:500]
    chosen = per_token_rewards(tiny_rm, "q", f"{before} Thanks for reading, friend. {after}")
    rejected = per_token_rewards(tiny_rm, "q", f"{before} Shut up and read, you idiot. {after}")
    cmp = compare_curves(chosen, rejected)
    assert cmp.first_difference is not None
    i, j = cmp.first_difference
    assert "".join(chosen.tokens[:i]) == "".join(rejected.tokens[:j])
    assert "".join(chosen.tokens[:i]).startswith(before[:200])
    first, last = cmp.spans[0], cmp.spans[-1]
    assert "friend" in "".join(chosen.tokens[first.chosen_start : last.chosen_end])
    assert "idiot" in "".join(rejected.tokens[first.rejected_start : last.rejected_end])
    assert "".join(chosen.tokens[last.chosen_end :]).endswith(after + "<|end|>")
    assert cmp.margin == pytest.approx(chosen.score - rejected.score)
    assert cmp.aligned[-1][0] == len(chosen.tokens) - 1  # the shared tail is aligned
    assert cmp.gap_after_difference() is not None
    same = compare_curves(chosen, chosen)
    assert same.first_difference is None and same.spans == [] and same.margin == 0


def test_too_long_for_per_token(tiny_rm):
    with pytest.raises(errors.InputTooLongError, match="keep-end or keep-start"):
        per_token_rewards(tiny_rm, "q", TEXT, max_length=32)
    end = per_token_rewards(tiny_rm, "q", TEXT, max_length=32, truncation="keep-end")
    assert end.truncated and end.prefix_tokens == 0 and len(end.rewards) == 32
    assert "".join(end.tokens).endswith("<|end|>")
    start = per_token_rewards(tiny_rm, "q", TEXT, max_length=32, truncation="keep-start")
    assert start.truncated and start.prefix_tokens + len(start.rewards) == 32


def test_a_head_that_pools_by_itself_is_refused(tiny_rm):
    class PoolingHead(torch.nn.Module):
        def forward(self, hidden):
            return hidden[:, 0, :1]

    head = tiny_rm.model.score  # (monkeypatch would delete a submodule on undo)
    tiny_rm.model.score = PoolingHead()
    try:
        with pytest.raises(errors.PerTokenUnsupportedError, match="pools by itself"):
            per_token_rewards(tiny_rm, "q", "a")
    finally:
        tiny_rm.model.score = head


def test_tokens_join_back_to_the_text_with_multibyte_characters(tiny_rm):
    response = "Needle 🧵 in a haystack — naïve, 東京."
    result = per_token_rewards(tiny_rm, "q", response)
    assert "".join(result.tokens) == response + "<|end|>"
