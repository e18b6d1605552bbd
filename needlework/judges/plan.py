"""A dataset's items as judge *trials*: one prompt each, with what a right answer is.

Modes:

- ``selection``: the judge sees the prompt and a group of candidates and names the
  best. An item with one chosen response is one group (Long-form RewardBench: the
  chosen and its 3 rejected; pairs and needles: 2). An item with several chosen
  responses (RM-Bench's 3 × 3) is judged pair by pair: one group per (chosen i,
  rejected j). The order shown is

  * ``order="shuffle"``: one permutation per group, drawn from a generator seeded
    with (seed, item key, group), so it is the same on every run and machine and
    does not depend on the other items; or
  * ``order="rotations"``: every rotation of the group (each candidate appears once
    in every position; for a pair, both orders), so position bias can be measured
    and cancels in the accuracy.

  A trial is right iff the judge names a chosen response.
- ``scoring``: one trial per response, scored alone.

Prompts are rendered from the run's template (:mod:`.prompts`; the paper's by default).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from needlework.formats import preference_view
from needlework.formats.preference import Preference
from needlework.judges.context import Fit, fit_prompt
from needlework.judges.prompts import scoring_messages, selection_messages
from needlework.judges.templates import Template
from store.datasets import get_dataset, iter_items

MODES = ("selection", "scoring")
ORDERS = ("shuffle", "rotations")


@dataclass(frozen=True)
class Member:
    """A candidate response: ``side`` is ``chosen`` or ``rejected``, ``index`` its place there."""

    side: str
    index: int

    @property
    def label(self) -> str:
        return f"{self.side}[{self.index}]"


@dataclass
class Trial:
    """One prompt to a judge. Selection: ``members`` in the order shown, ``rotation``
    (or ``None`` for a shuffle), ``group`` within the item. Scoring: one member."""

    item_key: str
    subset: str
    trial: int
    mode: str
    group: int
    members: tuple[Member, ...]
    rotation: int | None
    messages: list[dict[str, str]]
    fit: Fit
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def chosen_positions(self) -> tuple[int, ...]:
        return tuple(k for k, m in enumerate(self.members) if m.side == "chosen")

    @property
    def skipped(self) -> bool:
        return self.fit.skipped


class DatasetNotFound(LookupError):
    """The named dataset is not in the store."""


def load_items(db: Any, dataset: str) -> tuple[dict[str, Any], list[tuple[str, Preference]]]:
    """The dataset row and its items as ``(item key, Preference)``, in import order
    (preference and needle datasets)."""
    row = get_dataset(db, dataset)
    if row is None:
        raise DatasetNotFound(
            f"no dataset named {dataset!r} in the store: import it first "
            "(python -m needlework import FILE --dataset NAME), or check --db")
    if row["kind"] not in ("preference", "needle"):
        raise DatasetNotFound(f"dataset {dataset!r} is a {row['kind']} dataset: a judge needs "
                              "preference or needle items")
    return row, [(item["key"], preference_view(row["format"], item["record"]))
                 for item in iter_items(db, dataset)]


def groups(pref: Preference) -> list[tuple[Member, ...]]:
    """The candidate groups of an item in selection mode (see the module docstring)."""
    chosen = [Member("chosen", i) for i in range(len(pref.chosen))]
    rejected = [Member("rejected", j) for j in range(len(pref.rejected))]
    if not chosen or not rejected:
        return []
    if len(chosen) == 1:
        return [tuple(chosen + rejected)]
    return [(c, r) for c in chosen for r in rejected]


def orders(group: tuple[Member, ...], order: str, seed: int, item_key: str,
           g: int) -> list[tuple[tuple[Member, ...], int | None]]:
    """The orders a group is shown in: ``[(members in order, rotation or None)]``."""
    if order == "rotations":
        n = len(group)
        return [(tuple(group[(k - r) % n] for k in range(n)), r) for r in range(n)]
    if order == "shuffle":
        rng = random.Random(f"{seed}:{item_key}:{g}")
        shown = list(group)
        rng.shuffle(shown)
        return [(tuple(shown), None)]
    raise ValueError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")


def _text(pref: Preference, m: Member) -> str:
    return (pref.chosen if m.side == "chosen" else pref.rejected)[m.index]


def plan_trials(items: Sequence[tuple[str, Preference]], mode: str, *, order: str = "shuffle",
                seed: int = 0, window: int | None = None, reserve: int = 512,
                policy: str = "skip", template: Template | None = None) -> list[Trial]:
    """Every trial of ``items`` (``(item key, Preference)``) in ``mode``, prompts fitted,
    rendered from ``template`` (the mode's default when ``None``)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    trials: list[Trial] = []
    for key, pref in items:
        k = 0
        if mode == "selection":
            for g, group in enumerate(groups(pref)):
                for shown, rotation in orders(group, order, seed, key, g):
                    def render(texts: Sequence[str], prompt: str = pref.prompt) -> list[dict[str, str]]:
                        return selection_messages(prompt, texts, template)

                    fit = fit_prompt(render, [_text(pref, m) for m in shown], window=window,
                                     reserve=reserve, policy=policy)
                    trials.append(Trial(key, pref.subset, k, mode, g, shown, rotation,
                                        render(fit.responses), fit, dict(pref.meta)))
                    k += 1
        else:
            members = [Member("chosen", i) for i in range(len(pref.chosen))]
            members += [Member("rejected", j) for j in range(len(pref.rejected))]
            for m in members:
                def render_one(texts: Sequence[str], prompt: str = pref.prompt) -> list[dict[str, str]]:
                    return scoring_messages(prompt, texts[0], template)

                fit = fit_prompt(render_one, [_text(pref, m)], window=window, reserve=reserve,
                                 policy=policy)
                trials.append(Trial(key, pref.subset, k, mode, k, (m,), None,
                                    render_one(fit.responses), fit, dict(pref.meta)))
                k += 1
    return trials


def select_items(items: Sequence[tuple[str, Preference]], *, subsets: Sequence[str] | None = None,
                 per_subset: int | None = None) -> list[tuple[str, Preference]]:
    """Part of a dataset, to try a judge on a few items first: the items of ``subsets``
    (all when ``None`` or empty), at most ``per_subset`` of each subset (the first ones in
    import order; all when ``None``). Every subset stays represented, so accuracy and the
    invalid rate are still reported per subset. Needle items (a length and a position
    each): ``per_subset`` pairs of each length, a seeded sample spread over the positions
    (:func:`needlework.needle.subset.stratified_needles`), not the first ones."""
    if per_subset is not None and per_subset < 1:
        raise ValueError(f"items per subset must be at least 1, got {per_subset}")
    needles = items and all(p.meta.get("tagged_position") is not None
                            and p.meta.get("length_tokens") is not None for _, p in items)
    if per_subset is not None and needles:
        from needlework.needle.subset import stratified_needles  # noqa: PLC0415

        kept = [(k, p) for k, p in items if not subsets or p.subset in set(subsets)]
        return stratified_needles(kept, [p.meta for _, p in kept], per_subset)
    wanted = set(subsets or ())
    taken: dict[str, int] = {}
    out = []
    for key, pref in items:
        if wanted and pref.subset not in wanted:
            continue
        if per_subset is not None and taken.get(pref.subset, 0) >= per_subset:
            continue
        taken[pref.subset] = taken.get(pref.subset, 0) + 1
        out.append((key, pref))
    return out
