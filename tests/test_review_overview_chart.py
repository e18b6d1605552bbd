"""The review overview's length histogram (components/review/overview.py): bins on a log
scale, each side normalised to its own total, drawn as bars that start at zero."""

from __future__ import annotations

import math

from components.review.overview import length_bins, length_chart

FACTS = [("QA", "q1", (10,), (100, 1000, 1000)), ("QA", "q2", (100,), (10, 10, 10))]


def test_bins_share_each_side_by_its_own_total():
    rows = length_bins(FACTS, by_subset=False)
    for side, n in (("chosen", 2), ("rejected", 6)):
        mine = [r for r in rows if r["side"] == side]
        assert sum(r["responses"] for r in mine) == n
        assert math.isclose(sum(r["share"] for r in mine), 1.0)
    assert min(r["start"] for r in rows) == 1.0  # log10(10)


def test_bars_are_drawn_from_zero():
    spec = length_chart(length_bins(FACTS, by_subset=False), by_subset=False).to_dict()
    encoding = spec["encoding"]
    assert encoding["x2"]["field"] == "end" and encoding["y2"] == {"datum": 0}
