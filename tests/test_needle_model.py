"""A tiny real Llama reward model for the needle tests, and the prefix-reuse tests.

``tiny_model_dir()`` trains a byte-level BPE tokenizer on a few sentences, builds a
randomly initialised ``LlamaForSequenceClassification`` (one label) and saves both
with ``save_pretrained`` into a temporary folder (once per test session).
"""

from __future__ import annotations

import atexit
import functools
import random
import shutil
import tempfile
import time
from pathlib import Path

import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForSequenceClassification, PreTrainedTokenizerFast

from needlework import tokens
from needlework.needle import builder, inputs, prefix, run
from needlework.rewards.loading import load_reward_model
from needlework.rewards.pipeline import RewardPipeline

CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>"
    "{% if not loop.last %}\n{% endif %}{% endfor %}"
)
WORDS = ("river stone cloud lantern meadow harbor signal garden copper window orbit pencil "
         "thunder basket silver forest engine candle marble rocket").split()


def sentence(rng: random.Random) -> str:
    """A random capitalised sentence of 6–16 words."""
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))).capitalize() + "."


def paragraphs(count: int = 120, seed: int = 0) -> list[str]:
    """Deterministic paragraphs of 2–8 sentences."""
    rng = random.Random(seed)
    return [" ".join(sentence(rng) for _ in range(rng.randint(2, 8))) for _ in range(count)]


@functools.lru_cache(maxsize=1)
def tiny_model_dir() -> Path:
    """Build and save the tiny model once; the folder is removed at exit."""
    folder = Path(tempfile.mkdtemp(prefix="needle-tiny-"))
    atexit.register(shutil.rmtree, folder, True)
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    special = ["<|pad|>", "<|bos|>", "<|end|>", "<|user|>", "<|assistant|>"]
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=special, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    texts = paragraphs(60) + [a for pair in inputs.builtin_pairs("safety", "all") for a in (pair.chosen, pair.rejected)]
    core.train_from_iterator(texts, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<|bos|>", eos_token="<|end|>",
                                        pad_token="<|pad|>", model_max_length=32768)
    tokenizer.chat_template = CHAT_TEMPLATE
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, intermediate_size=64, max_position_embeddings=32768,
                         num_labels=1, pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id)
    model = LlamaForSequenceClassification(config)
    with torch.no_grad():  # a visible spread of scores
        model.score.weight.normal_(0, 1.0)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(autouse=True)
def one_thread():
    """One torch thread: on a busy 2-core machine, thread contention makes tiny models crawl."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def tiny_pipeline(db=None, **kwargs):
    """A RewardPipeline over the tiny model (cache on when ``db`` is given)."""
    return RewardPipeline(load_reward_model(tiny_model_dir(), device="cpu", dtype="fp32"), db=db, **kwargs)


def small_records(lengths=(300, 600), count=2, positions=4, kind="safety"):
    """Needle records built from the test paragraphs (estimate token counts)."""
    hays = inputs.demo_haystacks(count, max(lengths), paragraphs=paragraphs())
    options = builder.BuildOptions(kind=kind, lengths=tuple(lengths), positions=positions)
    return builder.build_needles(hays, inputs.builtin_pairs(kind), options,
                                 builder.TokenCounter(tokens.estimate, "estimate")).records


@pytest.mark.slow
def test_prefix_reuse_equals_plain_path():
    pipe = tiny_pipeline()
    records = small_records()
    fast = run.run_needles(pipe, records, reuse_prefix=True)
    plain = run.run_needles(tiny_pipeline(), records, reuse_prefix=False)
    assert fast.stats.prefix_reuse and fast.stats.reuse_records == len(records)
    assert not plain.stats.prefix_reuse
    assert len(fast.frame) == len(plain.frame) == len(records)
    merged = fast.frame.merge(plain.frame, on="id", suffixes=("_fast", "_plain"))
    for side in ("chosen_score", "rejected_score"):
        diff = (merged[f"{side}_fast"] - merged[f"{side}_plain"]).abs().max()
        assert diff < 1e-4, f"{side}: {diff}"
    assert (merged["correct_fast"] == merged["correct_plain"]).all()
    assert fast.stats.tokens_saved > 0
    assert fast.stats.tokens_forwarded < plain.stats.tokens_forwarded + fast.stats.tokens_texts


def test_prefix_scores_against_model_forward():
    pipe = tiny_pipeline()
    tok, model = pipe.rm.tokenizer, pipe.rm.model
    a = tok("<|bos|>Shared start of a long text. Then the chosen ending.<|end|>", add_special_tokens=False)["input_ids"]
    b = tok("<|bos|>Shared start of a long text. A rejected ending, longer than the other one.<|end|>",
            add_special_tokens=False)["input_ids"]
    c, r, p = prefix.prefix_scores(model, a, b, tok.pad_token_id)
    assert p == prefix.shared_prefix_length(a, b) > 5
    with torch.inference_mode():
        ref = [float(model(input_ids=torch.tensor([x])).logits[0, 0]) for x in (a, b)]
    assert abs(c - ref[0]) < 1e-4 and abs(r - ref[1]) < 1e-4


def test_mismatch_turns_reuse_off(monkeypatch):
    records = small_records(lengths=(300,), count=1, positions=3)
    real = run.prefix_scores

    def wrong(*args, **kwargs):
        c, r, p = real(*args, **kwargs)
        return c + 1.0, r, p

    monkeypatch.setattr(run, "prefix_scores", wrong)
    result = run.run_needles(tiny_pipeline(), records)
    assert "differ from the plain path" in result.stats.reuse_note
    plain = run.run_needles(tiny_pipeline(), records, reuse_prefix=False)
    assert result.frame["chosen_score"].tolist() == pytest.approx(plain.frame["chosen_score"].tolist(), abs=1e-5)


def test_model_without_cache_support_uses_plain_path():
    class NoCache:
        def forward(self, input_ids, attention_mask=None):
            raise AssertionError("not called")

    ok, note = prefix.supports_prefix_reuse(NoCache())
    assert not ok and "past_key_values" in note


@pytest.mark.slow
def test_auto_mode_turns_reuse_off_when_it_is_slower(monkeypatch):
    records = small_records(lengths=(300,), count=1, positions=3)
    real = run.prefix_scores

    def slow(*args, **kwargs):  # burns CPU time: on a CPU the check compares process time
        until = time.process_time() + 0.3
        while time.process_time() < until:
            pass
        return real(*args, **kwargs)

    monkeypatch.setattr(run, "prefix_scores", slow)
    auto = run.run_needles(tiny_pipeline(), records)
    assert not auto.stats.prefix_reuse and "plain path for 300-token records" in auto.stats.reuse_note
    assert auto.stats.reuse_check.endswith("→ plain") and len(auto.frame) == 3
    forced = run.run_needles(tiny_pipeline(), records, reuse_prefix="on")
    assert forced.stats.reuse_records == 3 and forced.stats.reuse_check.startswith("300: plain ")
