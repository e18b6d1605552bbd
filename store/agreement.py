"""Agreement sums kept right when who counts changes (the SQL is in
:mod:`store.migrations_facts`: the triggers keep them as annotations change).

Who counts on an item is decided by its assignment (:func:`store.migrations_facts_early.counted`),
so every change to ``assignments`` runs inside :func:`recounted`: what the items' counted
votes gave is taken away before the change and added back after it, in the same
transaction.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from sqlite_utils import Database

from store.migrations_facts import add_agreement, recount_disputes


@contextmanager
def recounted(db: Database, dataset: str, keys: Sequence[str] | None = None) -> Iterator[None]:
    """Run the block (a change of ``dataset``'s assignments of ``keys``, or of all its
    items) with the agreement tables recounted around it, all in one transaction."""
    keys = None if keys is None else sorted(set(keys))
    with db.atomic():
        add_agreement(db, -1, dataset, keys)
        yield
        add_agreement(db, 1, dataset, keys)
        recount_disputes(db, dataset, keys)
