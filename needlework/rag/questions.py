"""A grounding dataset's questions as answer evaluation sees them.

Everything annotators decided is read **adjudicated first**, by the export rule of
:mod:`needlework.grounding.resolve` (a reviewer's ``final:`` value, else the majority
of annotators, else the single annotator's, else the imported value): the *reference*
answer is the answer an export would write (else the record's ``answer_generate``),
and each passage's label likewise.

From that:

- the **relevant passages** (uRAF's context) are those labelled
  ``ANSWER-THE-QUESTION``, ``RELATED-INFORMATION`` or ``UNKNOWN``: relevant and not
  superseded (**our rule**: the GaRAGe paper's uRAF rewards answers grounded in
  "relevant and fresh" passages and names outdated passages as what it penalises);
- a question **needs a deflection** when none of its passages is
  ``ANSWER-THE-QUESTION`` (docs/benchmarks.md §1, our rule);
- a question is **evaluated** when it has a reference answer and at least one
  labelled passage; the others are listed with the reason, never dropped silently;
- its **breakdown dimensions**: time sensitivity, complexity, popularity, category,
  provider (``web`` for ``question_tag = web``, ``enterprise`` for the private
  collections ``arxiv``, ``sec``, ``devops``, ``enron``; without a tag, from the
  passages' providers), deflection (``needs deflection`` / ``answerable``) and
  grounding quality (:func:`grounding_quality`: the share of its labelled passages
  that are relevant, in GaRAGe's three bins).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from needlework.formats import garage
from needlework.grounding.export import annotated_records
from needlework.grounding.item import time_sensitivity
from needlework.grounding.labels import (
    ANSWER,
    IRRELEVANT,
    RELATED,
    UNKNOWN,
    imported_label,
    needs_deflection,
)
from store.datasets import get_dataset, iter_items

#: Labels whose passages form uRAF's context (see the module docstring).
RELEVANT_LABELS: tuple[str, ...] = (ANSWER, RELATED, UNKNOWN)
ENTERPRISE_TAGS = frozenset({"arxiv", "sec", "devops", "enron", "ent", "enterprise"})
NOT_SET = "(not set)"
NEEDS_DEFLECTION = "needs deflection"
ANSWERABLE = "answerable"

#: The breakdown dimensions, in the order tables show them: ``name -> title``.
DIMENSIONS: dict[str, str] = {
    "time": "Time sensitivity",
    "complexity": "Complexity",
    "popularity": "Popularity",
    "category": "Category",
    "provider": "Provider",
    "deflection": "Deflection",
    "grounding": "Grounding quality",
}
#: GaRAGe's bins of grounding quality (its analysis, figure 6), low to high; see :func:`grounding_quality`.
GROUNDING_BINS: tuple[str, ...] = ("low (<33% relevant)", "medium (33-66% relevant)",
                                   "high (≥66% relevant)")
_MARKER = re.compile(r"\s*\[cite_\d+\]")


class DatasetError(ValueError):
    """The dataset does not exist or is not a grounding dataset."""


@dataclass(frozen=True)
class RagPassage:
    """One grounding passage: 1-based ``number``, text, provider and adjudicated label
    (``None``: not labelled)."""

    number: int
    text: str
    provider: str
    date: str
    label: str | None


@dataclass(frozen=True)
class RagQuestion:
    """One question with its reference answer, passages and dimensions."""

    key: str
    question: str
    question_date: str
    reference: str
    related: str
    passages: tuple[RagPassage, ...]
    dims: dict[str, str]

    @property
    def relevant(self) -> tuple[RagPassage, ...]:
        """The passages of uRAF's context (:data:`RELEVANT_LABELS`)."""
        return tuple(p for p in self.passages if p.label in RELEVANT_LABELS)

    @property
    def labelled(self) -> bool:
        return any(p.label is not None for p in self.passages)

    @property
    def needs_deflection(self) -> bool:
        return needs_deflection({p.number: p.label for p in self.passages})

    @property
    def skip_reason(self) -> str | None:
        """Why the question is not evaluated, or ``None`` when it is."""
        missing = []
        if not self.reference.strip():
            missing.append("no human answer")
        if not self.labelled:
            missing.append("no passage labelled")
        return "not annotated: " + ", ".join(missing) if missing else None

    def references(self, with_related: bool = False) -> list[str]:
        """The reference answers for BERGEN's metrics: the human answer (and
        ``answer_related_info`` when asked and present), citation markers removed."""
        refs = [self.reference] + ([self.related] if with_related and self.related.strip() else [])
        return [strip_markers(r) for r in refs]


def strip_markers(text: str) -> str:
    """``text`` without its ``[cite_N]`` markers (and the space before each): BERGEN's
    metrics compare words, and a marker is not one (**our rule**)."""
    return _MARKER.sub("", text)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def provider(record: dict[str, Any]) -> str:
    """``web`` or ``enterprise`` (see the module docstring), ``(not set)`` when unknown."""
    tag = _text(record.get("question_tag")).strip().lower()
    if tag == "web":
        return "web"
    if tag in ENTERPRISE_TAGS:
        return "enterprise"
    kinds = {_text(p.get("provider")).strip().lower() for p in record.get("grounding") or []
             if isinstance(p, dict)} - {""}
    if kinds == {"web"}:
        return "web"
    if kinds and kinds <= ENTERPRISE_TAGS:
        return "enterprise"
    return NOT_SET


def grounding_quality(labels: dict[int, str | None]) -> str:
    """The question's grounding-quality bin (:data:`GROUNDING_BINS`): the share of its
    labelled passages that are relevant to it, that is labelled anything but
    ``irrelevant`` (GaRAGe's ``evidence_relevant`` YES; OUTDATED counts as relevant here,
    unlike uRAF's context): ``low`` under 33 %, ``medium`` from 33 % to under 66 %,
    ``high`` from 66 %, as GaRAGe bins its questions (its analysis, "Grounding quality").
    Unlabelled passages are not counted; with none labelled, ``(not set)``. Computed in
    whole numbers (no rounding at the edges)."""
    labelled = [label for label in labels.values() if label is not None]
    if not labelled:
        return NOT_SET
    relevant = sum(1 for label in labelled if label != IRRELEVANT)
    if 100 * relevant < 33 * len(labelled):
        return GROUNDING_BINS[0]
    if 100 * relevant < 66 * len(labelled):
        return GROUNDING_BINS[1]
    return GROUNDING_BINS[2]


def question_from_record(key: str, record: dict[str, Any]) -> RagQuestion:
    """The :class:`RagQuestion` of one (already adjudicated) GaRAGe record."""
    passages = []
    for number, raw in enumerate(record.get("grounding") or [], start=1):
        raw = raw if isinstance(raw, dict) else {}
        passages.append(RagPassage(number, garage.passage_text(raw, number),
                                   _text(raw.get("provider")), _text(raw.get("date")),
                                   imported_label(record, number)))
    labels = {p.number: p.label for p in passages}
    dims = {
        "time": time_sensitivity(record.get("question_sensitive"), record.get("question_type"))
        or NOT_SET,
        "complexity": _text(record.get("question_complexity")) or NOT_SET,
        "popularity": _text(record.get("question_popularity")) or NOT_SET,
        "category": _text(record.get("question_category")) or NOT_SET,
        "provider": provider(record),
        "deflection": NEEDS_DEFLECTION if needs_deflection(labels) else ANSWERABLE,
        "grounding": grounding_quality(labels),
    }
    return RagQuestion(key=key, question=_text(record.get("question")),
                       question_date=_text(record.get("question_date")),
                       reference=_text(record.get("answer_generate")),
                       related=_text(record.get("answer_related_info")),
                       passages=tuple(passages), dims=dims)


def load_questions(db: Any, dataset: str) -> list[RagQuestion]:
    """Every question of ``dataset`` in import order, annotations applied by the export
    rule (adjudicated values first). Raises :class:`DatasetError` for a missing or
    non-grounding dataset."""
    row = get_dataset(db, dataset)
    if row is None:
        raise DatasetError(f"no dataset {dataset!r}")
    if row["kind"] != "grounding":
        raise DatasetError(f"{dataset!r} is a {row['kind']} dataset, not a grounding one")
    items = list(iter_items(db, dataset))
    records, _ = annotated_records(db, dataset, items)
    return [question_from_record(item["key"], record)
            for item, record in zip(items, records, strict=True)]
