"""The writes the pages' widgets make, in either mode: each one an action of
:mod:`needlework.actions.service`, applied by the same service and permission check as the keys.

Each takes ``actor`` (the signed-in :class:`~needlework.teams.permissions.User`, or
``None`` in local mode) and writes under the actor's name: in team mode a change is
always saved, and logged in the history's ``by`` column, as the signed-in user,
never as a typed name. Refusals raise
:class:`~needlework.teams.permissions.PermissionDenied`; a write that cannot apply (a
field or value the dataset does not have) raises ``ValueError``. Each returns the
history id of the change (``None`` when it was already so).

- :func:`write_annotation`: a label, dimension, item mark or verdict of one's own
  (annotators: on their assigned items only).
- :func:`save_answer`: the long-form answer (and its ``deflected`` flag).
- :func:`adjudicate`: a reviewer's ``final:*`` value.
- :func:`undo_change`: revert one history entry (one's own; reviewers anyone's).
- :func:`judge_all`: one verdict for several comparisons at once (issue 18, point 22): the
  reviewer picks a run of comparisons of their view (say the next 20 without a verdict) and
  a verdict; each comparison gets it as one ordinary write, with who and when and a history
  row (so each can be undone), all in one transaction, in team mode as the signed-in user.
  It returns how many changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlite_utils import Database

from needlework.actions.service import ITEM_FIELDS, submit
from needlework.grounding.labels import LABEL_PREFIX
from needlework.review.queue import Comparison
from needlework.teams.permissions import User
from needlework.verdicts import field_name, make_value, parse_field
from store import pairs as pairs_store

FINAL = "final:"


def _name(actor: User | None, given: str | None) -> str:
    if actor is not None and not (given or "").strip():
        return actor.name
    return (given or "").strip()


def _action(field: str, value: Any) -> dict[str, Any]:
    """The action that sets ``field`` to ``value`` (:data:`needlework.actions.service.KINDS`)."""
    if field.startswith((LABEL_PREFIX, "dim:")) or field in ITEM_FIELDS:
        return {"kind": "set", "field": field, "value": value}
    if field == "answer":
        return {"kind": "answer", "value": value or ""}
    comparison = parse_field(field)
    if comparison is not None:
        if value is None:
            return {"kind": "verdict", "i": comparison[0], "j": comparison[1], "verdict": None}
        if not isinstance(value, Mapping):
            raise ValueError(f"{field}: expected a verdict value")
        return {"kind": "verdict", "i": comparison[0], "j": comparison[1],
                "verdict": value.get("verdict"), "reasons": list(value.get("reasons") or []),
                "note": value.get("note") or ""}
    raise ValueError(f"{field}: not a field an annotator writes")


def write_annotation(db: Database, dataset: str, item_key: str, field: str, value: Any, *,
                     annotator: str | None = None, actor: User | None = None) -> int | None:
    """Set (``None`` clears) one of the writer's own annotations. ``annotator``
    defaults to the actor's name."""
    if field.startswith(FINAL):
        raise ValueError(f"{field}: final values are written by adjudicate()")
    raw = {**_action(field, value), "dataset": dataset, "item": item_key,
           "annotator": _name(actor, annotator)}
    return submit(db, raw, actor=actor).history_id


def save_answer(db: Database, dataset: str, item_key: str, text: str, *,
                annotator: str | None = None, actor: User | None = None) -> int | None:
    """Save the writer's answer to a grounding question (empty text removes it)."""
    raw = {"kind": "answer", "dataset": dataset, "item": item_key, "value": text,
           "annotator": _name(actor, annotator)}
    return submit(db, raw, actor=actor).history_id


def save_note(db: Database, dataset: str, item_key: str, i: int, j: int, note: str, *,
              annotator: str | None = None, actor: User | None = None) -> int | None:
    """Keep ``note`` with the writer's saved verdict on chosen[i] vs rejected[j] (no
    verdict yet: nothing changes)."""
    raw = {"kind": "note", "dataset": dataset, "item": item_key, "i": i, "j": j, "note": note,
           "annotator": _name(actor, annotator)}
    return submit(db, raw, actor=actor).history_id


def adjudicate(db: Database, dataset: str, item_key: str, field: str, value: Any, *,
               reviewer: str | None = None, actor: User | None = None) -> int | None:
    """Set (``None`` clears) an adjudicated value, ``final:label:N``, ``final:dim:FIELD``
    or ``final:answer``, under the reviewer's name. Reviewers and admins only."""
    if not field.startswith(FINAL):
        raise ValueError(f"{field}: adjudications are final:* fields")
    raw = {"kind": "final", "dataset": dataset, "item": item_key, "field": field,
           "value": value, "annotator": _name(actor, reviewer)}
    return submit(db, raw, actor=actor).history_id


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
    raw = {"kind": "revert", "dataset": entry["dataset"], "item": entry["item_key"],
           "field": entry["field"], "owner": entry["annotator"], "history": history_id,
           "annotator": _name(actor, who)}
    return submit(db, raw, actor=actor).history_id


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
