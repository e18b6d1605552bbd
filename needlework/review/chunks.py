"""Cutting long responses into paragraph chunks drawn on demand.

The first chunk is small (the first screen), later ones larger. Cuts fall at a
paragraph break when there is one in reach, else at a line break, a sentence
end or a space; never inside a word unless a "word" is longer than the chunk.
"""

from __future__ import annotations

FIRST_CHARS = 2_500
CHUNK_CHARS = 8_000


def _cut(text: str, start: int, limit: int) -> int:
    """The best cut in ``text[start:limit]`` (an index), preferring late breaks."""
    if limit >= len(text):
        return len(text)
    floor = start + (limit - start) // 2  # cut no earlier than half-way
    for sep in ("\n\n", "\n", ". ", " "):
        at = text.rfind(sep, floor, limit)
        if at != -1:
            return at + len(sep)
    return limit


def chunk_bounds(
    text: str, first: int = FIRST_CHARS, size: int = CHUNK_CHARS
) -> list[tuple[int, int]]:
    """``(start, end)`` character ranges that cover ``text`` exactly, in order."""
    bounds: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        end = _cut(text, start, start + (first if not bounds else size))
        bounds.append((start, end))
        start = end
    return bounds or [(0, 0)]
