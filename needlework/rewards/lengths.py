"""Before scoring: which rendered inputs of a dataset are longer than the model's window.

The reward page shows this report before a run and asks what to do with the long ones
(skip, keep the end, keep the start); nothing is cut silently. Reports are remembered
per (model, template, window, dataset version).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from needlework.formats import Preference
from needlework.rewards.templates import render

if TYPE_CHECKING:
    from needlework.rewards.loading import RewardModel


@dataclass(frozen=True)
class LongInput:
    """One response whose rendered text is longer than the window."""

    item: str
    response: str  # chosen[i] / rejected[j]
    n_tokens: int


@dataclass
class LengthReport:
    """Token counts of every rendered (prompt, response) of a dataset against the window."""

    window: int | None
    texts: int
    longest: int
    too_long: list[LongInput] = field(default_factory=list)

    @property
    def items(self) -> int:
        """How many items have at least one response over the window."""
        return len({t.item for t in self.too_long})


def _responses(pref: Preference) -> list[tuple[str, str]]:
    return ([(f"chosen[{i}]", r) for i, r in enumerate(pref.chosen)]
            + [(f"rejected[{j}]", r) for j, r in enumerate(pref.rejected)])


def length_report(rm: RewardModel, items: Sequence[tuple[str, Preference]],
                  max_length: int | None = None) -> LengthReport:
    """Render and tokenize every response as the scorer will; list those over the window."""
    limits = [x for x in (max_length, rm.facts.context_length) if x]
    window = min(limits) if limits else None
    names: list[tuple[str, str]] = []
    texts: list[str] = []
    add_special = False
    for key, pref in items:
        for name, response in _responses(pref):
            shown = render(rm.tokenizer, pref.prompt, response, locate=False)
            add_special = shown.add_special_tokens
            names.append((key, name))
            texts.append(shown.text)
    lengths: list[int] = []
    for start in range(0, len(texts), 64):
        enc = rm.tokenizer(texts[start:start + 64], add_special_tokens=add_special, verbose=False)
        lengths.extend(len(ids) for ids in enc["input_ids"])
    too_long = [LongInput(k, n, t) for (k, n), t in zip(names, lengths, strict=True)
                if window is not None and t > window]
    return LengthReport(window, len(texts), max(lengths, default=0), too_long)


_LENGTHS: OrderedDict[tuple, LengthReport] = OrderedDict()
_LENGTHS_LOCK = threading.Lock()


def cached_length_report(rm: RewardModel, dataset_row: dict[str, Any],
                         load_items: Callable[[], Sequence[tuple[str, Preference]]]) -> LengthReport:
    """:func:`length_report`, remembered per (model, template, dataset version)."""
    key = (rm.facts.fingerprint, rm.facts.template_id, rm.facts.context_length,
           dataset_row["name"], dataset_row.get("created_at"), dataset_row.get("items"))
    with _LENGTHS_LOCK:
        if key in _LENGTHS:
            return _LENGTHS[key]
    report = length_report(rm, load_items())
    with _LENGTHS_LOCK:
        _LENGTHS[key] = report
        while len(_LENGTHS) > 32:
            _LENGTHS.popitem(last=False)
    return report
