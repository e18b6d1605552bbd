"""Actions that revert or move (:mod:`needlework.actions.service`): ``undo`` / ``redo`` (the
annotator's newest change on the page's fields), ``revert`` (one history entry, the Data
page) and ``move`` (the tab's place, :mod:`needlework.actions.positions`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from needlework.actions import positions
from needlework.actions.base import (
    GROUNDING,
    MOVED,
    PREFERENCE,
    Batch,
    Outcome,
    Refused,
    grounding_item,
)
from needlework.actions.grounding import follow_answer
from needlework.actions.parse import UNDO_SCOPES, Action, Rejected
from needlework.formats import preference_view
from needlework.teams import access
from needlework.teams.permissions import PermissionDenied, check
from store.annotations import group as group_rows
from store.annotations import last_redoable, last_undoable, undo


def revert_entry(b: Batch, action: Action, entry: Mapping[str, Any], verb: str) -> Outcome:
    hid = undo(b.db, entry["id"], action.annotator, action=verb)
    if entry["field"] == "answer":
        follow_answer(b.db, entry["dataset"], entry["item_key"], entry["annotator"])
    return Outcome(action.id, "applied", f"{verb}: {entry['field']} of {entry['item_key']}", history_id=hid,
                   item=entry["item_key"], field=entry["field"])


def apply_undo(b: Batch, action: Action) -> Outcome:
    """Undo or redo the annotator's newest change on the page's fields, a change made as
    one (an accept of several fields) whole: each of its fields gets its own revert, the
    reverts one group again (so one redo takes them back); every change it reverts must
    be allowed too."""
    b.targets.dataset(action.dataset, GROUNDING if action.field == "annotate" else PREFERENCE)
    find = last_undoable if action.kind == "undo" else last_redoable
    rows = find(b.db, action.dataset, action.annotator, UNDO_SCOPES[action.field])
    if not rows:
        return Outcome(action.id, "unchanged", f"nothing to {action.kind}")
    for row in rows:
        b.refuse_unless_allowed(replace(action, item=row["item_key"], field=row["field"]))
    outcomes = [revert_entry(b, action, {"id": row["id"], "dataset": action.dataset,
                                         "item_key": row["item_key"], "field": row["field"],
                                         "annotator": action.annotator}, action.kind)
                for row in rows]
    if len(rows) == 1:
        return outcomes[0]
    group_rows(b.db, [o.history_id for o in outcomes if o.history_id is not None])
    first = outcomes[-1]  # the group's first field (an accept's first passage)
    verb = "undone" if action.kind == "undo" else "redone"
    return replace(first, message=f"{verb}: {len(rows)} changes made together", tell=True)


def apply_revert(b: Batch, action: Action) -> Outcome:
    rows = b.db.execute_returning_dicts("select id, dataset, item_key, annotator, field "
                                        "from history where id = ?", [action.value])
    entry = rows[0] if rows else None
    if entry is None or (entry["dataset"], entry["item_key"], entry["field"], entry["annotator"]) \
            != (action.dataset, action.item, action.field, action.owner):
        raise Rejected(f"history: no entry {action.value} for {action.field} of {action.item}")
    if action.owner == action.annotator:
        b.refuse_unless_allowed(action)
    elif b.actor is not None:
        try:
            fresh = check(b.db, b.actor, "undo_others", action.dataset)
        except PermissionDenied as e:
            raise Refused(str(e)) from None
        if fresh is not None and fresh.name != action.annotator:
            raise Refused(f"{fresh.name} is signed in: changes are saved under that name, "
                           f"not {action.annotator!r}")
    return revert_entry(b, action, entry, "undo")


def apply_move(b: Batch, action: Action) -> Outcome:
    """Put the tab at the item (and comparison) it names, if it exists and the signed-in
    user may open the dataset and the item (an annotator in team mode: their own items,
    :func:`needlework.teams.access.may_open`); the position is the user's and the tab's
    only."""
    if action.field == "review":
        fmt = b.targets.dataset(action.dataset, PREFERENCE)
        pref = preference_view(fmt, b.targets.record(action.dataset, action.item))
        if action.i >= len(pref.chosen) or action.j >= len(pref.rejected):
            raise Rejected(f"comparison chosen {action.i + 1} vs rejected {action.j + 1}: the "
                           f"item has {len(pref.chosen)} chosen and {len(pref.rejected)} rejected")
    else:
        grounding_item(b, action)
    who = ""
    if b.actor is not None:
        try:
            fresh = check(b.db, b.actor, "annotate", action.dataset)
        except PermissionDenied as e:
            raise Refused(str(e)) from None
        if fresh is not None and not access.may_open(b.db, action.dataset, action.item, fresh):
            raise Refused(access.refusal(action.dataset, fresh))
        who = fresh.name if fresh is not None else ""
    if action.field == "review":
        found = positions.move(b.db, who, action.tab, "review", action.dataset, action.item,
                               i=action.i, j=action.j)
    else:
        found = positions.move(b.db, who, action.tab, "annotate", action.dataset, action.item,
                               cursor=action.i)
    return Outcome(action.id, "applied", f"{MOVED}{found.seq}", seq=found.seq)
