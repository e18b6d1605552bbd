"""The common view of a preference record, whatever format it came in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

RMBENCH_STYLES = ("concise", "detailed plain", "detailed markdown")


@dataclass
class Preference:
    """A prompt with chosen and rejected responses.

    Long-form RewardBench: 1 chosen, 3 rejected. RM-Bench: 3 and 3, index =
    style (:data:`RMBENCH_STYLES`). Plain pairs and needles: 1 and 1.
    """

    id: str
    subset: str
    prompt: str
    chosen: list[str]
    rejected: list[str]
    meta: dict[str, Any] = field(default_factory=dict)

    def comparisons(self) -> list[tuple[int, int]]:
        """Every (chosen index, rejected index) pair."""
        return [(i, j) for i in range(len(self.chosen)) for j in range(len(self.rejected))]
