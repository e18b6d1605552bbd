"""Which value an export writes when several people annotated a field.

The export rule, per passage label (and the same for each question dimension):

1. **final**: a reviewer's adjudicated value (``final:label:N`` / ``final:dim:FIELD``);
   when several reviewers set one, the most recent wins.
2. **majority**: else the value most annotators gave (``label:N`` / ``dim:FIELD``).
   **Ties** go to the imported value when it is one of the tied values, else to the
   tied value that comes first in the fixed order (labels: irrelevant,
   ANSWER-THE-QUESTION, RELATED-INFORMATION, OUTDATED, UNKNOWN; dimensions: the
   order of their allowed values).
3. **single**: else the one annotator's value.
4. **imported**: else the record keeps its imported value.

The answer: the reviewer's ``final:answer`` if set, else the only annotator's
answer, else (several annotators) the most recently saved one; no annotator
answer keeps the imported ``answer_generate`` (and ``evidence_cited``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

RULE_TEXT = (
    "Export writes, per passage label and per question dimension: the reviewer's final "
    "value where one exists (latest reviewer wins); else the majority of annotators "
    "(a tie goes to the imported value if it is tied, else to the first tied value in "
    "the fixed label order irrelevant, ANSWER-THE-QUESTION, RELATED-INFORMATION, "
    "OUTDATED, UNKNOWN); else the single annotator's; else the imported value. "
    "The answer: the reviewer's chosen answer, else the only annotator's, else the most "
    "recently saved one; evidence_cited is derived from its [cite_N] markers."
)


@dataclass(frozen=True)
class Resolved:
    """The value an export writes and why: ``source`` is ``final``, ``majority``,
    ``tie``, ``single``, ``imported`` or ``none``; ``votes`` maps annotator → value."""

    value: Any
    source: str
    votes: dict[str, Any] = field(default_factory=dict)


def latest(entries: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The entry with the greatest ``updated_at`` (then annotator name), or ``None``."""
    best = None
    for entry in entries:
        if best is None or (entry["updated_at"], entry["annotator"]) > (
            best["updated_at"], best["annotator"]
        ):
            best = entry
    return best


def resolve(
    votes: dict[str, Any],
    finals: Sequence[dict[str, Any]],
    imported: Any,
    order: Sequence[Any],
) -> Resolved:
    """Apply the export rule to one field. ``finals`` are reviewer entries
    (``annotator``, ``value``, ``updated_at``); ``order`` breaks ties."""
    final = latest(finals)
    if final is not None:
        return Resolved(final["value"], "final", dict(votes))
    if not votes:
        return Resolved(imported, "imported" if imported not in (None, "") else "none", {})
    if len(votes) == 1:
        return Resolved(next(iter(votes.values())), "single", dict(votes))
    counts = Counter(votes.values())
    top = max(counts.values())
    tied = [value for value, n in counts.items() if n == top]
    if len(tied) == 1:
        return Resolved(tied[0], "majority", dict(votes))
    if imported in tied:
        return Resolved(imported, "tie", dict(votes))
    rank = {value: i for i, value in enumerate(order)}
    tied.sort(key=lambda v: (rank.get(v, len(rank)), str(v)))
    return Resolved(tied[0], "tie", dict(votes))


def split_entries(
    entries: Iterable[dict[str, Any]], field_name: str, final_name: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """From an item's annotation entries, the votes on ``field_name`` ({annotator:
    value}) and the reviewer entries on ``final_name``."""
    votes: dict[str, Any] = {}
    finals: list[dict[str, Any]] = []
    for entry in entries:
        if entry["field"] == field_name:
            votes[entry["annotator"]] = entry["value"]
        elif entry["field"] == final_name:
            finals.append(entry)
    return votes, finals


def resolve_answer(entries: Iterable[dict[str, Any]]) -> Resolved | None:
    """The answer an export writes from an item's entries, or ``None`` (keep the
    imported answer)."""
    entries = list(entries)
    final = latest(e for e in entries if e["field"] == "final:answer")
    if final is not None:
        return Resolved(final["value"], "final")
    answers = [e for e in entries if e["field"] == "answer" and isinstance(e["value"], str)
               and e["value"].strip()]
    if not answers:
        return None
    chosen = latest(answers)
    assert chosen is not None
    return Resolved(chosen["value"], "single" if len(answers) == 1 else "latest",
                    {e["annotator"]: e["value"] for e in answers})
