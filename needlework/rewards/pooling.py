"""Where a checkpoint pools, and scoring batches without ever moving that position.

A reward model's score of a text is what its own forward gives on that text alone,
unpadded (as Long-form RewardBench's loop scores it: ``model(input_ids).logits``).
Batching must not change it. The rules, from transformers' sequence classifiers:

- A **decoder** classifier (Llama, Mistral, Qwen, GPT-2, ...) applies its head to every
  position and reads the rightmost token whose id is not ``config.pad_token_id``; with no
  pad id in the config it reads the final token (and refuses batches). A text that ends
  with that id (pad = EOS and a template ending in EOS) is read *before* its trailing
  EOS, alone or not. The config is used as shipped: the loader never sets a pad id.
- An **encoder** (BERT, RoBERTa, DeBERTa, ...) pools through the attention mask (the
  first token, a pooler layer, a mean): right padding with any id under a mask is exact.

So a checked decoder (:func:`probe_pooling`) is scored by running its base model on a
right-padded batch (no mask: its tokens never look right) and applying its head at the
position the rule picks on each *unpadded* row (:func:`pooled_index`): the padding id
does not matter. Anything else runs its own forward with an attention mask, padded
with the config's pad id (the id any pad-based pooling skips), or one text at a time
when even that cannot be trusted. A last probe scores two texts alone and together
and falls back to one text at a time if they differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from needlework.rewards import errors

HEAD_NAMES = ("score", "classifier")
GATHER = "gather"  # base model on the batch, head at the rule's positions (checked decoders)
FORWARD = "forward"  # the model's own forward, attention mask, padded with the pooling pad id
SINGLE = "single"  # the model's own forward, one unpadded text at a time
HEAD = "head"  # per-token rewards: the head at every position, one pass
PREFIX = "prefix"  # per-token rewards: one pass per prefix of the text


@dataclass(frozen=True)
class Pooling:
    """How a loaded model is scored and read per token.

    ``pad_id`` is the checkpoint's ``config.pad_token_id`` (``None``: a decoder pools at
    the final token); ``fill_id`` pads batches; ``path`` is :data:`GATHER`,
    :data:`FORWARD` or :data:`SINGLE`; ``per_token`` is :data:`HEAD` or :data:`PREFIX`,
    and ``reason`` says why, in words for the page and the CLI.
    """

    pad_id: int | None
    fill_id: int
    path: str
    per_token: str
    reason: str


def base_and_head(model: Any) -> tuple[torch.nn.Module, torch.nn.Module]:
    """The model's base transformer and its score head; raises when there is none."""
    base = getattr(model, getattr(model, "base_model_prefix", "model"), None)
    head = next((getattr(model, n) for n in HEAD_NAMES if isinstance(getattr(model, n, None),
                                                                      torch.nn.Module)), None)
    if not isinstance(base, torch.nn.Module) or head is None:
        raise errors.PerTokenUnsupportedError(
            f"{type(model).__name__} has no base model at .{getattr(model, 'base_model_prefix', '?')} "
            "or no head named score/classifier: per-token rewards need both. Pooled scores still work."
        )
    return base, head


def config_pad_id(model: Any) -> int | None:
    """The pad id the model's own pooling skips: its (text) config's, as shipped."""
    config = model.config
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    value = getattr(text, "pad_token_id", None)
    return int(value) if isinstance(value, int) else None


def pooled_index(ids: Sequence[int], pad_id: int | None) -> int:
    """Where a decoder classifier reads a row: the rightmost token whose id is not
    ``pad_id`` (the final token when ``pad_id`` is None; 0 when every token is ``pad_id``,
    as transformers' argmax gives)."""
    if pad_id is None:
        return len(ids) - 1
    return next((k for k in range(len(ids) - 1, -1, -1) if ids[k] != pad_id), 0)


def carried_indices(ids: Sequence[int], pad_id: int | None) -> list[int]:
    """For each position t, the position the model reads for the text cut after t (the
    rightmost non-pad token at or before t): the per-token rule of a decoder."""
    out, last = [], 0
    for t, token in enumerate(ids):
        if pad_id is None or token != pad_id:
            last = t
        out.append(last)
    return out


def pad_rows(rows: Sequence[Sequence[int]], fill_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ``input_ids`` and ``attention_mask`` tensors."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), fill_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for k, row in enumerate(rows):
        ids[k, : len(row)] = torch.tensor(list(row), dtype=torch.long)
        mask[k, : len(row)] = 1
    return ids, mask


def head_values(model: Any, input_ids: torch.Tensor) -> torch.Tensor:
    """The head applied to every position's final hidden state, shape (batch, length),
    from one pass of the base model (no mask: for decoders, on right-padded rows)."""
    base, head = base_and_head(model)
    hidden = base(input_ids=input_ids).last_hidden_state
    values = head(hidden)
    if values.dim() != 3 or values.shape[:2] != hidden.shape[:2] or values.shape[-1] != 1:
        raise errors.PerTokenUnsupportedError(
            f"the head of {type(model).__name__} pools by itself (output shape "
            f"{tuple(values.shape)}), so it cannot be read per position."
        )
    return values[..., 0].float()


def score_rows(model: Any, pooling: Pooling, rows: Sequence[Sequence[int]]) -> list[float]:
    """The scores of token-id rows in one batch (no out-of-memory handling here)."""
    device = next(model.parameters()).device
    with torch.inference_mode():
        if pooling.path == SINGLE:
            return [float(model(input_ids=torch.tensor([list(r)], device=device)).logits.float()[0, 0])
                    for r in rows]
        ids, mask = pad_rows(rows, pooling.fill_id)
        if pooling.path == GATHER:
            base, head = base_and_head(model)
            hidden = base(input_ids=ids.to(device)).last_hidden_state
            where = torch.tensor([pooled_index(r, pooling.pad_id) for r in rows], device=device)
            picked = hidden[torch.arange(len(rows), device=device), where]
            return head(picked.unsqueeze(1)).float()[:, 0, 0].cpu().tolist()
        out = model(input_ids=ids.to(device), attention_mask=mask.to(device))
        return out.logits.float()[:, 0].cpu().tolist()


def _close(a: float, b: float, half: bool) -> bool:
    tol = 5e-2 if half else 1e-4
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def probe_pooling(model: Any, tokenizer: Any, probe_rows: Sequence[Sequence[int]], causal: bool) -> Pooling:
    """Decide how to score and read ``model`` per token, checked on ``probe_rows`` (two or
    more token-id rows of different lengths, e.g. rendered texts).

    The head is read per position (:data:`GATHER` scoring, :data:`HEAD` per token) only
    for a causal model whose head, applied at the position the pooling rule picks, gives
    the model's own score on every probe row. Then batched scores of the probe rows
    must equal the single ones, or the model is scored one text at a time.
    """
    pad_id = config_pad_id(model)
    fill = pad_id if pad_id is not None else tokenizer.pad_token_id
    fill_id = int(fill) if isinstance(fill, int) else 0
    half = next(model.parameters()).dtype in (torch.float16, torch.bfloat16)
    device = next(model.parameters()).device
    alone: list[float] = []
    with torch.inference_mode():
        for row in probe_rows:
            alone.append(float(model(input_ids=torch.tensor([list(row)], device=device)).logits.float()[0, 0]))
    per_token, path, reason = PREFIX, FORWARD, ""
    if not causal:
        reason = ("bidirectional (checked): a token's state depends on the tokens after it, so "
                  "per-token rewards come from one forward pass per prefix")
    else:
        try:
            with torch.inference_mode():
                read = [float(head_values(model, torch.tensor([list(r)], device=device))[0, pooled_index(r, pad_id)])
                        for r in probe_rows]
        except Exception as exc:  # no head to read, a head that pools, inputs of its own
            read, reason = [], f"its head cannot be read per position ({type(exc).__name__}: {exc})"
        if read and all(_close(a, b, half) for a, b in zip(read, alone, strict=True)):
            per_token, path = HEAD, GATHER
            reason = ("causal (checked) and its head at the pooled token gives its score: "
                      "per-token rewards in one pass")
        elif read:
            reason = ("its head at the pooled token does not give its score (a pooler or a "
                      "custom head): per-token rewards come from one pass per prefix")
        if path == FORWARD and pad_id is None:
            path = SINGLE  # its own pooling reads the final token: padding would move it
    pooling = Pooling(pad_id, fill_id, path, per_token, reason)
    if path != SINGLE and len(probe_rows) > 1:
        try:
            batched = score_rows(model, pooling, probe_rows)
        except Exception:  # a model that refuses batches
            batched = []
        if len(batched) != len(alone) or not all(_close(a, b, half) for a, b in zip(batched, alone, strict=True)):
            pooling = Pooling(pad_id, fill_id, SINGLE, per_token,
                              reason + "; batched scores differed from single ones, so texts "
                              "are scored one at a time")
    return pooling
