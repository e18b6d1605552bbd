"""The SQL of one person's own work: their saves in a time window (the pace shown to
them, :mod:`needlework.view.pace`) and the grounding items they only marked (flagged,
skipped, commented: not started, :mod:`needlework.grounding.progress`)."""

from __future__ import annotations

from sqlite_utils import Database

#: The annotation fields that mark an item without labeling it (store.grounding.MARKS).
MARK_FIELDS = ("flag", "skipped", "comment")


def started_sql(p: str = "p") -> str:
    """SQL, true when the ``item_progress`` row ``p`` holds a field that is no mark (a
    label, a dimension, the answer): the person started the item. An item only flagged,
    skipped or commented is not started; the marks are counted only when there are so
    few fields that they could be all of them."""
    marks = ", ".join(f"'{m}'" for m in MARK_FIELDS)
    return (f"(coalesce({p}.fields, 0) > {len(MARK_FIELDS)} or coalesce({p}.fields, 0) > "
            f"(select count(*) from annotations m where m.dataset = {p}.dataset and "
            f"m.item_key = {p}.item_key and m.annotator = {p}.annotator and "
            f"m.field in ({marks})))")


def saves_between(db: Database, annotator: str, start: str, end: str) -> list[tuple[str, str, str]]:
    """``(dataset, item_key, at)`` of every change ``annotator`` made to their own items
    with ``start <= at < end`` (ISO times, UTC), oldest first (index ``history_by_time``:
    reads that person's rows of that window only)."""
    return [tuple(r) for r in db.execute(
        "select dataset, item_key, at from history where by = ? and at >= ? and at < ? "
        "and annotator = ? order by at, id", [annotator, start, end, annotator])]


def marked_only(db: Database, dataset: str, annotator: str) -> int:
    """How many items of ``dataset`` ``annotator`` set nothing on but marks (flag, skip,
    comment): counted among ``progress_totals.started``, they are not started. Reads their
    unfinished items only (``item_progress_annotator``), each with at most three fields."""
    marks = ", ".join(f"'{m}'" for m in MARK_FIELDS)
    return db.execute(
        "select count(*) from item_progress p where p.dataset = ? and p.annotator = ? and "
        f"p.done = 0 and p.fields between 1 and {len(MARK_FIELDS)} and p.fields = (select "
        "count(*) from annotations m where m.dataset = p.dataset and m.item_key = p.item_key "
        f"and m.annotator = p.annotator and m.field in ({marks}))",
        [dataset, annotator]).fetchone()[0]
