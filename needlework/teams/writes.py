"""The writes the pages call in either mode, with roles enforced.

Each takes ``actor`` (the signed-in :class:`~needlework.teams.permissions.User`, or
``None`` in local mode) and writes under the actor's name: in team mode a change is
always saved, and logged in the history's ``by`` column, as the signed-in user,
never as a typed name. Refusals raise
:class:`~needlework.teams.permissions.PermissionDenied`.

- :func:`write_annotation`: a label, dimension or verdict of one's own (annotators:
  on their assigned items only).
- :func:`save_answer`: the long-form answer (and its ``deflected`` flag).
- :func:`adjudicate`: a reviewer's ``final:*`` value.
- :func:`undo_change`: revert one history entry (one's own; reviewers anyone's).
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from needlework import actions
from needlework.teams.permissions import PermissionDenied, User, check, check_write
from store import annotations as store_annotations

FINAL = "final:"


def _name(actor: User | None, given: str | None) -> str:
    if actor is not None and not (given or "").strip():
        return actor.name
    return (given or "").strip()


def write_annotation(db: Database, dataset: str, item_key: str, field: str, value: Any, *,
                     annotator: str | None = None, actor: User | None = None) -> int | None:
    """Set (``None`` clears) one of the writer's own annotations; returns the history
    id, ``None`` when nothing changed. ``annotator`` defaults to the actor's name."""
    if field.startswith(FINAL):
        raise ValueError(f"{field}: final values are written by adjudicate()")
    who = _name(actor, annotator)
    check_write(db, actor, dataset, item_key, who, field)
    return store_annotations.set_annotation(db, dataset, item_key, who, field, value)


def save_answer(db: Database, dataset: str, item_key: str, text: str, *,
                annotator: str | None = None, actor: User | None = None) -> int | None:
    """Save the writer's answer to a grounding question (empty text removes it)."""
    return actions.save_answer(db, dataset, item_key, _name(actor, annotator), text, actor=actor)


def adjudicate(db: Database, dataset: str, item_key: str, field: str, value: Any, *,
               reviewer: str | None = None, actor: User | None = None) -> int | None:
    """Set (``None`` clears) an adjudicated value, ``final:label:N``, ``final:dim:FIELD``
    or ``final:answer``, under the reviewer's name. Reviewers and admins only."""
    if not field.startswith(FINAL):
        raise ValueError(f"{field}: adjudications are final:* fields")
    who = _name(actor, reviewer)
    check_write(db, actor, dataset, item_key, who, field)
    return store_annotations.set_annotation(db, dataset, item_key, who, field, value)


def undo_change(db: Database, history_id: int, *, who: str | None = None,
                actor: User | None = None) -> int | None:
    """Revert the change logged as ``history_id`` (see
    :func:`store.annotations.undo`). In team mode an annotator undoes only changes to
    their own annotations on their items; undoing anyone else's needs a reviewer."""
    rows = db.execute_returning_dicts("select dataset, item_key, annotator, field from history "
                                      "where id = ?", [history_id])
    if not rows:
        raise KeyError(f"no history entry {history_id}")
    entry = rows[0]
    name = _name(actor, who)
    if actor is not None:
        fresh = check(db, actor, "annotate", entry["dataset"])
        assert fresh is not None
        if name != fresh.name:
            raise PermissionDenied(f"{fresh.name} is signed in: changes are saved under that "
                                   f"name, not {name!r}")
        if entry["annotator"] == fresh.name:
            check_write(db, fresh, entry["dataset"], entry["item_key"], fresh.name, entry["field"])
        else:
            check(db, fresh, "undo_others", entry["dataset"])
        name = fresh.name
    return store_annotations.undo(db, history_id, name)
