"""Progress of one annotator and the filters of the question list.

An item is **done** for an annotator when every passage has their label and they
wrote an answer (or the deflection); **in progress** when they set anything on it;
**unlabeled** otherwise. **Disagree** means two annotators gave different passage
labels or dimension values on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from needlework.grounding.answer import is_deflection
from needlework.grounding.item import time_sensitivity
from needlework.grounding.labels import ANSWER

UNLABELED, IN_PROGRESS, DONE, DISAGREE = "unlabeled", "in progress", "done", "annotators disagree"
STATES = (UNLABELED, IN_PROGRESS, DONE, DISAGREE)
STATE_ICONS = {UNLABELED: "○", IN_PROGRESS: "◐", DONE: "●"}

TIME = "time"  # pseudo dimension for filters: the combined time sensitivity
DEFLECTION_FILTERS = ("any", "deflected", "answered (not deflected)", "no answer yet",
                      "needs deflection (no ANSWER passage)")


def item_state(n_passages: int, status: dict[str, Any] | None) -> str:
    """``unlabeled``, ``in progress`` or ``done`` for one annotator's ``status`` of an
    item (see :func:`store.grounding.annotator_status`)."""
    if not status or (not status["labels"] and not status["answered"] and not status["dims"]):
        return UNLABELED
    if status["labels"] >= n_passages and status["answered"]:
        return DONE
    return IN_PROGRESS


@dataclass
class ItemFilter:
    """What the question list shows. Dimension filters (``{field: allowed values}``,
    field ``time`` for the time sensitivity) compare the annotator's own value when
    set, else the record's; empty sets mean "any"."""

    dims: dict[str, set[str]] = field(default_factory=dict)
    states: set[str] = field(default_factory=set)
    deflection: str = "any"
    text: str = ""

    def active(self) -> bool:
        """Whether anything is filtered."""
        return bool(any(self.dims.values()) or self.states or self.deflection != "any"
                    or self.text.strip())


def _imported_has_answer(fields: dict[str, Any]) -> bool:
    values = fields.get("evidence_correct")
    return isinstance(values, list) and ANSWER in values


def needs_deflection(summary: dict[str, Any], own_labels: dict[int, str] | None) -> bool:
    """No passage is ANSWER-THE-QUESTION, taking the annotator's label where set and
    the imported label elsewhere."""
    own_labels = own_labels or {}
    imported = summary["fields"].get("evidence_correct")
    imported = imported if isinstance(imported, list) else []
    for number in range(1, summary["n_passages"] + 1):
        label = own_labels.get(number)
        if label is None and number - 1 < len(imported):
            label = imported[number - 1]
        if label == ANSWER:
            return False
    return True


def _deflection_ok(choice: str, summary: dict[str, Any], status: dict[str, Any] | None,
                   own_labels: dict[int, str] | None) -> bool:
    answered = bool(status and status["answered"])
    deflected = bool(status and status["deflected"]) or (
        not answered and is_deflection(str(summary["fields"].get("answer_generate") or "")))
    if choice == "deflected":
        return deflected
    if choice == "answered (not deflected)":
        return answered and not deflected
    if choice == "no answer yet":
        return not answered
    if choice.startswith("needs deflection"):
        return needs_deflection(summary, own_labels)
    return True


def filter_items(
    summaries: Sequence[dict[str, Any]],
    status: dict[str, dict[str, Any]],
    disagree: Iterable[str],
    flt: ItemFilter,
    own_labels: dict[str, dict[int, str]] | None = None,
) -> list[str]:
    """Keys of the items that pass ``flt``, in dataset order."""
    if not flt.active():
        return [summary["key"] for summary in summaries]
    disagree = set(disagree)
    text = flt.text.strip().casefold()
    keys = []
    for summary in summaries:
        key = summary["key"]
        mine = status.get(key)
        if text and text not in summary["title"].casefold() and text not in key.casefold():
            continue
        if flt.states:
            states = {item_state(summary["n_passages"], mine)}
            if key in disagree:
                states.add(DISAGREE)
            if not states & flt.states:
                continue
        if not _dims_ok(flt.dims, summary["fields"], (mine or {}).get("dims", {})):
            continue
        if flt.deflection != "any" and not _deflection_ok(
                flt.deflection, summary, mine, (own_labels or {}).get(key)):
            continue
        keys.append(key)
    return keys


def _dim_value(name: str, fields: dict[str, Any], own: dict[str, Any]) -> str:
    """The annotator's value of a dimension where set, else the record's; ``time`` is
    the combined time sensitivity (static / slow-changing / fast-changing)."""
    if name == TIME:
        return time_sensitivity(_dim_value("question_sensitive", fields, own),
                                _dim_value("question_type", fields, own)) or ""
    value = own.get(name, fields.get(name))
    return value if isinstance(value, str) else ""


def _dims_ok(wanted: dict[str, set[str]], fields: dict[str, Any], own: dict[str, Any]) -> bool:
    return all(not values or _dim_value(name, fields, own) in values
               for name, values in wanted.items())


def counts(summaries: Sequence[dict[str, Any]], status: dict[str, dict[str, Any]]) -> dict[str, int]:
    """``{state: number of items}`` for one annotator."""
    out = {UNLABELED: 0, IN_PROGRESS: 0, DONE: 0}
    for summary in summaries:
        out[item_state(summary["n_passages"], status.get(summary["key"]))] += 1
    return out


def step(keys: Sequence[str], current: str, offset: int, order: Sequence[str]) -> str | None:
    """The key ``offset`` places from ``current`` in the filtered ``keys`` (by dataset
    ``order`` when ``current`` is filtered out); ``None`` past either end."""
    if not keys:
        return None
    if current in keys:
        index = keys.index(current) + offset
        return keys[index] if 0 <= index < len(keys) else None
    position = {k: i for i, k in enumerate(order)}
    here = position.get(current, -1)
    if offset > 0:
        return next((k for k in keys if position[k] > here), None)
    return next((k for k in reversed(keys) if position[k] < here), None)


def next_unfinished(keys: Sequence[str], current: str, summaries_by_key: dict[str, dict[str, Any]],
                    status: dict[str, dict[str, Any]]) -> str | None:
    """The first item after ``current`` in ``keys`` (wrapping around) that the
    annotator has not finished; ``None`` when all are done."""
    if not keys:
        return None
    start = keys.index(current) + 1 if current in keys else 0
    for key in list(keys[start:]) + list(keys[:start]):
        if key == current:
            continue
        if item_state(summaries_by_key[key]["n_passages"], status.get(key)) != DONE:
            return key
    return None
