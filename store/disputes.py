"""Open disputes of a grounding dataset: units (a passage label ``label:N`` or a
dimension ``dim:FIELD``) the annotators gave different values, with no final value
(``final:label:N``, ``final:dim:FIELD``) from any reviewer yet. Read from
``unit_disputes``, which SQL keeps up to date as labels are written (m010)."""

from __future__ import annotations

from sqlite_utils import Database

_OPEN = ("from unit_disputes u join grounding_items g on g.dataset = u.dataset and "
         "g.key = u.item_key where u.dataset = :dataset and not exists (select 1 from "
         "annotations a where a.dataset = u.dataset and a.item_key = u.item_key and "
         "a.field = 'final:' || u.field)")


def next_open(db: Database, dataset: str, after: int = -1) -> tuple[str, int] | None:
    """``(key, position)`` of the first item after position ``after`` with an open
    dispute, wrapping around to the start (the item at ``after`` itself comes last);
    ``None`` when no dispute is open."""
    params = {"dataset": dataset, "after": after}
    for where in ("g.position > :after", "g.position <= :after"):
        row = db.execute(f"select g.key, g.position {_OPEN} and {where} order by g.position "
                         "limit 1", params).fetchone()
        if row is not None:
            return row[0], row[1]
    return None


def open_count(db: Database, dataset: str) -> int:
    """Items with at least one open dispute."""
    return db.execute(f"select count(distinct u.item_key) {_OPEN}",
                      {"dataset": dataset}).fetchone()[0]
