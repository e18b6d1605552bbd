"""Filters over the items of a preference dataset.

Scores come as a plain mapping ``{item_key: {"chosen_scores": [...],
"rejected_scores": [...]}}`` (``None`` where a response was not scored), read by
:func:`store.review.item_scores_map`; an empty mapping means no model has
scored the dataset.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from needlework.review.lengths import ItemFacts
from needlework.review.queue import item_comparisons

REVIEW_STATES = {
    "all": "All",
    "unreviewed": "Not fully reviewed by me",
    "reviewed": "Fully reviewed by me",
    "flipped": "Flipped by me",
}
Scores = Mapping[str, Mapping[str, Sequence[float | None]]]
MyVerdicts = Mapping[tuple[str, int, int], str]


@dataclass(frozen=True)
class Filters:
    """Empty sets mean "any"; token bounds apply to the item's longest response."""

    subsets: frozenset[str] = field(default_factory=frozenset)
    source_subsets: frozenset[str] = field(default_factory=frozenset)
    min_tokens: int | None = None
    max_tokens: int | None = None
    state: str = "all"
    model_disagrees: bool = False


def disagreements(entry: Mapping[str, Any] | None, pairs: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The ``(i, j)`` of ``pairs`` where rejected[j] scored at or above chosen[i]
    (a tie counts as the model disagreeing, as in the benchmarks' strict rule). An entry
    that lists its wrong comparisons itself (``disagree``: ``[[i, j], ...]``, an LLM
    judge's run, see :func:`store.judges.review_scores`) is read as it says."""
    if not entry:
        return []
    if "disagree" in entry:
        wrong = {(int(i), int(j)) for i, j in entry["disagree"] or []}
        return [(i, j) for i, j in pairs if (i, j) in wrong]
    chosen = list(entry.get("chosen_scores") or [])
    rejected = list(entry.get("rejected_scores") or [])
    out = []
    for i, j in pairs:
        if i < len(chosen) and j < len(rejected):
            c, r = chosen[i], rejected[j]
            if c is not None and r is not None and r >= c:
                out.append((i, j))
    return out


def review_state(
    facts: ItemFacts, mine: MyVerdicts, scope: str = "all"
) -> tuple[int, int, bool]:
    """``(reviewed, total, any_flip)`` of my verdicts on the item's comparisons."""
    pairs = item_comparisons(facts.n_chosen, facts.n_rejected, scope)
    verdicts = [mine.get((facts.key, i, j)) for i, j in pairs]
    done = sum(1 for v in verdicts if v is not None)
    return done, len(pairs), any(v == "flip" for v in verdicts)


def matches(
    facts: ItemFacts, filters: Filters, mine: MyVerdicts, scores: Scores, scope: str = "all"
) -> bool:
    """Whether one item passes every filter."""
    if filters.subsets and facts.subset not in filters.subsets:
        return False
    if filters.source_subsets and facts.source_subset not in filters.source_subsets:
        return False
    if filters.min_tokens is not None and facts.longest < filters.min_tokens:
        return False
    if filters.max_tokens is not None and facts.longest > filters.max_tokens:
        return False
    if filters.state != "all":
        done, total, flipped = review_state(facts, mine, scope)
        if filters.state == "unreviewed" and done >= total:
            return False
        if filters.state == "reviewed" and done < total:
            return False
        if filters.state == "flipped" and not flipped:
            return False
    if filters.model_disagrees:
        pairs = item_comparisons(facts.n_chosen, facts.n_rejected, scope)
        if not disagreements(scores.get(facts.key), pairs):
            return False
    return True


def apply_filters(
    items: Iterable[ItemFacts],
    filters: Filters,
    mine: MyVerdicts | None = None,
    scores: Scores | None = None,
    scope: str = "all",
) -> list[ItemFacts]:
    """The items that pass ``filters``, in their order."""
    return [f for f in items if matches(f, filters, mine or {}, scores or {}, scope)]
