"""Suggested Review verdicts from a scoring run: a reward model's margin or a judge's
choice (issue 30, point 2).

A preference dataset scored by a reward model holds, per item, a score for each chosen
and each rejected response; a finished judge run holds the same shape (a response's
share of the trials that picked it, or its rating). For comparison (chosen I, rejected J)
the margin is ``score(chosen I) - score(rejected J)``: the suggested verdict is ``agree``
when it is positive (the model prefers the dataset's chosen response), ``flip`` when it
is negative, ``tie`` when it is zero; the margin is the suggestion's score. A reward model's margin also gives the
suggestion's confidence, sigmoid(|margin|) (:func:`_confidence`); a judge run's margin
(a share of trials, a rating) gives none. A comparison with a missing score gets no
suggestion.

The source is ``reward:MODEL`` (``judge:MODEL`` for a judge run; a local folder by its
name, :func:`model_name`), its detail the run's fingerprint and variant. Suggesting again from the same run replaces its suggestions.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from needlework.suggest.data import MAX_SOURCE
from needlework.teams.permissions import User, check
from store.datasets import get_dataset
from store.review import JUDGE_PREFIX, item_scores_map, scored_runs
from store.suggestions import put_suggestions


def model_name(model: str) -> str:
    """A model as a source names it: a local folder's last part (``data/demo-model`` is
    ``demo-model``; no server path in a name people see), a hub id as it is."""
    text = model.rstrip("/")
    local = text.startswith(("/", ".")) or Path(text).is_dir()
    return Path(text).name if local and Path(text).name else text


def verdict_of_margin(margin: float) -> str:
    """``agree`` for a positive margin, ``flip`` for a negative one, ``tie`` at zero."""
    return "agree" if margin > 0 else "flip" if margin < 0 else "tie"


def _confidence(margin: float) -> float:
    """How likely the suggested verdict is, by the reward model's own Bradley-Terry
    reading of its margin: P(chosen preferred) = sigmoid(margin), so the suggested order
    (either way) has sigmoid(|margin|); 0.5 at a tie."""
    return round(1 / (1 + math.exp(-min(abs(margin), 60.0))), 6)


def margin_rows(dataset: str, scores: Mapping[str, Mapping[str, Any]], source: str,
                detail: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The suggestion rows of every comparison with both scores (see the module docstring)."""
    for key, row in scores.items():
        chosen, rejected = row.get("chosen_scores") or [], row.get("rejected_scores") or []
        for i, ci in enumerate(chosen):
            for j, rj in enumerate(rejected):
                if ci is None or rj is None:
                    continue
                margin = round(float(ci) - float(rj), 6)
                yield {"dataset": dataset, "item_key": key, "field": f"verdict:{i}:{j}",
                       "source": source, "value": verdict_of_margin(margin), "score": margin,
                       "confidence": _confidence(margin) if detail.get("margin") == "reward"
                       else None,
                       "detail": dict(detail)}


def suggest_verdicts(db: Database, dataset: str, fingerprint: str, variant: str | None = None,
                     *, by: User | None = None, who: str = "") -> dict[str, Any]:
    """Store the verdicts a scoring run of ``dataset`` suggests (``fingerprint`` and
    ``variant`` as :func:`store.review.scored_runs` lists them; a judge run's fingerprint
    is ``judge:RUN_KEY``); returns ``{"source", "suggestions", "items"}``. Raises
    ``ValueError`` for a dataset that is not a preference dataset or a run it lacks."""
    check(db, by, "suggest", dataset)
    row = get_dataset(db, dataset)
    if row is None or row["kind"] != "preference":
        raise ValueError(f"no preference dataset named {dataset!r}")
    run = next((r for r in scored_runs(db, dataset) if r["fingerprint"] == fingerprint
                and (variant is None or r["variant"] == variant)), None)
    if run is None:
        raise ValueError(f"{dataset} has no scoring run {fingerprint!r}")
    judged = fingerprint.startswith(JUDGE_PREFIX)
    model = model_name(run["model"][len("judge "):] if judged else run["model"])
    source = (f"judge:{model}" if judged else f"reward:{model}")[:MAX_SOURCE]
    scores = item_scores_map(db, dataset, fingerprint, None if judged else run["variant"])
    detail = {"model": model, "run": fingerprint, "variant": run["variant"],
              "margin": "share of trials" if judged and "selection" in run["variant"]
              else "rating" if judged else "reward"}
    count = put_suggestions(db, margin_rows(dataset, scores, source, detail),
                            who or (by.name if by else "local"))
    return {"source": source, "suggestions": count, "items": len(scores)}
