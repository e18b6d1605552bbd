"""Verdicts on (chosen[i], rejected[j]) comparisons: names, values, summaries.

A verdict is stored as one annotation, field ``verdict:I:J``, value
``{"verdict": V, "reasons": [...], "note": "..."}`` where V is one of
:data:`VERDICTS`. The annotation row carries who (annotator) and when
(``updated_at``); the history table keeps every change.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

FIELD_PREFIX = "verdict:"

# verdict value -> (button label, keyboard shortcut)
VERDICTS: dict[str, tuple[str, str]] = {
    "agree": ("Chosen better", "A"),
    "flip": ("Rejected better", "F"),
    "tie": ("Tie", "T"),
    "both-bad": ("Both bad", "B"),
    "skip": ("Skip", "S"),
}
# reason tag -> keyboard shortcut (a digit)
REASONS: dict[str, str] = {
    "factual error": "1",
    "unsafe": "2",
    "incomplete": "3",
    "verbose": "4",
    "formatting": "5",
    "off-topic": "6",
    "other": "7",
}


def key_map() -> dict[str, dict[str, str]]:
    """What the review key script needs (one definition, here): ``verdicts`` key → verdict,
    ``reasons`` key → reason tag, both with lower-case keys."""
    return {"verdicts": {key.lower(): verdict for verdict, (_, key) in VERDICTS.items()},
            "reasons": {key: tag for tag, key in REASONS.items()}}


VERDICT_ICONS = {"agree": "✅", "flip": "🔁", "tie": "🟰", "both-bad": "⛔", "skip": "⏭️"}


def field_name(i: int, j: int) -> str:
    """The annotation field of the comparison chosen[i] vs rejected[j]."""
    return f"{FIELD_PREFIX}{i}:{j}"


def parse_field(name: str) -> tuple[int, int] | None:
    """``(i, j)`` from ``verdict:I:J``; ``None`` for any other field."""
    if not name.startswith(FIELD_PREFIX):
        return None
    parts = name[len(FIELD_PREFIX):].split(":")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1])


def make_value(verdict: str, reasons: Iterable[str] = (), note: str = "") -> dict[str, Any]:
    """A verdict value, checked: known verdict, known reasons (in the canonical order)."""
    if verdict not in VERDICTS:
        raise ValueError(f"unknown verdict {verdict!r}; expected one of {', '.join(VERDICTS)}")
    chosen = set(reasons)
    unknown = chosen - set(REASONS)
    if unknown:
        raise ValueError(f"unknown reason(s): {', '.join(sorted(unknown))}")
    return {"verdict": verdict, "reasons": [r for r in REASONS if r in chosen],
            "note": (note or "").strip()}


def verdict_of(value: Any) -> str | None:
    """The verdict name of a stored value (``None`` when unset or malformed)."""
    if isinstance(value, Mapping):
        v = value.get("verdict")
        return v if v in VERDICTS else None
    return value if value in VERDICTS else None


@dataclass
class AnnotatorSummary:
    """Counts of one annotator's verdicts and their agreement with the dataset's labels."""

    annotator: str
    counts: Counter = field(default_factory=Counter)
    last_at: str = ""

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def agreement(self) -> float | None:
        """agree / (agree + flip): how often the reviewer keeps the dataset's label
        when they pick a side; ``None`` before any agree or flip."""
        decided = self.counts["agree"] + self.counts["flip"]
        return None if decided == 0 else self.counts["agree"] / decided


def summarize(rows: Iterable[Mapping[str, Any]]) -> list[AnnotatorSummary]:
    """Per-annotator summaries from verdict rows (``annotator, value, updated_at``)."""
    out: dict[str, AnnotatorSummary] = {}
    for row in rows:
        verdict = verdict_of(row.get("value"))
        if verdict is None:
            continue
        summary = out.setdefault(row["annotator"], AnnotatorSummary(row["annotator"]))
        summary.counts[verdict] += 1
        summary.last_at = max(summary.last_at, row.get("updated_at") or "")
    return [out[name] for name in sorted(out)]


def progress_text(done: int, started: int, total: int, who: str) -> str:
    """The one wording of a review progress figure (home and review pages): ``3 of 28
    items fully reviewed by ana · 2 more started`` (fully: a verdict on every
    comparison, skip included)."""
    more = started - done
    return (f"{done:,} of {total:,} items fully reviewed by {who}"
            + (f" · {more:,} more started" if more else ""))
