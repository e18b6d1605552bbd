"""Batched scores equal the model's own forward on each text alone, for every pad
arrangement a checkpoint can ship with (issue 10, point 3), decoders and encoders.

The reference is a freshly loaded copy of the checkpoint, config untouched, run on one
unpadded text at a time: ``model(input_ids).logits`` (Long-form RewardBench's loop).
"""

from __future__ import annotations

import json

import pytest
import torch
from transformers import AutoModelForSequenceClassification

from needlework.rewards.loading import load_reward_model
from needlework.rewards.per_token import per_token_rewards
from needlework.rewards.pipeline import RewardPipeline
from needlework.rewards.pooling import GATHER, HEAD, PREFIX, pooled_index
from needlework.rewards.templates import render
from tests.rewards_fixtures import (
    ENCODERS,
    PAD_ARRANGEMENTS,
    save_encoder,
    save_llama_arrangement,
    standin_paragraphs,
)

PARAGRAPHS = standin_paragraphs(12, seed=9)
TEXTS = [(f"Question {k}?", " ".join(PARAGRAPHS[k].split()[: 6 + 9 * k])) for k in range(8)]


def own_scores(folder, rm) -> list[float]:
    """The checkpoint's own forward on each rendered text alone (fresh copy, no padding)."""
    model = AutoModelForSequenceClassification.from_pretrained(folder, dtype=torch.float32).eval()
    out = []
    for prompt, response in TEXTS:
        shown = render(rm.tokenizer, prompt, response, locate=False)
        ids = rm.tokenizer(shown.text, add_special_tokens=shown.add_special_tokens)["input_ids"]
        with torch.inference_mode():
            out.append(float(model(input_ids=torch.tensor([ids])).logits[0, 0]))
    return out


@pytest.fixture(scope="module", params=sorted(PAD_ARRANGEMENTS))
def arrangement(request, tmp_path_factory):
    folder = save_llama_arrangement(tmp_path_factory.mktemp("pads"), request.param)
    rm = load_reward_model(folder, dtype="fp32", device="cpu")
    return request.param, folder, rm, own_scores(folder, rm)


@pytest.mark.parametrize("batch_tokens", [1, 4096])
@pytest.mark.slow
def test_batched_scores_equal_the_models_own_forward(arrangement, batch_tokens):
    name, folder, rm, expected = arrangement
    assert max(expected) - min(expected) > 0.05  # the texts do score apart
    pipeline = RewardPipeline(rm, batch_tokens=batch_tokens, batching="batched")
    got = [s.score for s in pipeline.score_pairs(TEXTS)]
    for want, have in zip(expected, got, strict=True):
        assert have == pytest.approx(want, abs=1e-4), name
    if batch_tokens > 1:
        assert pipeline.stats.forward_calls < len(TEXTS)  # it did batch


def test_the_loader_never_changes_where_the_checkpoint_pools(arrangement):
    name, folder, rm, _ = arrangement
    shipped = json.loads((folder / "config.json").read_text()).get("pad_token_id")
    assert rm.model.config.pad_token_id == shipped == rm.pooling.pad_id, name
    assert rm.facts.causal and rm.pooling.path == GATHER and rm.pooling.per_token == HEAD


def test_last_per_token_value_is_the_score(arrangement):
    """pad = EOS and a template ending in EOS: the model reads the token before the EOS;
    the curve's last value (at the EOS) is still the score of the whole text."""
    name, folder, rm, expected = arrangement
    for (prompt, response), want in zip(TEXTS[:3], expected[:3], strict=True):
        result = per_token_rewards(rm, prompt, response)
        assert result.method == HEAD
        assert result.score == pytest.approx(want, abs=1e-4), name
        assert result.rewards[-1] == pytest.approx(want, abs=1e-4), name
        assert result.rewards[result.pooled] == pytest.approx(want, abs=1e-4)
        shown = render(rm.tokenizer, prompt, response)
        ids = rm.tokenizer(shown.text, add_special_tokens=False)["input_ids"]
        assert result.pooled == pooled_index(ids, rm.pooling.pad_id) - result.prefix_tokens
        if name == "pad = eos":
            assert ids[-1] == rm.tokenizer.eos_token_id
            assert result.pooled == len(result.rewards) - 2  # the token before the final EOS


@pytest.fixture(scope="module", params=ENCODERS)
def encoder(request, tmp_path_factory):
    folder = save_encoder(tmp_path_factory.mktemp("enc"), request.param)
    rm = load_reward_model(folder, dtype="fp32", device="cpu")
    return request.param, folder, rm, own_scores(folder, rm)


@pytest.mark.parametrize("batch_tokens", [1, 4096])
@pytest.mark.slow
def test_encoder_batched_scores_equal_the_models_own_forward(encoder, batch_tokens):
    kind, folder, rm, expected = encoder
    assert not rm.facts.causal and rm.pooling.per_token == PREFIX
    assert max(expected) - min(expected) > 0.05
    got = [s.score for s in RewardPipeline(rm, batch_tokens=batch_tokens).score_pairs(TEXTS)]
    for want, have in zip(expected, got, strict=True):
        assert have == pytest.approx(want, abs=1e-4), kind
