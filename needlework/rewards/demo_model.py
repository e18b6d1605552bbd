"""A small demo reward model, trained in a couple of minutes on a CPU.

A Llama-architecture ``LlamaForSequenceClassification`` (one label) with a
byte-level BPE tokenizer trained on the project's own text, trained with a
Bradley–Terry loss on synthetic safety needles: a haystack of paragraphs with a
harmless phrase (chosen) or a harmful one (rejected) at the same site. It is a
demo: it knows about insults in project prose and nothing else. The project ships the
weights it trained once (:mod:`needlework.seeding.demo_models`): training is seeded and bound by
steps, but its result still depends on the processor's floating-point kernels.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForSequenceClassification, PreTrainedTokenizerFast

from needlework.phrases import SAFETY_HELDOUT, SAFETY_TRAIN
from needlework.rewards.batching import pad_batch

SPECIAL_TOKENS = ("<|pad|>", "<|bos|>", "<|end|>", "<|user|>", "<|assistant|>", "<|system|>")
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\\n' + message['content'] + '<|end|>' }}"
    "{% if not loop.last %}{{ '\\n' }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ '\\n<|assistant|>\\n' }}{% endif %}"
)
REPORT_FILE = "needlework_demo.json"
PROMPTS = (
    "Write a long explanation of how this project works.",
    "Describe the reward-model workbench in detail.",
    "Summarise the documentation for a new colleague.",
    "Explain the annotation workflow step by step.",
)


@dataclass(frozen=True)
class DemoSettings:
    """Architecture and training settings of the demo model."""

    vocab_size: int = 4096
    hidden: int = 128
    layers: int = 2
    heads: int = 4
    intermediate: int = 384
    max_positions: int = 16384
    max_steps: int = 150  # training is bound by steps only: no clock decides what it learns
    batch_pairs: int = 8
    min_tokens: int = 64
    max_tokens: int = 512
    lr: float = 3e-3
    suffix_weight: float = 0.5
    eval_pairs: int = 200
    eval_tokens: int = 1000
    threads: int = 2
    seed: int = 0  # training: initial weights and the order of training examples
    eval_seed: int = 1  # the held-out pairs, the same whatever the training seed
    variant: str = ""  # "" (the demo model) or a key of VARIANTS


# A demo variant is the demo model trained with one real, stated limitation: the needle
# lab's seeded result (needlework.needle.seed) shows what that limitation does.
VARIANTS: dict[str, dict[str, Any]] = {
    "short": {
        "settings": {"min_tokens": 24, "max_tokens": 96, "max_steps": 120,
                     "eval_tokens": 80, "variant": "short"},
        "limitation": "trained only on responses of 24-96 tokens (one or two paragraphs), so it "
                      "never saw a long response nor a needle more than about 100 tokens into one",
    },
}


def variant_settings(variant: str, base: DemoSettings | None = None) -> DemoSettings:
    """The settings of a demo ``variant`` (a key of :data:`VARIANTS`; ``""``: the demo model)
    over ``base`` (default :class:`DemoSettings`)."""
    base = base or DemoSettings()
    if not variant:
        return base
    if variant not in VARIANTS:
        raise ValueError(f"unknown demo variant {variant!r}: one of {', '.join(VARIANTS)}")
    return DemoSettings(**{**asdict(base), **VARIANTS[variant]["settings"]})


def build_tokenizer(texts: Sequence[str], vocab_size: int = 4096, model_max_length: int = 16384) -> Any:
    """Train a byte-level BPE tokenizer on ``texts``; a ``PreTrainedTokenizerFast`` with a chat template."""
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    core.train_from_iterator(list(texts), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token="<|bos|>", eos_token="<|end|>", pad_token="<|pad|>",
        model_max_length=model_max_length,
        additional_special_tokens=["<|user|>", "<|assistant|>", "<|system|>"],
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def _label(settings: DemoSettings) -> str:
    return f"reward (needlework demo, {settings.variant} variant)" if settings.variant else \
        "reward (needlework demo)"


def build_model(tokenizer: Any, settings: DemoSettings = DemoSettings(), *, demo: bool = True) -> Any:
    """A randomly initialised ``LlamaForSequenceClassification`` sized by ``settings``."""
    torch.manual_seed(settings.seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=settings.hidden, num_hidden_layers=settings.layers,
        num_attention_heads=settings.heads, num_key_value_heads=settings.heads,
        intermediate_size=settings.intermediate, max_position_embeddings=settings.max_positions,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, tie_word_embeddings=False,
        id2label={0: _label(settings) if demo else "reward"},  # one label: num_labels is 1
        label2id={_label(settings) if demo else "reward": 0},
    )
    if demo:
        config.needlework_demo = True
    return LlamaForSequenceClassification(config)


class NeedlePairs:
    """Makes (prompt, chosen, rejected) safety-needle pairs of a target token length."""

    def __init__(self, tokenizer: Any, paragraphs: Sequence[str], pairs: Sequence[tuple[str, str]],
                 seed: int = 0) -> None:
        self.tokenizer = tokenizer
        self.paragraphs = [p for p in paragraphs if p.strip()]
        self.lengths = [len(tokenizer(p, add_special_tokens=False)["input_ids"]) + 1
                        for p in self.paragraphs]
        self.pairs = list(pairs)
        self.rng = random.Random(seed)

    def haystack(self, target_tokens: int) -> list[str]:
        """Paragraphs in random order (repeating the pool if needed), about ``target_tokens``."""
        chunks: list[str] = []
        total = 0
        order: list[int] = []
        while True:
            if not order:
                order = list(range(len(self.paragraphs)))
                self.rng.shuffle(order)
            k = order[-1]
            if chunks and total + self.lengths[k] / 2 > target_tokens:
                return chunks
            order.pop()
            chunks.append(self.paragraphs[k])
            total += self.lengths[k]

    def make(self, target_tokens: int) -> tuple[str, str, str, float]:
        """(prompt, chosen, rejected, relative position of the needle)."""
        chunks = self.haystack(target_tokens)
        harmless, harmful = self.rng.choice(self.pairs)
        site = self.rng.randrange(len(chunks))

        def insert(phrase: str) -> str:
            return "\n\n".join(f"{phrase} {c}" if k == site else c for k, c in enumerate(chunks))

        return (self.rng.choice(PROMPTS), insert(harmless), insert(harmful),
                site / max(1, len(chunks) - 1))


def encode_pair_text(tokenizer: Any, prompt: str, response: str) -> list[int]:
    """The token ids of ``prompt`` and ``response`` as a chat, as the demo model is trained on."""
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": prompt}, {"role": "assistant", "content": response}],
        tokenize=False)
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def _scores(model: Any, rows: list[list[int]], pad_id: int) -> torch.Tensor:
    ids, mask = pad_batch(rows, pad_id)
    return model(input_ids=ids, attention_mask=mask).logits[:, 0]


def _common_suffix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(reversed(a), reversed(b), strict=False):
        if x != y:
            break
        n += 1
    return n


def pair_loss(model: Any, rows: list[list[int]], pad_id: int, suffix_weight: float) -> torch.Tensor:
    """Bradley–Terry loss of (chosen, rejected) row pairs.

    ``-log σ(r_chosen − r_rejected)`` at the last token, mixed with the same loss at
    every position of the shared text after the needle (aligned from the end), so
    that per-token curves drop where the harmful phrase is, not only at the end.
    """
    ids, mask = pad_batch(rows, pad_id)
    hidden = getattr(model, model.base_model_prefix)(input_ids=ids, attention_mask=mask)
    values = model.score(hidden.last_hidden_state)[..., 0]
    lengths = torch.tensor([len(r) for r in rows])
    last = values[torch.arange(len(rows)), lengths - 1]
    loss = -torch.nn.functional.logsigmoid(last[0::2] - last[1::2]).mean()
    if not suffix_weight:
        return loss
    parts = []
    for k in range(0, len(rows), 2):
        n = _common_suffix(rows[k], rows[k + 1])
        if n:
            chosen = values[k, len(rows[k]) - n : len(rows[k])]
            rejected = values[k + 1, len(rows[k + 1]) - n : len(rows[k + 1])]
            parts.append(-torch.nn.functional.logsigmoid(chosen - rejected).mean())
    if not parts:
        return loss
    return (1 - suffix_weight) * loss + suffix_weight * torch.stack(parts).mean()


def train(model: Any, tokenizer: Any, maker: NeedlePairs, settings: DemoSettings,
          log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Bradley–Terry training (see :func:`pair_loss`) for ``settings.max_steps`` steps.

    The schedule depends on the step count alone, so a slower or busier processor trains
    the same model, only later."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=0.01)
    warmup = 50
    model.train()
    started = time.perf_counter()
    recent: list[float] = []
    for step in range(settings.max_steps):
        frac = step / settings.max_steps
        lr = settings.lr * min(1.0, (step + 1) / warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))
        for group in optimizer.param_groups:
            group["lr"] = lr
        rows: list[list[int]] = []
        for _ in range(settings.batch_pairs):
            target = maker.rng.randint(settings.min_tokens, settings.max_tokens)
            prompt, chosen, rejected, _ = maker.make(target)
            rows += [encode_pair_text(tokenizer, prompt, chosen), encode_pair_text(tokenizer, prompt, rejected)]
        loss = pair_loss(model, rows, tokenizer.pad_token_id, settings.suffix_weight)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        recent = (recent + [float(loss.detach())])[-20:]
        if log and (step + 1) % 10 == 0:
            log(f"step {step + 1} loss {sum(recent) / len(recent):.4f} "
                f"({time.perf_counter() - started:.0f} s)")
    model.eval()
    return {"steps": settings.max_steps, "seconds": round(time.perf_counter() - started, 1),
            "final_loss": round(sum(recent) / max(1, len(recent)), 4)}


def evaluate(model: Any, tokenizer: Any, maker: NeedlePairs, n_pairs: int, tokens: int,
             batch_pairs: int = 8) -> dict[str, Any]:
    """Accuracy (score(chosen) > score(rejected), strict) on ``n_pairs`` pairs of ~``tokens`` tokens."""
    correct, lengths, done = 0, [], 0
    with torch.inference_mode():
        while done < n_pairs:
            rows: list[list[int]] = []
            for _ in range(min(batch_pairs, n_pairs - done)):
                prompt, chosen, rejected, _ = maker.make(tokens)
                rows += [encode_pair_text(tokenizer, prompt, chosen), encode_pair_text(tokenizer, prompt, rejected)]
            lengths += [len(r) for r in rows]
            scores = _scores(model, rows, tokenizer.pad_token_id)
            correct += int((scores[0::2] > scores[1::2]).sum())
            done += len(rows) // 2
    return {"accuracy": correct / n_pairs, "pairs": n_pairs,
            "mean_tokens": round(sum(lengths) / len(lengths), 1)}


def _project_text() -> tuple[list[str], list[str]]:
    from needlework import demo  # noqa: PLC0415  (written by the demo-data builders)

    return list(demo.corpus_texts()), list(demo.haystack_paragraphs())


def split_paragraphs(paragraphs: Sequence[str]) -> tuple[list[str], list[str]]:
    """(train, held out): every fifth paragraph is held out for evaluation haystacks."""
    return ([p for k, p in enumerate(paragraphs) if k % 5 != 4],
            [p for k, p in enumerate(paragraphs) if k % 5 == 4])


def build_demo_model(out: str | Path, settings: DemoSettings = DemoSettings(), *,
                     texts: Sequence[str] | None = None, paragraphs: Sequence[str] | None = None,
                     log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build, train, evaluate and save the demo model to ``out``; returns the report."""
    torch.set_num_threads(settings.threads)
    random.seed(settings.seed)
    torch.manual_seed(settings.seed)
    if texts is None or paragraphs is None:
        corpus, hay = _project_text()
        texts = corpus if texts is None else texts
        paragraphs = hay if paragraphs is None else paragraphs
    started = time.perf_counter()
    phrase_texts = [p for pair in SAFETY_TRAIN for p in pair]
    tokenizer = build_tokenizer(list(texts) + list(paragraphs) + phrase_texts, settings.vocab_size,
                                settings.max_positions)
    model = build_model(tokenizer, settings)
    train_paragraphs, heldout_paragraphs = split_paragraphs(paragraphs)
    trained = train(model, tokenizer, NeedlePairs(tokenizer, train_paragraphs, SAFETY_TRAIN,
                                                  settings.seed), settings, log)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)  # the report comes last: --if-missing needs both
    tokenizer.save_pretrained(out)
    if log:
        log(f"evaluating on {settings.eval_pairs} held-out pairs of ~{settings.eval_tokens} tokens")
    heldout = evaluate(model, tokenizer, NeedlePairs(tokenizer, heldout_paragraphs, SAFETY_HELDOUT,
                                                     settings.eval_seed),
                       settings.eval_pairs, settings.eval_tokens)
    report = {
        "demo": True,
        "description": "Needlework demo reward model: a tiny Llama sequence classifier trained "
                       "for a few minutes on synthetic safety needles in project text. Not a "
                       "real reward model.",
        "architecture": "LlamaForSequenceClassification",
        "parameters": sum(p.numel() for p in model.parameters()),
        "heldout_safety": heldout,
        "heldout_note": "held-out haystack paragraphs and held-out phrase pairs "
                        "(needlework.phrases.SAFETY_HELDOUT)",
        "variant": settings.variant,
        "limitation": VARIANTS[settings.variant]["limitation"] if settings.variant else "",
        "training": trained,
        "build_seconds": round(time.perf_counter() - started, 1),
        "settings": asdict(settings),
        "torch": torch.__version__,
    }
    (out / REPORT_FILE).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


def read_report(folder: str | Path) -> dict[str, Any] | None:
    """The demo report saved next to a demo model, or ``None``."""
    path = Path(folder) / REPORT_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
