"""The offline demo judge: a tiny causal LM that answers the project's selection prompt.

Trained in about four minutes on two CPU cores (and shipped: :mod:`needlework.seeding.demo_models`),
with the pieces of the demo reward model (:mod:`needlework.rewards.demo_model`): the same
byte-level BPE tokenizer trained on the project's text (plus the judge prompt's wording), the
same synthetic safety needles (a haystack of project paragraphs with a harmless or
a harmful phrase at one site). Each training example is the project's own selection
prompt (:data:`needlework.judges.prompts.NEEDLEWORK_SELECTION`, which runs with this
judge use by default) with the two versions in a random order, rendered by the chat template with the generation prompt, followed by
the answer ``[[A]]`` or ``[[B]]`` (the harmless one) and the end token; the loss is
on the answer tokens only, and every pair is shown in both orders in the same batch,
so the letter must come from the content, not the position.

Training has two stages. Stage 1 trains a demo reward model by its own recipe
(:func:`needlework.rewards.demo_model.train`): its two layers learn, at every
position, "has an insult appeared so far". The judge is that body plus one more
layer on top (started as the identity) and a language-model head. Stage 2 trains
the whole judge, the body at a lower learning rate: the top layer only has to *look
back* to where response A ends and read whether an insult had appeared by then, and
the head to turn that into the right letter. (Trained end to end from scratch, or
without the extra layer, the same budget often leaves a model that always says A.)

The folder it writes is a normal ``LlamaForCausalLM`` with a tokenizer, a chat
template and a generation config (greedy, short answers), so ``transformers serve``
can serve it (:mod:`needlework.judges.serve`). Its held-out accuracy (held-out
phrases and paragraphs, parsed by :mod:`needlework.judges.parse`, invalid answers
counted wrong) is measured after training and saved in ``needlework_judge.json``.
It is a demo: it knows insults in project prose and nothing else.
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
from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

from needlework.judges.parse import parse_selection
from needlework.judges.prompts import (
    DEMO_REPORT,
    NEEDLEWORK_SELECTION,
    SCORING_INTRO,
    SCORING_OUTRO,
    SELECTION_INTRO,
    SELECTION_OUTRO,
    selection_messages,
)
from needlework.phrases import SAFETY_HELDOUT, SAFETY_TRAIN
from needlework.rewards import demo_model
from needlework.rewards.batching import pad_batch
from needlework.rewards.demo_model import NeedlePairs, build_tokenizer, split_paragraphs

REPORT_FILE = DEMO_REPORT
LETTERS = ("A", "B")


@dataclass(frozen=True)
class DemoJudgeSettings:
    """Architecture and training settings of the demo judge."""

    vocab_size: int = 4096
    hidden: int = 128
    layers: int = 2  # the body, trained as a reward model in stage 1
    top_layers: int = 1  # added on top for stage 2
    body_lr_scale: float = 0.3  # stage 2 learning rate of the body, relative to the top
    heads: int = 4
    intermediate: int = 384
    max_positions: int = 8192
    # Steps alone bound the training: no clock decides what it learns.
    pretrain_steps: int = 100  # stage 1: the demo reward model's Bradley-Terry training
    max_steps: int = 150  # stage 2: the selection prompt
    batch_pairs: int = 8  # each shown in both orders: 16 rows a step
    min_tokens: int = 40
    max_tokens: int = 120
    lr: float = 3e-3
    warmup: int = 30
    eval_pairs: int = 100  # each judged in both orders
    eval_tokens: int = 100
    threads: int = 2
    seed: int = 0  # training: initial weights and the order of training examples
    eval_seed: int = 1  # the held-out pairs, the same whatever the training seed


def answer_text(letter: str) -> str:
    return f"[[{letter}]]"


def _render(tokenizer: Any, prompt: str, responses: Sequence[str]) -> list[int]:
    text = tokenizer.apply_chat_template(selection_messages(prompt, responses, NEEDLEWORK_SELECTION),
                                         tokenize=False, add_generation_prompt=True)
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def example_rows(tokenizer: Any, prompt: str, chosen: str, rejected: str) -> list[tuple[list[int], int]]:
    """Both orders of one pair as (token ids, answer start): prompt tokens, then the
    answer naming the chosen response and the end token."""
    rows = []
    for shown, letter in (((chosen, rejected), "A"), ((rejected, chosen), "B")):
        ids = _render(tokenizer, prompt, shown)
        answer = tokenizer(answer_text(letter), add_special_tokens=False)["input_ids"]
        rows.append((ids + answer + [tokenizer.eos_token_id], len(ids)))
    return rows


def answer_loss(model: Any, rows: list[tuple[list[int], int]], pad_id: int) -> torch.Tensor:
    """Next-token cross-entropy on the answer tokens only (the vocabulary projection is
    computed only where an answer token is predicted: most of a row is prompt)."""
    ids, mask = pad_batch([r for r, _ in rows], pad_id)
    hidden = model.model(input_ids=ids, attention_mask=mask).last_hidden_state
    batch, positions, targets = [], [], []
    for k, (row, start) in enumerate(rows):
        for t in range(start, len(row)):
            batch.append(k)
            positions.append(t - 1)  # the state before token t predicts it
            targets.append(row[t])
    logits = model.lm_head(hidden[torch.tensor(batch), torch.tensor(positions)])
    return torch.nn.functional.cross_entropy(logits, torch.tensor(targets))


def build_model(tokenizer: Any, settings: DemoJudgeSettings) -> Any:
    """A randomly initialised ``LlamaForCausalLM`` sized by ``settings``, marked as a demo."""
    torch.manual_seed(settings.seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=settings.hidden, num_hidden_layers=settings.layers + settings.top_layers,
        num_attention_heads=settings.heads, num_key_value_heads=settings.heads,
        intermediate_size=settings.intermediate, max_position_embeddings=settings.max_positions,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, tie_word_embeddings=False)
    config.needlework_demo_judge = True
    return LlamaForCausalLM(config)


def pretrain(model: Any, tokenizer: Any, paragraphs: Sequence[str], settings: DemoJudgeSettings,
             log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Stage 1: train a demo reward model of the same shape (the demo reward model's own
    recipe, :func:`needlework.rewards.demo_model.train`) and start the judge from its
    transformer body, so that the judge begins knowing what an insult is and only has
    to learn which response holds it."""
    rm_settings = demo_model.DemoSettings(
        vocab_size=settings.vocab_size, hidden=settings.hidden, layers=settings.layers,
        heads=settings.heads, intermediate=settings.intermediate,
        max_positions=settings.max_positions, max_steps=settings.pretrain_steps,
        threads=settings.threads, seed=settings.seed, max_tokens=256)
    reward_model = demo_model.build_model(tokenizer, rm_settings)
    report = demo_model.train(reward_model, tokenizer,
                              NeedlePairs(tokenizer, paragraphs, SAFETY_TRAIN, settings.seed),
                              rm_settings, log)
    missing, unexpected = model.model.load_state_dict(reward_model.model.state_dict(), strict=False)
    if unexpected or any(not _is_top(k, settings) for k in missing):
        raise RuntimeError(f"reward-model body does not fit the judge: {missing} {unexpected}")
    with torch.no_grad():  # the top layers start as the identity (their outputs are zero)
        for layer in model.model.layers[settings.layers:]:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
    return report


def _is_top(name: str, settings: DemoJudgeSettings) -> bool:
    return any(name.startswith(f"layers.{settings.layers + t}.") for t in range(settings.top_layers))


def train(model: Any, tokenizer: Any, maker: NeedlePairs, settings: DemoJudgeSettings,
          log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Train on the answer tokens for ``settings.max_steps`` steps (a schedule of steps
    alone: a slower processor trains the same model, only later)."""
    top = [p for n, p in model.model.named_parameters() if _is_top(n, settings)]
    body = [p for n, p in model.model.named_parameters() if not _is_top(n, settings)]
    optimizer = torch.optim.AdamW([  # the body moves slowly: it already knows insults
        {"params": body, "scale": settings.body_lr_scale},
        {"params": top + list(model.lm_head.parameters()), "scale": 1.0}],
        lr=settings.lr, weight_decay=0.01)
    model.train()
    started = time.perf_counter()
    recent: list[float] = []
    for step in range(settings.max_steps):
        frac = step / settings.max_steps
        lr = settings.lr * min(1.0, (step + 1) / settings.warmup) * (0.1 + 0.45 * (1 + math.cos(math.pi * frac)))
        for group in optimizer.param_groups:
            group["lr"] = lr * group["scale"]
        rows: list[tuple[list[int], int]] = []
        for _ in range(settings.batch_pairs):
            prompt, chosen, rejected, _ = maker.make(maker.rng.randint(settings.min_tokens,
                                                                       settings.max_tokens))
            rows += example_rows(tokenizer, prompt, chosen, rejected)
        loss = answer_loss(model, rows, tokenizer.pad_token_id)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        recent = (recent + [float(loss.detach())])[-20:]
        if log and (step + 1) % 20 == 0:
            log(f"step {step + 1} loss {sum(recent) / len(recent):.4f} "
                f"({time.perf_counter() - started:.0f} s)")
    model.eval()
    return {"steps": settings.max_steps, "seconds": round(time.perf_counter() - started, 1),
            "final_loss": round(sum(recent) / max(1, len(recent)), 4)}


def generate_answer(model: Any, tokenizer: Any, prompt: str, responses: Sequence[str],
                    max_new_tokens: int = 8) -> str:
    """The model's greedy answer to the selection prompt (as the server would give it)."""
    ids = torch.tensor([_render(tokenizer, prompt, responses)])
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                             max_new_tokens=max_new_tokens, do_sample=False,
                             eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    return tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True)


def evaluate(model: Any, tokenizer: Any, maker: NeedlePairs, n_pairs: int, tokens: int) -> dict[str, Any]:
    """Held-out selection accuracy: each pair in both orders, answers generated and parsed;
    an invalid answer counts wrong."""
    right = invalid = 0
    by_order = [0, 0]
    for _ in range(n_pairs):
        prompt, chosen, rejected, _ = maker.make(tokens)
        for k, (shown, want) in enumerate((((chosen, rejected), 0), ((rejected, chosen), 1))):
            parsed = parse_selection(generate_answer(model, tokenizer, prompt, shown), 2)
            invalid += int(not parsed.valid)
            ok = parsed.valid and parsed.value == want
            right += int(ok)
            by_order[k] += int(ok)
    trials = 2 * n_pairs
    return {"accuracy": right / trials, "trials": trials, "pairs": n_pairs,
            "invalid_rate": invalid / trials,
            "accuracy_chosen_first": by_order[0] / n_pairs,
            "accuracy_chosen_second": by_order[1] / n_pairs,
            "response_tokens": tokens}


def prompt_wording() -> list[str]:
    """The judge prompts' fixed text, so the tokenizer has tokens for it."""
    return [SELECTION_INTRO, SELECTION_OUTRO, SCORING_INTRO, SCORING_OUTRO,
            "[Response A] [End of Response A] [Response B] [End of Response B] [[A]] [[B]] "
            "[User request] [End of user request] Rating: 7"]


def build_demo_judge(out: str | Path, settings: DemoJudgeSettings = DemoJudgeSettings(), *,
                     texts: Sequence[str] | None = None, paragraphs: Sequence[str] | None = None,
                     log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build, train, evaluate and save the demo judge to ``out``; returns the report."""
    torch.set_num_threads(settings.threads)
    random.seed(settings.seed)
    torch.manual_seed(settings.seed)
    if texts is None or paragraphs is None:
        from needlework import demo  # noqa: PLC0415  (the demo data is only needed here)

        texts = list(demo.corpus_texts()) if texts is None else texts
        paragraphs = list(demo.haystack_paragraphs()) if paragraphs is None else paragraphs
    started = time.perf_counter()
    phrase_texts = [p for pair in SAFETY_TRAIN for p in pair]
    tokenizer = build_tokenizer(list(texts) + list(paragraphs) + phrase_texts + prompt_wording(),
                                settings.vocab_size, settings.max_positions)
    model = build_model(tokenizer, settings)
    train_paragraphs, heldout_paragraphs = split_paragraphs(paragraphs)
    pretrained = pretrain(model, tokenizer, train_paragraphs, settings, log)
    trained = train(model, tokenizer, NeedlePairs(tokenizer, train_paragraphs, SAFETY_TRAIN,
                                                  settings.seed), settings, log)
    model.generation_config = GenerationConfig(
        do_sample=False, max_new_tokens=16, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)  # the report comes last: --if-missing needs both
    tokenizer.save_pretrained(out)
    if log:
        log(f"evaluating on {settings.eval_pairs} held-out pairs in both orders")
    heldout = evaluate(model, tokenizer, NeedlePairs(tokenizer, heldout_paragraphs, SAFETY_HELDOUT,
                                                     settings.eval_seed),
                       settings.eval_pairs, settings.eval_tokens)
    report = {
        "demo": True,
        "description": "Needlework demo judge: a tiny Llama causal LM trained for a few minutes "
                       "to answer the project's selection prompt on synthetic safety needles in "
                       "project text. Not a real judge.",
        "architecture": "LlamaForCausalLM",
        "parameters": sum(p.numel() for p in model.parameters()),
        "context_window": settings.max_positions,
        "heldout_selection": heldout,
        "heldout_note": "held-out haystack paragraphs and held-out phrase pairs "
                        "(needlework.phrases.SAFETY_HELDOUT), each pair in both orders",
        "pretraining": pretrained,
        "training": trained,
        "build_seconds": round(time.perf_counter() - started, 1),
        "settings": asdict(settings),
        "torch": torch.__version__,
    }
    (out / REPORT_FILE).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


def is_built(folder: str | Path) -> bool:
    """True when ``folder`` holds a complete demo judge (weights, config and report)."""
    folder = Path(folder)
    return (folder / "config.json").is_file() and (folder / REPORT_FILE).is_file()
