"""Which comparisons to review, in what order, and moving through them.

A comparison is chosen[i] vs rejected[j] of one item. Long-form RewardBench
items have 1 × 3, plain pairs and needles 1 × 1, RM-Bench items 3 × 3; with the
``same-style`` scope an RM-Bench item gives only its diagonal (chosen[i] vs
rejected[i]: the near-identical pairs that differ by the injected error).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field

from sqlite_utils import Database

from store import pairs as pairs_store

SCOPES = {
    "all": "every chosen × every rejected",
    "same-style": "same style only (chosen i vs rejected i)",
}


@dataclass(frozen=True, order=True)
class Comparison:
    """chosen[i] vs rejected[j] of the item ``item`` at import ``position``."""

    position: int
    item: str
    i: int
    j: int

    @property
    def ident(self) -> tuple[str, int, int]:
        """``(item, i, j)``: how verdicts are keyed."""
        return (self.item, self.i, self.j)


def item_comparisons(n_chosen: int, n_rejected: int, scope: str = "all") -> list[tuple[int, int]]:
    """The ``(i, j)`` pairs of one item under ``scope``."""
    if scope == "same-style" and n_chosen == n_rejected and n_chosen > 1:
        return [(i, i) for i in range(n_chosen)]
    return [(i, j) for i in range(n_chosen) for j in range(n_rejected)]


def build_queue(
    items: Iterable[tuple[int, str, int, int]], scope: str = "all"
) -> list[Comparison]:
    """Every comparison of ``items`` (``(position, key, n_chosen, n_rejected)``) in
    reading order: item by item, then chosen index, then rejected index."""
    out = [
        Comparison(position, key, i, j)
        for position, key, n_chosen, n_rejected in items
        for i, j in item_comparisons(n_chosen, n_rejected, scope)
    ]
    out.sort()
    return out


def index_of(queue: Sequence[Comparison], current: Comparison | None) -> int | None:
    """Where ``current`` is in ``queue`` (``None`` when it is not there)."""
    if current is None:
        return None
    k = bisect_left(queue, current)
    return k if k < len(queue) and queue[k] == current else None


def step(queue: Sequence[Comparison], current: Comparison | None, delta: int) -> Comparison | None:
    """The comparison ``delta`` places after (or before) ``current``, stopping at the
    ends. When ``current`` is not in the queue (filtered out), the nearest one in
    that direction is taken."""
    if not queue:
        return None
    if current is None:
        return queue[0] if delta >= 0 else queue[-1]
    k = index_of(queue, current)
    if k is None:
        k = bisect_right(queue, current) if delta > 0 else bisect_left(queue, current) - 1
        delta -= 1 if delta > 0 else -1 if delta < 0 else 0
    return queue[max(0, min(len(queue) - 1, k + delta))]


def next_unreviewed(
    queue: Sequence[Comparison],
    current: Comparison | None,
    reviewed: Collection[tuple[str, int, int]],
    include_current: bool = False,
) -> Comparison | None:
    """The first comparison after ``current`` (wrapping around to the start) that
    is not in ``reviewed``; ``None`` when every one is reviewed."""
    if not queue:
        return None
    start = 0 if current is None else bisect_left(queue, current)
    if current is not None and not include_current and start < len(queue) and queue[start] == current:
        start += 1
    for k in range(len(queue)):
        candidate = queue[(start + k) % len(queue)]
        if candidate.ident not in reviewed:
            return candidate
    return None


def unreviewed_count(queue: Iterable[Comparison], reviewed: Collection[tuple[str, int, int]]) -> int:
    """How many comparisons of ``queue`` are not in ``reviewed``."""
    return sum(1 for c in queue if c.ident not in reviewed)


# --- the review list at any size ------------------------------------------------------------


@dataclass
class PairList:
    """The comparisons one reviewer moves through: items in dataset order (``rows is
    None``: every item, everything asked of SQL by position), or the items a filter kept
    (``rows``: ``(position, key, n_chosen, n_rejected)``, in dataset order, or in another
    order when ``ordered``: sorted by model margin), each giving its comparisons in
    ``scope``. ``only``: the items the list may ever hold (an annotator's own queue in
    team mode; ``rows`` is then always given). Plain data: kept between reruns, brought
    up to date with :meth:`refresh`.
    """

    dataset: str
    annotator: str
    scope: str = "all"
    rows: list[tuple[int, str, int, int]] | None = None
    ordered: bool = False
    prefix: list[int] = field(default_factory=list)  # comparisons before each row (or position)
    reviewed: dict[str, int] = field(default_factory=dict)  # comparisons judged, per item
    as_of: int = 0
    signature: tuple = ()
    only: frozenset[str] | None = None  # the items it may hold (a person's own queue)
    _index: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._reindex()

    def _reindex(self) -> None:
        self._index = {row[1]: n for n, row in enumerate(self.rows or [])}
        if self.rows is not None:
            self.prefix = [0]
            for _, _, n_c, n_r in self.rows:
                self.prefix.append(self.prefix[-1] + len(item_comparisons(n_c, n_r, self.scope)))

    @property
    def filtered(self) -> bool:
        return self.rows is not None

    def items(self) -> int:
        """Items in the list (``-1``: every item of the dataset)."""
        return -1 if self.rows is None else len(self.rows)

    def total(self) -> int:
        """Comparisons in the list."""
        return self.prefix[-1] if self.prefix else 0

    def contains(self, key: str) -> bool:
        return self.rows is None or key in self._index

    def index_of(self, c: Comparison | None, n_chosen: int = 1, n_rejected: int = 1) -> int | None:
        """0-based place of ``c`` (its item has ``n_chosen`` × ``n_rejected`` responses) in
        the list; ``None`` when it is not in it."""
        if c is None:
            return None
        if self.rows is None:
            if not 0 <= c.position < len(self.prefix) - 1:
                return None
            base = self.prefix[c.position]
        else:
            k = self._index.get(c.item)
            if k is None:
                return None
            base = self.prefix[k]
        pairs = item_comparisons(n_chosen, n_rejected, self.scope)
        return base + pairs.index((c.i, c.j)) if (c.i, c.j) in pairs else None

    def first(self, db: Database) -> Comparison | None:
        """The list's first comparison."""
        row = pairs_store.item_near(db, self.dataset, -1, 1) if self.rows is None else (
            self.rows[0] if self.rows else None)
        return _first(row, self.scope)

    def _neighbour_row(self, db: Database, c: Comparison, delta: int):
        if self.rows is None:
            return pairs_store.item_near(db, self.dataset, c.position, delta)
        k = self._index.get(c.item)
        if k is None:
            if self.ordered:
                return self.rows[0] if delta > 0 and self.rows else None
            positions = [r[0] for r in self.rows]
            k = (bisect_right(positions, c.position) if delta > 0
                 else bisect_left(positions, c.position) - 1)
            return self.rows[k] if 0 <= k < len(self.rows) else None
        k += delta
        return self.rows[k] if 0 <= k < len(self.rows) else None

    def step(self, db: Database, c: Comparison, delta: int, n_chosen: int,
             n_rejected: int) -> Comparison | None:
        """The comparison one place after (``delta`` 1) or before (-1) ``c`` (whose item has
        ``n_chosen`` × ``n_rejected`` responses); ``None`` past either end."""
        if self.contains(c.item):
            pairs = item_comparisons(n_chosen, n_rejected, self.scope)
            if (c.i, c.j) in pairs:
                k = pairs.index((c.i, c.j)) + delta
                if 0 <= k < len(pairs):
                    return Comparison(c.position, c.item, *pairs[k])
        row = self._neighbour_row(db, c, delta)
        if row is None:
            return None
        pairs = item_comparisons(row[2], row[3], self.scope)
        i, j = pairs[0] if delta > 0 else pairs[-1]
        return Comparison(row[0], row[1], i, j)

    def walk(self, db: Database, c: Comparison, delta: int, n_chosen: int, n_rejected: int,
             limit: int) -> list[Comparison]:
        """Up to ``limit`` comparisons after (``delta`` 1) or before (-1) ``c`` (whose item
        has ``n_chosen`` × ``n_rejected`` responses), nearest first: where J or K pressed
        again and again lead."""
        out: list[Comparison] = []
        counts = (n_chosen, n_rejected)
        while len(out) < limit:
            found = self.step(db, c, delta, *counts)
            if found is None:
                break
            if found.item != c.item:
                row = pairs_store.item(db, self.dataset, found.item)
                if row is None:
                    break
                counts = (int(row[2]), int(row[3]))
            out.append(found)
            c = found
        return out

    def next_unreviewed(self, db: Database, c: Comparison | None, n_chosen: int = 0,
                        n_rejected: int = 0) -> Comparison | None:
        """The first comparison after ``c`` (wrapping around, ``c`` itself last) without
        this reviewer's verdict; ``None`` when every one has one."""
        if c is not None and self.contains(c.item):
            mine = pairs_store.my_verdicts_on(db, self.dataset, c.item, self.annotator)
            pairs = item_comparisons(n_chosen, n_rejected, self.scope)
            after = pairs[pairs.index((c.i, c.j)) + 1:] if (c.i, c.j) in pairs else pairs
            for i, j in after:
                if (i, j) not in mine:
                    return Comparison(c.position, c.item, i, j)
        position = -1 if c is None else c.position
        if self.rows is None:
            row = pairs_store.not_fully_reviewed_after(db, self.dataset, self.annotator, self.scope,
                                                       position)
        else:
            k = self._index.get(c.item) if c is not None else None
            if k is None and not self.ordered and c is not None:
                k = bisect_right([r[0] for r in self.rows], c.position) - 1
            k = -1 if k is None else k
            ring = [r[0] for r in self.rows[k + 1:]] + [r[0] for r in self.rows[:k + 1]]
            row = pairs_store.not_fully_reviewed_after(db, self.dataset, self.annotator, self.scope,
                                                       position, ring)
        if row is None:
            return None
        mine = pairs_store.my_verdicts_on(db, self.dataset, row[1], self.annotator)
        for i, j in item_comparisons(row[2], row[3], self.scope):
            if (i, j) not in mine:
                return Comparison(row[0], row[1], i, j)
        return None

    def unreviewed(self, db: Database) -> int:
        """Comparisons in the list without this reviewer's verdict."""
        if not self.annotator:
            return self.total()
        return self.total() - sum(self.reviewed.values())

    def refresh(self, db: Database, query: pairs_store.PairQuery, changed: Iterable[str],
                head: int, keep: Callable[[list[tuple[int, str, int, int]]], list] | None = None) -> bool:
        """Bring the list up to date with the items in ``changed`` (their annotations
        changed since :attr:`as_of`); ``keep`` applies the filters SQL does not (model
        scores). ``False`` when too many changed: make the list again."""
        self.as_of = head
        changed = list(changed)
        if not changed:
            return True
        if len(changed) > REFRESH_LIMIT:
            return False
        if self.rows is None:  # every item: only the reviewer's counts change
            fresh = pairs_store.reviewed_by_item(db, self.dataset, self.annotator, self.scope,
                                                 changed) if self.annotator else {}
            for key in changed:
                self.reviewed.pop(key, None)
            self.reviewed.update(fresh)
            return True
        found = pairs_store.matching(db, self.dataset, query, changed if self.only is None
                                     else [k for k in changed if k in self.only])
        if keep is not None:
            found = keep(found)
        now = {row[1]: row for row in found}
        if self.ordered and any((k in now) != (k in self._index) for k in changed):
            return False
        for key in changed:
            if key in self._index and key not in now:
                del self.rows[self._index[key]]
                self._reindex()
            elif key in now and key not in self._index:
                self.rows.insert(bisect_right([r[0] for r in self.rows], now[key][0]), now[key])
                self._reindex()
        fresh = pairs_store.reviewed_by_item(db, self.dataset, self.annotator, self.scope,
                                             [k for k in changed if k in self._index])
        for key in changed:
            self.reviewed.pop(key, None)
        self.reviewed.update(fresh)
        return True


REFRESH_LIMIT = 400


def _first(row, scope: str) -> Comparison | None:
    if row is None:
        return None
    i, j = item_comparisons(row[2], row[3], scope)[0]
    return Comparison(row[0], row[1], i, j)


def make_pairs(db: Database, dataset: str, annotator: str, query: pairs_store.PairQuery,
               head: int, signature: tuple = (), active: bool = False,
               keep: Callable[[list[tuple[int, str, int, int]]], list] | None = None,
               ordered: bool = False, only: Collection[str] | None = None) -> PairList:
    """The list ``query`` keeps (every item when nothing is ``active``), with ``keep``
    applied after (the model filters and sort, which may reorder: ``ordered``); of the
    items ``only`` names when given (a person's own queue: nothing else, ever)."""
    if not active and only is None:
        counts = pairs_store.comparisons_by_position(db, dataset, query.scope)
        prefix = [0]
        for n in counts:
            prefix.append(prefix[-1] + n)
        made = PairList(dataset, annotator, query.scope, None, prefix=prefix, as_of=head,
                        signature=signature)
        made.reviewed = pairs_store.reviewed_by_item(db, dataset, annotator, query.scope) \
            if annotator else {}
        return made
    allowed = None if only is None else frozenset(only)
    rows = pairs_store.matching(db, dataset, query, allowed)
    if keep is not None:
        rows = keep(rows)
    made = PairList(dataset, annotator, query.scope, list(rows), ordered, as_of=head,
                    signature=signature, only=allowed)
    made.reviewed = pairs_store.reviewed_by_item(db, dataset, annotator, query.scope,
                                                 [r[1] for r in rows]) if annotator else {}
    return made
