"""Writing annotators' work back into GaRAGe records on export.

The rule (also in the UI and docs/annotation.md) is :data:`RULE_TEXT` of
:mod:`needlework.grounding.resolve`: per passage and dimension the reviewer's
final value, else the majority (deterministic ties), else the single annotator's,
else the imported value. ``evidence_cited`` is derived from the exported answer's
``[cite_N]`` markers. An item nobody annotated is written back verbatim.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from needlework.formats.garage import DIMENSIONS
from needlework.grounding.answer import cited_numbers, evidence_cited
from needlework.grounding.item import DIM_FIELDS
from needlework.grounding.labels import (
    FINAL_PREFIX,
    LABELS,
    evidence_for,
    final_field,
    imported_label,
    label_field,
)
from needlework.grounding.resolve import resolve, resolve_answer, split_entries
from store.datasets import iter_items
from store.grounding import grouped_annotations


@dataclass(frozen=True)
class ExportProblem:
    """An annotated answer the export cannot write (a marker points to no passage)."""

    item_key: str
    message: str

    def __str__(self) -> str:
        return f"item {self.item_key}: {self.message}"


def _set_aligned(record: dict[str, Any], field: str, index: int, value: str, size: int) -> None:
    values = record.get(field)
    if not isinstance(values, list):
        values = [""] * size
    values = list(values) + [""] * max(0, size - len(values))
    values[index] = value
    record[field] = values


def _apply_labels(record: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    size = len(record.get("grounding") or [])
    for number in range(1, size + 1):
        votes, finals = split_entries(entries, label_field(number), final_field(number))
        if not votes and not finals:
            continue
        resolved = resolve(votes, finals, imported_label(record, number), LABELS)
        if resolved.source in ("imported", "none") or resolved.value not in LABELS:
            continue
        relevant, correct = evidence_for(resolved.value)
        _set_aligned(record, "evidence_relevant", number - 1, relevant, size)
        _set_aligned(record, "evidence_correct", number - 1, correct, size)


def _apply_dims(record: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    touched = False
    for name in DIM_FIELDS:
        votes, finals = split_entries(entries, f"dim:{name}", f"final:dim:{name}")
        if not votes and not finals:
            continue
        order = DIMENSIONS.get(name, ())
        resolved = resolve(votes, finals, record.get(name), order)
        if resolved.source not in ("imported", "none") and isinstance(resolved.value, str):
            record[name] = resolved.value
            touched = True
    if touched and record.get("question_sensitive") == "NO" and record.get("question_type"):
        record["question_type"] = ""


def _apply_answer(record: dict[str, Any], entries: list[dict[str, Any]],
                  problems: list[ExportProblem], key: str) -> None:
    resolved = resolve_answer(entries)
    if resolved is None:
        return
    size = len(record.get("grounding") or [])
    bad = [n for n in cited_numbers(resolved.value) if not 1 <= n <= size]
    if bad:
        markers = ", ".join(f"[cite_{n}]" for n in bad)
        problems.append(ExportProblem(key, f"the answer ({resolved.source}) cites {markers} "
                                      f"but the item has {size} passages"))
    record["answer_generate"] = resolved.value
    record["evidence_cited"] = evidence_cited(resolved.value, size)


def annotate_record(record: dict[str, Any], entries: list[dict[str, Any]], key: str = "",
                    problems: list[ExportProblem] | None = None) -> dict[str, Any]:
    """``record`` with the annotation ``entries`` of its item applied (a copy; the
    record itself when there are no entries that export writes)."""
    relevant = [e for e in entries if e["field"].startswith(("label:", FINAL_PREFIX, "dim:",
                                                             "final:dim:", "answer",
                                                             "final:answer"))]
    if not relevant:
        return record
    out = copy.deepcopy(record)
    _apply_labels(out, relevant)
    _apply_dims(out, relevant)
    _apply_answer(out, relevant, problems if problems is not None else [], key)
    return out


def annotated_records(
    db: Database, dataset: str, items: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[ExportProblem]]:
    """Every item's record with annotations applied, and the problems found."""
    grouped = grouped_annotations(db, dataset)
    problems: list[ExportProblem] = []
    records = [annotate_record(item["record"], grouped.get(item["key"], []), item["key"],
                               problems) for item in items]
    return records, problems


class CitationError(ValueError):
    """Annotated answers cite passages that do not exist: the exported file could not be
    imported again. ``problems`` names each item; the message lists the first ten.
    :func:`needlework.datasets.transfer.export_chunks` raises it as an ``ExportError``."""

    def __init__(self, problems: list[ExportProblem]) -> None:
        self.problems = list(problems)
        shown = "; ".join(str(p) for p in problems[:10])
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        super().__init__(f"{len(problems)} answer(s) cite missing passages: {shown}{more}. "
                         "Fix them on the Annotate page.")


def stream_annotated(db: Database, dataset: str,
                     items: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The records of ``items`` with their annotations applied, one at a time (the
    annotations are read once; the items may be a cursor over the whole dataset).

    Raises :class:`CitationError` after the last record when an annotated answer cites
    a passage that does not exist (the file could not be imported again).
    """
    grouped = grouped_annotations(db, dataset)
    problems: list[ExportProblem] = []
    for item in items:
        yield annotate_record(item["record"], grouped.get(item["key"], []), item["key"], problems)
    if problems:
        raise CitationError(problems)


def apply_annotations(db: Database, dataset: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of ``items`` with their annotations applied by the export rule.

    Raises :class:`CitationError` when an annotated answer cites a passage that does
    not exist (the file could not be imported again).
    """
    return list(stream_annotated(db, dataset, items))


def human_answers(db: Database, dataset: str) -> dict[str, str]:
    """``{item key (sample_id): human answer}`` as an export would write it (the
    annotated answer by the export rule, else the imported ``answer_generate``)."""
    items = list(iter_items(db, dataset))
    records, _ = annotated_records(db, dataset, items)
    return {item["key"]: str(record.get("answer_generate") or "")
            for item, record in zip(items, records, strict=True)}
