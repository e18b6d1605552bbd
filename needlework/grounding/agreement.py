"""Inter-annotator agreement on passage labels and question dimensions.

Krippendorff's alpha (nominal, ``krippendorff`` package) over every unit that at
least two annotators coded (a unit is one passage of one item, or one item for a
dimension); Cohen's kappa (``sklearn.metrics.cohen_kappa_score``) per pair of
annotators over the units both coded. Figures are ``None`` when undefined (fewer
than two annotators, no shared unit, or only one value ever used).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from sqlite_utils import Database

from needlework.grounding.item import DIM_FIELDS
from needlework.grounding.labels import FINAL_PREFIX, passage_number
from store import grounding as sg

Unit = tuple[str, int | str]  # (item_key, passage number or dimension field)


@dataclass(frozen=True)
class Alpha:
    """Krippendorff's alpha with the number of pairable units; ``note`` says why
    ``value`` is ``None``."""

    value: float | None
    units: int
    note: str = ""


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa of one pair of annotators over ``units`` shared units."""

    a: str
    b: str
    value: float | None
    units: int
    agreement: float | None  # raw proportion of equal labels


@dataclass
class Disagreement:
    """One item where annotators disagree: the passages and dimensions in dispute,
    each with ``{annotator: value}``, and which of them a reviewer has settled."""

    item_key: str
    passages: dict[int, dict[str, Any]] = field(default_factory=dict)
    dims: dict[str, dict[str, Any]] = field(default_factory=dict)
    adjudicated: set[int] = field(default_factory=set)


def label_units(rows: Iterable[dict[str, Any]]) -> dict[Unit, dict[str, Any]]:
    """Passage-label units from annotation rows (``item_key, annotator, field,
    value``): ``{(item, N): {annotator: label}}``."""
    units: dict[Unit, dict[str, Any]] = {}
    for row in rows:
        number = passage_number(row["field"])
        if number is not None and row["value"] is not None:
            units.setdefault((row["item_key"], number), {})[row["annotator"]] = row["value"]
    return units


def dim_units(rows: Iterable[dict[str, Any]], name: str) -> dict[Unit, dict[str, Any]]:
    """Units of one dimension: ``{(item, name): {annotator: value}}``."""
    units: dict[Unit, dict[str, Any]] = {}
    wanted = f"dim:{name}"
    for row in rows:
        if row["field"] == wanted and row["value"] is not None:
            units.setdefault((row["item_key"], name), {})[row["annotator"]] = row["value"]
    return units


def krippendorff_alpha(units: dict[Unit, dict[str, Any]]) -> Alpha:
    """Nominal alpha over the units coded by at least two annotators."""
    import krippendorff  # noqa: PLC0415  (numpy-heavy; only when figures are asked for)
    import numpy as np  # noqa: PLC0415

    pairable = {u: v for u, v in units.items() if len(v) >= 2}
    if not pairable:
        return Alpha(None, 0, "no unit has two annotators")
    coders = sorted({a for votes in pairable.values() for a in votes})
    values = sorted({str(v) for votes in pairable.values() for v in votes.values()})
    if len(values) < 2:
        return Alpha(None, len(pairable), "only one value used: alpha is undefined")
    code = {v: float(i) for i, v in enumerate(values)}
    data = np.full((len(coders), len(pairable)), np.nan)
    for j, votes in enumerate(pairable.values()):
        for i, coder in enumerate(coders):
            if coder in votes:
                data[i, j] = code[str(votes[coder])]
    value = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    return Alpha(None if math.isnan(value) else value, len(pairable))


def cohen_kappas(units: dict[Unit, dict[str, Any]]) -> list[Kappa]:
    """Cohen's kappa for every pair of annotators (names sorted) over shared units."""
    from sklearn.metrics import cohen_kappa_score  # noqa: PLC0415

    coders = sorted({a for votes in units.values() for a in votes})
    out = []
    for a, b in combinations(coders, 2):
        pairs = [(str(v[a]), str(v[b])) for v in units.values() if a in v and b in v]
        if not pairs:
            out.append(Kappa(a, b, None, 0, None))
            continue
        left, right = [p[0] for p in pairs], [p[1] for p in pairs]
        agreement = sum(x == y for x, y in pairs) / len(pairs)
        if len(set(left) | set(right)) < 2:
            out.append(Kappa(a, b, None, len(pairs), agreement))
            continue
        value = float(cohen_kappa_score(left, right))
        out.append(Kappa(a, b, None if math.isnan(value) else value, len(pairs), agreement))
    return out


def disagreements(rows: Iterable[dict[str, Any]]) -> list[Disagreement]:
    """Items where two annotators gave different passage labels or dimension values,
    in item-key order of first appearance."""
    rows = list(rows)
    by_item: dict[str, Disagreement] = {}
    for (key, number), votes in label_units(rows).items():
        if len(set(map(str, votes.values()))) > 1:
            by_item.setdefault(key, Disagreement(key)).passages[int(number)] = votes
    for name in DIM_FIELDS:
        for (key, _), votes in dim_units(rows, name).items():
            if len(set(map(str, votes.values()))) > 1:
                by_item.setdefault(key, Disagreement(key)).dims[name] = votes
    for row in rows:
        final = passage_number(row["field"], FINAL_PREFIX)
        if final is not None and row["item_key"] in by_item:
            by_item[row["item_key"]].adjudicated.add(final)
    return list(by_item.values())


@dataclass(frozen=True)
class Report:
    """Every agreement figure of a dataset."""

    annotators: list[str]
    labels: Alpha
    dims: dict[str, Alpha]
    kappas: list[Kappa]
    disagreements: list[Disagreement]


def counts(row: Mapping[str, Any], assignees: Mapping[str, Collection[str]] | None) -> bool:
    """Whether an annotation row is an agreement vote: on an item assigned to its
    annotator, or one nobody is assigned (``assignees``: ``{item_key: annotators}``)."""
    if not assignees or row["item_key"] not in assignees:
        return True
    return row["annotator"] in assignees[row["item_key"]]


def report(rows: Iterable[dict[str, Any]],
           assignees: Mapping[str, Collection[str]] | None = None) -> Report:
    """Agreement figures from a dataset's annotation rows (``item_key, annotator,
    field, value``; reviewer ``final:`` rows are left out of the figures, and so is a
    label on an item assigned to others, see :func:`counts`)."""
    everything = [r for r in rows if r["field"].startswith("final:") or counts(r, assignees)]
    rows = [r for r in everything if not r["field"].startswith("final:")]
    units = label_units(rows)
    coders = sorted({r["annotator"] for r in rows
                     if r["field"].startswith(("label:", "dim:"))})
    return Report(
        annotators=coders,
        labels=krippendorff_alpha(units),
        dims={name: krippendorff_alpha(dim_units(rows, name)) for name in DIM_FIELDS},
        kappas=cohen_kappas(units),
        disagreements=disagreements(everything),
    )


# --- the same figures from the sums SQL keeps (store.migrations m010) ---------------------


@dataclass(frozen=True)
class Figures:
    """Agreement figures of a dataset, read from what SQL keeps as labels are written:
    the same numbers :func:`report` computes from every annotation row."""

    annotators: list[str]
    labels: Alpha
    dims: dict[str, Alpha]
    kappas: list[Kappa]

    @property
    def overlap(self) -> bool:
        """Whether any passage or dimension has two annotators (else nothing to agree on)."""
        return bool(self.labels.units or any(a.units for a in self.dims.values()))


def alpha_from_pairs(pairs: Iterable[tuple[str, str, int, int]]) -> Alpha:
    """Nominal Krippendorff's alpha from coincidence sums ``(a, b, m, n)``: over units
    with ``m`` coders, n = the sum of n_a * n_b (n_a * (n_a - 1) when a = b);
    o_ab = sum over m of n / (m - 1), and alpha = 1 - (N - 1) * sum_{a != b} o_ab /
    sum_{a != b} n_a * n_b with n_a = sum_b o_ab, N = sum_a n_a."""
    o: dict[tuple[str, str], float] = {}
    per_m: dict[int, int] = {}
    for a, b, m, n in pairs:
        if n and m >= 2:
            o[(a, b)] = o.get((a, b), 0.0) + n / (m - 1)
            per_m[m] = per_m.get(m, 0) + n
    units = round(sum(total / (m * (m - 1)) for m, total in per_m.items()))
    if not units:
        return Alpha(None, 0, "no unit has two annotators")
    totals: dict[str, float] = {}
    for (a, _), value in o.items():
        totals[a] = totals.get(a, 0.0) + value
    values = [v for v, t in totals.items() if t > 0]
    if len(values) < 2:
        return Alpha(None, units, "only one value used: alpha is undefined")
    n_all = sum(totals.values())
    observed = sum(v for (a, b), v in o.items() if a != b)
    expected = sum(totals[a] * totals[b] for a in values for b in values if a != b)
    value = 1 - (n_all - 1) * observed / expected
    return Alpha(None if math.isnan(value) else value, units)


def kappas_from_confusion(coders: Iterable[str],
                          rows: Iterable[tuple[str, str, str, str, int]]) -> list[Kappa]:
    """Cohen's kappa for every pair of ``coders`` (sorted) from confusion counts ``(x, y,
    label of x, label of y, units)``, x < y: p_o the share of equal labels, p_e = sum over
    labels of the two annotators' shares of it, kappa = (p_o - p_e) / (1 - p_e)."""
    table: dict[tuple[str, str], dict[tuple[str, str], int]] = {}
    for x, y, vx, vy, n in rows:
        if n:
            cell = table.setdefault((x, y), {})
            cell[(vx, vy)] = cell.get((vx, vy), 0) + n
    out = []
    for a, b in combinations(sorted(set(coders)), 2):
        cells = table.get((a, b), {})
        total = sum(cells.values())
        if not total:
            out.append(Kappa(a, b, None, 0, None))
            continue
        agreement = sum(n for (x, y), n in cells.items() if x == y) / total
        left: dict[str, int] = {}
        right: dict[str, int] = {}
        for (x, y), n in cells.items():
            left[x] = left.get(x, 0) + n
            right[y] = right.get(y, 0) + n
        if len(set(left) | set(right)) < 2:
            out.append(Kappa(a, b, None, total, agreement))
            continue
        chance = sum(left.get(v, 0) * right.get(v, 0) for v in set(left) | set(right)) / total ** 2
        value = (agreement - chance) / (1 - chance) if chance < 1 else math.nan
        out.append(Kappa(a, b, None if math.isnan(value) else value, total, agreement))
    return out


def figures(db: Database, dataset: str) -> Figures:
    """Every agreement figure of ``dataset``, from the sums SQL keeps up to date (reads
    a few rows per value and annotator pair, however large the dataset)."""
    by_scope: dict[str, list[tuple[str, str, int, int]]] = {}
    for scope, a, b, m, n in sg.agreement_pairs(db, dataset):
        by_scope.setdefault(scope, []).append((a, b, m, n))
    return Figures(
        annotators=sg.coders(db, dataset),
        labels=alpha_from_pairs(by_scope.get("label", [])),
        dims={name: alpha_from_pairs(by_scope.get(f"dim:{name}", [])) for name in DIM_FIELDS},
        kappas=kappas_from_confusion(sg.coders(db, dataset, labels_only=True),
                                     sg.agreement_confusion(db, dataset)),
    )


def disputes_of(db: Database, dataset: str, keys: Iterable[str]) -> list[Disagreement]:
    """What is in dispute on each of ``keys`` (a page of the list), in their order."""
    keys = list(keys)
    found = {d.item_key: d for d in disagreements(sg.items_annotations(db, dataset, keys))}
    return [found[k] for k in keys if k in found]
