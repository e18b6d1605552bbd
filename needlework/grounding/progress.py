"""Progress of one annotator and the question list they move through.

An item is **done** for an annotator when every passage has their label and they
wrote an answer (or the deflection) in which no ``[cite_N]`` marker points to a passage
the item does not have; **in progress** when they set anything on it (an answer with
such a marker included) but marks (a question only flagged, skipped or commented is not
started); **unlabeled** otherwise. **Disagree** means two annotators
gave different passage labels or dimension values on it.

The counts behind these states are kept by SQL as labels are written
(``item_progress``, :mod:`store.migrations` m008), and the list is asked of SQL a window
at a time, so nothing here grows with the dataset: moving to the next question, or
drawing the picker, reads a few rows. A filter is evaluated once over the dataset's
slim facts (:class:`ItemList`), then brought up to date from the items that changed.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlite_utils import Database

from needlework.formats.garage import DEFLECTION
from store import grounding as sg
from store.own_work import marked_only

UNLABELED, IN_PROGRESS, DONE, DISAGREE = "unlabeled", "in progress", "done", "annotators disagree"
STATES = (UNLABELED, IN_PROGRESS, DONE, DISAGREE)
STATE_ICONS = {UNLABELED: "○", IN_PROGRESS: "◐", DONE: "●"}
#: The annotator's marks on a question, as the filter names them and the picker shows them.
MARKS = {"flag": ("flagged", "🚩"), "skipped": ("skipped", "⏭"), "comment": ("commented", "💬")}
_SQL_STATES = {UNLABELED: sg.UNLABELED, IN_PROGRESS: sg.IN_PROGRESS, DONE: sg.DONE,
               DISAGREE: sg.DISAGREE}

TIME = sg.TIME_COLUMN  # pseudo dimension for filters: the combined time sensitivity
DEFLECTION_FILTERS = ("any", "deflected", "answered (not deflected)", "no answer yet",
                      "needs deflection (no ANSWER passage)")
_SQL_DEFLECTION = dict(zip(DEFLECTION_FILTERS, ("", sg.DEFLECTED, sg.ANSWERED, sg.NO_ANSWER,
                                                sg.NEEDS_DEFLECTION), strict=True))

#: More changed items than this since a list was made: it is made again.
FULL_RECOMPUTE = 400


def item_state(fields: int, done: bool, marks: str | None = None) -> str:
    """``unlabeled``, ``in progress`` or ``done`` from an annotator's progress on an item:
    ``fields`` set (adjudications aside), ``done`` (see the module docstring) and
    ``marks``, their marks on it as the picker's rows give them (``flag,skipped``): a
    question only marked (flagged, skipped, commented) is not in progress."""
    if done:
        return DONE
    marked = len([m for m in (marks or "").split(",") if m in MARKS])
    return IN_PROGRESS if fields > marked else UNLABELED


@dataclass
class ItemFilter:
    """What the question list shows. Dimension filters (``{field: allowed values}``,
    field ``time`` for the time sensitivity) compare the annotator's own value when
    set, else the record's (``file_values`` False, for a person kept from the file's
    labels and dimensions: their own only); empty sets mean "any". ``text`` is matched in
    the question and its id, case aside; ``12`` or ``#12`` also finds question 12."""

    dims: dict[str, set[str]] = field(default_factory=dict)
    states: set[str] = field(default_factory=set)
    deflection: str = "any"
    text: str = ""
    marks: set[str] = field(default_factory=set)  # of store.grounding.MARKS: any of them
    file_values: bool = True

    def active(self) -> bool:
        """Whether anything is filtered."""
        return bool(any(self.dims.values()) or self.states or self.deflection != "any"
                    or self.text.strip() or self.marks)

    def query(self, annotator: str) -> sg.ItemQuery:
        """The filter as the store's SQL takes it."""
        text = self.text.strip()
        number = text.removeprefix("#").strip()
        return sg.ItemQuery(
            annotator=annotator,
            text=text.casefold(),
            position=int(number) - 1 if number.isdigit() and len(number) < 10 else None,
            dims={name: frozenset(values) for name, values in self.dims.items() if values},
            states=frozenset(_SQL_STATES[s] for s in self.states),
            deflection=_SQL_DEFLECTION[self.deflection],
            deflection_text=" ".join(DEFLECTION.split()).casefold(),
            marks=frozenset(self.marks),
            file_values=self.file_values,
        )

    def signature(self) -> tuple:
        """A hashable value that changes whenever what the filter keeps may change."""
        return (tuple(sorted((k, tuple(sorted(v))) for k, v in self.dims.items() if v)),
                tuple(sorted(self.states)), self.deflection, self.text.strip().casefold(),
                tuple(sorted(self.marks)), self.file_values)


@dataclass
class ItemList:
    """The items one annotator moves through, in order.

    ``keys is None``: every item of the dataset, in dataset order (everything is asked
    of SQL by position). Otherwise the items a filter kept (``positions`` sorted, with
    ``keys`` alongside), or an annotator's queue in team mode (``ordered``: queue order,
    ``positions`` then only says where each is in the dataset). Plain data: it can be
    kept between reruns and brought up to date with :meth:`refresh`.
    """

    dataset: str
    annotator: str
    total: int = 0  # items in the dataset
    keys: list[str] | None = None
    positions: list[int] = field(default_factory=list)
    ordered: bool = False  # True: queue order, not dataset order
    as_of: int = 0  # history id the list reflects
    signature: tuple = ()
    _index: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._reindex()

    def _reindex(self) -> None:
        self._index = {k: n for n, k in enumerate(self.keys or [])}

    @property
    def filtered(self) -> bool:
        return self.keys is not None

    def shown(self) -> int:
        """How many items the list holds."""
        return self.total if self.keys is None else len(self.keys)

    def contains(self, key: str) -> bool:
        return self.keys is None or key in self._index

    def first(self, db: Database) -> str | None:
        """The list's first item."""
        if self.keys is None:
            return sg.key_at(db, self.dataset, 0) or sg.key_at(db, self.dataset, -1, 1)
        return self.keys[0] if self.keys else None

    def _place(self, key: str, position: int) -> tuple[int, bool]:
        """Index of ``key`` in the list, or where it would go; and whether it is there."""
        if key in self._index:
            return self._index[key], True
        if self.ordered:
            return 0, False
        return bisect_left(self.positions, position), False

    def step(self, db: Database, key: str, position: int, offset: int) -> str | None:
        """The item ``offset`` (+1 or -1) places from ``key`` (at dataset ``position``);
        the nearest one in that direction when ``key`` is not in the list; ``None`` past
        either end."""
        if self.keys is None:
            return sg.key_at(db, self.dataset, position, offset)
        index, there = self._place(key, position)
        if there:
            index += offset
        elif offset < 0:
            index -= 1
        return self.keys[index] if 0 <= index < len(self.keys) else None

    def window(self, db: Database, key: str, position: int, size: int = 50) -> list[dict[str, Any]]:
        """About ``size`` rows of the list around ``key`` for the picker (``key, position,
        title, n_passages, fields, done``), in list order."""
        before = size // 2
        if self.keys is None:
            start = max(0, min(position - before, self.total - size))
            return sg.list_rows(db, self.dataset, self.annotator, start=start, stop=start + size)
        index, _ = self._place(key, position)
        start = max(0, min(index - before, len(self.keys) - size))
        chosen = self.positions[start:start + size]
        rows = {r["position"]: r for r in sg.list_rows(db, self.dataset, self.annotator, chosen)}
        return [rows[p] for p in chosen if p in rows]

    def index_of(self, key: str, position: int) -> int | None:
        """0-based place of ``key`` in the list (``None`` when it is not in it)."""
        if self.keys is None:
            return position
        return self._index.get(key)

    def next_unfinished(self, db: Database, key: str, position: int) -> str | None:
        """The first item after ``key`` in the list (wrapping around) the annotator has not
        finished; ``None`` when every one is done."""
        if self.keys is None:
            return sg.unfinished_after(db, self.dataset, self.annotator, position)
        index, there = self._place(key, position)
        order = self.positions[index + 1 if there else index:] + self.positions[:index]
        return sg.unfinished_after(db, self.dataset, self.annotator, -1, order)

    def next_for_later(self, db: Database, key: str, position: int) -> str | None:
        """The first item after ``key`` in the list (wrapping around, ``key`` itself left
        out) that the annotator left for later: flagged, or skipped and not finished since
        (:func:`store.grounding.left_for_later`); ``None`` when there is none."""
        marked = dict((k, p) for p, k in sg.left_for_later(db, self.dataset, self.annotator))
        marked.pop(key, None)
        if not marked:
            return None
        if self.keys is None:
            after = [(p, k) for k, p in marked.items() if p > position]
            return min(after or [(p, k) for k, p in marked.items()])[1]
        index, there = self._place(key, position)
        start = index + 1 if there else index  # the list from here on, then from its start
        ahead = [((self._index[k] - start) % len(self.keys), k) for k in marked
                 if k in self._index]
        return min(ahead)[1] if ahead else None

    def refresh(self, db: Database, flt: ItemFilter, changed: Collection[str], head: int) -> bool:
        """Bring a filtered list up to date with the items in ``changed`` (their
        annotations changed since :attr:`as_of`); ``False`` when too many changed and the
        list must be made again. Queue lists keep their order: only membership changes."""
        self.as_of = head
        if self.keys is None or not changed:
            return True
        if len(changed) > FULL_RECOMPUTE:
            return False
        changed = list(changed)
        keep = dict((k, p) for p, k in sg.matching_items(db, self.dataset, flt.query(self.annotator),
                                                          changed))
        if self.ordered:
            return all((k in keep) == (k in self._index) for k in changed)
        for k in changed:
            if k in self._index and k not in keep:
                n = self._index[k]
                del self.keys[n], self.positions[n]
                self._reindex()
            elif k in keep and k not in self._index:
                n = bisect_right(self.positions, keep[k])
                self.keys.insert(n, k)
                self.positions.insert(n, keep[k])
                self._reindex()
        return True


def make_list(db: Database, dataset: str, annotator: str, flt: ItemFilter, head: int,
              queue: Sequence[str] | None = None) -> ItemList:
    """The list ``flt`` keeps (every item when it is not active), or the items of
    ``queue`` (an annotator's queue, in its order) that it keeps."""
    signature = flt.signature() + (None if queue is None else tuple(queue),)
    total = sg.item_count(db, dataset)
    if queue is None and not flt.active():
        return ItemList(dataset, annotator, total, as_of=head, signature=signature)
    if flt.active():
        found = sg.matching_items(db, dataset, flt.query(annotator), list(queue) if queue is not None
                                  else None)
    else:
        found = sg.matching_items(db, dataset, sg.ItemQuery(annotator), list(queue or ()))
    if queue is None:
        return ItemList(dataset, annotator, total, [k for _, k in found], [p for p, _ in found],
                        as_of=head, signature=signature)
    where = {k: p for p, k in found}
    keys = [k for k in queue if k in where]
    return ItemList(dataset, annotator, total, keys, [where[k] for k in keys], ordered=True,
                    as_of=head, signature=signature)


def progress(db: Database, dataset: str, annotator: str) -> tuple[int, int, int]:
    """``(done, started, total)``: items ``annotator`` finished, items they set anything
    on but marks (done included: a question only flagged, skipped or commented is not
    started), and items in the dataset."""
    started, done = sg.progress_total(db, dataset, annotator) if annotator else (0, 0)
    if started > done:
        started -= marked_only(db, dataset, annotator)
    return done, started, sg.item_count(db, dataset)


def without_marked_only(db: Database, dataset: str,
                        people: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``people`` (``{annotator, started, done}`` rows of a grounding dataset) with the
    items each only marked (flag, skip, comment) taken out of ``started``; a person left
    with nothing started is dropped."""
    out = []
    for p in people:
        started = int(p["started"])
        if started > int(p["done"]):
            started -= marked_only(db, dataset, str(p["annotator"]))
        if started > 0:
            out.append({**p, "started": started})
    return out


def progress_text(done: int, started: int, total: int, who: str) -> str:
    """The one wording of a grounding progress figure, used wherever one is shown:
    ``3 of 16 items done by ana · 5 more started`` (done: every passage labeled and an
    answer without a marker pointing to no passage)."""
    more = started - done
    return (f"{done:,} of {total:,} items done by {who}"
            + (f" · {more:,} more started" if more else ""))
