"""One verdict for several comparisons at once (issue 18, point 22): the reviewer picks a
run of comparisons of their view (say the next 20 without a verdict) and a verdict;
each comparison gets it as one ordinary write, with who and when and a history row (so
each can be undone), all in one transaction, in team mode as the signed-in user."""

from __future__ import annotations

from collections.abc import Iterable

from sqlite_utils import Database

from needlework.review.queue import Comparison
from needlework.review.verdicts import field_name, make_value
from needlework.teams.permissions import User
from needlework.writes import write_annotation
from store import pairs as pairs_store


def judge_all(db: Database, dataset: str, comparisons: Iterable[Comparison], verdict: str,
              annotator: str, *, reasons: Iterable[str] = (), actor: User | None = None) -> int:
    """Give every comparison of ``comparisons`` the verdict ``verdict`` (with ``reasons``)
    as ``annotator``; all or nothing. Returns how many changed (one already with that
    value is left as it is). Raises ``ValueError`` for an unknown verdict or reason or a
    comparison the dataset does not have, ``PermissionDenied`` when ``actor`` may not
    write one of them (nothing is written then)."""
    value = make_value(verdict, reasons)
    comparisons = list(comparisons)
    for c in comparisons:
        row = pairs_store.item(db, dataset, c.item)
        if row is None:
            raise ValueError(f"dataset {dataset!r} has no preference item {c.item!r}")
        if not (0 <= c.i < row[2] and 0 <= c.j < row[3]):
            raise ValueError(f"item {c.item!r} has no comparison chosen {c.i + 1} vs rejected "
                             f"{c.j + 1} (it has {row[2]} chosen and {row[3]} rejected)")
    changed = 0
    with db.atomic():
        for c in comparisons:
            hid = write_annotation(db, dataset, c.item, field_name(c.i, c.j), value,
                                   annotator=annotator, actor=actor)
            changed += hid is not None
    return changed
