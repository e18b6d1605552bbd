"""Tiny reward models built in temporary folders, shared by the reward-model tests.

Import the fixtures you use into a test module (``from tests.rewards_fixtures import
tiny_model_dir``). Models are random and tiny (hidden 16, one layer): they test
plumbing, not quality.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM, LlamaForSequenceClassification

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


# -- encoder reward models (bidirectional: BERT, DistilBERT, RoBERTa, DeBERTa-v2) ----------

ENCODERS = ("bert", "distilbert", "roberta", "deberta-v2")


def encoder_tokenizer(kind: str, model_max_length: int = 256) -> Any:
    """A tokenizer trained here on the stand-in text: WordPiece with ``[CLS] … [SEP]``
    (BERT, DistilBERT, DeBERTa-v2) or byte-level BPE with ``<s> … </s>`` (RoBERTa)."""
    from tokenizers import BertWordPieceTokenizer, ByteLevelBPETokenizer  # noqa: PLC0415
    from tokenizers.processors import BertProcessing, RobertaProcessing  # noqa: PLC0415
    from transformers import PreTrainedTokenizerFast  # noqa: PLC0415

    texts = standin_paragraphs()
    if kind == "roberta":
        core = ByteLevelBPETokenizer()
        core.train_from_iterator(texts, vocab_size=400, min_frequency=1,
                                 special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
        core._tokenizer.post_processor = RobertaProcessing(("</s>", 2), ("<s>", 0))
        names = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
                 "cls_token": "<s>", "sep_token": "</s>", "mask_token": "<mask>"}
    else:
        core = BertWordPieceTokenizer(lowercase=True)
        core.train_from_iterator(texts, vocab_size=300, min_frequency=1,
                                 special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
        core._tokenizer.post_processor = BertProcessing(("[SEP]", 3), ("[CLS]", 2))
        names = {"unk_token": "[UNK]", "pad_token": "[PAD]", "cls_token": "[CLS]",
                 "sep_token": "[SEP]", "mask_token": "[MASK]"}
    return PreTrainedTokenizerFast(tokenizer_object=core._tokenizer, model_max_length=model_max_length,
                                   **names)


def save_encoder(folder: Path, kind: str, seed: int = 0) -> Path:
    """A tiny random sequence classifier of ``kind`` (one label) with its tokenizer, saved
    to ``folder``. Weights are drawn wide (initializer_range 0.4) so scores move."""
    from transformers import (  # noqa: PLC0415
        BertConfig,
        BertForSequenceClassification,
        DebertaV2Config,
        DebertaV2ForSequenceClassification,
        DistilBertConfig,
        DistilBertForSequenceClassification,
        RobertaConfig,
        RobertaForSequenceClassification,
    )

    tokenizer = encoder_tokenizer(kind)
    torch.manual_seed(seed)
    common = {"vocab_size": len(tokenizer), "num_labels": 1, "pad_token_id": tokenizer.pad_token_id,
              "initializer_range": 0.4}
    if kind == "bert":
        model = BertForSequenceClassification(BertConfig(
            hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
            max_position_embeddings=256, hidden_dropout_prob=0.0, **common))
    elif kind == "distilbert":
        model = DistilBertForSequenceClassification(DistilBertConfig(
            dim=16, n_layers=2, n_heads=2, hidden_dim=32, max_position_embeddings=256,
            dropout=0.0, seq_classif_dropout=0.0, **common))
    elif kind == "roberta":
        model = RobertaForSequenceClassification(RobertaConfig(
            hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
            max_position_embeddings=258, bos_token_id=0, eos_token_id=2, **common))
    elif kind == "deberta-v2":
        model = DebertaV2ForSequenceClassification(DebertaV2Config(
            hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
            max_position_embeddings=256, pooler_hidden_size=16, relative_attention=True,
            position_buckets=32, max_relative_positions=64, pos_att_type=["p2c", "c2p"], **common))
    else:
        raise ValueError(kind)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


# -- decoder reward models with every pad arrangement ----------------------------------------

PAD_ARRANGEMENTS = {
    # name: (tokenizer pad token, config pad id: "pad" / "eos" / an int / None, padding side)
    "none": (None, None, "right"),
    "config only": (None, 0, "right"),
    "tokenizer only": ("<|pad|>", None, "right"),
    "both": ("<|pad|>", "pad", "right"),
    "tokenizer and config differ": ("<|pad|>", "<|system|>", "right"),
    "pad = eos": ("<|end|>", "eos", "right"),
    "left padding side": ("<|pad|>", "pad", "left"),
}


def save_llama_arrangement(folder: Path, arrangement: str, seed: int = 0) -> Path:
    """A tiny Llama classifier whose tokenizer and config set their pad tokens as
    :data:`PAD_ARRANGEMENTS` says (the chat template ends every turn with EOS
    ``<|end|>``), saved with its tokenizer. Weights drawn wide so scores move."""
    tokenizer_pad, config_pad, side = PAD_ARRANGEMENTS[arrangement]
    tokenizer = tiny_tokenizer()
    tokenizer.pad_token = tokenizer_pad
    tokenizer.padding_side = side
    ids = {"pad": tokenizer.convert_tokens_to_ids("<|pad|>"), "eos": tokenizer.eos_token_id}
    if isinstance(config_pad, str):
        config_pad = ids.get(config_pad, tokenizer.convert_tokens_to_ids(config_pad))
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, intermediate_size=32,
                         max_position_embeddings=256, num_labels=1, pad_token_id=config_pad,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         initializer_range=0.3, tie_word_embeddings=False)
    model = LlamaForSequenceClassification(config)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
