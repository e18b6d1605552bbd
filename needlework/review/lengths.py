"""Token lengths of responses, per item, for the review page and its charts.

Counts come from :func:`needlework.tokens.count_tokens`: ``o200k_base`` when it
is loaded, else the given fallback tokenizer (the loaded reward model's), else
an estimate that says it is one. Nothing here waits on the network: the page
asks with ``timeout=0`` and gets exact counts once the encoding has loaded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from statistics import median
from typing import TypedDict

from needlework import tokens
from needlework.formats.preference import Preference

Counter = Callable[[str], int]


@dataclass(frozen=True)
class ItemFacts:
    """What filters and charts need to know of one item, without its text."""

    key: str
    position: int
    subset: str  # the stored subset (RM-Bench: the domain)
    source_subset: str  # the record's own subset (RM-Bench: alpacaeval, ...)
    chosen_tokens: tuple[int, ...]
    rejected_tokens: tuple[int, ...]

    @property
    def n_chosen(self) -> int:
        return len(self.chosen_tokens)

    @property
    def n_rejected(self) -> int:
        return len(self.rejected_tokens)

    @property
    def longest(self) -> int:
        """Tokens in the item's longest response."""
        return max(self.chosen_tokens + self.rejected_tokens, default=0)


_CACHE_LIMIT = 100_000
_cache: dict[tuple[bytes, str], tokens.TokenCount] = {}


def count(text: str, fallback: Counter | None = None, fallback_name: str = "model") -> tokens.TokenCount:
    """Tokens in ``text`` and how they were counted. Remembered per text hash and
    method, so a text is counted again once ``o200k_base`` becomes available."""
    key = (hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest(),
           method(fallback, fallback_name))
    found = _cache.get(key)
    if found is None:
        found = tokens.count_tokens(text, fallback=fallback, fallback_name=fallback_name, timeout=0)
        if len(_cache) >= _CACHE_LIMIT:
            _cache.clear()
        _cache[key] = found
    return found


def counter_words(how: str) -> str:
    """The counting method in words: ``o200k_base``, ``NAME's tokenizer`` (for
    ``tokenizer:NAME``, the reward model's: the count its per-token view gives for the
    response's own text), or ``estimate``."""
    if how.startswith("tokenizer:"):
        return f"{how.removeprefix('tokenizer:')}'s tokenizer"
    return how


def method(fallback: Counter | None = None, fallback_name: str = "model") -> str:
    """The counting method in use now: ``o200k_base``, ``tokenizer:NAME`` or ``estimate``."""
    if tokens.encoding(0) is not None:
        return tokens.ENCODING
    return f"tokenizer:{fallback_name}" if fallback is not None else "estimate"


def item_facts(
    key: str, position: int, subset: str, view: Preference,
    fallback: Counter | None = None, fallback_name: str = "model",
) -> ItemFacts:
    """:class:`ItemFacts` of one stored item and its preference view."""
    def n(text: str) -> int:
        return count(text, fallback, fallback_name).tokens

    return ItemFacts(
        key, position, subset, view.subset or subset,
        tuple(n(t) for t in view.chosen), tuple(n(t) for t in view.rejected),
    )


class LengthRow(TypedDict):
    """One response's length (:func:`length_rows`)."""

    item: str
    subset: str
    side: str
    index: int
    tokens: int


def length_rows(facts: Iterable[ItemFacts]) -> list[LengthRow]:
    """One row per response (``item, subset, side, index, tokens``): chart data."""
    rows: list[LengthRow] = []
    for f in facts:
        for side, counts in (("chosen", f.chosen_tokens), ("rejected", f.rejected_tokens)):
            rows.extend(
                {"item": f.key, "subset": f.subset, "side": side, "index": k, "tokens": t}
                for k, t in enumerate(counts)
            )
    return rows


def length_summary(rows: Iterable[LengthRow]) -> list[dict[str, object]]:
    """Per side: responses, median, mean, max tokens."""
    by_side: dict[str, list[int]] = {}
    for row in rows:
        by_side.setdefault(str(row["side"]), []).append(int(row["tokens"]))
    return [
        {"side": side, "responses": len(v), "median": int(median(v)),
         "mean": round(sum(v) / len(v)), "max": max(v)}
        for side, v in sorted(by_side.items()) if v
    ]
