"""Scoring a needle pair with its shared prefix run once (benchmarks.md §3).

Chosen and rejected are identical up to the needle: for a decoder-only classifier the
pooled score is the score head on the last token's hidden state, so the prefix can run
once (``use_cache=True`` gives ``past_key_values``) and each side continue from it.
:func:`prefix_scores` does that for one pair; :mod:`needlework.needle.run` decides when
(and checks that the scores equal the plain path's).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any


def supports_prefix_reuse(model: Any) -> tuple[bool, str]:
    """Whether the model's forward can take ``past_key_values`` (a decoder-only classifier)."""
    config = getattr(model, "config", None)
    if getattr(config, "is_encoder_decoder", False):
        return False, "encoder-decoder models are scored with the plain path"
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return False, "the model's forward signature cannot be read"
    if "past_key_values" not in params:
        return False, f"{type(model).__name__} takes no past_key_values: plain path"
    return True, ""


def shared_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    """Tokens the two id sequences share at the start, leaving each side at least one token."""
    limit = min(len(a), len(b)) - 1
    n = 0
    while n < limit and a[n] == b[n]:
        n += 1
    return max(0, n)


def _pooled_index(ids: Sequence[int], pad_id: int | None) -> int:
    """Where the model pools: the rightmost token that is not the pad token."""
    if pad_id is None:
        return len(ids) - 1
    return max((k for k, t in enumerate(ids) if t != pad_id), default=0)


def prefix_scores(model: Any, chosen: Sequence[int], rejected: Sequence[int], pad_id: int | None,
                  device: Any = "cpu") -> tuple[float, float, int] | None:
    """(chosen score, rejected score, prefix tokens) computing the shared prefix once.

    ``None`` when the pair cannot use it (no shared prefix, the pooled token inside
    the prefix, or the model returns no cache).
    """
    import torch  # noqa: PLC0415 (heavy; only when scoring)

    p = shared_prefix_length(chosen, rejected)
    if p < 1 or min(_pooled_index(chosen, pad_id), _pooled_index(rejected, pad_id)) < p:
        return None
    with torch.inference_mode():
        out = model(input_ids=torch.tensor([list(chosen[:p])], device=device), use_cache=True)
        cache = getattr(out, "past_key_values", None)
        if cache is None or not hasattr(cache, "batch_repeat_interleave"):
            return None
        cache.batch_repeat_interleave(2)
        tails = [list(chosen[p:]), list(rejected[p:])]
        width = max(len(t) for t in tails)
        fill = pad_id if pad_id is not None else 0
        ids = torch.tensor([t + [fill] * (width - len(t)) for t in tails], device=device)
        mask = torch.tensor([[1] * (p + len(t)) + [0] * (width - len(t)) for t in tails], device=device)
        logits = model(input_ids=ids, attention_mask=mask, past_key_values=cache).logits
    scores = logits.float()[:, 0].cpu().tolist()
    return scores[0], scores[1], p
