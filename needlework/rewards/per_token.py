"""Per-token rewards in one forward pass, and chosen-vs-rejected curve comparison.

The score head (``score`` or ``classifier``) is applied to every position's hidden
state from the base model (``model.base_model_prefix``): the value at position t
is the reward the model would give if the text ended at t. The value at the
position the model pools (the last non-pad token) is exactly the pooled score.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

import torch

from needlework.rewards import errors
from needlework.rewards.loading import RewardModel
from needlework.rewards.pipeline import TRUNCATION_POLICIES, pad_batch
from needlework.rewards.templates import render

HEAD_NAMES = ("score", "classifier")


def base_and_head(model: Any) -> tuple[torch.nn.Module, torch.nn.Module]:
    """The model's base transformer and its score head; raises when there is none."""
    base = getattr(model, getattr(model, "base_model_prefix", "model"), None)
    head = next((getattr(model, n) for n in HEAD_NAMES if isinstance(getattr(model, n, None),
                                                                      torch.nn.Module)), None)
    if base is None or head is None:
        raise errors.PerTokenUnsupportedError(
            f"{type(model).__name__} has no base model at .{getattr(model, 'base_model_prefix', '?')} "
            "or no head named score/classifier: per-token rewards need both. Pooled scores still work."
        )
    return base, head


def pooled_positions(input_ids: torch.Tensor, pad_token_id: int | None) -> torch.Tensor:
    """Where the model pools each row: the rightmost token that is not padding.

    The same rule as transformers' sequence classifiers, so values read there equal
    the model's logits.
    """
    if pad_token_id is None:
        return torch.full((input_ids.shape[0],), input_ids.shape[1] - 1, dtype=torch.long)
    not_pad = (input_ids != pad_token_id).long()
    positions = torch.arange(input_ids.shape[1], device=input_ids.device)
    return (positions * not_pad).argmax(-1)


def token_rewards(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Rewards at every position, shape (batch, length), from one forward pass."""
    base, head = base_and_head(model)
    with torch.inference_mode():
        hidden = base(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        values = head(hidden)
    if values.dim() != 3 or values.shape[:2] != hidden.shape[:2] or values.shape[-1] != 1:
        raise errors.PerTokenUnsupportedError(
            f"the head of {type(model).__name__} pools by itself (output shape "
            f"{tuple(values.shape)}), so it cannot be read per position."
        )
    return values[..., 0].float()


@dataclass
class PerTokenResult:
    """Per-token rewards of the response part (response start to the end of the text).

    ``tokens`` are the text pieces of the tokens; ``score`` is the pooled score;
    ``prefix_tokens`` counts the tokens before the response (prompt and template).
    """

    tokens: list[str]
    token_ids: list[int]
    rewards: list[float]
    score: float
    prefix_tokens: int
    n_tokens: int
    truncated: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"score": self.score, "tokens": self.tokens, "per_token": self.rewards,
                "prefix_tokens": self.prefix_tokens, "n_tokens": self.n_tokens,
                "truncated": self.truncated}


def _encode(tokenizer: Any, text: str, add_special: bool) -> tuple[list[int], list[tuple[int, int]] | None]:
    if getattr(tokenizer, "is_fast", False):
        enc = tokenizer(text, add_special_tokens=add_special, return_offsets_mapping=True, verbose=False)
        return list(enc["input_ids"]), [tuple(o) for o in enc["offset_mapping"]]
    return list(tokenizer(text, add_special_tokens=add_special, verbose=False)["input_ids"]), None


def per_token_rewards(
    rm: RewardModel,
    prompt: str,
    response: str,
    *,
    max_length: int | None = None,
    truncation: str = "skip",
) -> PerTokenResult:
    """Per-token rewards for one (prompt, response), in one forward pass.

    A text longer than the window (the smaller of ``max_length`` and the model's
    context) raises :class:`InputTooLongError` under ``skip``; ``keep-end`` and
    ``keep-start`` cut it and set ``truncated``.
    """
    if truncation not in TRUNCATION_POLICIES:
        raise ValueError(f"truncation must be one of {', '.join(TRUNCATION_POLICIES)}")
    tokenizer = rm.tokenizer
    shown = render(tokenizer, prompt, response)
    ids, offsets = _encode(tokenizer, shown.text, shown.add_special_tokens)
    n_tokens = len(ids)
    start = 0
    if shown.response_start is not None:
        if offsets is not None:
            start = next((k for k, (_, end) in enumerate(offsets) if end > shown.response_start),
                         len(ids))
        else:
            head = tokenizer(shown.text[: shown.response_start],
                             add_special_tokens=shown.add_special_tokens)["input_ids"]
            start = len(head)
    limits = [x for x in (max_length, rm.facts.context_length) if x]
    limit = min(limits) if limits else None
    truncated = False
    if limit is not None and len(ids) > limit:
        if truncation == "skip":
            raise errors.InputTooLongError(
                f"the text has {len(ids)} tokens, the window is {limit}: choose keep-end or "
                "keep-start to cut it (the cut is reported), or a model with a longer context"
            )
        truncated = True
        if truncation == "keep-end":
            cut = len(ids) - limit
            ids, offsets, start = ids[cut:], offsets[cut:] if offsets else None, max(0, start - cut)
        else:
            ids, offsets, start = ids[:limit], offsets[:limit] if offsets else None, min(start, limit)
    device = rm.device
    input_ids = torch.tensor([ids], dtype=torch.long, device=device)
    values = token_rewards(rm.model, input_ids, torch.ones_like(input_ids))[0]
    pooled = int(pooled_positions(input_ids, tokenizer.pad_token_id)[0])
    if offsets is not None:  # pieces of the text; a character split over tokens is shown once
        tokens, seen = [], offsets[start - 1][1] if start > 0 else 0
        for a, b in offsets[start:]:
            tokens.append(shown.text[max(a, seen) : b])
            seen = max(seen, b)
    else:
        tokens = [tokenizer.decode([t]) for t in ids[start:]]
    return PerTokenResult(tokens, ids[start:], values[start:].cpu().tolist(),
                          float(values[pooled]), start, n_tokens, truncated)


def batch_token_rewards(rm: RewardModel, rows: list[list[int]]) -> tuple[list[list[float]], list[float]]:
    """Per-token rewards and pooled scores of several token-id rows in one padded pass."""
    ids, mask = pad_batch(rows, rm.tokenizer.pad_token_id)
    ids, mask = ids.to(rm.device), mask.to(rm.device)
    values = token_rewards(rm.model, ids, mask)
    pooled = pooled_positions(ids, rm.tokenizer.pad_token_id)
    per_row = [values[k, : len(r)].cpu().tolist() for k, r in enumerate(rows)]
    return per_row, [float(values[k, pooled[k]]) for k in range(len(rows))]


@dataclass
class DiffSpan:
    """One region where the chosen and rejected token sequences differ."""

    tag: str  # replace | delete | insert (difflib, from chosen to rejected)
    chosen_start: int
    chosen_end: int
    rejected_start: int
    rejected_end: int
    chosen_text: str
    rejected_text: str


@dataclass
class CurveComparison:
    """Chosen vs rejected per-token curves, aligned on their shared tokens.

    ``first_difference`` is the (chosen, rejected) token index where the sequences
    first differ (``None`` when equal); ``aligned`` lists ``(i, j, chosen - rejected)``
    for every shared token, so the reward gap can be followed along the text.
    """

    margin: float
    first_difference: tuple[int, int] | None
    spans: list[DiffSpan] = field(default_factory=list)
    aligned: list[tuple[int, int, float]] = field(default_factory=list)

    def gap_after_difference(self) -> float | None:
        """Mean reward gap (chosen - rejected) over shared tokens after the first difference."""
        if self.first_difference is None:
            return None
        after = [d for i, _, d in self.aligned if i >= self.first_difference[0]]
        return sum(after) / len(after) if after else None


def compare_curves(chosen: PerTokenResult, rejected: PerTokenResult) -> CurveComparison:
    """Find where the token sequences differ (difflib on token ids) and align the curves."""
    matcher = difflib.SequenceMatcher(None, chosen.token_ids, rejected.token_ids, autojunk=False)
    spans: list[DiffSpan] = []
    aligned: list[tuple[int, int, float]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            aligned.extend((i1 + k, j1 + k, chosen.rewards[i1 + k] - rejected.rewards[j1 + k])
                           for k in range(i2 - i1))
        else:
            spans.append(DiffSpan(tag, i1, i2, j1, j2, "".join(chosen.tokens[i1:i2]),
                                  "".join(rejected.tokens[j1:j2])))
    first = (spans[0].chosen_start, spans[0].rejected_start) if spans else None
    return CurveComparison(chosen.score - rejected.score, first, spans, aligned)
