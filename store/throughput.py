"""The SQL of a dataset's throughput: work finished per annotator per day, and what is
left (:mod:`needlework.teams.throughput`). Days are UTC days of the stored times."""

from __future__ import annotations

from sqlite_utils import Database


def done_items_by_day(db: Database, dataset: str) -> list[tuple[str, str, int]]:
    """``(annotator, day, items)`` of a grounding dataset: each item an annotator has done
    (``item_progress.done``) counts on the day of their last change on it."""
    return [tuple(r) for r in db.execute(
        "select annotator, day, count(*) from (select p.annotator, p.item_key, "
        "substr(max(h.at), 1, 10) as day from item_progress p join history h on "
        "h.dataset = p.dataset and h.item_key = p.item_key and h.annotator = p.annotator "
        "where p.dataset = ? and p.done = 1 group by p.annotator, p.item_key) "
        "group by annotator, day order by day, annotator", [dataset])]


def reviewed_comparisons_by_day(db: Database, dataset: str) -> list[tuple[str, str, int]]:
    """``(annotator, day, comparisons)`` of a preference dataset: each comparison with an
    annotator's verdict counts on the day the verdict was last saved."""
    return [tuple(r) for r in db.execute(
        "select annotator, substr(updated_at, 1, 10) as day, count(*) from annotations "
        "where dataset = ? and field like 'verdict:%' group by annotator, day "
        "order by day, annotator", [dataset])]


def items_left(db: Database, dataset: str) -> int:
    """Grounding items still to do: assignments not done by their annotator when the
    dataset is assigned, else items nobody has done."""
    assigned = db.execute("select count(*) from assignments where dataset = ?", [dataset]).fetchone()[0]
    if assigned:
        return db.execute(
            "select count(*) from assignments a where a.dataset = ? and not exists (select 1 "
            "from item_progress p where p.dataset = a.dataset and p.item_key = a.item_key and "
            "p.annotator = a.annotator and p.done = 1)", [dataset]).fetchone()[0]
    return db.execute(
        "select count(*) from grounding_items g where g.dataset = ? and not exists (select 1 "
        "from item_progress p where p.dataset = g.dataset and p.item_key = g.key and "
        "p.done = 1)", [dataset]).fetchone()[0]


def comparisons_left(db: Database, dataset: str) -> int:
    """Preference comparisons nobody has given a verdict yet."""
    total = db.execute("select coalesce(sum(n_chosen * n_rejected), 0) from preference_items "
                       "where dataset = ?", [dataset]).fetchone()[0]
    done = db.execute("select count(*) from (select distinct item_key, field from annotations "
                      "where dataset = ? and field like 'verdict:%')", [dataset]).fetchone()[0]
    return max(0, total - done)
