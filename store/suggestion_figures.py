"""What the suggestion figures read (``needlework.suggest.figures``): a dataset's
suggestions with when each was stored, and its annotations of the fields a suggestion
may carry (``label:N``, ``dim:NAME``, ``verdict:I:J``, and their ``final:`` values) with
when each was saved and where it came from (``via``, recorded when it was saved). Values
and ``via`` are parsed JSON.
"""

from __future__ import annotations

import json
from typing import Any

from sqlite_utils import Database

#: The annotation fields read: what a suggestion may carry, and the adjudicated ones.
PREFIXES = ("label:", "dim:", "verdict:", "final:label:", "final:dim:", "final:verdict:")


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def suggestion_rows(db: Database, dataset: str) -> list[dict[str, Any]]:
    """``item_key, field, source, value, created_at`` of every suggestion of ``dataset``,
    by item, field and source."""
    return [{"item_key": k, "field": f, "source": s, "value": _load(v), "created_at": at}
            for k, f, s, v, at in db.execute(
                "select item_key, field, source, value, created_at from suggestions "
                "where dataset = ? order by item_key, field, source", [dataset])]


def annotation_rows(db: Database, dataset: str) -> list[dict[str, Any]]:
    """``item_key, annotator, field, value, updated_at, via`` of every current annotation
    of ``dataset`` whose field starts with one of :data:`PREFIXES`, by item, annotator and
    field; ``via``: whether and how a suggestion was on screen when the value was saved,
    as recorded then (null: none)."""
    where = " or ".join("(field >= ? and field < ?)" for _ in PREFIXES)
    bounds = [x for p in PREFIXES for x in (p, p + "\U0010ffff")]
    return [{"item_key": k, "annotator": a, "field": f, "value": _load(v), "updated_at": at,
             "via": _load(via)}
            for k, a, f, v, at, via in db.execute(
                "select item_key, annotator, field, value, updated_at, via from annotations "
                f"where dataset = ? and ({where}) order by item_key, annotator, field",
                [dataset, *bounds])]


def suggestion_count(db: Database, dataset: str) -> int:
    """How many suggestions ``dataset`` has."""
    return db.execute("select count(*) from suggestions where dataset = ?",
                      [dataset]).fetchone()[0]
