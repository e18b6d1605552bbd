"""Per-token rewards of one text, checked against the model's score.

The reward at token t is the score the model gives to the text cut after t. Two ways
to get it (the model's :class:`~needlework.rewards.pooling.Pooling` says which applies):

- **head** (one forward pass): for a causal model whose score head, read at the token it
  pools, gives its score (checked at load), the head applied to every position's hidden
  state *is* the prefix reward, since no position sees the tokens after it. A token the
  model's pooling skips (its config's pad id, e.g. a trailing EOS when pad = EOS) carries
  the value of the token before it, exactly as the model reads the text ending there.
- **prefix** (one forward pass per prefix): everything else (bidirectional encoders,
  pooler layers, first-token pooling, custom heads). Each prefix is the token ids up to
  t, followed by the closing special tokens the tokenizer adds (e.g. ``[SEP]``), scored
  in batches exactly like any text. This costs about n²/2 tokens for n tokens, so a plan
  (passes, tokens, an estimate in seconds) comes first, a cap refuses what is too long
  unless raised, and a stride scores every k-th prefix only.

Either way the value at the position the model pools must equal the model's own score
of the whole text (its forward on the unpadded text) before a curve is returned; the
result says which method drew it and where that position is
(:class:`~needlework.rewards.curves.PerTokenResult`; comparing two curves is in
:mod:`needlework.rewards.curves`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from needlework.rewards import errors
from needlework.rewards.batching import plan_batches
from needlework.rewards.curves import PerTokenResult
from needlework.rewards.loading import RewardModel
from needlework.rewards.pipeline import TRUNCATION_POLICIES, RewardPipeline
from needlework.rewards.pooling import (
    HEAD,
    PREFIX,
    base_and_head,
    carried_indices,
    head_values,
    pad_rows,
    pooled_index,
)
from needlework.rewards.templates import render

DEFAULT_MAX_PASSES = 1024  # prefix passes allowed without asking (the user can raise it)
PREFIX_BATCH_TOKENS = 16384
Progress = Callable[[int, int], None]


def pooled_positions(input_ids: torch.Tensor, pad_token_id: int | None) -> torch.Tensor:
    """Where a decoder classifier pools each row: the rightmost token that is not
    ``pad_token_id`` (the model's config pad id; ``None``: the last position)."""
    return torch.tensor([pooled_index(row.tolist(), pad_token_id) for row in input_ids],
                        dtype=torch.long, device=input_ids.device)


def token_rewards(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
    """The head applied at every position, shape (batch, length), from one pass of the base
    model: the raw material of the *head* method (``attention_mask`` is ignored: the rows
    are right padded and the model is causal)."""
    with torch.inference_mode():
        return head_values(model, input_ids)


@dataclass
class _Text:
    """A rendered, tokenized (and possibly cut) text and where its response starts."""

    text: str
    ids: list[int]
    offsets: list[tuple[int, int]] | None
    start: int
    n_tokens: int
    truncated: bool
    closing: int  # special tokens the tokenizer added at the end (kept on every prefix)
    tail: int = 0  # tokens after the response's own text (template ending and ``closing``)


def _encode(tokenizer: Any, text: str, add_special: bool) -> tuple[list[int], list[tuple[int, int]] | None]:
    if getattr(tokenizer, "is_fast", False):
        enc = tokenizer(text, add_special_tokens=add_special, return_offsets_mapping=True, verbose=False)
        return list(enc["input_ids"]), [tuple(o) for o in enc["offset_mapping"]]
    return list(tokenizer(text, add_special_tokens=add_special, verbose=False)["input_ids"]), None


def closing_tokens(tokenizer: Any, text: str, ids: Sequence[int], add_special: bool) -> int:
    """How many tokens at the end of ``ids`` the tokenizer added itself (``[SEP]``,
    ``</s>``): 0 under a chat template, which writes its own ending as text."""
    if not add_special:
        return 0
    plain = list(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])
    for k in range(len(ids) - len(plain) + 1):
        if list(ids[k : k + len(plain)]) == plain:
            return len(ids) - k - len(plain)
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    n = 0
    while n < len(ids) and ids[len(ids) - 1 - n] in special:
        n += 1
    return n


def _response_end(text: str, start: int | None, response: str) -> int | None:
    """The character offset where the response's own text ends in the rendered ``text``
    (``None`` when the template changed the response so it cannot be found)."""
    if start is None:
        return None
    for piece in (response, response.strip()):
        if piece and text.startswith(piece, start):
            return start + len(piece)
    return None


def _tail_start(tokenizer: Any, text: str, ids: Sequence[int], offsets: list[tuple[int, int]] | None,
                closing: int, end: int | None, add_special: bool) -> int:
    """The index in ``ids`` of the first token after the response's own text (which ends at
    character ``end``): the template's ending, then the ``closing`` specials."""
    content = len(ids) - closing
    if end is None:
        return content
    if offsets is not None:
        return next((k for k in range(content) if offsets[k][0] >= end and offsets[k][1] > offsets[k][0]),
                    content)
    head = len(tokenizer(text[:end], add_special_tokens=add_special, verbose=False)["input_ids"])
    return min(content, max(0, head - closing))


def _prepare(rm: RewardModel, prompt: str, response: str, max_length: int | None, truncation: str) -> _Text:
    if truncation not in TRUNCATION_POLICIES:
        raise ValueError(f"truncation must be one of {', '.join(TRUNCATION_POLICIES)}")
    tokenizer = rm.tokenizer
    shown = render(tokenizer, prompt, response)
    ids, offsets = _encode(tokenizer, shown.text, shown.add_special_tokens)
    closing = closing_tokens(tokenizer, shown.text, ids, shown.add_special_tokens)
    n_tokens = len(ids)
    start = 0
    if shown.response_start is not None:
        if offsets is not None:
            start = next((k for k, (_, end) in enumerate(offsets) if end > shown.response_start),
                         len(ids))
        else:
            head = tokenizer(shown.text[: shown.response_start],
                             add_special_tokens=shown.add_special_tokens)["input_ids"]
            start = len(head) - closing
    end = _response_end(shown.text, shown.response_start, response)
    tail_start = _tail_start(tokenizer, shown.text, ids, offsets, closing, end, shown.add_special_tokens)
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
            tail_start = max(0, tail_start - cut)
        else:
            ids, offsets, start = ids[:limit], offsets[:limit] if offsets else None, min(start, limit)
            closing = 0
            tail_start = min(tail_start, limit)
    tail = len(ids) - max(start, tail_start)
    return _Text(shown.text, ids, offsets, start, n_tokens, truncated, closing, tail)


def _pieces(rm: RewardModel, t: _Text) -> list[str]:
    """The text piece of each response token (a character split over tokens is shown once)."""
    if t.offsets is not None:
        pieces, seen = [], t.offsets[t.start - 1][1] if t.start > 0 else 0
        for a, b in t.offsets[t.start :]:
            pieces.append(t.text[max(a, seen) : b])
            seen = max(seen, b)
        return pieces
    return [rm.tokenizer.decode([i]) for i in t.ids[t.start :]]


def _tolerance(rm: RewardModel) -> float:
    return 5e-2 if rm.facts.dtype in ("bf16", "fp16") else 1e-4


def _agrees(rm: RewardModel, value: float, score: float) -> bool:
    return abs(value - score) <= _tolerance(rm) * max(1.0, abs(score))


def model_score(rm: RewardModel, ids: Sequence[int]) -> float:
    """The model's own forward on the unpadded text: the score every curve is checked against."""
    with torch.inference_mode():
        out = rm.model(input_ids=torch.tensor([list(ids)], device=rm.device))
    return float(out.logits.float()[0, 0])


# -- prefix passes ----------------------------------------------------------------------


@dataclass
class PrefixPlan:
    """What the prefix method would run for one text: ``passes`` forward rows over
    ``tokens`` tokens, about ``seconds`` (from one timed pass of the whole text)."""

    passes: int
    tokens: int
    seconds: float | None
    stride: int
    response_tokens: int
    seconds_per_token: float | None = None

    def at_rate(self, seconds_per_token: float | None) -> PrefixPlan:
        """The same plan estimated at another measured rate."""
        seconds = None if seconds_per_token is None else self.tokens * seconds_per_token
        return PrefixPlan(self.passes, self.tokens, seconds, self.stride, self.response_tokens,
                          seconds_per_token)

    def describe(self) -> str:
        secs = "" if self.seconds is None else f", about {_duration(self.seconds)}"
        every = f" (every {self.stride} tokens)" if self.stride > 1 else ""
        return f"{self.passes:,} prefix passes{every} over {self.tokens:,} tokens{secs}"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(seconds, 0.1):.1f} s"
    return f"{seconds / 60:.1f} min"


def _positions(t: _Text, stride: int) -> list[int]:
    """The token positions whose prefix is scored: every ``stride``-th response token and
    the last one (the whole text)."""
    n = len(t.ids)
    if t.start >= n:
        return []
    positions = list(range(t.start + stride - 1, n, stride))
    if not positions or positions[-1] != n - 1:
        positions.append(n - 1)
    return positions


def _prefix_row(t: _Text, position: int) -> tuple[int, ...]:
    """The ids of the text cut after ``position``, with the tokenizer's closing tokens."""
    content_end = len(t.ids) - t.closing
    if position >= content_end - 1:
        return tuple(t.ids)
    return tuple(t.ids[: position + 1]) + tuple(t.ids[content_end:])


def _plan(t: _Text, stride: int, seconds_per_token: float | None) -> tuple[PrefixPlan, list[tuple[int, ...]]]:
    rows = list(dict.fromkeys(_prefix_row(t, p) for p in _positions(t, stride)))
    tokens = sum(len(r) for r in rows)
    plan = PrefixPlan(len(rows), tokens, None, stride, len(t.ids) - t.start)
    return plan.at_rate(seconds_per_token), rows


def prefix_plan(rm: RewardModel, prompt: str, response: str, *, stride: int = 1,
                max_length: int | None = None, truncation: str = "skip",
                measure: bool = True) -> PrefixPlan:
    """The cost of per-token rewards by prefix passes for one (prompt, response), before
    running them; with ``measure``, the faster of two timed passes of the whole text (the
    first call of a size pays one-off costs) gives the estimate: an upper bound per token,
    since shorter prefixes cost less per token."""
    if stride < 1:
        raise ValueError("stride must be at least 1")
    t = _prepare(rm, prompt, response, max_length, truncation)
    rate = None
    if measure and t.ids:
        timings = []
        for _ in range(2):
            began = time.perf_counter()
            model_score(rm, t.ids)
            timings.append(time.perf_counter() - began)
        rate = min(timings) / len(t.ids)
    return _plan(t, stride, rate)[0]


def _prefix_values(rm: RewardModel, t: _Text, rows: list[tuple[int, ...]], progress: Progress | None,
                   should_stop: Callable[[], bool] | None) -> dict[tuple[int, ...], float]:
    pipeline = RewardPipeline(rm, batch_tokens=PREFIX_BATCH_TOKENS, use_cache=False)
    values: dict[tuple[int, ...], float] = {}
    if progress:
        progress(0, len(rows))
    for batch in plan_batches([len(r) for r in rows], PREFIX_BATCH_TOKENS):
        if should_stop and should_stop():
            raise errors.ScoringCancelled(f"stopped after {len(values)} of {len(rows)} prefix passes")
        scores = pipeline.run_batch([list(rows[i]) for i in batch])
        values.update({rows[i]: s for i, s in zip(batch, scores, strict=True)})
        if progress:
            progress(len(values), len(rows))
    return values


def _by_prefix(rm: RewardModel, t: _Text, score: float, stride: int, max_passes: int,
               progress: Progress | None, should_stop: Callable[[], bool] | None,
               note: str = "") -> PerTokenResult:
    plan, rows = _plan(t, stride, None)
    if plan.passes > max_passes:
        suggest = math.ceil(plan.passes * stride / max_passes)
        raise errors.PerTokenTooCostlyError(
            f"per-token rewards of this model need one forward pass per prefix: "
            f"{plan.describe()}, over the cap of {max_passes:,} passes. Raise the cap "
            f"(--max-passes {plan.passes} on the command line) or score every k-th token "
            f"(--stride {suggest}).")
    values = _prefix_values(rm, t, rows, progress, should_stop)
    positions = _positions(t, stride)
    rewards: list[float] = []
    computed: list[int] = []
    k = 0
    for position in range(t.start, len(t.ids)):
        while positions[k] < position:
            k += 1
        rewards.append(values[_prefix_row(t, positions[k])])
        if positions[k] == position:
            computed.append(position - t.start)
    last = len(rewards) - 1
    if not _agrees(rm, rewards[last], score):
        raise errors.PerTokenMismatchError(
            f"the prefix pass of the whole text gives {rewards[last]:.6f} but the model's own "
            f"forward gives {score:.6f}: batched scores of this model are not reliable, so no "
            "curve is drawn.")
    return PerTokenResult(_pieces(rm, t), t.ids[t.start :], rewards, score, t.start, t.n_tokens,
                          t.truncated, PREFIX, last, abs(rewards[last] - score), stride, plan.passes,
                          computed if stride > 1 else None, note, closing_tokens=t.tail)


# -- the head at every position -----------------------------------------------------------


def _by_head(rm: RewardModel, t: _Text) -> tuple[PerTokenResult | None, str]:
    """The head method, or ``None`` and why when its value at the pooled token is not the score."""
    input_ids = torch.tensor([t.ids], device=rm.device)
    _, head = base_and_head(rm.model)
    with torch.inference_mode():
        out = rm.model(input_ids=input_ids, output_hidden_states=True)
        score = float(out.logits.float()[0, 0])
        hidden = (out.hidden_states or [None])[-1]
        candidates = [] if hidden is None else [head(hidden)[0, :, 0].float()]
    pad_id = rm.pooling.pad_id
    pooled = pooled_index(t.ids, pad_id)
    if not candidates or not _agrees(rm, float(candidates[0][pooled]), score):
        candidates = [head_values(rm.model, input_ids)[0]]  # some models keep a pre-norm state last
    values = candidates[0].cpu().tolist()
    if not _agrees(rm, values[pooled], score):
        return None, (f"the score head read at the pooled token gives {values[pooled]:.6f}, the "
                      f"model's score is {score:.6f}")
    carry = carried_indices(t.ids, pad_id)
    rewards = [values[carry[p]] for p in range(t.start, len(t.ids))]
    marked = pooled - t.start if pooled >= t.start else None
    return PerTokenResult(_pieces(rm, t), t.ids[t.start :], rewards, score, t.start, t.n_tokens,
                          t.truncated, HEAD, marked, abs(values[pooled] - score),
                          closing_tokens=t.tail), ""


def per_token_rewards(
    rm: RewardModel,
    prompt: str,
    response: str,
    *,
    max_length: int | None = None,
    truncation: str = "skip",
    method: str = "auto",
    stride: int = 1,
    max_passes: int = DEFAULT_MAX_PASSES,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> PerTokenResult:
    """Per-token rewards for one (prompt, response), checked against the model's score.

    ``method``: ``auto`` (the head where the model allows it, checked on this text, else
    prefix passes), ``head`` or ``prefix``. Prefix passes are refused with
    :class:`PerTokenTooCostlyError` beyond ``max_passes`` (see :func:`prefix_plan`);
    ``stride`` scores every k-th prefix. ``progress(done, total)`` follows the passes.
    A text longer than the window (the smaller of ``max_length`` and the model's
    context) raises :class:`InputTooLongError` under ``skip``; ``keep-end`` and
    ``keep-start`` cut it and set ``truncated``. Raises :class:`PerTokenMismatchError`
    when the value at the pooled position is not the model's score.
    """
    if method not in ("auto", HEAD, PREFIX):
        raise ValueError("method must be auto, head or prefix")
    if stride < 1:
        raise ValueError("stride must be at least 1")
    t = _prepare(rm, prompt, response, max_length, truncation)
    if not t.ids:
        raise errors.PerTokenUnsupportedError("the text has no tokens")
    note = ""
    if method == HEAD or (method == "auto" and rm.pooling.per_token == HEAD):
        if method == HEAD and rm.pooling.per_token != HEAD:
            raise errors.PerTokenUnsupportedError(
                f"the head method does not give prefix rewards for this model: {rm.pooling.reason}")
        result, why = _by_head(rm, t)
        if result is not None:
            if progress:
                progress(1, 1)
            return result
        if method == HEAD:
            raise errors.PerTokenMismatchError(f"{why}: no curve is drawn (use the prefix method)")
        note = f"{why}: prefix passes used instead"
    return _by_prefix(rm, t, model_score(rm, t.ids), stride, max_passes, progress, should_stop, note)


def batch_token_rewards(rm: RewardModel, rows: list[list[int]]) -> tuple[list[list[float]], list[float]]:
    """Head-method rewards (with the pad carry rule) and scores of several token-id rows in
    one right-padded pass; only for models whose per-token method is ``head``."""
    if rm.pooling.per_token != HEAD:
        raise errors.PerTokenUnsupportedError(f"not a head-method model: {rm.pooling.reason}")
    ids, _ = pad_rows(rows, rm.pooling.fill_id)
    values = token_rewards(rm.model, ids.to(rm.device))
    per_row, scores = [], []
    for k, row in enumerate(rows):
        carry = carried_indices(row, rm.pooling.pad_id)
        per_row.append([float(values[k, c]) for c in carry])
        scores.append(float(values[k, pooled_index(row, rm.pooling.pad_id)]))
    return per_row, scores
