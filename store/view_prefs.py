"""How each person has the pages set up for themselves (table ``view_prefs``, migration
m023): one JSON value per (person, name). The rules and the names live in
:mod:`needlework.view.prefs`."""

from __future__ import annotations

import json
from typing import Any

from sqlite_utils import Database

from store.annotations import now


def get_pref(db: Database, who: str, name: str) -> Any:
    """``who``'s value of ``name`` (``None``: never set)."""
    row = db.execute("select value from view_prefs where who = ? and name = ?",
                     [who, name]).fetchone()
    return None if row is None else json.loads(row[0])


def set_pref(db: Database, who: str, name: str, value: Any) -> Any:
    """Set ``who``'s value of ``name`` (in the caller's transaction, if any); returns the
    value before (``None``: never set)."""
    with db.atomic():
        before = get_pref(db, who, name)
        db.execute("insert into view_prefs (who, name, value, updated_at) values (?, ?, ?, ?) "
                   "on conflict (who, name) do update set value = excluded.value, "
                   "updated_at = excluded.updated_at",
                   [who, name, json.dumps(value), now()])
    return before
