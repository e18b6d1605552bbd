"""After scoring: a run's per-item scores as metric entries, and the items it gets wrong.

:func:`results` reads a stored run (``store.scores.item_scores``) of a dataset;
:func:`failures` lists the items best-of-n counts wrong (a missing score counts
wrong, as in Long-form RewardBench's scorer), worst margin first.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from needlework import metrics
from store.datasets import item_index
from store.scores import item_scores


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


# -- downloads ---------------------------------------------------------------------------


def scores_lines(entries: Iterable[dict[str, Any]], model: str) -> list[dict[str, Any]]:
    """A run's scores as Long-form RewardBench-shaped lines (what ``metrics`` reads)."""
    return [{"id": e["id"], "subset": e.get("subset", ""), "chosen_scores": e["chosen_scores"],
             "rejected_scores": e["rejected_scores"], "model": model}
            | ({"domain": e["domain"]} if e.get("domain") else {}) for e in entries]


def scores_csv(entries: Sequence[dict[str, Any]]) -> str:
    """A run's scores as CSV: ``id, subset, chosen 1, …, rejected 1, …`` (the reader's
    numbering; an empty cell is a missing score), and whether best-of-n counts it right."""
    n_chosen = max((len(e["chosen_scores"] or []) for e in entries), default=0)
    n_rejected = max((len(e["rejected_scores"] or []) for e in entries), default=0)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["id", "subset", *[f"chosen {k + 1}" for k in range(n_chosen)],
                     *[f"rejected {k + 1}" for k in range(n_rejected)], "best-of-n correct"])

    def cells(values: Sequence[Any] | None, n: int) -> list[Any]:
        values = list(values or [])
        return [("" if metrics.missing(v) else v) for v in values] + [""] * (n - len(values))

    for e in entries:
        writer.writerow([e["id"], e.get("subset", ""), *cells(e["chosen_scores"], n_chosen),
                         *cells(e["rejected_scores"], n_rejected),
                         metrics.bon_correct(e["chosen_scores"] or [], e["rejected_scores"] or [])])
    return buffer.getvalue()


def metrics_rows(figures: dict[str, Any]) -> list[dict[str, Any]]:
    """Best-of-n and pairwise figures per subset and overall, as numbers (for a CSV)."""
    bon, pair = figures["bon"], figures["pairwise"]
    rows = []
    for subset, m in bon["subsets"].items():
        p = pair["subsets"].get(subset, {})
        rows.append({"subset": subset, "items": m["n"], "missing": m["missing"],
                     "best_of_n_correct": m["correct"], "best_of_n_accuracy": m["accuracy"],
                     "pairs": p.get("pairs", 0), "pairwise_accuracy": p.get("accuracy")})
    rows.append({"subset": "overall", "items": bon["n"], "missing": bon["missing"],
                 "best_of_n_correct": bon["correct"], "best_of_n_accuracy": bon["accuracy"],
                 "pairs": pair["pairs"], "pairwise_accuracy": pair["accuracy"]})
    return rows
