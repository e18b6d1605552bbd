"""What the reward-model page keeps for the whole server process, and the page's logic.

Streamlit reruns a page script on every click and starts a new session per browser
tab, so anything that must outlive both lives here, in module-level singletons
guarded by locks (no streamlit import):

- :data:`MODELS`: loaded reward models, keyed by :class:`ModelKey` (path or hub id,
  dtype, device, attention implementation, trust_remote_code). A model loaded in one
  tab is there for every other tab and every rerun until it is unloaded.
- :data:`JOBS`: the threads of background scoring jobs started by this process. The
  job itself (status, progress, result) is a row of the store's ``jobs`` table,
  written by the thread through its own connection; the page only polls that row.

The rest are small pure helpers: the length report before scoring, entries and
failures from stored per-item scores, and a cached per-token comparison.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from needlework import metrics
from needlework.formats import Preference
from needlework.rewards.jobs import start_job_thread, submit_scoring_job
from needlework.rewards.loading import RewardModel, load_reward_model
from needlework.rewards.per_token import (
    DEFAULT_MAX_PASSES,
    CurveComparison,
    PerTokenResult,
    PrefixPlan,
    compare_curves,
    per_token_rewards,
    prefix_plan,
)
from needlework.rewards.templates import render, text_hash
from store.datasets import item_index
from store.scores import finish_job, item_scores, list_jobs

ACTIVE = ("queued", "running")
INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class ModelKey:
    """How a model is loaded; two sessions asking for the same key share one model."""

    name: str
    dtype: str = "auto"
    device: str = "auto"
    attn_implementation: str | None = None
    trust_remote_code: bool = False

    @classmethod
    def of(cls, name: str, dtype: str = "auto", device: str = "auto",
           attn_implementation: str | None = None, trust_remote_code: bool = False) -> ModelKey:
        """A key with ``name`` normalised: a local folder becomes its absolute path."""
        name = name.strip()
        folder = Path(name).expanduser()
        if name and folder.is_dir():
            name = str(folder.resolve())
        return cls(name, dtype, device, attn_implementation or None, trust_remote_code)

    def describe(self) -> str:
        """``name · dtype · device[ · attn][ · remote code]`` for lists."""
        parts = [self.name, self.dtype, self.device]
        if self.attn_implementation:
            parts.append(self.attn_implementation)
        if self.trust_remote_code:
            parts.append("remote code")
        return " · ".join(parts)


Loader = Callable[..., RewardModel]


def refreeze() -> None:
    """Collect garbage once, then move every live object out of the collector's reach.

    Streamlit runs a full ``gc.collect(2)`` after every script run, also after each
    one-second progress poll. With torch, transformers and a model loaded that is
    about half a million objects, ~0.7 s of holding the GIL per poll, and a running
    scoring thread slowed three-fold. Frozen objects are still freed by reference
    counting; :meth:`ModelRegistry.unload` unfreezes so that a dropped model's
    reference cycles are collected.
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()


class ModelRegistry:
    """Loaded models shared by every session; loading the same key twice waits for the first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models: OrderedDict[ModelKey, RewardModel] = OrderedDict()
        self._loading: dict[ModelKey, threading.Lock] = {}

    def get(self, key: ModelKey) -> RewardModel | None:
        """The loaded model for ``key``, or ``None``."""
        with self._lock:
            return self._models.get(key)

    def load(self, key: ModelKey, loader: Loader = load_reward_model) -> RewardModel:
        """The model for ``key``, loading it once (errors from ``loader`` propagate)."""
        with self._lock:
            if key in self._models:
                return self._models[key]
            gate = self._loading.setdefault(key, threading.Lock())
        with gate:
            found = self.get(key)
            if found is not None:
                return found
            rm = loader(key.name, dtype=key.dtype, device=key.device,
                        attn_implementation=key.attn_implementation,
                        trust_remote_code=key.trust_remote_code)
            with self._lock:
                self._models[key] = rm
                self._loading.pop(key, None)
            refreeze()
            return rm

    def loaded(self) -> list[tuple[ModelKey, RewardModel]]:
        """Every loaded model, the most recently loaded first."""
        with self._lock:
            return list(reversed(self._models.items()))

    def unload(self, key: ModelKey) -> bool:
        """Forget a model and free its memory; False when it was not loaded."""
        with self._lock:
            rm = self._models.pop(key, None)
        if rm is None:
            return False
        device = str(rm.facts.device)
        del rm
        refreeze()
        if device.startswith("cuda"):
            import torch  # noqa: PLC0415

            torch.cuda.empty_cache()
        return True

    def clear(self) -> None:
        """Forget every model (tests)."""
        with self._lock:
            self._models.clear()
            self._loading.clear()


class JobThreads:
    """The scoring threads this process started, by job id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads: dict[int, threading.Thread] = {}

    def start(self, db_path: str | Path, job_id: int, rm: RewardModel) -> threading.Thread:
        """Run job ``job_id`` in a daemon thread with its own DB connection."""
        return self.register(job_id, start_job_thread(db_path, job_id, reward_model=rm))

    def register(self, job_id: int, thread: threading.Thread) -> threading.Thread:
        """Record a job thread started elsewhere (other job kinds), so :func:`job_status`
        sees it alive."""
        with self._lock:
            self._threads[job_id] = thread
        return thread

    def alive(self, job_id: int) -> bool:
        """True while this process runs the job."""
        with self._lock:
            thread = self._threads.get(job_id)
        return thread is not None and thread.is_alive()

    def join(self, job_id: int, timeout: float | None = None) -> None:
        """Wait for a job's thread (tests)."""
        with self._lock:
            thread = self._threads.get(job_id)
        if thread is not None:
            thread.join(timeout)


MODELS = ModelRegistry()
JOBS = JobThreads()


def job_status(job: dict[str, Any], threads: JobThreads = JOBS) -> str:
    """The job's status, or ``interrupted`` for a queued/running row no thread here runs
    (the server stopped while it ran)."""
    if job["status"] in ACTIVE and not threads.alive(int(job["id"])):
        return INTERRUPTED
    return str(job["status"])


def latest_job(db: Any, dataset: str, threads: JobThreads = JOBS) -> dict[str, Any] | None:
    """The newest scoring job of ``dataset`` with ``display_status`` added, or ``None``."""
    for job in list_jobs(db, limit=200):
        if job["dataset"] == dataset and job["kind"] == "score":
            job["display_status"] = job_status(job, threads)
            return job
    return None


def start_scoring(db: Any, db_path: str | Path, key: ModelKey, rm: RewardModel, dataset: str,
                  truncation: str, threads: JobThreads = JOBS) -> int:
    """Queue a scoring job for ``dataset`` with the loaded ``rm`` and start its thread.

    Interrupted jobs of the dataset are closed first (their scores stay cached, so
    this run resumes them).
    """
    for job in list_jobs(db, limit=200):
        if job["dataset"] == dataset and job_status(job, threads) == INTERRUPTED:
            finish_job(db, int(job["id"]), "failed",
                       error="interrupted: the server stopped while it ran (scores so far are cached)")
    job_id = submit_scoring_job(db, rm.facts.name, dataset, dtype=key.dtype, device=key.device,
                                attn_implementation=key.attn_implementation,
                                trust_remote_code=key.trust_remote_code, truncation=truncation)
    threads.start(db_path, job_id, rm)
    return job_id


# -- before scoring: which inputs are longer than the window -------------------------------


@dataclass(frozen=True)
class LongInput:
    """One response whose rendered text is longer than the window."""

    item: str
    response: str  # chosen[i] / rejected[j]
    n_tokens: int


@dataclass
class LengthReport:
    """Token counts of every rendered (prompt, response) of a dataset against the window."""

    window: int | None
    texts: int
    longest: int
    too_long: list[LongInput] = field(default_factory=list)

    @property
    def items(self) -> int:
        """How many items have at least one response over the window."""
        return len({t.item for t in self.too_long})


def _responses(pref: Preference) -> list[tuple[str, str]]:
    return ([(f"chosen[{i}]", r) for i, r in enumerate(pref.chosen)]
            + [(f"rejected[{j}]", r) for j, r in enumerate(pref.rejected)])


def length_report(rm: RewardModel, items: Sequence[tuple[str, Preference]],
                  max_length: int | None = None) -> LengthReport:
    """Render and tokenize every response as the scorer will; list those over the window."""
    limits = [x for x in (max_length, rm.facts.context_length) if x]
    window = min(limits) if limits else None
    names: list[tuple[str, str]] = []
    texts: list[str] = []
    add_special = False
    for key, pref in items:
        for name, response in _responses(pref):
            shown = render(rm.tokenizer, pref.prompt, response, locate=False)
            add_special = shown.add_special_tokens
            names.append((key, name))
            texts.append(shown.text)
    lengths: list[int] = []
    for start in range(0, len(texts), 64):
        enc = rm.tokenizer(texts[start:start + 64], add_special_tokens=add_special, verbose=False)
        lengths.extend(len(ids) for ids in enc["input_ids"])
    too_long = [LongInput(k, n, t) for (k, n), t in zip(names, lengths, strict=True)
                if window is not None and t > window]
    return LengthReport(window, len(texts), max(lengths, default=0), too_long)


_LENGTHS: OrderedDict[tuple, LengthReport] = OrderedDict()
_LENGTHS_LOCK = threading.Lock()


def cached_length_report(rm: RewardModel, dataset_row: dict[str, Any],
                         load_items: Callable[[], Sequence[tuple[str, Preference]]]) -> LengthReport:
    """:func:`length_report`, remembered per (model, template, dataset version)."""
    key = (rm.facts.fingerprint, rm.facts.template_id, rm.facts.context_length,
           dataset_row["name"], dataset_row.get("created_at"), dataset_row.get("items"))
    with _LENGTHS_LOCK:
        if key in _LENGTHS:
            return _LENGTHS[key]
    report = length_report(rm, load_items())
    with _LENGTHS_LOCK:
        _LENGTHS[key] = report
        while len(_LENGTHS) > 32:
            _LENGTHS.popitem(last=False)
    return report


# -- after scoring: entries, failures -------------------------------------------------------


def item_domains(db: Any, dataset: str) -> dict[str, str]:
    """``{item key: domain}`` of an RM-Bench dataset (the store's subset column holds the
    domain the importer derived from the file name or the record's subset)."""
    return {i["key"]: i["subset"] for i in item_index(db, dataset) if i["subset"]}


@dataclass
class Results:
    """A scored run of a dataset: per-item score rows, metric entries and failures."""

    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    entries: list[dict[str, Any]] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)


def results(db: Any, row: dict[str, Any], run: dict[str, Any] | None) -> Results:
    """The stored per-item scores of ``run`` (a ``scored_models`` row) on dataset ``row``."""
    if run is None:
        return Results()
    rows = item_scores(db, row["name"], run["fingerprint"], run["variant"])
    domains = item_domains(db, row["name"]) if row["format"] == "rmbench" else None
    entries = entries_from_rows(rows, domains)
    return Results({r["item_key"]: r for r in rows}, entries, failures(entries))


def entries_from_rows(rows: Iterable[dict[str, Any]],
                      domains: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Metric entries from ``store.scores.item_scores`` rows (RM-Bench ``domain`` added)."""
    out = []
    for row in rows:
        entry = {"id": row["item_key"], "subset": row["subset"],
                 "chosen_scores": row["chosen_scores"], "rejected_scores": row["rejected_scores"]}
        if domains and domains.get(row["item_key"]):
            entry["domain"] = domains[row["item_key"]]
        out.append(entry)
    return out


@dataclass(frozen=True)
class Failure:
    """An item the best-of-n rule counts wrong: some rejected response scored at least as
    high as some chosen one, or a score is missing (``margin`` is then ``None``)."""

    item: str
    subset: str
    margin: float | None  # min(chosen) - max(rejected): <= 0 for a failure; 0 is a tie
    worst: tuple[int, int]  # (chosen index, rejected index) of that margin
    beaten: int  # how many (chosen, rejected) pairs are wrong (ties included)
    pairs: int  # how many pairs have both scores
    missing: int = 0  # how many scores are missing (null, NaN, inf)


def worst_pair(chosen: Sequence[float | None], rejected: Sequence[float | None]) -> tuple[int, int]:
    """(i, j) of the lowest chosen and the highest rejected score (missing scores ignored)."""
    c = [(s, i) for i, s in enumerate(chosen) if not metrics.missing(s)]
    r = [(s, j) for j, s in enumerate(rejected) if not metrics.missing(s)]
    i = min(c)[1] if c else 0
    j = max(r)[1] if r else 0
    return i, j


def failures(entries: Iterable[dict[str, Any]]) -> list[Failure]:
    """The items best-of-n counts wrong, worst margin first, then the items with a missing
    score (wrong too, as in Long-form RewardBench's scorer), by item."""
    scored, unscored = [], []
    for e in entries:
        chosen, rejected = list(e["chosen_scores"] or []), list(e["rejected_scores"] or [])
        if metrics.bon_correct(chosen, rejected):
            continue
        gaps = metrics.missing_count(e)
        beaten, counted = 0, 0
        for c in chosen:
            for r in rejected:
                if not metrics.missing(c) and not metrics.missing(r):
                    counted += 1
                    beaten += c <= r
        i, j = worst_pair(chosen, rejected)
        if gaps or not chosen or not rejected:
            unscored.append(Failure(str(e["id"]), str(e.get("subset", "")), None, (i, j), beaten,
                                    counted, gaps))
        else:
            scored.append(Failure(str(e["id"]), str(e.get("subset", "")), chosen[i] - rejected[j],
                                  (i, j), beaten, counted))
    return sorted(scored, key=lambda f: (f.margin, f.item)) + sorted(unscored, key=lambda f: f.item)


# -- per-token comparison ----------------------------------------------------------------


@dataclass
class TokenPair:
    """Per-token rewards of one chosen and one rejected response, and where they differ."""

    chosen: PerTokenResult
    rejected: PerTokenResult
    comparison: CurveComparison
    chosen_text: str  # the rendered text from the response start (what ``tokens`` cover)
    rejected_text: str


_PAIRS: OrderedDict[tuple, TokenPair] = OrderedDict()
_PAIRS_LOCK = threading.Lock()


def _tail(rm: RewardModel, prompt: str, response: str) -> str:
    shown = render(rm.tokenizer, prompt, response)
    return shown.text[shown.response_start or 0:]


def _pair_key(rm: RewardModel, prompt: str, chosen: str, rejected: str, truncation: str,
              stride: int) -> tuple:
    return (rm.facts.fingerprint, rm.facts.dtype, rm.facts.device, truncation, stride,
            text_hash(prompt), text_hash(chosen), text_hash(rejected))


def cached_token_pair(rm: RewardModel, prompt: str, chosen: str, rejected: str,
                      truncation: str = "skip", stride: int = 1) -> TokenPair | None:
    """The pair :func:`token_pair` computed earlier with these arguments, or ``None``."""
    key = _pair_key(rm, prompt, chosen, rejected, truncation, stride)
    with _PAIRS_LOCK:
        if key in _PAIRS:
            _PAIRS.move_to_end(key)
            return _PAIRS[key]
    return None


def token_pair(rm: RewardModel, prompt: str, chosen: str, rejected: str,
               truncation: str = "skip", *, stride: int = 1,
               max_passes: int = DEFAULT_MAX_PASSES,
               progress: Callable[[int, int], None] | None = None) -> TokenPair:
    """Per-token rewards of both responses, cached per model, texts, policy and stride.

    One forward pass per response for a head-method model; prefix passes otherwise
    (``stride``, ``max_passes`` and ``progress(done, total)`` over both responses, see
    :func:`needlework.rewards.per_token.per_token_rewards`). Raises the engine's errors
    (``InputTooLongError`` under ``skip``, ``PerTokenTooCostlyError``,
    ``PerTokenMismatchError``, ``PerTokenUnsupportedError``).
    """
    found = cached_token_pair(rm, prompt, chosen, rejected, truncation, stride)
    if found is not None:
        return found
    results: list[PerTokenResult] = []
    done = [0, 0]

    def step(k: int) -> Callable[[int, int], None] | None:
        if progress is None:
            return None

        def report(d: int, t: int) -> None:
            done[k] = d
            totals[k] = t
            progress(sum(done), sum(totals))
        return report

    totals = [0, 0]
    for k, response in enumerate((chosen, rejected)):
        results.append(per_token_rewards(rm, prompt, response, truncation=truncation, stride=stride,
                                         max_passes=max_passes, progress=step(k)))
    c, r = results
    pair = TokenPair(c, r, compare_curves(c, r), _tail(rm, prompt, chosen), _tail(rm, prompt, rejected))
    key = _pair_key(rm, prompt, chosen, rejected, truncation, stride)
    with _PAIRS_LOCK:
        _PAIRS[key] = pair
        while len(_PAIRS) > 8:
            _PAIRS.popitem(last=False)
    return pair


_PLANS: OrderedDict[tuple, tuple[PrefixPlan, PrefixPlan]] = OrderedDict()


def prefix_plans(rm: RewardModel, prompt: str, chosen: str, rejected: str, truncation: str = "skip",
                 stride: int = 1) -> tuple[PrefixPlan, PrefixPlan]:
    """The prefix-pass plans of both responses (one timed pass each), remembered."""
    key = ("plan", *_pair_key(rm, prompt, chosen, rejected, truncation, stride))
    with _PAIRS_LOCK:
        if key in _PLANS:
            return _PLANS[key]
    plans = (prefix_plan(rm, prompt, chosen, stride=stride, truncation=truncation),
             prefix_plan(rm, prompt, rejected, stride=stride, truncation=truncation))
    rates = [p.seconds_per_token for p in plans if p.seconds_per_token is not None]
    if rates:  # one model, one device: the steadier (lower) measured rate for both
        plans = (plans[0].at_rate(min(rates)), plans[1].at_rate(min(rates)))
    with _PAIRS_LOCK:
        _PLANS[key] = plans
        while len(_PLANS) > 32:
            _PLANS.popitem(last=False)
    return plans
