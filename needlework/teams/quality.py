"""Quality control: gold items, accuracy on gold, agreement per annotator, active time,
and the reviewer's rankings of annotators and items.

**Gold items** are items whose right answers a reviewer recorded
(:mod:`needlework.teams.gold`: one at a time, from a file, or a share of every queue);
their functions are re-exported here. An annotator's **accuracy on gold** is the share
of gold fields they set that equal the gold value (a ``skip`` verdict is no answer and
is not counted).

**Agreement per annotator** reuses :mod:`needlework.grounding.agreement`: units are
passages (grounding) or comparisons (preference); for each annotator, Cohen's kappa with
every other annotator over the units both coded, averaged weighted by shared units, and
the raw share of equal answers.

**Active time** is read from the change log: consecutive changes by one person less than
:data:`IDLE_SECONDS` apart count the gap as time spent on the item of the later change
(reading it, then labelling it); a longer gap is a pause and counts nothing. Changes in
other datasets interleave, so time is never counted twice.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlite_utils import Database

from needlework.grounding import labels as gl
from needlework.grounding.agreement import Alpha, Kappa, cohen_kappas, krippendorff_alpha
from needlework.teams.gold import (
    AnswerField,
    GoldError,
    answer_fields,
    check_answers,
    default_answers,
    gold_items,
    mark_gold,
    unmark_gold,
)
from needlework.teams.permissions import User, check
from needlework.verdicts import parse_field, verdict_of
from store import assignments as store_assignments
from store import audit as store_audit
from store import gold as store_gold
from store.annotations import dataset_annotations
from store.datasets import get_dataset, item_index

IDLE_SECONDS = 120.0
Unit = tuple[str, int | str]


# --- accuracy on gold ------------------------------------------------------------------

@dataclass(frozen=True)
class GoldScore:
    annotator: str
    items: int  # gold items they answered
    fields: int  # gold fields they set
    correct: int

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.fields if self.fields else None


def _same(field: str, mine: Any, gold: Any) -> bool | None:
    if field.startswith("verdict:"):
        mine = verdict_of(mine)
        return None if mine in (None, "skip") else mine == gold
    return None if mine is None else mine == gold


def gold_scores(rows: Iterable[dict[str, Any]], gold: dict[str, dict[str, Any]]) -> list[GoldScore]:
    """Each annotator's answers on gold items compared with the gold values (pure:
    ``rows`` as :func:`store.annotations.dataset_annotations`, adjudications aside)."""
    seen: dict[str, set[str]] = {}
    counts: dict[str, list[int]] = {}
    for r in rows:
        if r["field"].startswith("final:") or r["item_key"] not in gold:
            continue
        expected = gold[r["item_key"]].get(r["field"])
        if expected is None:
            continue
        same = _same(r["field"], r["value"], expected)
        if same is None:
            continue
        seen.setdefault(r["annotator"], set()).add(r["item_key"])
        tally = counts.setdefault(r["annotator"], [0, 0])
        tally[0] += 1
        tally[1] += int(same)
    return [GoldScore(a, len(seen[a]), n, ok) for a, (n, ok) in sorted(counts.items())]


# --- agreement per annotator -------------------------------------------------------------

def units_of(kind: str, rows: Iterable[Mapping[str, Any]]) -> dict[Unit, dict[str, Any]]:
    """``{(item, unit): {annotator: value}}``: passage labels (grounding) or verdicts
    (preference; skips left out), adjudications aside."""
    units: dict[Unit, dict[str, Any]] = {}
    for r in rows:
        if kind == "grounding":
            number = gl.passage_number(r["field"])
            if number is not None and r["value"] is not None:
                units.setdefault((r["item_key"], number), {})[r["annotator"]] = r["value"]
        elif parse_field(r["field"]) is not None:
            verdict = verdict_of(r["value"])
            if verdict is not None and verdict != "skip":
                units.setdefault((r["item_key"], r["field"]), {})[r["annotator"]] = verdict
    return units


@dataclass(frozen=True)
class AnnotatorAgreement:
    """One annotator against the others: kappa averaged over their pairs (weighted by
    shared units), raw share of equal answers, and the units shared."""

    annotator: str
    kappa: float | None
    agreement: float | None
    units: int
    partners: int


def agreement_by_annotator(kappas: Sequence[Kappa]) -> dict[str, AnnotatorAgreement]:
    """Per-annotator figures from the pairwise kappas of
    :func:`needlework.grounding.agreement.cohen_kappas`."""
    names = sorted({k.a for k in kappas} | {k.b for k in kappas})
    out = {}
    for name in names:
        mine = [k for k in kappas if name in (k.a, k.b) and k.units]
        units = sum(k.units for k in mine)
        weighted = [(k.value, k.units) for k in mine if k.value is not None]
        kappa = (sum(v * n for v, n in weighted) / sum(n for _, n in weighted)
                 if weighted else None)
        agree = (sum((k.agreement or 0.0) * k.units for k in mine) / units) if units else None
        out[name] = AnnotatorAgreement(name, kappa, agree, units, len(mine))
    return out


# --- active time ------------------------------------------------------------------------

def active_seconds(events: Iterable[tuple[str, str, str]],
                   idle: float = IDLE_SECONDS) -> dict[tuple[str, str], float]:
    """``{(dataset, item): seconds}`` from one person's changes ``(at, dataset, item)``
    in time order: each gap up to ``idle`` seconds counts for the later change's item."""
    out: dict[tuple[str, str], float] = {}
    previous: datetime | None = None
    for at, dataset, item in events:
        moment = datetime.fromisoformat(at)
        if previous is not None:
            gap = (moment - previous).total_seconds()
            if 0 <= gap <= idle:
                out[(dataset, item)] = out.get((dataset, item), 0.0) + gap
        out.setdefault((dataset, item), 0.0)
        previous = moment
    return out


def item_times(db: Database, dataset: str, people: Iterable[str],
               idle: float = IDLE_SECONDS) -> dict[str, dict[str, float]]:
    """``{annotator: {item: active seconds}}`` in ``dataset``."""
    out: dict[str, dict[str, float]] = {}
    for who in people:
        times = active_seconds(store_audit.events_by(db, who), idle)
        out[who] = {item: s for (ds, item), s in times.items() if ds == dataset}
    return out


# --- rankings ---------------------------------------------------------------------------

@dataclass(frozen=True)
class AnnotatorQuality:
    annotator: str
    assigned: int
    done: int
    gold_items: int
    gold_fields: int
    gold_accuracy: float | None
    kappa: float | None
    agreement: float | None
    shared_units: int
    active_seconds: float
    timed_items: int
    median_item_seconds: float | None


@dataclass(frozen=True)
class ItemQuality:
    item_key: str
    title: str
    annotators: int  # who answered at least one unit
    units: int  # units answered by two or more
    disputed_units: int
    gold: bool
    gold_errors: int  # wrong answers on this gold item, all annotators
    median_seconds: float | None

    @property
    def disagreement(self) -> float | None:
        return self.disputed_units / self.units if self.units else None


@dataclass(frozen=True)
class QualityReport:
    dataset: str
    alpha: Alpha
    annotators: list[AnnotatorQuality]
    items: list[ItemQuality]


ANNOTATOR_SORTS = ("gold_accuracy", "kappa", "agreement", "median_item_seconds", "done")
ITEM_SORTS = ("disagreement", "gold_errors", "median_seconds")


def quality_report(db: Database, dataset: str, *, actor: User | None = None,
                   idle: float = IDLE_SECONDS) -> QualityReport:
    """Every quality figure of ``dataset``, annotators and items in the default order
    (worst first: lowest gold accuracy, most disputed item). Reviewers and admins."""
    check(db, actor, "quality", dataset)
    row = get_dataset(db, dataset)
    if row is None:
        raise GoldError(f"no dataset named {dataset!r}")
    rows = [r for r in dataset_annotations(db, dataset) if not r["field"].startswith("final:")]
    gold = store_gold.gold_items(db, dataset)
    units = units_of(row["kind"], rows)
    scores = {s.annotator: s for s in gold_scores(rows, gold)}
    agreement = agreement_by_annotator(cohen_kappas(units))
    progress = {r["annotator"]: r for r in store_assignments.progress_by_annotator(db, dataset)}
    people = sorted({r["annotator"] for r in rows} | set(progress))
    times = item_times(db, dataset, people, idle)
    annotators = []
    for who in people:
        mine = times.get(who, {})
        timed = [s for s in mine.values() if s > 0]
        score, agree, prog = scores.get(who), agreement.get(who), progress.get(who, {})
        annotators.append(AnnotatorQuality(
            who, prog.get("assigned", 0), prog.get("done", 0) or 0,
            score.items if score else 0, score.fields if score else 0,
            score.accuracy if score else None, agree.kappa if agree else None,
            agree.agreement if agree else None, agree.units if agree else 0,
            sum(mine.values()), len(timed), statistics.median(timed) if timed else None))
    errors: dict[str, int] = {}
    for r in rows:
        expected = gold.get(r["item_key"], {}).get(r["field"])
        if expected is not None and _same(r["field"], r["value"], expected) is False:
            errors[r["item_key"]] = errors.get(r["item_key"], 0) + 1
    by_item: dict[str, list[dict[str, Any]]] = {}
    for (key, _), votes in units.items():
        by_item.setdefault(key, []).append(votes)
    items = []
    for entry in item_index(db, dataset):
        key = entry["key"]
        item_votes = by_item.get(key, [])
        shared = [v for v in item_votes if len(v) >= 2]
        seconds = [t[key] for t in times.values() if t.get(key)]
        items.append(ItemQuality(
            key, entry["title"] or "", len({a for v in item_votes for a in v}), len(shared),
            sum(1 for v in shared if len(set(map(str, v.values()))) > 1), key in gold,
            errors.get(key, 0), statistics.median(seconds) if seconds else None))
    return QualityReport(dataset, krippendorff_alpha(units), rank_annotators(annotators),
                         rank_items(items))


def _order(value: float | None, worst_high: bool) -> tuple[int, float]:
    if value is None:
        return (1, 0.0)
    return (0, -value if worst_high else value)


def rank_annotators(rows: Sequence[AnnotatorQuality], by: str = "gold_accuracy") -> list[AnnotatorQuality]:
    """Annotators worst first by ``by`` (one of :data:`ANNOTATOR_SORTS`: lowest accuracy,
    kappa, agreement or done; slowest median time); unknown figures last."""
    if by not in ANNOTATOR_SORTS:
        raise ValueError(f"sort annotators by one of {', '.join(ANNOTATOR_SORTS)}")
    worst_high = by == "median_item_seconds"
    return sorted(rows, key=lambda r: (_order(getattr(r, by), worst_high), r.annotator))


def rank_items(rows: Sequence[ItemQuality], by: str = "disagreement") -> list[ItemQuality]:
    """Items worst first by ``by`` (one of :data:`ITEM_SORTS`: most disputed, most
    wrong gold answers, slowest); unknown figures last."""
    if by not in ITEM_SORTS:
        raise ValueError(f"sort items by one of {', '.join(ITEM_SORTS)}")
    return sorted(rows, key=lambda r: (_order(getattr(r, by), True), r.item_key))


__all__ = ["ANNOTATOR_SORTS", "ITEM_SORTS", "AnnotatorAgreement", "AnnotatorQuality", "AnswerField",
           "GoldError", "GoldScore", "ItemQuality", "QualityReport", "active_seconds",
           "agreement_by_annotator", "answer_fields", "check_answers", "default_answers",
           "gold_items", "gold_scores", "item_times", "mark_gold", "quality_report",
           "rank_annotators", "rank_items", "unmark_gold", "units_of"]
