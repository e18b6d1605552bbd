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


def finished(db: Database, dataset: str, annotator: str, keys: list[str]) -> set[str]:
    """Those of ``keys`` that ``annotator`` has finished in ``dataset`` (``item_progress``'s
    ``done``, as :func:`store.grounding.unfinished_after` reads it)."""
    keys = [k for k in keys if k]
    if not keys:
        return set()
    marks = ", ".join("?" * len(keys))
    rows = db.execute(f"select item_key from item_progress where dataset = ? and annotator = ? "
                      f"and done = 1 and item_key in ({marks})", [dataset, annotator, *keys])
    return {r[0] for r in rows}
