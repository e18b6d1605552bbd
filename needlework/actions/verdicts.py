"""How Review's actions apply (:mod:`needlework.actions.service`): ``verdict``, ``reasons``,
``note``, the accept of a suggested verdict, and a reviewer's ``final`` value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from needlework.actions.base import PREFERENCE, Batch, Outcome, written
from needlework.actions.parse import Action, Rejected
from needlework.actions.shown import held_back, shown_suggestions, typed_via
from needlework.formats import preference_view
from needlework.review.sides import POSITIONAL, sides_for
from needlework.teams.blind import visibility
from needlework.verdicts import make_value, verdict_of
from store.annotations import get_value, get_via, set_annotation


def saved_verdict(b: Batch, action: Action) -> Mapping[str, Any]:
    """The comparison's saved value (checked to exist in the item)."""
    fmt = b.targets.dataset(action.dataset, PREFERENCE)
    pref = preference_view(fmt, b.targets.record(action.dataset, action.item))
    i, j = (int(x) for x in action.field.split(":")[1:])
    if i >= len(pref.chosen) or j >= len(pref.rejected):
        raise Rejected(f"comparison chosen {i + 1} vs rejected {j + 1}: the item has "
                       f"{len(pref.chosen)} chosen and {len(pref.rejected)} rejected")
    saved = get_value(b.db, action.dataset, action.item, action.annotator, action.field)
    return saved if isinstance(saved, Mapping) else {}


def stored_verdict(b: Batch, action: Action) -> str | None:
    """The verdict to store for the action's: a position (``a-better`` / ``b-better``, what
    a blind annotator's page sends) becomes ``agree`` or ``flip`` by where that person's
    page shows the chosen response (:func:`needlework.review.sides.sides_for`)."""
    if action.value not in POSITIONAL:
        return action.value
    neutral = not visibility(b.db, action.dataset, b.actor).file_labels
    return sides_for(neutral, action.annotator, action.item).stored(action.value)


def apply_verdict(b: Batch, action: Action) -> Outcome:
    """Set (or clear) a verdict; reasons and note not given are the saved ones (a reason
    key flips on what is saved, so a verdict typed after it keeps what the flips left)."""
    saved = saved_verdict(b, action)
    had = saved.get("reasons")
    reasons = action.reasons if action.reasons is not None else (had if isinstance(had, list) else [])
    verdict = stored_verdict(b, action)
    value = None if verdict is None else make_value(
        verdict, reasons, saved.get("note", "") if action.note is None else action.note)
    hid = set_annotation(b.db, action.dataset, action.item, action.annotator, action.field, value,
                         via=typed_via(b, action, verdict))
    return written(action, hid)


def accept_verdict(b: Batch, action: Action) -> Outcome:
    """Review's accept: the comparison gets the verdict suggested for it (of
    ``action.value``, a source, or the first source by name) when it has none of the
    annotator's yet, decided on what is saved and on what the actor may see."""
    saved = saved_verdict(b, action)
    if (held := held_back(b, action)) is not None:
        return held
    rows = [r for r in shown_suggestions(b, action).get(action.field, [])
            if action.value in (None, r["source"])]
    if not rows:
        return Outcome(action.id, "unchanged", "no suggestion to accept on this comparison", tell=True)
    if verdict_of(saved) is not None:
        return Outcome(action.id, "unchanged", "this comparison has your verdict", tell=True)
    row = rows[0]
    value = make_value(row["value"], (), saved.get("note", ""))
    hid = set_annotation(b.db, action.dataset, action.item, action.annotator, action.field, value,
                         via={"how": "accepted", "source": row["source"], "score": row["score"]})
    return written(action, hid, "the suggested verdict accepted", tell=True)


def amend_verdict(b: Batch, action: Action) -> Outcome:
    """``reasons`` and ``note``: change an existing verdict, decided on what is saved; the
    verdict keeps where it came from (an accepted one stays accepted)."""
    saved = saved_verdict(b, action)
    verdict = verdict_of(saved)
    if verdict is None:
        return Outcome(action.id, "unchanged", f"no verdict yet: the {action.kind} is kept with it")
    had = saved.get("reasons")
    reasons: Iterable[str] = had if isinstance(had, list) else []
    if action.kind == "reasons":
        reasons = (set(reasons) ^ {action.flip} if action.flip is not None
                   else action.reasons or ())
    note = saved.get("note", "") if action.note is None else action.note
    hid = set_annotation(b.db, action.dataset, action.item, action.annotator, action.field,
                         make_value(verdict, reasons, note),
                         via=get_via(b.db, action.dataset, action.item, action.annotator,
                                     action.field))
    return written(action, hid)


def apply_final(b: Batch, action: Action) -> Outcome:
    b.targets.record(action.dataset, action.item)
    hid = set_annotation(b.db, action.dataset, action.item, action.annotator, action.field,
                         action.value)
    return written(action, hid)
