"""Per-token reward curves as data: one response's curve (:class:`PerTokenResult`) and
where two curves' token sequences differ (:func:`compare_curves`).

The curves themselves are computed by :mod:`needlework.rewards.per_token`; the reward
page and the needle lab draw them (and their difference) from these objects.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from needlework.figures.stats_text import signed
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
    (the others show the value at the end of their stride). ``closing_tokens`` counts
    the tokens after the response's own text (the template's ending, e.g. ``<|end|>``,
    and the tokenizer's closing specials, often where the model reads its score): the
    response's own tokens are the first :attr:`response_tokens` of ``tokens``.
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
    closing_tokens: int = 0

    @property
    def response_tokens(self) -> int:
        """Tokens of the response's own text: the curve's tokens less the closing ones
        (the count the Review page gives with this model's tokenizer)."""
        return max(0, len(self.tokens) - self.closing_tokens)

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
                "note": self.note, "response_tokens": self.response_tokens,
                "closing_tokens": self.closing_tokens}


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
    for every shared token, so the reward gap can be followed along the text;
    ``response_tokens`` is each curve's count of response tokens (the tokens after them
    are the template's ending).
    """

    margin: float
    first_difference: tuple[int, int] | None
    spans: list[DiffSpan] = field(default_factory=list)
    aligned: list[tuple[int, int, float]] = field(default_factory=list)
    response_tokens: tuple[int, int] | None = None

    def _after(self) -> list[float]:
        """The gaps at the shared *response* tokens after the first difference (the
        template's ending, shared by any two texts, is left out)."""
        if self.first_difference is None:
            return []
        ends = self.response_tokens
        return [d for i, j, d in self.aligned if i >= self.first_difference[0]
                and (ends is None or (i < ends[0] and j < ends[1]))]

    def gap_after_difference(self) -> float | None:
        """Mean reward gap (chosen - rejected) over the response tokens both texts share
        after their first difference; ``None`` when there are none (the texts are equal,
        one response is a prefix of the other, or they differ up to their end: only the
        template's ending follows, where the gap is the final margin). :meth:`gap_undefined`
        says which."""
        after = self._after()
        return sum(after) / len(after) if after else None

    def gap_undefined(self) -> str | None:
        """Why :meth:`gap_after_difference` is ``None``, in words; ``None`` when it is defined."""
        if self.first_difference is None:
            return "the two token sequences are the same"
        if self._after():
            return None
        why = ("one response is a prefix of the other"
               if len(self.spans) == 1 and self.spans[0].tag in ("insert", "delete")
               else "the responses differ up to their end")
        return (f"{why}: no response text the two share follows the first difference (only "
                "the template's ending, where the gap is the final margin)")


    def gap_words(self) -> str:
        """The mean gap after the first difference in words, for beside the final margin:
        what it averages (``+0.0121``: chosen − rejected over the response tokens both share
        after it, not the final margin), and, when the final margin has the other sign
        (or is a tie), that the two disagree and which side each favours; why there is no
        mean gap when there is none; ``""`` when the texts are the same."""
        if self.first_difference is None:
            return ""
        gap = self.gap_after_difference()
        if gap is None:
            return f"no mean gap after the first difference: {self.gap_undefined()}"
        words = (f"mean gap after the first difference: {signed(gap)} (chosen − rejected "
                 "averaged over the response tokens both share after it; not the final margin)")
        if gap != 0 and (self.margin == 0 or (gap > 0) != (self.margin > 0)):
            along = "chosen" if gap > 0 else "rejected"
            final = ("tie" if self.margin == 0 else
                     f"favour the {'chosen' if self.margin > 0 else 'rejected'} response")
            words += (f". The final margin, {signed(self.margin)}, "
                      + ("is a tie" if self.margin == 0 else "has the other sign")
                      + f": along the text they share the reward favours the {along} "
                      f"response, but the final scores {final}")
        return words


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
    return CurveComparison(chosen.score - rejected.score, first, spans, aligned,
                           (chosen.response_tokens, rejected.response_tokens))
