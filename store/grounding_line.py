"""The items beside one in a dataset's order: the questions Annotate's key script knows
ahead of the page (:mod:`needlework.grounding.line`)."""

from __future__ import annotations

from sqlite_utils import Database


def keys_beside(db: Database, dataset: str, position: int, direction: int,
                limit: int) -> list[str]:
    """The keys of up to ``limit`` items after (``direction`` 1) or before (-1) dataset
    ``position``, nearest first."""
    sql, order = ("position > ?", "position") if direction > 0 else ("position < ?", "position desc")
    rows = db.execute(f"select key from grounding_items where dataset = ? and {sql} "
                      f"order by {order} limit ?", [dataset, position, limit]).fetchall()
    return [r[0] for r in rows]
