"""The scoring pipeline: render, tokenize, look up the cache, batch, forward, store.

One class, :class:`RewardPipeline`. Texts are sorted by length and packed into
batches under a token budget (rows × longest row), so little is padded. Scores go
to the store's cache as each batch finishes, keyed by (model fingerprint, template
id, variant, text hash): a repeated or resumed run makes no forward pass for them.
Inputs longer than the model's window are never cut silently: the caller picks
``skip``, ``keep-end`` or ``keep-start`` and every such text is reported.

Whether a planned batch runs as one forward pass or one text per pass is measured, not
assumed (:class:`~needlework.rewards.batching.BatchChoices`): on a CPU a batch of long texts
can be slower per token than the same texts one at a time, on a GPU it is much faster. The first
batches of each (model, device, threads, budget, length bucket) are timed both ways
on the work itself, and one pass per batch is kept for the process only when it was
clearly faster (:data:`BATCH_MARGIN`). Either way each
score is the model's score of that text alone (:func:`needlework.rewards.pooling.score_rows`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from needlework.rewards import errors
from needlework.rewards.batching import (
    CHOICES,
    SINGLE_FIRST,
    BatchChoices,
    length_bucket,
    plan_batches,
)
from needlework.rewards.loading import RewardModel
from needlework.rewards.pooling import SINGLE, score_rows
from needlework.rewards.templates import render, text_hash
from store.scores import cached_scores, save_scores

TRUNCATION_POLICIES = ("skip", "keep-end", "keep-start")
DEFAULT_BATCH_TOKENS = 16384
BATCHING = ("auto", "batched", "single")  # measured per bucket, always the batches, one per pass
Progress = Callable[[int, int], None]
ShouldStop = Callable[[], bool]


@dataclass
class TextScore:
    """The score of one (prompt, response); ``None`` when skipped for being too long, or
    when the model returned a non-finite value (``non_finite`` holds it: NaN, ±inf, e.g.
    an fp16 overflow). Either way the score is *missing* in the metrics."""

    score: float | None
    n_tokens: int
    cached: bool = False
    truncated: bool = False
    skipped: bool = False
    non_finite: str | None = None
    pending: bool = False  # not in the cache and not scored (a cache-only lookup)

    @property
    def too_long(self) -> bool:
        return self.truncated or self.skipped


@dataclass
class RunStats:
    """Counters of what a pipeline did (cumulative over its calls)."""

    texts: int = 0
    unique_texts: int = 0
    cache_hits: int = 0
    scored: int = 0
    too_long: int = 0
    truncated: int = 0
    skipped: int = 0
    non_finite: int = 0
    forward_calls: int = 0
    tokens: int = 0
    padded_tokens: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class PreferenceScores:
    """Scores of one preference record, in Long-form RewardBench output shape."""

    id: str
    subset: str
    chosen_scores: list[float | None]
    rejected_scores: list[float | None]
    too_long: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    complete: bool = True
    non_finite: list[dict[str, Any]] = field(default_factory=list)

    def as_entry(self, model: str | None = None) -> dict[str, Any]:
        """``{"id", "subset", "chosen_scores", "rejected_scores"}`` (+ model, domain, too_long)."""
        entry: dict[str, Any] = {"id": self.id, "subset": self.subset,
                                 "chosen_scores": self.chosen_scores,
                                 "rejected_scores": self.rejected_scores}
        if "domain" in self.meta:
            entry["domain"] = self.meta["domain"]
        if model is not None:
            entry["model"] = model
        if self.too_long:
            entry["too_long"] = self.too_long
        if self.non_finite:
            entry["non_finite"] = self.non_finite
        return entry


class RewardPipeline:
    """Scores (prompt, response) pairs with a loaded reward model, using the score cache."""

    def __init__(
        self,
        reward_model: RewardModel,
        *,
        db: Any = None,
        batch_tokens: int = DEFAULT_BATCH_TOKENS,
        max_length: int | None = None,
        truncation: str = "skip",
        use_cache: bool = True,
        batching: str = "auto",
        choices: BatchChoices = CHOICES,
    ) -> None:
        if truncation not in TRUNCATION_POLICIES:
            raise ValueError(f"truncation must be one of {', '.join(TRUNCATION_POLICIES)}")
        if batch_tokens < 1:
            raise ValueError("batch_tokens must be positive")
        if batching not in BATCHING:
            raise ValueError(f"batching must be one of {', '.join(BATCHING)}")
        self.rm = reward_model
        self.db = db
        self.batch_tokens = batch_tokens
        self.batching = batching
        self.choices = choices
        self.truncation = truncation
        self.use_cache = use_cache and db is not None
        limits = [x for x in (max_length, reward_model.facts.context_length) if x]
        self.max_length: int | None = min(limits) if limits else None
        self.stats = RunStats()

    # -- keys ------------------------------------------------------------------------
    @property
    def fingerprint(self) -> str:
        return self.rm.facts.fingerprint

    @property
    def template_id(self) -> str:
        return self.rm.facts.template_id

    def variant(self, truncated: bool = False) -> str:
        """Cache variant: dtype plus the input view (``full`` or ``keep-end:N``)."""
        view = f"{self.truncation}:{self.max_length}" if truncated else "full"
        return f"{self.rm.facts.dtype}|{view}"

    def run_variant(self) -> str:
        """The variant a whole run's item scores are saved under: the dtype and the window
        policy with its window (``fp32|skip:4096``, ``bf16|keep-end:4096``; ``full`` without
        a window), so runs that can differ (other items skipped or cut) never overwrite
        each other. The model fingerprint (weights, config, tokenizer and template files,
        the template in use) is the other half of a run's identity."""
        if self.max_length is None:
            return self.variant(False)
        return f"{self.rm.facts.dtype}|{self.truncation}:{self.max_length}"

    # -- forward ---------------------------------------------------------------------
    def forward(self, rows: Sequence[Sequence[int]]) -> list[float]:
        """The scores of token-id rows, batched without moving where the model pools
        (:func:`needlework.rewards.pooling.score_rows`): each equals the model's own
        forward on that row alone.

        On out-of-memory the batch is split in two and retried; a single row that
        does not fit raises :class:`RewardModelOOMError`.
        """
        device = self.rm.device
        failure: str | None = None
        try:
            self.stats.forward_calls += 1
            scores = score_rows(self.rm.model, self.rm.pooling, rows)
        except Exception as exc:
            if not errors.is_oom(exc):
                raise
            failure = str(exc)  # leave the except block first: it holds the failed frames
        if failure is not None:
            if device.type == "cuda":
                torch.cuda.empty_cache()
            if len(rows) == 1:
                raise errors.oom_error(f"scoring one text of {len(rows[0])} tokens",
                                       MemoryError(failure))
            half = len(rows) // 2
            return self.forward(rows[:half]) + self.forward(rows[half:])
        self.stats.tokens += sum(len(r) for r in rows)
        self.stats.padded_tokens += len(rows) * max(len(r) for r in rows)
        return scores

    # -- one planned batch: one pass, or one text per pass ----------------------------
    def choice_key(self, width: int) -> tuple[Any, ...]:
        """The bucket key of a batch whose longest row has ``width`` tokens."""
        facts = self.rm.facts
        return (facts.fingerprint, facts.dtype, str(self.rm.device), self.rm.pooling.path,
                torch.get_num_threads(), self.batch_tokens, length_bucket(width))

    def _timed(self, rows: Sequence[Sequence[int]]) -> tuple[list[float], float]:
        """Scores of ``rows`` in one pass and the throughput (real tokens per second)."""
        began = time.perf_counter()
        scores = self.forward(rows)
        seconds = max(time.perf_counter() - began, 1e-9)
        return scores, sum(len(r) for r in rows) / seconds

    def _timed_batch(self, rows: Sequence[Sequence[int]]) -> tuple[list[float], float]:
        """Scores of ``rows`` in one pass and its throughput. On an accelerator the pass
        runs twice and the second is timed: there a new shape's first pass pays one-off
        costs (memory growth, kernel choice) of many times its own time (on an H100 a first
        batch timed at 0.08× of one text per pass ran at 2.95× once warm)."""
        scores, rate = self._timed(rows)
        if self.rm.device.type != "cpu":
            _, rate = self._timed(rows)
        return scores, rate

    def _singly(self, rows: Sequence[Sequence[int]]) -> list[float]:
        return [self.forward([row])[0] for row in rows]

    def run_batch(self, rows: Sequence[Sequence[int]]) -> list[float]:
        """The scores of one planned batch (longest row first, as :func:`plan_batches`
        gives them), run as one forward pass or one text per pass, as ``batching`` says:
        ``auto`` uses the bucket's decision (:class:`BatchChoices`) and, while there is
        none, measures it on these rows: up to :data:`SINGLE_FIRST` rows alone, one after
        the other, then the rest (two at least) as one pass; a batch of two or three rows
        runs alone, and the bucket's next batch as one pass. Scores align with ``rows``."""
        if len(rows) <= 1 or self.batching == "batched" or self.rm.pooling.path == SINGLE:
            return self.forward(rows)  # a SINGLE-path model runs one text per pass anyway
        if self.batching == "single":
            return self._singly(rows)
        key = self.choice_key(max(len(r) for r in rows))
        choice = self.choices.get(key)
        if choice is not None:
            return self.forward(rows) if choice.batched else self._singly(rows)
        singles, _ = self.choices.timings(key)
        if singles:
            scores, rate = self._timed_batch(rows)
            self.choices.add(key, batch=[rate])
            return scores
        # at least two single passes (the first of a size pays one-off costs) and two rows
        # for one pass; a batch too small for both runs alone and the next one is batched
        alone = min(SINGLE_FIRST, len(rows) - 2) if len(rows) >= 4 else len(rows)
        timed = [self._timed([row]) for row in rows[:alone]]
        rates = [rate for _, rate in timed]
        scores = [s[0] for s, _ in timed]
        if alone == len(rows):
            self.choices.add(key, single=rates)
            return scores
        rest, batch_rate = self._timed_batch(rows[alone:])
        self.choices.add(key, single=rates, batch=[batch_rate])
        return scores + rest

    # -- scoring ---------------------------------------------------------------------
    def score(self, prompt: str, response: str) -> TextScore:
        """Score one (prompt, response)."""
        return self.score_pairs([(prompt, response)])[0]

    def _lookup(self, hashes: list[str]) -> tuple[dict[str, tuple[float, int]], dict[str, tuple[float, int]]]:
        if not self.use_cache:
            return {}, {}
        full = cached_scores(self.db, self.fingerprint, self.template_id, self.variant(False), hashes)
        cut: dict[str, tuple[float, int]] = {}
        if self.truncation != "skip" and self.max_length:
            cut = cached_scores(self.db, self.fingerprint, self.template_id, self.variant(True), hashes)
        return full, cut

    def _from_cache(self, h: str, full: dict, cut: dict) -> TextScore | None:
        limit = self.max_length
        if h in full and (limit is None or full[h][1] <= limit):
            return TextScore(full[h][0], full[h][1], cached=True)
        if h in cut:
            return TextScore(cut[h][0], cut[h][1], cached=True, truncated=True)
        if h in full and self.truncation == "skip":  # known length, too long now
            return TextScore(None, full[h][1], skipped=True)
        return None

    def _tokenize(self, texts: list[str], add_special_tokens: bool) -> list[list[int]]:
        out: list[list[int]] = []
        for start in range(0, len(texts), 256):
            enc = self.rm.tokenizer(texts[start : start + 256], add_special_tokens=add_special_tokens,
                                    verbose=False)
            out.extend(enc["input_ids"])
        return out

    def _fit(self, ids: list[int]) -> tuple[list[int] | None, bool]:
        """The ids to score (None = skip) and whether they were truncated."""
        limit = self.max_length
        if limit is None or len(ids) <= limit:
            return ids, False
        if self.truncation == "skip":
            return None, False
        return (ids[-limit:] if self.truncation == "keep-end" else ids[:limit]), True

    def score_pairs(
        self,
        pairs: Sequence[tuple[str, str]],
        *,
        progress: Progress | None = None,
        should_stop: ShouldStop | None = None,
        cache_only: bool = False,
    ) -> list[TextScore]:
        """Score (prompt, response) pairs; results align with ``pairs``.

        ``progress(done, total)`` is called as unique texts finish; ``should_stop()``
        is checked before each batch and raises :class:`ScoringCancelled` when true
        (everything scored so far stays in the cache). With ``cache_only`` no forward
        pass runs: texts not in the cache come back ``pending``.
        """
        started = time.perf_counter()
        rendered = [render(self.rm.tokenizer, p, r, locate=False) for p, r in pairs]
        hashes = [text_hash(x.text) for x in rendered]
        first: dict[str, int] = {}
        for k, h in enumerate(hashes):
            first.setdefault(h, k)
        unique = list(first)
        self.stats.texts += len(pairs)
        self.stats.unique_texts += len(unique)
        results: dict[str, TextScore] = {}
        todo = self._cached(unique, results)
        total = len(unique)
        if cache_only:
            for h in todo:
                results[h] = TextScore(None, 0, pending=True)
            todo = []
        if progress:
            progress(len(results), total)
        add_special = rendered[0].add_special_tokens if rendered else False
        rows, keys = self._fitted(todo, [rendered[first[h]].text for h in todo], add_special,
                                  results)
        self._score_batches(rows, keys, results, started, total, progress, should_stop)
        for h in unique:
            self.stats.truncated += results[h].truncated
            self.stats.skipped += results[h].skipped
            self.stats.non_finite += results[h].non_finite is not None
            self.stats.too_long += results[h].too_long
        self.stats.seconds += time.perf_counter() - started
        return [results[h] for h in hashes]

    def _cached(self, unique: list[str], results: dict[str, TextScore]) -> list[str]:
        """Put the texts found in the cache into ``results``; the hashes of the rest."""
        full, cut = self._lookup(unique)
        todo: list[str] = []
        for h in unique:
            hit = self._from_cache(h, full, cut)
            if hit is None:
                todo.append(h)
            else:
                results[h] = hit
                self.stats.cache_hits += hit.cached
        return todo

    def _fitted(self, todo: list[str], texts: list[str], add_special: bool,
                results: dict[str, TextScore]) -> tuple[list[list[int]], list[tuple[str, int, bool]]]:
        """``(rows, keys)``: the texts tokenized and fitted to the window, each row's key
        ``(hash, tokens, truncated)``; a text that cannot fit goes into ``results`` skipped."""
        rows: list[list[int]] = []
        keys: list[tuple[str, int, bool]] = []
        for h, ids in zip(todo, self._tokenize(texts, add_special), strict=True):
            fitted, truncated = self._fit(ids)
            if fitted is None:
                results[h] = TextScore(None, len(ids), skipped=True)
            else:
                rows.append(fitted)
                keys.append((h, len(ids), truncated))
        return rows, keys

    def _score_batches(self, rows: list[list[int]], keys: list[tuple[str, int, bool]],
                       results: dict[str, TextScore], started: float, total: int,
                       progress: Progress | None, should_stop: ShouldStop | None) -> None:
        """Score ``rows`` batch by batch into ``results``, each batch cached as it ends;
        ``should_stop`` is asked before each batch, ``progress`` told after it."""
        for batch in plan_batches([len(r) for r in rows], self.batch_tokens):
            if should_stop and should_stop():
                self.stats.seconds += time.perf_counter() - started
                raise errors.ScoringCancelled(
                    f"cancelled after {len(results)} of {total} texts; scored texts are cached"
                )
            scores = self.run_batch([rows[i] for i in batch])
            for i, s in zip(batch, scores, strict=True):
                h, n, truncated = keys[i]
                if math.isfinite(s):
                    results[h] = TextScore(s, n, truncated=truncated)
                else:  # a missing score, reported; never cached
                    results[h] = TextScore(None, n, truncated=truncated, non_finite=repr(s))
            self._save([(keys[i], results[keys[i][0]].score) for i in batch])
            self.stats.scored += len(batch)
            if progress:
                progress(len(results), total)

    def _save(self, done: list[tuple[tuple[str, int, bool], float | None]]) -> None:
        if not self.use_cache:
            return
        for truncated in (False, True):
            rows = [(h, s, n) for (h, n, t), s in done if t == truncated and s is not None]
            if rows:
                save_scores(self.db, self.fingerprint, self.template_id, self.variant(truncated), rows)

    def score_preferences(
        self,
        preferences: Iterable[Any],
        *,
        progress: Progress | None = None,
        should_stop: ShouldStop | None = None,
        cache_only: bool = False,
    ) -> list[PreferenceScores]:
        """Score every chosen and rejected response of :class:`Preference` records
        (``cache_only``: see :meth:`score_pairs`; an item with a pending text has
        ``complete`` False)."""
        prefs = list(preferences)
        pairs: list[tuple[str, str]] = []
        for p in prefs:
            pairs.extend((p.prompt, r) for r in list(p.chosen) + list(p.rejected))
        scores = self.score_pairs(pairs, progress=progress, should_stop=should_stop,
                                  cache_only=cache_only)
        out: list[PreferenceScores] = []
        k = 0
        for p in prefs:
            chosen = scores[k : k + len(p.chosen)]
            k += len(p.chosen)
            rejected = scores[k : k + len(p.rejected)]
            k += len(p.rejected)
            too_long = [
                {"response": f"{side}[{i}]", "n_tokens": s.n_tokens,
                 "action": "skipped" if s.skipped else self.truncation}
                for side, group in (("chosen", chosen), ("rejected", rejected))
                for i, s in enumerate(group) if s.too_long
            ]
            non_finite = [{"response": f"{side}[{i}]", "value": s.non_finite}
                          for side, group in (("chosen", chosen), ("rejected", rejected))
                          for i, s in enumerate(group) if s.non_finite is not None]
            out.append(PreferenceScores(str(p.id), str(p.subset), [s.score for s in chosen],
                                        [s.score for s in rejected], too_long, dict(p.meta or {}),
                                        complete=not any(s.pending for s in chosen + rejected),
                                        non_finite=non_finite))
        return out
