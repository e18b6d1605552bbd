"""Word-level differences between two near-identical texts.

Two levels keep long texts fast: lines are compared first, and only the lines
that changed are compared word by word. Words are ``\\w`` runs that may hold
inner ``. , ' ’ - /`` (``6.0``, ``t-shirts``, ``don't``); other punctuation is
a token of its own, whitespace is never a token.

The result names each difference by its character spans on side ``a``
(chosen) and side ``b`` (rejected) and gives the ``(text, css_class, style)``
segments that :func:`components.text.marked_html` draws: ``nw-chg`` for a
replaced run (both sides), ``nw-del`` for words only in ``a``, ``nw-ins`` for
words only in ``b``, plus ``nw-current`` on the difference in focus.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

TOKEN = re.compile(r"\w+(?:[.,'’\-/]\w+)*|[^\w\s]", re.UNICODE)
KIND_CLASS = {"replace": "nw-chg", "delete": "nw-del", "insert": "nw-ins"}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# A changed block with more token pairs than this is not diffed word by word (the
# cost grows with the product); it is marked as one difference instead.
_WORD_LIMIT = 1_500_000
_TOTAL_LIMIT = 20_000_000  # for the whole pair; what is left after that is marked in blocks

Segment = tuple[str, str | None, str | None]


@dataclass(frozen=True)
class Difference:
    """One run of changed words: its kind and its spans (start, end) on each side.

    An insertion has an empty span on ``a`` (where it would go), a deletion an
    empty span on ``b``.
    """

    kind: str  # replace | delete | insert
    a: tuple[int, int]
    b: tuple[int, int]


@dataclass(frozen=True)
class TextDiff:
    """The differences between texts ``a`` and ``b``, in reading order."""

    a_text: str
    b_text: str
    differences: tuple[Difference, ...]
    same_words: int  # words equal on both sides
    total_words: int  # max(words in a, words in b)

    @property
    def similarity(self) -> float:
        """Share of words that are the same on both sides (1.0 for equal texts)."""
        return 1.0 if self.total_words == 0 else self.same_words / self.total_words

    def words(self, side: str, index: int) -> list[str]:
        """The changed words of difference ``index`` on ``side`` (``"a"`` or ``"b"``)."""
        text = self.a_text if side == "a" else self.b_text
        start, end = getattr(self.differences[index], side)
        return TOKEN.findall(text[start:end])

    def changed_words(self, side: str) -> list[str]:
        """Every changed word on ``side``, in order (punctuation tokens included)."""
        out: list[str] = []
        for k in range(len(self.differences)):
            out.extend(self.words(side, k))
        return out

    def segments(
        self, side: str, current: int | None = None, start: int = 0, end: int | None = None
    ) -> list[Segment]:
        """Marked segments of ``side`` between character ``start`` and ``end``."""
        text = self.a_text if side == "a" else self.b_text
        end = len(text) if end is None else end
        out: list[Segment] = []
        pos = start
        for k, diff in enumerate(self.differences):
            s, e = getattr(diff, side)
            if e == s and k == current and start <= s <= end:
                e = s  # nothing on this side: an empty mark shows where it would go
            elif e <= s or e <= start or s >= end:
                continue
            s, e = max(s, start), min(e, end)
            if s > pos:
                out.append((text[pos:s], None, None))
            css = KIND_CLASS[diff.kind] + (" nw-current" if k == current else "")
            out.append((text[s:e], css, None))
            pos = e
        if pos < end:
            out.append((text[pos:end], None, None))
        return out

    def window(self, side: str, index: int, context: int = 700) -> tuple[int, int]:
        """Character range of ``side`` to show around difference ``index``:
        ``context`` characters either side, widened to line starts/ends when they
        are close, cut at whitespace otherwise."""
        text = self.a_text if side == "a" else self.b_text
        s, e = getattr(self.differences[index], side)
        start = _snap_start(text, max(0, s - context), s)
        end = _snap_end(text, min(len(text), e + context), e)
        while start < s and text[start] in "\r\n":  # no blank lines at the top
            start += 1
        while end > e and text[end - 1] in "\r\n":
            end -= 1
        return start, end


def _snap_start(text: str, pos: int, limit: int) -> int:
    """Start the window at the first line start in ``[pos, limit]``, else after a space."""
    if pos == 0:
        return 0
    line = text.find("\n", pos - 1, limit)
    if line != -1:
        return line + 1
    space = text.find(" ", pos, limit)
    return pos if space == -1 else space + 1


def _snap_end(text: str, pos: int, limit: int) -> int:
    """End the window at the last line end in ``[limit, pos]``, else before a space."""
    if pos >= len(text):
        return len(text)
    line = text.rfind("\n", limit, pos + 1)
    if line != -1:
        return line
    space = text.rfind(" ", limit, pos)
    return pos if space == -1 else space


def _tokens(text: str, offset: int = 0) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start() + offset, m.end() + offset) for m in TOKEN.finditer(text)]


def _lines(text: str, offset: int = 0) -> list[tuple[str, int]]:
    """Lines with their end kept, each with its start offset."""
    out, pos = [], 0
    for line in text.splitlines(keepends=True):
        out.append((line, offset + pos))
        pos += len(line)
    return out


def _blank(line: str) -> bool:
    return not line.strip()


def _sentences(text: str, offset: int = 0) -> list[tuple[str, int]]:
    """Sentences (each with the space after it), each with its start offset."""
    out, pos = [], 0
    for m in _SENTENCE_END.finditer(text):
        out.append((text[pos:m.end()], offset + pos))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], offset + pos))
    return out


def _span(tokens: list[tuple[str, int, int]], i1: int, i2: int, at: int) -> tuple[int, int]:
    """Character span of tokens ``i1:i2`` (empty span at ``at`` when none)."""
    if i2 > i1:
        return tokens[i1][1], tokens[i2 - 1][2]
    return at, at


def _anchor(tokens: list[tuple[str, int, int]], i: int, default: int) -> int:
    return tokens[i][1] if i < len(tokens) else default


def _common(ta: list[tuple[str, int, int]], tb: list[tuple[str, int, int]], direction: int) -> int:
    """How many tokens ``ta`` and ``tb`` share at the start (1) or the end (-1)."""
    n = 0
    limit = min(len(ta), len(tb))
    while n < limit:
        k = n if direction == 1 else -1 - n
        if ta[k][0] != tb[k][0]:
            break
        n += 1
    return n


class _Differ:
    """Lines first, then sentences inside changed lines, then words inside changed
    sentences; a changed block too large for a word diff is one difference."""

    def __init__(self, a: str, b: str) -> None:
        self.a, self.b = a, b
        self.found: list[Difference] = []
        self.same = 0
        self.spent = 0  # token pairs compared word by word so far

    def units(self, level: int, a_range: tuple[int, int], b_range: tuple[int, int]) -> None:
        split = _lines if level == 0 else _sentences
        ua = split(self.a[a_range[0]:a_range[1]], a_range[0])
        ub = split(self.b[b_range[0]:b_range[1]], b_range[0])
        # blank lines match everywhere: as anchors they make matching quadratic
        junk = _blank if level == 0 else None
        matcher = SequenceMatcher(junk, [u for u, _ in ua], [u for u, _ in ub], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            ra = (ua[i1][1] if i1 < len(ua) else a_range[1], ua[i2][1] if i2 < len(ua) else a_range[1])
            rb = (ub[j1][1] if j1 < len(ub) else b_range[1], ub[j2][1] if j2 < len(ub) else b_range[1])
            if tag == "equal":
                self.same += len(TOKEN.findall(self.a, ra[0], ra[1]))
            elif tag == "replace" and level == 0:
                self.units(1, ra, rb)
            else:
                self.words(ra, rb)

    def words(self, ra: tuple[int, int], rb: tuple[int, int]) -> None:
        ta = _tokens(self.a[ra[0]:ra[1]], ra[0])
        tb = _tokens(self.b[rb[0]:rb[1]], rb[0])
        head = _common(ta, tb, 1)
        tail = _common(ta[head:], tb[head:], -1)
        self.same += head + tail
        if head or tail:  # diff only the middle that differs
            ra = (ta[head - 1][2] if head else ra[0], ta[len(ta) - tail][1] if tail else ra[1])
            rb = (tb[head - 1][2] if head else rb[0], tb[len(tb) - tail][1] if tail else rb[1])
            ta, tb = ta[head:len(ta) - tail], tb[head:len(tb) - tail]
        cost = len(ta) * len(tb)
        if cost > _WORD_LIMIT or self.spent + cost > _TOTAL_LIMIT:  # too costly: one difference
            self.found.append(Difference("replace", _span(ta, 0, len(ta), ra[0]),
                                         _span(tb, 0, len(tb), rb[0])))
            return
        self.spent += cost
        matcher = SequenceMatcher(None, [t[0] for t in ta], [t[0] for t in tb], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                self.same += i2 - i1
                continue
            self.found.append(Difference(tag, _span(ta, i1, i2, _anchor(ta, i1, ra[1])),
                                         _span(tb, j1, j2, _anchor(tb, j1, rb[1]))))


def diff_texts(a: str, b: str) -> TextDiff:
    """Word-level differences between ``a`` (chosen) and ``b`` (rejected)."""
    differ = _Differ(a, b)
    differ.units(0, (0, len(a)), (0, len(b)))
    total = max(len(TOKEN.findall(a)), len(TOKEN.findall(b)))
    return TextDiff(a, b, tuple(differ.found), differ.same, total)


@lru_cache(maxsize=64)
def cached_diff(a: str, b: str) -> TextDiff:
    """:func:`diff_texts`, remembered for the last 64 pairs (reruns redraw the same pair)."""
    return diff_texts(a, b)


@lru_cache(maxsize=64)
def quick_similarity(a: str, b: str) -> float:
    """A linear-time guess of how near-identical two texts are: the share of word
    pairs (adjacent words) they have in common, ignoring where. Near-identical
    texts score above ~0.6; different texts on one topic score far lower."""
    wa, wb = TOKEN.findall(a), TOKEN.findall(b)
    if len(wa) < 2 or len(wb) < 2:
        return 1.0 if wa == wb else 0.0
    ca = Counter(zip(wa, wa[1:], strict=False))
    cb = Counter(zip(wb, wb[1:], strict=False))
    return sum((ca & cb).values()) / (max(len(wa), len(wb)) - 1)
