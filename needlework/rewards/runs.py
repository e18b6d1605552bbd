"""Scoring a stored dataset: preferences in, cached scores, item scores and metrics out."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from needlework.figures import metrics, rewardbench2
from needlework.formats import preference_view
from needlework.rewards import errors
from needlework.rewards.loading import RewardModel
from needlework.rewards.pipeline import (
    DEFAULT_BATCH_TOKENS,
    PreferenceScores,
    Progress,
    RewardPipeline,
    ShouldStop,
)
from store.datasets import get_dataset, iter_items
from store.scores import save_item_scores

BON_FORMATS = ("lfrb", "pairs", "needle")


class DatasetNotFound(LookupError):
    """The named dataset is not in the store."""


def load_preferences(db: Any, dataset: str) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    """The dataset row and its items as ``(item key, Preference)``, in import order."""
    row = get_dataset(db, dataset)
    if row is None:
        raise DatasetNotFound(
            f"no dataset named {dataset!r} in the store: import it first "
            "(python -m needlework import FILE --dataset NAME), or check --db"
        )
    return row, [(item["key"], preference_view(row["format"], item["record"]))
                 for item in iter_items(db, dataset)]


def dataset_metrics(format_name: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The metrics that fit a format: pairwise always, best-of-n or RM-Bench, and for
    RewardBench 2 its own figures (:mod:`needlework.figures.rewardbench2`, the headline) beside
    best-of-n."""
    out: dict[str, Any] = {"pairwise": metrics.pairwise(entries)}
    if format_name == "rewardbench2":
        try:
            out["rewardbench2"] = rewardbench2.rewardbench2(entries)
        except ValueError as exc:
            out["rewardbench2"] = {"error": str(exc)}
    if format_name == "rmbench":
        try:
            out["rmbench"] = metrics.rmbench(entries)
        except ValueError as exc:
            out["rmbench"] = {"error": str(exc)}
    else:
        out["bon"] = metrics.best_of_n(entries)
    return out


def write_scores(path: str | Path, results: list[PreferenceScores], model: str) -> None:
    """Write Long-form RewardBench output lines (plus ``model``), atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for r in results:
            f.write(json.dumps(r.as_entry(model), ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def save_results(db: Any, rm: RewardModel, dataset: str, items: list[tuple[str, Any]],
                 results: list[PreferenceScores], variant: str) -> int:
    """Save the per-item scores of the items whose texts all have a result; returns how many."""
    rows = []
    for (key, _), r in zip(items, results, strict=True):
        r.id = r.id or key  # needle records may carry no id of their own
        if r.complete:
            rows.append({"item_key": key, "subset": r.subset, "chosen_scores": r.chosen_scores,
                         "rejected_scores": r.rejected_scores})
    return save_item_scores(db, dataset, rm.facts.fingerprint, variant, rm.facts.name, rows)


def save_partial(db: Any, rm: RewardModel, dataset: str, items: list[tuple[str, Any]], *,
                 max_length: int | None = None, truncation: str = "skip") -> int:
    """After a stop: save the items already scored in full, from the cache (no forward pass)."""
    lookup = RewardPipeline(rm, db=db, max_length=max_length, truncation=truncation)
    results = lookup.score_preferences([p for _, p in items], cache_only=True)
    return save_results(db, rm, dataset, items, results, lookup.run_variant())


def score_dataset(
    db: Any,
    rm: RewardModel,
    dataset: str,
    *,
    batch_tokens: int = DEFAULT_BATCH_TOKENS,
    max_length: int | None = None,
    truncation: str = "skip",
    out: str | Path | None = None,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
) -> dict[str, Any]:
    """Score every response of a stored dataset; returns a JSON-ready summary.

    Scores are cached as batches finish (a killed or cancelled run resumes);
    per-item scores go to ``item_scores`` and, with ``out``, to a JSONL file.
    A cancelled run keeps its partial results: the items whose texts were all
    scored are saved to ``item_scores`` before :class:`ScoringCancelled` goes on up.
    """
    row, items = load_preferences(db, dataset)
    pipeline = RewardPipeline(rm, db=db, batch_tokens=batch_tokens, max_length=max_length,
                              truncation=truncation)
    try:
        results = pipeline.score_preferences([p for _, p in items], progress=progress,
                                             should_stop=should_stop)
    except errors.ScoringCancelled as exc:
        kept = save_partial(db, rm, dataset, items, max_length=max_length, truncation=truncation)
        raise errors.ScoringCancelled(
            f"{exc}; the {kept} of {len(items)} items scored in full are saved and shown") from None
    save_results(db, rm, dataset, items, results, pipeline.run_variant())
    if out is not None:
        write_scores(out, results, rm.facts.name)
    entries = [r.as_entry() for r in results]
    stats = pipeline.stats
    too_long = [{"id": r.id, **t} for r in results for t in r.too_long]
    return {
        "dataset": dataset,
        "format": row["format"],
        "model": rm.facts.name,
        "fingerprint": rm.facts.fingerprint,
        "template_id": rm.facts.template_id,
        "template_fallback": rm.facts.template_fallback,
        "variant": pipeline.run_variant(),
        "max_length": pipeline.max_length,
        "truncation": truncation,
        "items": len(items),
        **{k: v for k, v in stats.as_dict().items() if k != "seconds"},
        "seconds": round(stats.seconds, 3),
        "too_long_items": too_long[:50],
        "out": str(out) if out is not None else None,
        "metrics": dataset_metrics(row["format"], entries),
    }
