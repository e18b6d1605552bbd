"""Which items a person may open in team mode, and the queue their pages go along.

An annotator opens only the items assigned to them, unless the lead lets the annotators
of a dataset open any of its items (:data:`OPEN_ANY`, a per-dataset setting, off by
default). Either way they write only on their own items
(:func:`needlework.teams.permissions.check_write`), and the Annotate and Review pages go
along their own queue: the question list, the comparisons, N / P and the counts.
Reviewers and admins open every item (their pages go along their own queue when they
have one on Annotate); local mode (one person) opens everything.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlite_utils import Database

from needlework.teams.events import record
from needlework.teams.permissions import REVIEWER, User, check
from store import assignments as store_assignments
from store import dataset_settings

#: the dataset setting: annotators may open (read) items not assigned to them
OPEN_ANY = "annotators_open_any"


def open_any(db: Database, dataset: str) -> bool:
    """Whether the annotators of ``dataset`` may open any of its items (off where never
    set)."""
    return bool(dataset_settings.get_settings(db, dataset).get(OPEN_ANY, False))


def set_open_any(db: Database, dataset: str, on: bool, *, actor: User | None) -> bool:
    """Let the annotators of ``dataset`` open any item (``on``) or only their own, as the
    lead (admins: it is part of the assignment); one ``dataset.setting`` audit event.
    Returns the value before."""
    actor = check(db, actor, "assign", dataset)
    before = dataset_settings.set_setting(
        db, dataset, OPEN_ANY, bool(on), by=actor.name if actor else "",
        at=datetime.now(UTC).isoformat(timespec="milliseconds"))
    was = bool(before)
    record(db, actor, "dataset.setting", OPEN_ANY, dataset=dataset, before={OPEN_ANY: was},
           after={OPEN_ANY: bool(on)})
    return was


def restricted(db: Database, dataset: str, actor: User | None) -> bool:
    """Whether ``actor`` opens only the items assigned to them in ``dataset``: an
    annotator in team mode, unless the lead lets annotators open any item."""
    return actor is not None and not actor.at_least(REVIEWER) and not open_any(db, dataset)


def may_open(db: Database, dataset: str, item_key: str, actor: User | None) -> bool:
    """Whether ``actor`` may see item ``item_key`` of ``dataset`` (its text, its
    responses)."""
    return not restricted(db, dataset, actor) or store_assignments.is_assigned(
        db, dataset, item_key, actor.name if actor else "")


def refusal(dataset: str, actor: User) -> str:
    """The sentence a page shows in place of an item ``actor`` may not open."""
    return (f"That item of {dataset} is not assigned to {actor.name}: annotators open only "
            "their own items here. Your own queue is below.")


def own_queue(db: Database, dataset: str, actor: User | None, *,
              reviewers: bool = True) -> list[str] | None:
    """The item keys ``actor``'s page goes along, in queue order; ``None``: the whole
    dataset. An annotator in team mode: their queue, empty when nothing is assigned to
    them (whether or not the lead lets annotators open any item: that lets a link open
    another's item, never puts it in their list). A reviewer or admin: their queue when
    they have one and ``reviewers``, else the whole dataset. Local mode: the whole
    dataset."""
    if actor is None:
        return None
    keys = store_assignments.queue_keys(db, dataset, actor.name)
    if actor.at_least(REVIEWER):
        return keys if keys and reviewers else None
    return keys


__all__ = ["OPEN_ANY", "may_open", "open_any", "own_queue", "refusal", "restricted",
           "set_open_any"]
