"""The questions around the one drawn, for Annotate's key script: where N and P lead
from a question the page has not drawn yet, so that labels typed after N (and N N ...)
go to the next question at once, as Review's ``line`` of comparisons does
(:func:`components.review.position.line_around`)."""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from sqlite_utils import Database

from needlework.grounding.progress import ItemList
from store.grounding import openings
from store.grounding_line import finished, keys_beside

#: questions each way the key script knows ahead of the page: more than an annotator
#: presses N before a redraw arrives
LINE = 32


def keys_around(db: Database, items: ItemList, current: str, position: int,
                limit: int = LINE) -> tuple[list[str], list[str]]:
    """The keys of the ``limit`` questions after ``current`` in the list (nearest first)
    and before it, as N and P step (:meth:`ItemList.step`: from a question the list does
    not hold, the nearest ones each way)."""
    if items.keys is None:
        return (keys_beside(db, items.dataset, position, 1, limit),
                keys_beside(db, items.dataset, position, -1, limit))
    index = items.index_of(current, position)
    there = index is not None
    if index is None:
        index = 0 if items.ordered else bisect_left(items.positions, position)
    after = items.keys[index + 1 if there else index:][:limit]
    before = items.keys[max(0, index - limit):index][::-1]
    return after, before


def line(db: Database, dataset: str, annotator: str, ahead: list[str],
         behind: list[str]) -> dict[str, list[dict[str, Any]]]:
    """``{"ahead": [...], "behind": [...]}``, each ``{item, n, cursor, done}``: the
    questions' passage counts, where the cursor starts on each
    (:func:`store.grounding.openings`) and whether the annotator has finished it (so that
    U goes along the line too), two queries for all."""
    found = openings(db, dataset, annotator, [*ahead, *behind])
    done = finished(db, dataset, annotator, [*ahead, *behind])
    return {name: [{"item": k, "n": found[k][0], "cursor": found[k][1], "done": k in done}
                   for k in keys if k in found]
            for name, keys in (("ahead", ahead), ("behind", behind))}
