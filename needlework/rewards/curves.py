"""Per-token reward curves as data: one response's curve (:class:`PerTokenResult`) and
where two curves' token sequences differ (:func:`compare_curves`).

The curves themselves are computed by :mod:`needlework.rewards.per_token`; the reward
page and the needle lab draw them (and their difference) from these objects.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from needlework.rewards.pooling import HEAD, PREFIX

METHOD_LABELS = {
    HEAD: "score head read at every token (one forward pass; causal model, checked)",
    PREFIX: "one forward pass per prefix (the text cut after each token)",
}


@dataclass
class PerTokenResult:
    """Per-token rewards of the response part (response start to the end of the text).

    ``tokens`` are the text pieces of the tokens; ``score`` is the model's own score of
    the whole text; ``prefix_tokens`` counts the tokens before the response (prompt and
    template). ``method`` is ``head`` or ``prefix``; ``pooled`` is the index (in
    ``rewards``) of the value that was checked against ``score`` (``check`` = their
    absolute difference); ``computed`` lists the indices computed when ``stride`` > 1
    (the others show the value at the end of their stride).
    """

    tokens: list[str]
    token_ids: list[int]
    rewards: list[float]
    score: float
    prefix_tokens: int
    n_tokens: int
    truncated: bool = False
    method: str = HEAD
    pooled: int | None = None
    check: float = 0.0
    stride: int = 1
    passes: int = 1
    computed: list[int] | None = None
    note: str = ""

    @property
    def method_label(self) -> str:
        label = METHOD_LABELS.get(self.method, self.method)
        return label + (f", every {self.stride} tokens" if self.stride > 1 else "")

    def as_dict(self) -> dict[str, Any]:
        return {"score": self.score, "tokens": self.tokens, "per_token": self.rewards,
                "prefix_tokens": self.prefix_tokens, "n_tokens": self.n_tokens,
                "truncated": self.truncated, "method": self.method,
                "method_label": self.method_label, "pooled_token": self.pooled,
                "check": self.check, "stride": self.stride, "passes": self.passes,
                "note": self.note}


@dataclass
class DiffSpan:
    """One region where the chosen and rejected token sequences differ."""

    tag: str  # replace | delete | insert (difflib, from chosen to rejected)
    chosen_start: int
    chosen_end: int
    rejected_start: int
    rejected_end: int
    chosen_text: str
    rejected_text: str


@dataclass
class CurveComparison:
    """Chosen vs rejected per-token curves, aligned on their shared tokens.

    ``first_difference`` is the (chosen, rejected) token index where the sequences
    first differ (``None`` when equal); ``aligned`` lists ``(i, j, chosen - rejected)``
    for every shared token, so the reward gap can be followed along the text.
    """

    margin: float
    first_difference: tuple[int, int] | None
    spans: list[DiffSpan] = field(default_factory=list)
    aligned: list[tuple[int, int, float]] = field(default_factory=list)

    def gap_after_difference(self) -> float | None:
        """Mean reward gap (chosen - rejected) over shared tokens after the first difference."""
        if self.first_difference is None:
            return None
        after = [d for i, _, d in self.aligned if i >= self.first_difference[0]]
        return sum(after) / len(after) if after else None


def compare_curves(chosen: PerTokenResult, rejected: PerTokenResult) -> CurveComparison:
    """Find where the token sequences differ (difflib on token ids) and align the curves."""
    matcher = difflib.SequenceMatcher(None, chosen.token_ids, rejected.token_ids, autojunk=False)
    spans: list[DiffSpan] = []
    aligned: list[tuple[int, int, float]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            aligned.extend((i1 + k, j1 + k, chosen.rewards[i1 + k] - rejected.rewards[j1 + k])
                           for k in range(i2 - i1))
        else:
            spans.append(DiffSpan(tag, i1, i2, j1, j2, "".join(chosen.tokens[i1:i2]),
                                  "".join(rejected.tokens[j1:j2])))
    first = (spans[0].chosen_start, spans[0].rejected_start) if spans else None
    return CurveComparison(chosen.score - rejected.score, first, spans, aligned)
