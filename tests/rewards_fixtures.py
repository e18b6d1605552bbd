"""Tiny reward models built in temporary folders, shared by the reward-model tests.

Import the fixtures you use into a test module (``from tests.rewards_fixtures import
tiny_model_dir``). Models are random and tiny (hidden 16, one layer): they test
plumbing, not quality.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from needlework.rewards.demo_model import DemoSettings, build_model, build_tokenizer

WORDS = (
    "the model reads a long answer and gives each response one score while the annotator "
    "checks every passage for grounding citations dates and facts before a needle of error "
    "hides inside the haystack of paragraphs so length and position both matter here"
).split()


def standin_paragraphs(n: int = 40, seed: int = 0) -> list[str]:
    """Deterministic pseudo-prose paragraphs (a stand-in for ``needlework.demo`` text)."""
    rng = random.Random(seed)
    return [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 60))).capitalize() + "."
        for _ in range(n)
    ]


TINY = DemoSettings(vocab_size=400, hidden=16, layers=1, heads=2, intermediate=32,
                    max_positions=256)


def tiny_tokenizer(chat_template: bool = True, model_max_length: int = 256):
    """A byte-level BPE tokenizer trained on the stand-in text."""
    tokenizer = build_tokenizer(standin_paragraphs(), TINY.vocab_size, model_max_length)
    if not chat_template:
        tokenizer.chat_template = None
    return tokenizer


def save_tiny_model(folder: Path, *, chat_template: bool = True, num_labels: int = 1,
                    max_positions: int = 256, seed: int = 0, causal_lm: bool = False) -> Path:
    """Build and save a tiny model (sequence classifier unless ``causal_lm``) with its tokenizer."""
    tokenizer = tiny_tokenizer(chat_template, max_positions)
    settings = DemoSettings(**{**TINY.__dict__, "max_positions": max_positions, "seed": seed})
    if causal_lm:
        torch.manual_seed(seed)
        config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1,
                             num_attention_heads=2, num_key_value_heads=2, intermediate_size=32,
                             max_position_embeddings=max_positions,
                             pad_token_id=tokenizer.pad_token_id)
        model = LlamaForCausalLM(config)
    else:
        model = build_model(tokenizer, settings, demo=False)
        if num_labels != 1:
            model.config.num_labels = num_labels
            model.config.id2label = {i: f"LABEL_{i}" for i in range(num_labels)}
            model.config.label2id = {v: k for k, v in model.config.id2label.items()}
            model.score = torch.nn.Linear(settings.hidden, num_labels, bias=False)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A tiny Llama sequence classifier (one label, chat template, 256-token window)."""
    return save_tiny_model(tmp_path_factory.mktemp("tiny-rm"))


@pytest.fixture(scope="session")
def tiny_rm(tiny_model_dir):
    """The tiny model, loaded (fp32, CPU)."""
    from needlework.rewards.loading import load_reward_model  # noqa: PLC0415

    return load_reward_model(tiny_model_dir, dtype="fp32", device="cpu")
