"""Cutting haystacks to a target length, chunking them and choosing insertion sites.

Everything works on character offsets into the haystack text, so the text itself
is never rewritten: a cut keeps ``text[:end]`` and an insertion site is the
offset where a chunk starts.

- Paragraphs are blocks separated by blank lines.
- A **chunk** (benchmarks.md §3) is a paragraph of at least :data:`MIN_WORDS` words;
  shorter paragraphs (headings, one-liners) join the next one, and paragraphs over
  :data:`MAX_WORDS` words are split at sentence ends into pieces of at least
  :data:`MIN_WORDS` words.
- **Cuts** happen at sentence ends, line ends or paragraph ends, at the one whose
  token count is nearest the target.
- **Sites** are chunk starts: a fixed grid of ``k`` evenly spaced target positions
  ``(i + 0.5) / k`` snapped to distinct chunk starts in order, or the paper's
  ``n = length / 1000`` sites, one drawn at random (seeded) in each of ``n`` equal
  strata of the response.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from needlework import tokens

Counter = Callable[[str], int]

MIN_WORDS = 30
MAX_WORDS = 80
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
# A sentence ends at . ! ? (plus closing quotes/brackets) before whitespace and a
# capital, digit, opening quote/bracket or markdown marker; or at a line end.
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(?=[ \t]+[\"'\u201c\u2018(\[*#\-]?[A-Z0-9])|[^\s](?=[ \t]*\n)")


@dataclass(frozen=True)
class TokenCounter:
    """The one token counter of a build and its name (``o200k_base``, ``tokenizer:NAME``, ``estimate``)."""

    count: Callable[[str], int]
    method: str


def resolve_counter(tokenizer: Any = None, name: str = "model", timeout: float = tokens.LOAD_TIMEOUT_S) -> TokenCounter:
    """Pick the counter once for a whole build, so methods never mix mid-build:
    o200k_base when it loads, else ``tokenizer`` (a Hugging Face tokenizer), else the estimate."""
    enc = tokens.encoding(timeout)
    if enc is not None:
        return TokenCounter(lambda text: len(enc.encode(text, disallowed_special=())), tokens.ENCODING)
    if tokenizer is not None:
        return TokenCounter(lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"]),
                            f"tokenizer:{name}")
    return TokenCounter(tokens.estimate, "estimate")


@dataclass(frozen=True)
class Cut:
    """A haystack cut at a boundary: ``text[:end]`` with ``tokens`` tokens."""

    end: int
    tokens: int


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every non-blank paragraph (blocks separated by blank lines)."""
    spans: list[tuple[int, int]] = []
    start = len(text) - len(text.lstrip())
    for match in _PARAGRAPH_BREAK.finditer(text):
        if match.start() > start:
            spans.append((start, match.start()))
        start = match.end()
    end = len(text.rstrip())
    if end > start:
        spans.append((start, end))
    return spans


def sentence_ends(text: str, start: int = 0, end: int | None = None) -> list[int]:
    """Offsets just after each sentence (or line) end inside ``text[start:end]``,
    not counting ``end`` itself."""
    end = len(text) if end is None else end
    out = [m.end() for m in _SENTENCE_END.finditer(text, start, end)]
    return [p for p in out if start < p < end]


def cut_points(text: str) -> list[int]:
    """Every offset where the text may be cut: sentence, line and paragraph ends."""
    points: set[int] = set()
    for start, end in paragraph_spans(text):
        points.update(sentence_ends(text, start, end))
        points.add(end)
    return sorted(points)


def cut_to_length(text: str, target: int, count: Counter) -> Cut | None:
    """The cut whose token count is nearest ``target`` (ties: the shorter one).

    Counts grow with the cut, so a binary search finds the longest cut with at
    most ``target`` tokens; the next cut is taken instead when it is nearer.
    ``None`` when the text has no cut point at all.
    """
    points = cut_points(text)
    if not points:
        return None
    low, high = 0, len(points) - 1
    best = -1
    while low <= high:
        mid = (low + high) // 2
        if count(text[: points[mid]]) <= target:
            best, low = mid, mid + 1
        else:
            high = mid - 1
    candidates = [k for k in (best, best + 1) if 0 <= k < len(points)]
    cuts = [Cut(points[k], count(text[: points[k]])) for k in candidates]
    return min(cuts, key=lambda c: (abs(c.tokens - target), c.tokens))


def _words(text: str, start: int, end: int) -> int:
    return len(text[start:end].split())


def _split_long(text: str, start: int, end: int) -> list[int]:
    """Piece starts of one long paragraph: split at the first sentence end where both
    the piece so far and the rest have at least MIN_WORDS words."""
    starts = [start]
    for point in sentence_ends(text, start, end):
        nxt = point + len(text[point:end]) - len(text[point:end].lstrip())
        if _words(text, starts[-1], point) >= MIN_WORDS and _words(text, nxt, end) >= MIN_WORDS:
            starts.append(nxt)
    return starts


def chunk_starts(text: str) -> list[int]:
    """Offsets where chunks start (the first is the start of the text's first paragraph)."""
    pieces: list[tuple[int, int]] = []
    for start, end in paragraph_spans(text):
        if _words(text, start, end) > MAX_WORDS:
            starts = _split_long(text, start, end)
            pieces.extend(zip(starts, starts[1:] + [end], strict=True))
        else:
            pieces.append((start, end))
    chunks: list[int] = []
    open_start: int | None = None
    for start, end in pieces:
        if open_start is None:
            open_start = start
        if _words(text, open_start, end) >= MIN_WORDS:
            chunks.append(open_start)
            open_start = None
    if open_start is not None and not chunks:
        chunks.append(open_start)  # the whole text is one short chunk
    return chunks


def relative_positions(text: str, offsets: Sequence[int], count: Counter) -> list[float]:
    """Approximate relative token position of each (ascending) offset, from the counts
    of the segments between offsets (one pass over the text). Used to choose sites;
    the records' ``tagged_position`` is measured exactly on the final text."""
    bounds = list(offsets) + [len(text)]
    head = count(text[: bounds[0]]) if bounds[0] > 0 else 0
    segments = [count(text[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
    total = max(1, head + sum(segments))
    out, running = [], head
    for segment in segments:
        out.append(running / total)
        running += segment
    return out


def grid_sites(positions: Sequence[float], k: int) -> list[int]:
    """Indices of ``k`` distinct boundaries nearest the targets ``(i + 0.5) / k``, in order.

    Fewer than ``k`` when there are fewer boundaries than that.
    """
    m = len(positions)
    k = min(k, m)
    chosen: list[int] = []
    for i in range(k):
        target = (i + 0.5) / k
        low = chosen[-1] + 1 if chosen else 0
        high = m - (k - i)  # leave room for the targets after this one
        chosen.append(min(range(low, high + 1), key=lambda j: (abs(positions[j] - target), j)))
    return chosen


def paper_sites(positions: Sequence[float], n: int, rng: random.Random) -> list[int]:
    """The paper's sites: one boundary drawn uniformly in each of ``n`` equal strata.

    A stratum with no boundary takes the unused boundary nearest its centre.
    """
    chosen: list[int] = []
    for i in range(n):
        low, high = i / n, (i + 1) / n
        inside = [j for j, p in enumerate(positions)
                  if (low <= p < high or (i == n - 1 and p == 1.0)) and j not in chosen]
        if inside:
            chosen.append(rng.choice(inside))
            continue
        unused = [j for j in range(len(positions)) if j not in chosen]
        if unused:
            centre = (low + high) / 2
            chosen.append(min(unused, key=lambda j: (abs(positions[j] - centre), j)))
    return sorted(chosen)


def paper_site_count(length: int) -> int:
    """The paper's number of insertions for a response of ``length`` tokens: length / 1000."""
    return max(1, round(length / 1000))


def choose_sites(positions: Sequence[float], wanted: int, *, paper: bool, rng: random.Random) -> list[int]:
    """Boundary indices of the sites: :func:`paper_sites` or :func:`grid_sites`."""
    return paper_sites(positions, wanted, rng) if paper else grid_sites(positions, wanted)
