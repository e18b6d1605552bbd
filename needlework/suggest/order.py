"""The question list in the order of its suggestions' confidence (issue 50): the
questions whose least sure suggestion is least sure come first (where a person checks
the model most), or the most sure first (where one key accepts most safely).

A question's confidence is its lowest suggestion confidence (``suggestions.confidence``,
a probability the source gave: :mod:`needlework.suggest.data`); questions without one
follow, in the list's own order. Ordering keeps the list's members (a filter, a queue)
and changes only their order.
"""

from __future__ import annotations

from dataclasses import replace

from sqlite_utils import Database

from needlework.grounding.progress import ItemList
from store.suggestions import all_positions, confidence_ranked

LIST, LEAST, MOST = "list", "least", "most"
#: The orders offered, with their words on the page.
ORDERS: dict[str, str] = {LIST: "List order", LEAST: "Least sure suggestion first",
                          MOST: "Most sure suggestion first"}


def by_confidence(db: Database, items: ItemList, order: str) -> ItemList:
    """``items`` in ``order`` (:data:`ORDERS`; ``list``, or an unknown one: ``items``
    itself). A new list (the one given may be kept between reruns): the same members,
    ``ordered``, so that moving through it (N, P, U) follows the confidence."""
    if order not in (LEAST, MOST):
        return items
    ranked = confidence_ranked(db, items.dataset, most_sure=order == MOST)
    members = (list(zip(items.keys, items.positions, strict=True)) if items.keys is not None
               else all_positions(db, items.dataset))
    inside = {key for key, _ in members}
    first = [(k, p) for k, p in ranked if k in inside]
    seen = {k for k, _ in first}
    rest = [(k, p) for k, p in members if k not in seen]
    if items.ordered is False:
        rest.sort(key=lambda kp: kp[1])
    pairs = first + rest
    return replace(items, keys=[k for k, _ in pairs], positions=[p for _, p in pairs],
                   ordered=True, signature=items.signature + (order,))
