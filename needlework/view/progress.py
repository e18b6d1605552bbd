"""Each person's progress on a dataset as Home counts it (a dataset's lines there)."""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from needlework.grounding.progress import without_marked_only
from needlework.teams.assignment import queue_totals


def counted(db: Database, dataset: str, kind: str, people: list[dict[str, Any]], *,
            team: bool) -> list[dict[str, Any]]:
    """``people`` (``{annotator, started, done, ...}`` rows of ``dataset``, a ``kind``
    dataset) as Home counts them: in team mode (``team``) a person with a queue against
    their queue (``total`` added; items only marked are not started there), anyone else
    with the grounding items they only marked (a skip, a flag) not counted as started.
    A person left with nothing started is left out."""
    queues = queue_totals(db, dataset) if team else {}
    out: list[dict[str, Any]] = []
    for p in people:
        if p["annotator"] in queues:
            done, started, total = queues[p["annotator"]]
            if started:
                out.append({**p, "done": done, "started": started, "total": total})
        elif kind == "grounding":
            out += without_marked_only(db, dataset, [p])
        else:
            out.append(p)
    return out
