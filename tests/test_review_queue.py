"""The review queue: comparisons per item, order, moving, next unreviewed."""

from __future__ import annotations

from needlework.review.chunks import chunk_bounds
from needlework.review.queue import (
    Comparison,
    build_queue,
    index_of,
    item_comparisons,
    next_unreviewed,
    step,
    unreviewed_count,
)


def test_item_comparisons_per_format_and_scope():
    assert item_comparisons(1, 3) == [(0, 0), (0, 1), (0, 2)]  # Long-form RewardBench
    assert len(item_comparisons(3, 3)) == 9  # RM-Bench 3x3
    assert item_comparisons(3, 3, "same-style") == [(0, 0), (1, 1), (2, 2)]
    assert item_comparisons(1, 1, "same-style") == [(0, 0)]
    assert item_comparisons(1, 3, "same-style") == [(0, 0), (0, 1), (0, 2)]


def queue():
    return build_queue([(2, "c", 1, 1), (0, "a", 1, 3), (1, "b", 1, 1)])


def test_queue_is_in_reading_order():
    q = queue()
    assert [c.ident for c in q] == [("a", 0, 0), ("a", 0, 1), ("a", 0, 2), ("b", 0, 0), ("c", 0, 0)]
    assert index_of(q, Comparison(1, "b", 0, 0)) == 3
    assert index_of(q, Comparison(1, "b", 0, 5)) is None


def test_step_stops_at_the_ends_and_finds_neighbours_of_filtered_out_items():
    q = queue()
    assert step(q, q[0], -1) == q[0]
    assert step(q, q[-1], 1) == q[-1]
    assert step(q, q[1], 2) == q[3]
    outside = Comparison(0, "a", 0, 1)
    short = [q[0], q[2], q[3]]  # a:0:1 filtered out
    assert step(short, outside, 1) == q[2]
    assert step(short, outside, -1) == q[0]
    assert step([], None, 1) is None


def test_next_unreviewed_wraps_and_skips_reviewed():
    q = queue()
    reviewed = {("a", 0, 1), ("b", 0, 0), ("c", 0, 0)}
    assert next_unreviewed(q, q[1], reviewed) == q[2]
    assert next_unreviewed(q, q[2], reviewed) == q[0]  # wraps around
    assert next_unreviewed(q, None, reviewed) == q[0]
    assert next_unreviewed(q, q[0], reviewed, include_current=True) == q[0]
    assert next_unreviewed(q, q[0], {c.ident for c in q}) is None
    assert unreviewed_count(q, reviewed) == 2


def test_chunks_cover_the_text_and_cut_at_paragraphs():
    paragraphs = [f"Paragraph {k}. " + "word " * 150 for k in range(60)]
    text = "\n\n".join(paragraphs)
    bounds = chunk_bounds(text)
    assert bounds[0][0] == 0 and bounds[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:], strict=False))
    assert bounds[0][1] <= 2_500 and all(e - s <= 8_000 for s, e in bounds)
    assert all(text[e - 2:e] == "\n\n" for _, e in bounds[:-1])
    assert chunk_bounds("") == [(0, 0)]
    assert chunk_bounds("x" * 20_000)[0] == (0, 2_500)  # no break at all: a hard cut
