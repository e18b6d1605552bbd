"""A needle writer's answers read and placed (:mod:`needlework.judges.needles` asks): the
rewrite parsed out of an answer and checked to be minimal, the words a rewrite or its
counterpart changed, which slot of the response a passage lies in, the passages a slot
offers, and the record a kept needle becomes. Pure functions of their arguments.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from needlework.formats import needle as needle_format
from needlework.judges.parse import Parsed, invalid, parse_modifications
from needlework.needle.inputs import Haystack
from needlework.needle.sites import (
    TokenCounter,
    paragraph_spans,
    relative_positions,
    sentence_ends,
)

MIN_SIMILARITY = 0.6  # a rewrite further from the original than this is not minimal
MIN_CHUNK_WORDS = 12
MAX_EXTRA_WORDS = 2  # a rewrite adding more words than this gets a harmless counterpart
SAME_PLACE = 20  # characters: a counterpart's change may start or end this far from the needle's
_REWRITE = re.compile(r"<rewrite>\s*(.*?)\s*</rewrite>", re.S | re.I)


def parse_rewrite(text: str, original: str) -> Parsed:
    """The rewritten chunk between ``<rewrite>`` tags, or invalid (missing, empty,
    unchanged, or too different to be a minimal change)."""
    found = _REWRITE.findall(text or "")
    if len(found) != 1:
        return invalid("no <rewrite>...</rewrite> block" if not found else "several rewrite blocks")
    rewrite = found[0].strip()
    if not rewrite:
        return invalid("empty rewrite")
    if rewrite == original.strip():
        return invalid("the rewrite is the original")
    ratio = difflib.SequenceMatcher(None, original, rewrite, autojunk=False).ratio()
    if ratio < MIN_SIMILARITY:
        return invalid(f"not a minimal change (similarity {ratio:.2f} < {MIN_SIMILARITY})")
    return Parsed(True, rewrite, "tags")


def first_difference(a: str, b: str) -> int:
    """The offset of the first character where ``a`` and ``b`` differ."""
    for k, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return k
    return min(len(a), len(b))


def length_bin(tokens: int) -> int:
    """The heatmap row of a haystack taken whole: its length rounded to the nearest 1000
    tokens (to the nearest 100 below 950), never 0. ``length_bin(2380) == 2000``."""
    step = 1000 if tokens >= 950 else 100
    return max(step, round(tokens / step) * step)


def candidate_chunks(text: str) -> list[tuple[int, int]]:
    """Paragraph spans long enough to hold a needle."""
    return [(s, e) for s, e in paragraph_spans(text) if len(text[s:e].split()) >= MIN_CHUNK_WORDS]


def changed_region(a: str, b: str) -> tuple[int, int, int]:
    """Where ``a`` and ``b`` differ: ``(start, a_end, b_end)``, so that ``a[start:a_end]``
    became ``b[start:b_end]`` and the rest (a common prefix and suffix) is the same."""
    start = first_difference(a, b)
    room = min(len(a), len(b)) - start
    tail = 0
    while tail < room and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    return start, len(a) - tail, len(b) - tail


def _added_words(original: str, version: str) -> int:
    """How many more words ``version`` has than ``original``."""
    return len(version.split()) - len(original.split())


def adds_text(original: str, flawed: str) -> bool:
    """Whether ``flawed`` has more than :data:`MAX_EXTRA_WORDS` words more than
    ``original`` (then the chosen response needs a counterpart of its own)."""
    return _added_words(original, flawed) > MAX_EXTRA_WORDS


def parse_counterpart(text: str, original: str, flawed: str) -> Parsed:
    """The harmless counterpart between ``<rewrite>`` tags: ``original`` changed in one
    place only, the needle's (the region where it differs from ``original`` starts and ends
    within :data:`SAME_PLACE` characters of the region where ``flawed`` does), adding half
    to twice as many words as ``flawed`` adds; else invalid."""
    found = _REWRITE.findall(text or "")
    if len(found) != 1:
        return invalid("no <rewrite>...</rewrite> block" if not found else "several rewrite blocks")
    harmless = found[0].strip()
    if harmless in (original.strip(), flawed.strip()):
        return invalid("the counterpart is " + ("the original" if harmless == original.strip()
                                               else "the flawed version"))
    needle_start, needle_end, _ = changed_region(original, flawed)
    start, end, _ = changed_region(original, harmless)
    if abs(start - needle_start) > SAME_PLACE or abs(end - needle_end) > SAME_PLACE:
        return invalid("the counterpart changes the passage elsewhere than at the needle")
    added, wanted = _added_words(original, harmless), _added_words(original, flawed)
    if not wanted / 2 <= added <= 2 * wanted:
        return invalid(f"the counterpart adds {added} words where the needle adds {wanted}")
    return Parsed(True, harmless, "tags")


def parse_needle(text: str, original: str) -> Parsed:
    """The writer's answer as ``{"positive": chosen passage or None, "negative": rejected
    passage}``: the paper's two modifications (``** Positive Modification **`` /
    ``** Negative Modification **``), or one ``<rewrite>`` (no positive: the original,
    or a counterpart asked for), each a minimal change of ``original``; else invalid."""
    if _REWRITE.search(text or "") or not re.search(r"Modification\s*\*\*", text or "", re.I):
        parsed = parse_rewrite(text, original)
        return Parsed(True, {"positive": None, "negative": parsed.value}, parsed.rule) \
            if parsed.valid else parsed
    parsed = parse_modifications(text)
    if not parsed.valid:
        return parsed
    positive, negative = parsed.value["positive"], parsed.value["negative"]
    if positive == negative:
        return invalid("the two modifications are the same")
    for name, version in (("positive", positive), ("negative", negative)):
        ratio = difflib.SequenceMatcher(None, original, version, autojunk=False).ratio()
        if ratio < MIN_SIMILARITY:
            return invalid(f"the {name} modification is not a minimal change (similarity "
                           f"{ratio:.2f} < {MIN_SIMILARITY})")
    return Parsed(True, {"positive": positive, "negative": negative}, parsed.rule)


# -- where needles go ------------------------------------------------------------------------


def slot_of(position: float, positions: int) -> int:
    """The slot (0 … ``positions`` - 1) of a relative position in [0, 1]: slot ``i`` holds
    ``[i/K, (i+1)/K)``, the last one 1.0 too (``K = 10``: the heatmap's buckets)."""
    return min(int(position * positions), positions - 1)


@dataclass(frozen=True)
class Passage:
    """A passage a needle may be written into: ``text[start:end]``, sentences of the
    paragraph numbered ``paragraph`` (from its sentence ``sentence``), in ``slot``;
    ``inside``: the whole passage lies in the slot (any change to it lands there)."""

    start: int
    end: int
    paragraph: int
    sentence: int
    slot: int
    inside: bool = True


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence (or line) of ``text[start:end]``."""
    spans: list[tuple[int, int]] = []
    begin = start
    for point in sentence_ends(text, start, end) + [end]:
        if point > begin:
            spans.append((begin, point))
        begin = point + len(text[point:end]) - len(text[point:end].lstrip())
    return spans


def slot_passages(text: str, positions: int, count: Callable[[str], int]) -> list[list[Passage]]:
    """The candidate passages of each slot, in text order: in each paragraph, the runs
    of consecutive sentences whose middles (relative token positions) fall in one slot,
    kept when they have at least :data:`MIN_CHUNK_WORDS` words. With one slot these are
    the paragraphs themselves (:func:`candidate_chunks`), all ``inside``."""
    sentences = [(k, n, a, b) for k, (s, e) in enumerate(paragraph_spans(text))
                 for n, (a, b) in enumerate(_sentences(text, s, e))]
    out: list[list[Passage]] = [[] for _ in range(positions)]
    if not sentences:
        return out
    starts = relative_positions(text, [a for _, _, a, _ in sentences], count) + [1.0]
    run: list[int] = []
    run_slot = -1

    def close() -> None:
        if not run:
            return
        first, last = sentences[run[0]], sentences[run[-1]]
        if len(text[first[2]:last[3]].split()) >= MIN_CHUNK_WORDS:
            inside = (starts[run[0]] >= run_slot / positions
                      and starts[run[-1] + 1] <= (run_slot + 1) / positions)
            out[run_slot].append(Passage(first[2], last[3], first[0], first[1], run_slot, inside))

    for k, sentence in enumerate(sentences):
        slot = slot_of((starts[k] + starts[k + 1]) / 2, positions)
        if not run or slot != run_slot or sentence[0] != sentences[run[-1]][0]:
            close()
            run, run_slot = [], slot
        run.append(k)
    close()
    return out


# -- records ---------------------------------------------------------------------------------


def needle_record(haystack: Haystack, text: str, span: tuple[int, int], rewrite: str, aspect: str,
                  prompts: dict[str, Any], *, counter: TokenCounter, length: int | None = None,
                  site_index: int = 0, harmless: str | None = None, slot: int = 0,
                  positions: int = 1, sentence: int = 0) -> dict[str, Any]:
    """The needle-format record of one verified needle in ``text[span]`` (``text``: the
    haystack's text, cut to ``length`` tokens; ``None``: taken whole and binned): the
    rejected response has ``rewrite`` there, the chosen one ``harmless`` (default: the
    passage as it is). ``slot`` of ``positions`` is the position slot asked for."""
    start, end = span
    kept = text[start:end] if harmless is None else harmless
    chosen = text[:start] + kept + text[end:]
    rejected = text[:start] + rewrite + text[end:]
    offset = start + first_difference(kept, rewrite)
    total = counter.count(rejected)
    row = length if length is not None else length_bin(counter.count(text))
    where = f"{site_index}.{sentence}" if sentence else f"{site_index}"
    record = {
        "id": f"llm-{aspect}-{haystack.id}-{row}-{where}",
        "word_count": len(rejected.split()),
        "tagged_position": round(counter.count(rejected[:offset]) / max(1, total), 6),
        "prompt": haystack.prompt,
        "chosen": [chosen],
        "rejected": [rejected],
        "length_tokens": row,
        "site_index": site_index,
        "needle_id": f"llm:{aspect}:{haystack.id}:{where}",
        "haystack_id": haystack.id,
        "response_tokens": total,
        "needle_char": offset,
        "position_slot": slot,
        "positions": positions,
        "kind": aspect,
        "token_count_method": counter.method,
        "writer": prompts,
    }
    problems = needle_format.validate(record)
    if problems:  # a bug here, not bad input: the record is built from checked parts
        raise ValueError(f"needle record {record['id']}: {'; '.join(problems)}")
    return record
