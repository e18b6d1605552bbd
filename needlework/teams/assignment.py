"""Assigning a dataset's items to annotators, with overlap, and each one's queue.

The admin chooses the annotators and the overlap: every item done by ``per_item``
annotators, or every item by one and a ``double_share`` of the items (picked at random
with ``seed``) by two, for agreement figures. :func:`distribute` hands each item to the
least-loaded annotators (ties broken by a rotation), so everyone's load differs by at
most one item. Gold items (:mod:`needlework.teams.quality`) are not distributed: they go
into every chosen annotator's queue, at a random place among their other items, and
nothing an annotator is shown tells them apart.

An annotator's queue is their items in dataset order; :func:`next_item` is the first
one not done (see :mod:`store.assignments` for "done"). :func:`reassign_unfinished`
moves the unfinished items of someone who left to the others in one call, and
:func:`drop_unfinished` takes the items it had to keep (everyone else had them) out of
the leaver's queue.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlite_utils import Database

from needlework.formats import preference_view
from needlework.teams import accounts
from needlework.teams.events import record
from needlework.teams.item_names import item_names
from needlework.teams.permissions import PermissionDenied, User, check, refresh, require
from needlework.words import plural
from store import assignments as store_assignments
from store import gold as store_gold
from store.datasets import get_dataset, get_item, iter_items


class AssignmentError(ValueError):
    """An assignment that cannot be made (the message says why)."""


@dataclass(frozen=True)
class AssignSummary:
    """What :func:`assign_dataset` wrote."""

    dataset: str
    items: int  # items distributed (gold items aside)
    gold_items: int
    assignments: int
    per_annotator: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ReassignSummary:
    """What :func:`reassign_unfinished` moved: ``{new annotator: items}``, gold items
    dropped because every other annotator already had them, and items nobody could
    take (each remaining annotator already had them), which stay in the leaver's queue
    until :func:`drop_unfinished` takes them out."""

    moved: dict[str, int]
    dropped_gold: int
    kept: list[str]

    def sentence(self, leaver: str) -> str:
        """What moved, in words: ``5 unfinished items of cy moved: 3 to ana, 2 to bob.``
        and what was kept, and what left, and why."""
        total = sum(self.moved.values())
        where = ", ".join(f"{n} to {who}" for who, n in sorted(self.moved.items()))
        text = (f"{plural(total, 'unfinished item')} of {leaver} moved: {where}."
                if total else f"No unfinished item of {leaver} moved.")
        if self.kept:
            text += (f" {plural(len(self.kept), 'item')} kept in {leaver}'s queue: everyone "
                     f"else already has {'them' if len(self.kept) != 1 else 'it'}.")
        if self.dropped_gold:
            text += (f" {plural(self.dropped_gold, 'gold item')} left {leaver}'s queue instead "
                     "of moving: gold items are in every annotator's queue already.")
        return text


@dataclass(frozen=True)
class QueueEntry:
    """One item of an annotator's queue, as the annotator may see it."""

    key: str
    done: bool
    started: bool


def distribute(keys: Sequence[str], annotators: Sequence[str], *, per_item: int = 1,
               double_share: float = 0.0, seed: int = 0) -> dict[str, list[str]]:
    """``{item: [annotators]}``: each item to ``per_item`` annotators (2 for a
    ``double_share`` of the items when ``per_item`` is 1), always to the least loaded
    so loads differ by at most one."""
    names = list(annotators)
    if not names:
        raise AssignmentError("choose at least one annotator")
    if len(set(names)) != len(names):
        raise AssignmentError("an annotator is chosen twice")
    if isinstance(per_item, bool) or not isinstance(per_item, int) or per_item < 1:
        raise AssignmentError(f"annotators per item must be a whole number from 1, got {per_item!r}")
    if per_item > len(names):
        raise AssignmentError(f"{per_item} annotators per item, but only {len(names)} chosen")
    if not 0.0 <= double_share <= 1.0:
        raise AssignmentError(f"the double-annotated share must be between 0 and 1, got "
                              f"{double_share!r}")
    if double_share > 0 and per_item > 1:
        raise AssignmentError("give either several annotators per item or a double-annotated "
                              "share, not both")
    if double_share > 0 and len(names) < 2:
        raise AssignmentError("a double-annotated share needs at least two annotators")
    rng = random.Random(seed)
    double = set(rng.sample(list(keys), round(double_share * len(keys))))
    load = [0] * len(names)
    out: dict[str, list[str]] = {}
    for i, key in enumerate(keys):
        k = 2 if key in double else per_item
        ranked = sorted(range(len(names)), key=lambda j: (load[j], (j - i) % len(names)))
        chosen = sorted(ranked[:k])
        for j in chosen:
            load[j] += 1
        out[key] = [names[j] for j in chosen]
    return out


def item_units(kind: str, fmt: str, record: dict[str, Any]) -> int:
    """What finishes an item: its passages (grounding) or comparisons (preference)."""
    if kind == "grounding":
        grounding = record.get("grounding")
        return len(grounding) if isinstance(grounding, list) else 0
    return len(preference_view(fmt, record).comparisons())


def _accounts(db: Database, names: Sequence[str]) -> list[str]:
    out = []
    for name in names:
        user = accounts.get_user(db, name)
        if user is None:
            raise AssignmentError(f"no account named {name!r}")
        if user.disabled:
            raise AssignmentError(f"the account {user.name!r} is disabled")
        out.append(user.name)
    return out


def _dataset(db: Database, dataset: str) -> dict[str, Any]:
    row = get_dataset(db, dataset)
    if row is None:
        raise AssignmentError(f"no dataset named {dataset!r}")
    return row


def _gold_pos(seed: int, annotator: str, key: str, low: float, high: float) -> float:
    return low + random.Random(f"{seed}|{annotator}|{key}").random() * max(high - low, 1.0)


def assign_dataset(db: Database, dataset: str, annotators: Sequence[str], *, per_item: int = 1,
                   double_share: float = 0.0, seed: int = 0, replace: bool = False,
                   actor: User | None = None) -> AssignSummary:
    """Distribute ``dataset``'s items among ``annotators`` (accounts) and put its gold
    items in every queue. A dataset already assigned is redistributed from scratch only
    with ``replace`` (annotations stay). Admins only."""
    actor = check(db, actor, "assign", dataset)
    row = _dataset(db, dataset)
    names = _accounts(db, annotators)
    existing = store_assignments.count(db, dataset)
    if existing and not replace:
        raise AssignmentError(f"dataset {dataset!r} is already assigned ({existing} "
                              "assignments): replace it to distribute again")
    gold = set(store_gold.gold_items(db, dataset))
    units: dict[str, int] = {}
    positions: dict[str, int] = {}
    for item in iter_items(db, dataset):
        units[item["key"]] = item_units(row["kind"], row["format"], item["record"])
        positions[item["key"]] = item["position"]
    if not units:
        raise AssignmentError(f"dataset {dataset!r} has no items")
    normal = [k for k in units if k not in gold]
    plan = distribute(normal, names, per_item=per_item, double_share=double_share, seed=seed)
    rows = [store_assignments.Row(key, who, float(positions[key]), units[key])
            for key, people in plan.items() for who in people]
    low, high = min(positions.values()), max(positions.values())
    rows += [store_assignments.Row(key, who, _gold_pos(seed, who, key, low, high), units[key],
                                   gold=True, source="gold")
             for key in sorted(gold) if key in units for who in names]
    by = actor.name if actor else ""
    written = store_assignments.replace_plan(
        db, dataset, rows, annotators=names, overlap=per_item, double_share=double_share,
        seed=seed, at=accounts.iso(), by=by)
    per: dict[str, int] = {}
    for r in rows:
        per[r.annotator] = per.get(r.annotator, 0) + 1
    record(db, actor, "assignment.replaced" if existing else "assignment.created", dataset,
           dataset=dataset, before={"assignments": existing} if existing else None,
           after={"annotators": names, "per_item": per_item, "double_share": double_share,
                  "seed": seed, "assignments": written, "per_annotator": per})
    return AssignSummary(dataset, len(normal), len(gold & set(units)), written, per)


def add_gold_to_queues(db: Database, dataset: str, item_key: str, *, by: str = "") -> int:
    """Put a (newly marked) gold item into the queue of every annotator of the plan."""
    plan = store_assignments.get_plan(db, dataset)
    if plan is None:
        return 0
    row = _dataset(db, dataset)
    item = get_item(db, dataset, item_key)
    if item is None:
        return 0
    units = item_units(row["kind"], row["format"], item["record"])
    low, high = db.execute("select min(position), max(position) from items where dataset = ?",
                           [dataset]).fetchone()
    rows = [store_assignments.Row(item_key, who, _gold_pos(plan["seed"], who, item_key, low, high),
                                  units, gold=True, source="gold")
            for who in plan["annotators"]]
    return store_assignments.add(db, dataset, rows, at=accounts.iso(), by=by)


def _may_read(db: Database, actor: User | None, annotator: str) -> None:
    actor = refresh(db, actor)
    if actor is not None and actor.name != annotator:
        require(actor, "view_all")


def queue(db: Database, dataset: str, annotator: str, *,
          actor: User | None = None) -> list[QueueEntry]:
    """``annotator``'s items in queue order with done/started (an annotator may read
    only their own queue)."""
    _may_read(db, actor, annotator)
    return [QueueEntry(r["item_key"], bool(r["done"]), bool(r["started"]))
            for r in store_assignments.status(db, dataset, annotator)]


def next_item(db: Database, dataset: str, annotator: str, *, after: str | None = None,
              actor: User | None = None) -> str | None:
    """The first item of ``annotator``'s queue not done (after ``after`` when given,
    wrapping around); ``None`` when everything is done."""
    _may_read(db, actor, annotator)
    pos = None if after is None else store_assignments.queue_pos(db, dataset, after, annotator)
    return store_assignments.next_unfinished(db, dataset, annotator, pos)


def queue_progress(db: Database, dataset: str, annotator: str) -> tuple[int, int, int]:
    """``(done, started, assigned)`` of ``annotator``'s own queue: items done, items they
    set anything on (done included), items in the queue; the figures their pages show
    in team mode (the same words as :func:`needlework.grounding.progress.progress_text`)."""
    rows = store_assignments.status(db, dataset, annotator)
    return (sum(bool(r["done"]) for r in rows),
            sum(bool(r["done"] or r["started"]) for r in rows), len(rows))


def queue_totals(db: Database, dataset: str) -> dict[str, tuple[int, int, int]]:
    """:func:`queue_progress` of every annotator with a queue in ``dataset``."""
    return {r["annotator"]: (r["done"] or 0, (r["done"] or 0) + (r["started"] or 0),
                             r["assigned"])
            for r in store_assignments.progress_by_annotator(db, dataset)}


def visible_items(db: Database, dataset: str, actor: User | None) -> list[str] | None:
    """The items ``actor`` may open: ``None`` means all (local mode, reviewers, admins);
    an annotator gets their queue."""
    actor = refresh(db, actor)
    if actor is None or actor.at_least("reviewer"):
        return None
    return [r["item_key"] for r in store_assignments.status(db, dataset, actor.name)]


def visible_datasets(db: Database, actor: User | None) -> list[str] | None:
    """The datasets ``actor`` works on: ``None`` means all (local mode, reviewers,
    admins); an annotator gets those with items in their queue."""
    actor = refresh(db, actor)
    if actor is None or actor.at_least("reviewer"):
        return None
    return store_assignments.datasets_of(db, actor.name)


def reassign_unfinished(db: Database, dataset: str, leaver: str, *,
                        to: Sequence[str] | None = None,
                        actor: User | None = None) -> ReassignSummary:
    """Give every item ``leaver`` has not finished to ``to`` (default: the plan's other
    annotators with an enabled account), least loaded first, never to someone who has
    the item already. Their finished items and all annotations stay. Admins only."""
    actor = check(db, actor, "assign", dataset)
    _dataset(db, dataset)
    if to is not None:
        targets = _accounts(db, to)
    else:
        plan = store_assignments.get_plan(db, dataset) or {"annotators": []}
        targets = []
        for name in plan["annotators"]:
            user = accounts.get_user(db, name)
            if user is not None and not user.disabled:
                targets.append(user.name)
    targets = [t for t in targets if t != leaver]
    if not targets:
        raise AssignmentError(f"nobody to give {leaver}'s items to: choose annotators")
    unfinished = [r for r in store_assignments.status(db, dataset, leaver) if not r["done"]]
    loads = store_assignments.loads(db, dataset)
    moved: dict[str, int] = {}
    kept: list[str] = []
    dropped = 0
    at, by = accounts.iso(), actor.name if actor else ""
    with db.atomic():
        for r in unfinished:
            holders = set(store_assignments.assignees(db, dataset, r["item_key"]))
            free = [t for t in targets if t not in holders]
            if not free:
                if r["gold"] and r["source"] == "gold":
                    store_assignments.remove(db, dataset, r["item_key"], leaver)
                    dropped += 1
                else:
                    kept.append(r["item_key"])
                continue
            new = min(free, key=lambda t: (loads.get(t, 0), targets.index(t)))
            store_assignments.move(db, dataset, r["item_key"], leaver, new, at=at, by=by)
            loads[new] = loads.get(new, 0) + 1
            moved[new] = moved.get(new, 0) + 1
        current = store_assignments.get_plan(db, dataset)
        if current is not None:
            names = [n for n in current["annotators"] if n != leaver]
            names += [t for t in targets if t not in names]
            store_assignments.set_plan_annotators(db, dataset, names)
    record(db, actor, "assignment.reassigned", leaver, dataset=dataset,
           after={"moved": moved, "dropped_gold": dropped, "kept": kept})
    return ReassignSummary(moved, dropped, kept)


def unfinished_items(db: Database, dataset: str, annotator: str, *,
                     actor: User | None = None) -> list[str]:
    """The items of ``annotator``'s queue they have not finished, in queue order (an
    annotator may read only their own)."""
    _may_read(db, actor, annotator)
    return [r["item_key"] for r in store_assignments.status(db, dataset, annotator)
            if not r["done"]]


def drop_unfinished(db: Database, dataset: str, leaver: str, keys: Sequence[str] | None = None,
                    *, actor: User | None = None) -> list[str]:
    """Take ``leaver``'s unfinished items (those of ``keys``, default all: after
    :func:`reassign_unfinished`, the items everyone else already had) out of the plan:
    they leave ``leaver``'s queue; their annotations, and the items' other assignments,
    stay. Finished items are never dropped. One ``assignment.dropped`` audit event.
    Admins only. Returns the keys dropped, in queue order."""
    actor = check(db, actor, "assign", dataset)
    _dataset(db, dataset)
    wanted = None if keys is None else set(keys)
    unfinished = [k for k in unfinished_items(db, dataset, leaver)
                  if wanted is None or k in wanted]
    if wanted is not None and (extra := sorted(wanted - set(unfinished))):
        name = item_names(db, dataset, extra[:1])[extra[0]]
        raise AssignmentError(f'"{name}" is not an unfinished item of {leaver} in '
                              f"{dataset!r}: nothing was dropped")
    if not unfinished:
        raise AssignmentError(f"{leaver} has no unfinished item in {dataset!r}")
    with db.atomic():
        for key in unfinished:
            store_assignments.remove(db, dataset, key, leaver)
    record(db, actor, "assignment.dropped", leaver, dataset=dataset,
           before={"items": unfinished}, after={"items": []})
    return unfinished


@dataclass(frozen=True)
class AnnotatorProgress:
    annotator: str
    assigned: int
    done: int
    started: int  # begun, not done
    remaining: int

    @property
    def share_done(self) -> float:
        return self.done / self.assigned if self.assigned else 0.0


@dataclass(frozen=True)
class DatasetProgress:
    dataset: str
    items: int
    assigned_items: int
    assignments: int
    done: int  # assignments done
    complete_items: int  # items every assignee finished
    annotators: int

    @property
    def share_done(self) -> float:
        return self.done / self.assignments if self.assignments else 0.0


def annotator_progress(db: Database, dataset: str, *,
                       actor: User | None = None) -> list[AnnotatorProgress]:
    """Progress of each annotator of ``dataset`` (an annotator sees only their own)."""
    actor = refresh(db, actor)
    rows = store_assignments.progress_by_annotator(db, dataset)
    if actor is not None and not actor.at_least("reviewer"):
        rows = [r for r in rows if r["annotator"] == actor.name]
    return [AnnotatorProgress(r["annotator"], r["assigned"], r["done"] or 0, r["started"] or 0,
                              r["remaining"] or 0) for r in rows]


def dataset_progress(db: Database, dataset: str | None = None) -> list[DatasetProgress]:
    """Progress of every assigned dataset (or one): counts only, open to everyone."""
    return [DatasetProgress(r["dataset"], r["items"], r["assigned_items"], r["assignments"],
                            r["done"] or 0, r["complete_items"], r["annotators"])
            for r in store_assignments.progress_by_dataset(db, dataset)]


__all__ = ["AnnotatorProgress", "AssignSummary", "AssignmentError", "DatasetProgress",
           "PermissionDenied", "QueueEntry", "ReassignSummary", "add_gold_to_queues",
           "annotator_progress", "assign_dataset", "dataset_progress", "distribute",
           "drop_unfinished", "unfinished_items",
           "item_units", "next_item", "queue", "queue_progress", "queue_totals",
           "reassign_unfinished", "visible_datasets",
           "visible_items"]
