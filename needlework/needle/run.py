"""Scoring needle records with a reward model, reusing the shared prefix.

Chosen and rejected share every token before the site. With a causal
classifier the pooled score is the score head on the last token's hidden state,
so the prefix can be run once (``use_cache=True`` → ``past_key_values``) and
each side continued from it: the scores equal the plain path's (tested to 1e-4).

Every run first scores one record both ways (the longest, site nearest the
middle): reuse is turned off when the scores differ and, in the default ``auto``
mode, when reuse was slower (on a CPU, attention over a cache takes a masked,
slower kernel, so small attention-bound models gain nothing). Models that give no
cache, records that share no prefix and texts longer than the window go through
the plain :class:`~needlework.rewards.pipeline.RewardPipeline` path.

Both paths read and fill the pipeline's score cache (same keys), call
``progress(done, total)`` per record and check ``should_stop()`` between records:
a stopped run returns what it scored so far with ``cancelled=True``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from needlework.figures.stats_text import percent
from needlework.needle.analysis import results_frame
from needlework.needle.prefix import prefix_scores, supports_prefix_reuse
from needlework.rewards import errors
from store import scores as store_scores

Progress = Callable[[int, int], None]
ShouldStop = Callable[[], bool]
PLAIN_GROUP = 16  # records per plain-path call (progress and stop granularity)
REUSE_MODES = ("auto", "on", "off")


@dataclass
class RunStats:
    """What a run did. ``tokens_texts``: tokens of every text scored by a forward
    pass (what the plain path computes); ``tokens_forwarded``: what was actually
    run; ``tokens_saved``: shared-prefix tokens computed once instead of twice."""

    records: int = 0
    scored: int = 0
    cached: int = 0
    too_long: int = 0
    prefix_reuse: bool = False
    reuse_records: int = 0
    reuse_note: str = ""
    reuse_check: str = ""
    tokens_texts: int = 0
    tokens_forwarded: int = 0
    tokens_saved: int = 0
    seconds: float = 0.0

    @property
    def tokens_per_second(self) -> float:
        """Text tokens scored per second of wall time (0 when nothing was scored)."""
        return self.tokens_texts / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready dict, with ``tokens_per_second``."""
        return asdict(self) | {"tokens_per_second": round(self.tokens_per_second, 1)}

    def lines(self) -> list[str]:
        """Human-readable summary."""
        out = [f"{self.records} records: {self.scored} scored, {self.cached} from the cache, "
               f"{self.too_long} too long for the model's window",
               f"{self.seconds:.1f} s, {self.tokens_per_second:,.0f} text tokens/s"]
        if self.prefix_reuse:
            share = self.tokens_saved / self.tokens_texts if self.tokens_texts else 0.0
            out.append(f"prefix reuse on {self.reuse_records} records: {self.tokens_saved:,} of "
                       f"{self.tokens_texts:,} tokens not recomputed ({percent(share, digits=0, space=False)})")
        if self.reuse_check:
            out.append(f"prefix reuse check (per length): {self.reuse_check}")
        if self.reuse_note:
            out.append(f"prefix reuse: {self.reuse_note}")
        return out


@dataclass
class NeedleRun:
    """A run's results: one row per scored record (see :func:`analysis.results_frame`)."""

    frame: pd.DataFrame
    stats: RunStats
    cancelled: bool = False
    too_long: list[dict[str, Any]] = field(default_factory=list)


def _free_memory(device: Any) -> None:
    """Release cached GPU memory after an out-of-memory error."""
    if getattr(device, "type", str(device)).startswith("cuda"):
        import torch  # noqa: PLC0415

        torch.cuda.empty_cache()


class _Stopped(Exception):
    """Internal: should_stop() said so."""


class _Runner:
    """One run's state: the pipeline, the records, the results so far."""

    def __init__(self, pipeline: Any, records: Sequence[dict[str, Any]], reuse: bool | str,
                 progress: Progress | None, should_stop: ShouldStop | None) -> None:
        from needlework.rewards.templates import render, text_hash  # noqa: PLC0415

        self.pipe, self.records = pipeline, list(records)
        self.progress, self.should_stop = progress, should_stop
        self.stats = RunStats(records=len(self.records))
        self.scores: dict[str, tuple[float | None, float | None]] = {}
        self.too_long: list[dict[str, Any]] = []
        tok = pipeline.rm.tokenizer
        self.rendered = [(render(tok, r["prompt"], r["chosen"][0], locate=False),
                          render(tok, r["prompt"], r["rejected"][0], locate=False)) for r in self.records]
        self.hashes = [(text_hash(c.text), text_hash(j.text)) for c, j in self.rendered]
        self.mode = reuse if isinstance(reuse, str) else ("on" if reuse else "off")
        if self.mode not in REUSE_MODES:
            raise ValueError(f"reuse_prefix must be one of {', '.join(REUSE_MODES)}, not {reuse!r}")
        self.reuse, self.stats.reuse_note = (supports_prefix_reuse(pipeline.rm.model) if self.mode != "off"
                                             else (False, "off (plain path asked for)"))
        self.done = 0
        self.checks: list[str] = []

    def tick(self, done: int = 1) -> None:
        self.done += done
        if self.progress:
            self.progress(self.done, len(self.records))

    def check_stop(self) -> None:
        if self.should_stop and self.should_stop():
            raise _Stopped

    def from_cache(self) -> list[int]:
        """Fill scores from the cache; return the indices still to score."""
        todo = list(range(len(self.records)))
        if not self.pipe.use_cache:
            return todo
        flat = [h for pair in self.hashes for h in pair]
        hits = store_scores.cached_scores(self.pipe.db, self.pipe.fingerprint, self.pipe.template_id,
                                          self.pipe.variant(False), flat)
        limit = self.pipe.max_length
        left = []
        for k in todo:
            c, r = (hits.get(h) for h in self.hashes[k])
            if c and r and (limit is None or max(c[1], r[1]) <= limit):
                self.scores[str(self.records[k]["id"])] = (c[0], r[0])
                self.stats.cached += 1
            else:
                left.append(k)
        return left

    def token_ids(self, k: int) -> tuple[list[int], list[int]]:
        tok = self.pipe.rm.tokenizer
        return tuple(tok(x.text, add_special_tokens=x.add_special_tokens)["input_ids"]
                     for x in self.rendered[k])

    def save(self, k: int, c: float, r: float, n_c: int, n_r: int) -> None:
        kept_c, kept_r = (x if math.isfinite(x) else None for x in (c, r))  # NaN/inf: missing
        self.scores[str(self.records[k]["id"])] = (kept_c, kept_r)
        self.stats.scored += 1
        self.stats.tokens_texts += n_c + n_r
        if self.pipe.use_cache and kept_c is not None and kept_r is not None:
            store_scores.save_scores(
                self.pipe.db, self.pipe.fingerprint, self.pipe.template_id, self.pipe.variant(False),
                [(self.hashes[k][0], kept_c, n_c), (self.hashes[k][1], kept_r, n_r)])

    def fits(self, ids_c: list[int], ids_r: list[int]) -> bool:
        limit = self.pipe.max_length
        return limit is None or max(len(ids_c), len(ids_r)) <= limit

    def reuse_one(self, k: int) -> bool:
        """Score record ``k`` with prefix reuse; False when it must take the plain path."""
        ids_c, ids_r = self.token_ids(k)
        if not self.fits(ids_c, ids_r):
            return False
        try:
            got = prefix_scores(self.pipe.rm.model, ids_c, ids_r, self.pipe.rm.pooling.pad_id,
                                self.pipe.rm.device)
        except Exception as exc:  # out of memory with the doubled cache: the plain path splits batches
            if not errors.is_oom(exc):
                raise
            _free_memory(self.pipe.rm.device)
            return False
        if got is None:
            return False
        self.saved_by_reuse(k, ids_c, ids_r, got)
        return True

    def saved_by_reuse(self, k: int, ids_c: list[int], ids_r: list[int], got: tuple[float, float, int]) -> None:
        c, r, p = got
        self.stats.reuse_records += 1
        self.stats.tokens_saved += p
        self.stats.tokens_forwarded += len(ids_c) + len(ids_r) - p
        self.save(k, c, r, len(ids_c), len(ids_r))

    def timed(self, call: Callable[[], Any]) -> tuple[Any, float]:
        """``call()`` and its cost: CPU time of this process on a CPU (steady on a shared
        machine), wall time elsewhere (the result's ``.cpu()`` waits for the device)."""
        clock = time.process_time if self.pipe.rm.device.type == "cpu" else time.perf_counter
        started = clock()
        out = call()
        return out, clock() - started

    def check(self, k: int) -> bool | None:
        """Score record ``k`` both ways, twice, interleaved (the first call of a size pays
        one-off costs): True when reuse should be used for its length, False when not, None
        when ``k`` was not scored (too long). Different scores turn reuse off for the run."""
        ids_c, ids_r = self.token_ids(k)
        if not self.fits(ids_c, ids_r):
            return None
        model, pad, device = self.pipe.rm.model, self.pipe.rm.pooling.pad_id, self.pipe.rm.device
        plain_s, reuse_s, got = [], [], None
        try:
            for _ in range(2):
                plain, seconds = self.timed(lambda: self.pipe.forward([ids_c, ids_r]))
                plain_s.append(seconds)
                got, seconds = self.timed(lambda: prefix_scores(model, ids_c, ids_r, pad, device))
                reuse_s.append(seconds)
                self.stats.tokens_forwarded += len(ids_c) + len(ids_r)
        except Exception as exc:  # an architecture that takes a cache but cannot continue from it
            _free_memory(device)
            got, self.stats.reuse_note = None, f"off: continuing from the cache failed ({type(exc).__name__}: {exc})"
        if got is None:
            self.reuse = False
            self.stats.reuse_note = self.stats.reuse_note or "off: the model gave no cache to continue from"
            plain = self.pipe.forward([ids_c, ids_r])
            self.save(k, plain[0], plain[1], len(ids_c), len(ids_r))
            return False
        c, r, _ = got
        tol = 1e-3 if self.pipe.rm.facts.dtype == "fp32" else 5e-2
        if max(abs(plain[0] - c), abs(plain[1] - r)) > tol * max(1.0, abs(plain[0]), abs(plain[1])):
            self.reuse = False
            self.stats.reuse_note = (f"off: reused-prefix scores differ from the plain path "
                                     f"({c:.5f}/{r:.5f} vs {plain[0]:.5f}/{plain[1]:.5f})")
            self.save(k, plain[0], plain[1], len(ids_c), len(ids_r))
            return False
        use = self.mode == "on" or min(reuse_s) <= min(plain_s)
        length = self.records[k].get("length_tokens", "?")
        self.checks.append(f"{length}: plain {min(plain_s):.2f} s, reuse {min(reuse_s):.2f} s "
                           f"→ {'reuse' if use else 'plain'}")
        self.stats.reuse_check = "; ".join(self.checks)
        if use:
            self.saved_by_reuse(k, ids_c, ids_r, got)
        else:
            self.save(k, plain[0], plain[1], len(ids_c), len(ids_r))
        return use

    def check_record(self, todo: list[int]) -> int | None:
        """The record to check on: the longest, with its site nearest the middle."""
        if not todo:
            return None
        return min(todo, key=lambda k: (-int(self.records[k].get("length_tokens") or 0),
                                        abs(float(self.records[k].get("tagged_position", 0.5)) - 0.5), k))

    def by_length(self, todo: list[int]) -> list[list[int]]:
        """The records to score grouped by ``length_tokens`` (shortest first), each in order."""
        groups: dict[int, list[int]] = {}
        for k in todo:
            groups.setdefault(int(self.records[k].get("length_tokens") or 0), []).append(k)
        return [groups[n] for n in sorted(groups)]

    def score_group(self, group: list[int], plain: list[int]) -> None:
        """One length: check on one record, then reuse or queue each record for the plain path."""
        use = False
        if self.reuse:
            first = self.check_record(group)
            assert first is not None  # a group has at least one record
            self.check_stop()
            use = bool(self.check(first))
            if use or str(self.records[first]["id"]) in self.scores:
                group = [k for k in group if k != first]
                self.tick()
        for k in group:
            if use and self.reuse:
                self.check_stop()
                if self.reuse_one(k):
                    self.tick()
                    continue
            plain.append(k)

    def plain(self, indices: list[int]) -> None:
        """Score records through the pipeline (cache, batching, window policy)."""
        for start in range(0, len(indices), PLAIN_GROUP):
            self.check_stop()
            group = indices[start : start + PLAIN_GROUP]
            pairs = [(self.records[k]["prompt"], side[0]) for k in group
                     for side in (self.records[k]["chosen"], self.records[k]["rejected"])]
            before = self.pipe.stats.tokens
            got = self.pipe.score_pairs(pairs)
            self.stats.tokens_forwarded += self.pipe.stats.tokens - before
            for n, k in enumerate(group):
                c, r = got[2 * n], got[2 * n + 1]
                if c.score is None or r.score is None or c.too_long or r.too_long:
                    self.stats.too_long += 1
                    action = "skipped" if (c.skipped or r.skipped) else self.pipe.truncation
                    self.too_long.append({"id": str(self.records[k]["id"]), "n_tokens": max(c.n_tokens, r.n_tokens),
                                          "action": action})
                    if c.score is None or r.score is None:  # missing: the row stays (wrong)
                        self.scores[str(self.records[k]["id"])] = (c.score, r.score)
                        continue
                self.scores[str(self.records[k]["id"])] = (c.score, r.score)
                self.stats.scored += not (c.cached and r.cached)
                self.stats.cached += c.cached and r.cached
                self.stats.tokens_texts += (c.n_tokens + r.n_tokens) * (not (c.cached and r.cached))
            self.tick(len(group))

    def run(self) -> bool:
        """Score everything; True when stopped early."""
        todo = self.from_cache()
        self.tick(len(self.records) - len(todo))
        plain: list[int] = []
        try:
            for group in self.by_length(todo):
                self.score_group(group, plain)
            self.plain(plain)
        except _Stopped:
            return True
        finally:
            self.stats.prefix_reuse = self.stats.reuse_records > 0
            if self.mode == "auto" and self.checks and not self.stats.reuse_note:
                slower = [c.split(":")[0] for c in self.checks if c.endswith("plain")]
                if slower:
                    self.stats.reuse_note = (f"plain path for {', '.join(slower)}-token records: reuse was "
                                             "slower there on this model and device")
        return False


def run_needles(
    pipeline: Any,
    records: Sequence[dict[str, Any]],
    *,
    reuse_prefix: bool | str = "auto",
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    dataset: str | None = None,
) -> NeedleRun:
    """Score every needle record's chosen and rejected response.

    ``reuse_prefix``: ``"auto"`` (default: reuse the shared prefix when the model
    supports it, its scores match the plain path and it is not slower, all checked
    on one record: the longest, site nearest the middle), ``"on"``/``True`` (reuse
    whenever supported and matching), ``"off"``/``False`` (plain path only).
    ``pipeline``: a :class:`needlework.rewards.pipeline.RewardPipeline`. Returns a
    :class:`NeedleRun` whose frame has one row per scored record. With ``dataset``
    (and a pipeline with a database) the per-item scores are also stored under it.
    """
    started = time.perf_counter()
    runner = _Runner(pipeline, records, reuse_prefix, progress, should_stop)
    cancelled = runner.run()
    runner.stats.seconds = time.perf_counter() - started
    model = pipeline.rm.facts.name
    rows = [dict(r, chosen_score=runner.scores[str(r["id"])][0], rejected_score=runner.scores[str(r["id"])][1],
                 model=model) for r in runner.records if str(r["id"]) in runner.scores]
    if dataset and pipeline.db is not None and rows:
        store_scores.save_item_scores(
            pipeline.db, dataset, pipeline.fingerprint, pipeline.run_variant(), model,
            [{"item_key": str(r["id"]), "subset": str(r.get("length_tokens", "")),
              "chosen_scores": [r["chosen_score"]], "rejected_scores": [r["rejected_score"]]} for r in rows])
    return NeedleRun(results_frame(rows), runner.stats, cancelled, runner.too_long)
