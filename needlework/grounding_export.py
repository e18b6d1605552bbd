"""Writing annotators' work back into GaRAGe records on export.

Until grounding annotation lands, untouched records are written back exactly.
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database


def apply_annotations(db: Database, dataset: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of ``items`` with their annotations applied (none yet: verbatim)."""
    return [item["record"] for item in items]
