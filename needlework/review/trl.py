"""Reviewed preference data as TRL preference records (benchmarks.md §6).

One record per (chosen[i], rejected[j]) comparison, every comparison of every
item, in import order. The rule (also in docs/review.md):

- ``agree``: kept as the dataset labels it;
- ``flip``: kept with chosen and rejected swapped;
- ``tie`` and ``both-bad``: dropped, or kept as labelled with ``keep_ties``;
- ``skip``: dropped;
- no verdict (unreviewed): kept as the dataset labels it.

Whose verdict counts: the given annotator's; with no annotator, the most
recent verdict on that comparison by anyone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from needlework.formats.pairs import from_preference
from needlework.formats.preference import Preference

Verdicts = Mapping[tuple[str, int, int], str]


def decide(verdict: str | None, keep_ties: bool = False) -> str:
    """What happens to one comparison: ``keep``, ``swap`` or ``drop``."""
    if verdict == "flip":
        return "swap"
    if verdict == "skip":
        return "drop"
    if verdict in ("tie", "both-bad"):
        return "keep" if keep_ties else "drop"
    return "keep"


def trl_records(
    items: Iterable[tuple[str, Preference]],
    verdicts: Verdicts,
    *,
    conversational: bool = False,
    keep_ties: bool = False,
) -> list[dict[str, Any]]:
    """TRL records of ``(item_key, preference)`` items with ``verdicts`` applied
    (``{(item_key, i, j): verdict}``)."""
    out: list[dict[str, Any]] = []
    for key, pref in items:
        for i, j in pref.comparisons():
            action = decide(verdicts.get((key, i, j)), keep_ties)
            if action == "drop":
                continue
            record = from_preference(pref, i, j, conversational=conversational)
            if action == "swap":
                record["chosen"], record["rejected"] = record["rejected"], record["chosen"]
            out.append(record)
    return out


def dump(records: Iterable[dict[str, Any]]) -> str:
    """JSON lines, UTF-8 text kept as is."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def latest_verdicts(rows: Iterable[Mapping[str, Any]], annotator: str | None = None) -> dict[tuple[str, int, int], str]:
    """``{(item, i, j): verdict}`` from rows (``item_key, i, j, annotator, verdict,
    updated_at``): the annotator's, or the most recent by anyone."""
    best: dict[tuple[str, int, int], tuple[str, str]] = {}
    for row in rows:
        if annotator is not None and row["annotator"] != annotator:
            continue
        ident = (row["item_key"], row["i"], row["j"])
        stamp = row.get("updated_at") or ""
        if ident not in best or stamp >= best[ident][0]:
            best[ident] = (stamp, row["verdict"])
    return {k: v for k, (_, v) in best.items()}
