"""Per-token rewards: one forward pass, last value = pooled score, curve comparison."""

from __future__ import annotations

import copy
import types

import pytest
import torch
from transformers import AutoModelForSequenceClassification
from transformers.modeling_outputs import SequenceClassifierOutputWithPast

from needlework.rewards import errors
from needlework.rewards.batching import pad_batch
from needlework.rewards.curves import compare_curves
from needlework.rewards.per_token import (
    batch_token_rewards,
    per_token_rewards,
    prefix_plan,
    token_rewards,
)
from needlework.rewards.pipeline import RewardPipeline
from needlework.rewards.pooling import PREFIX
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


def custom_head_rm(tiny_rm, head_module, forward=None):
    """The tiny model with another head (and optionally its own forward), probed as at load."""
    from dataclasses import replace  # noqa: PLC0415

    from needlework.rewards.loading import RewardModel, probe_causal, probe_rows  # noqa: PLC0415
    from needlework.rewards.pooling import probe_pooling  # noqa: PLC0415

    model = copy.deepcopy(tiny_rm.model)
    model.score = head_module
    if forward is not None:
        model.forward = types.MethodType(forward, model)
    pooling = probe_pooling(model, tiny_rm.tokenizer, probe_rows(tiny_rm.tokenizer), probe_causal(model))
    facts = replace(tiny_rm.facts, per_token_method=pooling.per_token)
    return RewardModel(model, tiny_rm.tokenizer, facts, pooling)


def mean_pooled_forward(self, input_ids=None, attention_mask=None, **kwargs):
    """A custom reward model: the mean of its head over every position."""
    hidden = self.model(input_ids=input_ids).last_hidden_state
    return SequenceClassifierOutputWithPast(logits=self.score(hidden).mean(dim=1))


@pytest.mark.slow
def test_a_custom_head_gets_prefix_passes_checked_against_its_forward(tiny_rm):
    rm = custom_head_rm(tiny_rm, copy.deepcopy(tiny_rm.model.score), mean_pooled_forward)
    assert rm.pooling.per_token == PREFIX and "does not give its score" in rm.pooling.reason
    result = per_token_rewards(rm, "q", TEXT[:120])
    assert result.method == PREFIX
    ids = list(result.token_ids)
    full = rm.tokenizer(render(rm.tokenizer, "q", TEXT[:120]).text, add_special_tokens=False)["input_ids"]
    head = full[: result.prefix_tokens]
    with torch.inference_mode():
        for t in range(len(ids)):
            want = float(rm.model(input_ids=torch.tensor([head + ids[: t + 1]])).logits[0, 0])
            assert result.rewards[t] == pytest.approx(want, abs=1e-4)
    assert result.rewards[result.pooled] == pytest.approx(result.score, abs=1e-5)


def test_a_head_that_pools_by_itself_gets_prefix_passes(tiny_rm):
    class PoolingHead(torch.nn.Module):
        def __init__(self, linear):
            super().__init__()
            self.linear = linear

        def forward(self, hidden):
            return self.linear(hidden[:, :1, :])  # reads the first position only

    def first_token_forward(self, input_ids=None, attention_mask=None, **kwargs):
        hidden = self.model(input_ids=input_ids).last_hidden_state
        return SequenceClassifierOutputWithPast(logits=self.score(hidden)[:, 0, :])

    rm = custom_head_rm(tiny_rm, PoolingHead(copy.deepcopy(tiny_rm.model.score)), first_token_forward)
    assert rm.pooling.per_token == PREFIX
    with pytest.raises(errors.PerTokenUnsupportedError, match="head method does not give"):
        per_token_rewards(rm, "q", "a b c", method="head")
    result = per_token_rewards(rm, "q", "a b c")
    assert result.method == PREFIX and result.rewards[-1] == pytest.approx(result.score, abs=1e-5)


# -- encoders: per-token rewards by prefix passes (issue 10, point 2) -----------------------


@pytest.fixture(scope="module", params=rewards_fixtures.ENCODERS)
def encoder(request, tmp_path_factory):
    from needlework.rewards.loading import load_reward_model  # noqa: PLC0415

    folder = rewards_fixtures.save_encoder(tmp_path_factory.mktemp("enc"), request.param)
    fresh = AutoModelForSequenceClassification.from_pretrained(folder, dtype=torch.float32).eval()
    return request.param, load_reward_model(folder, dtype="fp32", device="cpu"), fresh


def own(model, ids) -> float:
    with torch.inference_mode():
        return float(model(input_ids=torch.tensor([list(ids)])).logits[0, 0])


ENC_RESPONSE = " ".join(standin_paragraphs(2, seed=8)[0].split()[:30])


@pytest.mark.slow
def test_encoder_per_token_values_are_prefix_rewards(encoder):
    """The value at token t is the model's own score of the text cut after t (the ids up
    to t and the tokenizer's closing token); the head applied to every hidden state (the
    old path) is far from it, and its last value is not even the score."""
    kind, rm, fresh = encoder
    result = per_token_rewards(rm, "Tell me.", ENC_RESPONSE)
    assert result.method == PREFIX and "prefix" in result.method_label
    shown = render(rm.tokenizer, "Tell me.", ENC_RESPONSE)
    ids = rm.tokenizer(shown.text)["input_ids"]  # with [CLS] … [SEP] / <s> … </s>
    closing = ids[-1:]
    assert closing[0] == rm.tokenizer.sep_token_id
    start = result.prefix_tokens
    assert result.token_ids == ids[start:] and len(result.rewards) == len(ids) - start
    prefix = [own(fresh, ids[: t + 1] + closing) for t in range(start, len(ids) - 1)] + [own(fresh, ids)]
    assert result.rewards == pytest.approx(prefix, abs=1e-4), kind
    assert result.score == pytest.approx(own(fresh, ids), abs=1e-4)
    assert result.pooled == len(result.rewards) - 1 and result.check < 1e-4
    assert max(prefix) - min(prefix) > 0.05  # the curve does move
    from needlework.rewards.pooling import base_and_head  # noqa: PLC0415

    base, head = base_and_head(rm.model)
    with torch.inference_mode():
        try:
            naive = head(base(input_ids=torch.tensor([ids])).last_hidden_state)[0, :, 0].tolist()
        except Exception:  # RoBERTa's head pools the first token by itself
            naive = None
    if naive is not None and len(naive) == len(ids):
        assert max(abs(a - b) for a, b in zip(naive[start:], prefix, strict=True)) > 1e-2


def test_encoder_stride_cap_estimate_and_progress(encoder):
    kind, rm, fresh = encoder
    plan = prefix_plan(rm, "Tell me.", ENC_RESPONSE)
    assert plan.passes == plan.response_tokens - 1  # the last content token and [SEP] share the text
    assert plan.seconds is not None and plan.seconds > 0 and "prefix passes" in plan.describe()
    with pytest.raises(errors.PerTokenTooCostlyError, match=r"--max-passes \d+.*--stride \d+"):
        per_token_rewards(rm, "Tell me.", ENC_RESPONSE, max_passes=5)
    seen: list[tuple[int, int]] = []
    strided = per_token_rewards(rm, "Tell me.", ENC_RESPONSE, stride=4, progress=lambda d, t: seen.append((d, t)))
    full = per_token_rewards(rm, "Tell me.", ENC_RESPONSE)
    assert strided.stride == 4 and strided.passes == prefix_plan(rm, "Tell me.", ENC_RESPONSE, stride=4).passes
    assert strided.passes < full.passes / 3
    for k in strided.computed:
        assert strided.rewards[k] == pytest.approx(full.rewards[k], abs=1e-4)
    assert strided.rewards[-1] == pytest.approx(strided.score, abs=1e-4)
    assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1] == strided.passes


def test_tokens_join_back_to_the_text_with_multibyte_characters(tiny_rm):
    response = "Needle 🧵 in a haystack — naïve, 東京."
    result = per_token_rewards(tiny_rm, "q", response)
    assert "".join(result.tokens) == response + "<|end|>"
