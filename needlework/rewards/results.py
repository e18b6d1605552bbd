"""After scoring: a run's per-item scores as metric entries, and the items it gets wrong.

:func:`results` reads a stored run (``store.scores.item_scores``) of a dataset;
:func:`failures` lists the items best-of-n counts wrong (a missing score counts
wrong, as in Long-form RewardBench's scorer), worst margin first;
:func:`intervals` gives each figure's 95 % interval, the unit always the item, its method
named in each interval (:func:`needlework.figures.stats.bootstrap_mean`): best-of-n, the mean of
0/1 per item, Wilson's interval; pairwise, the share of an item's counted pairs weighted by
their number (so the estimate is the pairwise figure, an item's pairs resampled together),
the percentile bootstrap; RM-Bench, each item's own hard/normal/easy score, items resampled
within their domain and the domains averaged with equal weight. The units are put in a
canonical order before resampling, so the rows' order never moves an interval.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from needlework.figures import metrics, rewardbench2, stats
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


# -- intervals ----------------------------------------------------------------------------


def _by_subset(units: list[tuple[str, float, float]]) -> dict[str, list[tuple[str, float, float]]]:
    out: dict[str, list[tuple[str, float, float]]] = {}
    for unit in units:
        out.setdefault(unit[0], []).append(unit)
    return dict(sorted(out.items()))


def _interval(units: list[tuple[str, float, float]]) -> dict[str, Any]:
    return stats.bootstrap_mean([u[1] for u in units], unit="item",
                                weights=[u[2] for u in units]).as_dict()


def _subset(entry: dict[str, Any]) -> str:
    subset = entry.get("subset")
    return metrics.DEFAULT_SUBSET if subset is None else str(subset)


def bon_intervals(entries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Best-of-n accuracy's 95 % interval (Wilson's: each item 1 or 0), overall and per
    subset (an item with a missing score is 0 and stays in, as in the figure)."""
    units = [(_subset(e), float(metrics.bon_correct(list(e["chosen_scores"] or []),
                                                    list(e["rejected_scores"] or []))), 1.0)
             for e in entries]
    return {"overall": _interval(units),
            "subsets": {name: _interval(part) for name, part in _by_subset(units).items()}}


def pairwise_intervals(entries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Pairwise accuracy's 95 % interval, overall and per subset: items are resampled with
    their counted pairs (an item with no pair where both scores exist is left out, as in
    the figure)."""
    units = []
    for e in entries:
        correct, counted, _ = metrics.pair_outcomes(list(e["chosen_scores"] or []),
                                                    list(e["rejected_scores"] or []))
        if counted:
            units.append((_subset(e), correct / counted, float(counted)))
    return {"overall": _interval(units),
            "subsets": {name: _interval(part) for name, part in _by_subset(units).items()}}


def rmbench_item_score(entry: dict[str, Any]) -> float:
    """One item's RM-Bench score: hard, normal and easy of its own 3×3 wins, averaged (the
    domain's score is the mean of these over its items)."""
    parts = metrics.rmbench_from_matrix(metrics.rmbench_matrix([entry]))
    return parts["score"]


RMBENCH_PARTS = ("hard", "normal", "easy")


def rmbench_intervals(entries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """RM-Bench's 95 % intervals: per domain, and overall (items resampled within their
    domain, the domains' means averaged with equal weight, as the figure is); ``parts``
    gives hard, normal and easy the same way (``{"hard": {"overall", "domains"}, ...}``),
    each item's own share of its 3 comparisons of that kind the unit's value."""
    rows = list(entries)
    labels = [metrics.rmbench_domain(e) for e in rows]
    parts = [metrics.rmbench_from_matrix(metrics.rmbench_matrix([e])) for e in rows]

    def of(key: str) -> dict[str, Any]:
        values = [p[key] for p in parts]
        domains: dict[str, list[float]] = {}
        for domain, value in zip(labels, values, strict=True):
            domains.setdefault(domain, []).append(value)
        return {"overall": stats.bootstrap_mean(values, unit="item", strata=labels).as_dict(),
                "domains": {d: stats.bootstrap_mean(v, unit="item").as_dict()
                            for d, v in domains.items()}}

    score = of("score")
    return {**score, "parts": {key: of(key) for key in RMBENCH_PARTS}}


def intervals(format_name: str, entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The 95 % intervals of :func:`needlework.rewards.runs.dataset_metrics`'s figures:
    ``pairwise`` always, ``bon`` or ``rmbench`` (``{"error"}`` where RM-Bench cannot be
    computed), and ``rewardbench2`` for a RewardBench 2 set
    (:func:`needlework.figures.rewardbench2.intervals`)."""
    out: dict[str, Any] = {"pairwise": pairwise_intervals(entries)}
    if format_name == "rewardbench2":
        try:
            out["rewardbench2"] = rewardbench2.intervals(entries)
        except ValueError as exc:
            out["rewardbench2"] = {"error": str(exc)}
    if format_name == "rmbench":
        try:
            out["rmbench"] = rmbench_intervals(entries)
        except ValueError as exc:
            out["rmbench"] = {"error": str(exc)}
    else:
        out["bon"] = bon_intervals(entries)
    return out


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


def metrics_rows(figures: dict[str, Any],
                 bounds: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Best-of-n and pairwise figures per subset and overall, as numbers (for a CSV), with
    their 95 % intervals (``*_low``, ``*_high``) when ``bounds`` (:func:`intervals`) is given."""
    bon, pair = figures["bon"], figures["pairwise"]

    def ci(kind: str, subset: str | None) -> dict[str, Any]:
        if not bounds or kind not in bounds:
            return {}
        part = bounds[kind]["overall"] if subset is None else \
            bounds[kind]["subsets"].get(subset) or {}
        return {f"{kind}_low": part.get("low"), f"{kind}_high": part.get("high")}

    rows = []
    for subset, m in bon["subsets"].items():
        p = pair["subsets"].get(subset, {})
        rows.append({"subset": subset, "items": m["n"], "missing": m["missing"],
                     "best_of_n_correct": m["correct"], "best_of_n_accuracy": m["accuracy"],
                     **ci("bon", subset), "pairs": p.get("pairs", 0),
                     "pairwise_accuracy": p.get("accuracy"), **ci("pairwise", subset)})
    rows.append({"subset": "overall", "items": bon["n"], "missing": bon["missing"],
                 "best_of_n_correct": bon["correct"], "best_of_n_accuracy": bon["accuracy"],
                 **ci("bon", None), "pairs": pair["pairs"], "pairwise_accuracy": pair["accuracy"],
                 **ci("pairwise", None)})
    return rows


def rmbench_rows(figures: dict[str, Any], bounds: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """RM-Bench's figures per domain and overall, as numbers (for a CSV), with the score's
    95 % interval when ``bounds`` (:func:`intervals`) is given and the comparisons won and
    made behind each figure (``hard_won``, ``hard_of``, …, ``score_of``; overall: in all,
    the figures being means over domains); ``[]`` when RM-Bench could not be computed."""
    rm = figures.get("rmbench") or {}
    if "error" in rm or not rm:
        return []
    ci = (bounds or {}).get("rmbench") or {}

    def won(counts: dict[str, list[int]] | None) -> dict[str, Any]:
        """The comparisons won and made behind each figure (``hard_won``, ``hard_of``, …)."""
        out: dict[str, Any] = {}
        for key in (*RMBENCH_PARTS, "score"):
            pair = (counts or {}).get(key)
            out[f"{key}_won"], out[f"{key}_of"] = (pair[0], pair[1]) if pair else (None, None)
        return out

    rows = []
    for domain, m in rm["domains"].items():
        part = (ci.get("domains") or {}).get(domain) or {}
        rows.append({"domain": domain, "items": m["n"], "missing": m["missing"], "hard": m["hard"],
                     "normal": m["normal"], "easy": m["easy"], "score": m["score"],
                     "score_low": part.get("low"), "score_high": part.get("high"),
                     **won(m.get("counts"))})
    part = ci.get("overall") or {}
    rows.append({"domain": "overall" if rm["comparable"] else "mean over present domains",
                 "items": rm["n"], "missing": rm["missing"], "hard": rm["hard"],
                 "normal": rm["normal"], "easy": rm["easy"], "score": rm["accuracy"],
                 "score_low": part.get("low"), "score_high": part.get("high"),
                 **won(rm.get("counts"))})
    return rows
