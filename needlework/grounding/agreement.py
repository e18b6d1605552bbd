"""Inter-annotator agreement on passage labels and question dimensions.

Krippendorff's alpha (nominal, ``krippendorff`` package) over every unit that at
least two annotators coded (a unit is one passage of one item, or one item for a
dimension); Cohen's kappa (``sklearn.metrics.cohen_kappa_score``) per pair of
annotators over the units both coded. Figures are ``None`` when undefined (fewer
than two annotators, no shared unit, or only one value ever used).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from needlework.grounding.item import DIM_FIELDS
from needlework.grounding.labels import FINAL_PREFIX, passage_number

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
        number = passage_number(row["field"], FINAL_PREFIX)
        if number is not None and row["item_key"] in by_item:
            by_item[row["item_key"]].adjudicated.add(number)
    return list(by_item.values())


@dataclass(frozen=True)
class Report:
    """Every agreement figure of a dataset."""

    annotators: list[str]
    labels: Alpha
    dims: dict[str, Alpha]
    kappas: list[Kappa]
    disagreements: list[Disagreement]


def report(rows: Iterable[dict[str, Any]]) -> Report:
    """Agreement figures from a dataset's annotation rows (``item_key, annotator,
    field, value``; reviewer ``final:`` rows are left out of the figures)."""
    everything = list(rows)
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
