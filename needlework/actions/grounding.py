"""How Annotate's actions apply (:mod:`needlework.actions.service`): ``set`` (a passage label,
a dimension, the flag, the skip mark, the comment), ``answer``, ``deflect``, ``rest`` and
``accept`` on a grounding dataset's item, decided on what is saved when they apply; and
``view``, the person's H.
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from needlework.actions.base import ITEM_FIELDS, TOLD, Batch, Outcome, grounding_item, written
from needlework.actions.parse import Action, Rejected
from needlework.actions.shown import held_back, shown_suggestions, typed_via
from needlework.formats.garage import DEFLECTION, DIMENSIONS
from needlework.grounding import answer as ga
from needlework.grounding import item as gitem
from needlework.grounding.keymap import dimension_keys
from needlework.grounding.labels import IRRELEVANT, LABEL_PREFIX, LABELS
from needlework.view.prefs import set_hides_suggestions
from store.annotations import get_value, group, set_annotation

CATEGORY = "dim:question_category"


def check_set(b: Batch, action: Action) -> None:
    record = grounding_item(b, action)
    if action.field.startswith(LABEL_PREFIX):
        number = action.field[len(LABEL_PREFIX):]
        count = len(gitem.passages(record))
        if not number.isdigit() or not 1 <= int(number) <= count:
            raise Rejected(f"field {action.field}: the item has {count} passages")
        if action.value is not None and action.value not in LABELS:
            raise Rejected(f"value {action.value!r}: not a passage label")
        return
    if action.field.startswith("dim:") and action.field[4:] in gitem.DIM_FIELDS:
        allowed = DIMENSIONS.get(action.field[4:])
        if action.value is not None and allowed is not None and action.value not in allowed:
            raise Rejected(f"value {action.value!r}: not a value of {action.field[4:]}")
        return
    if action.field in ITEM_FIELDS:
        allowed = ITEM_FIELDS[action.field]
        if action.value is not None and allowed is not None and action.value not in allowed:
            raise Rejected(f"value {action.value!r}: not a value of {action.field}")
        return
    raise Rejected(f"field {action.field!r}: keys set passage labels, dimensions, the flag, "
                   "the skip mark and the comment only")


def apply_set(b: Batch, action: Action) -> Outcome:
    check_set(b, action)
    value = action.value
    if action.toggle and value is not None and value == get_value(
            b.db, action.dataset, action.item, action.annotator, action.field):
        value = None
    hid = set_annotation(b.db, action.dataset, action.item, action.annotator, action.field, value,
                         via=typed_via(b, action, value))
    told = TOLD.get((action.field, value is not None)) if action.toggle else None
    return written(action, hid, told or "", tell=told is not None)


def follow_answer(db: Database, dataset: str, item: str, annotator: str) -> None:
    """The ``deflected`` flag follows the saved answer."""
    text = get_value(db, dataset, item, annotator, "answer") or ""
    set_annotation(db, dataset, item, annotator, "deflected",
                   True if ga.is_deflection(text) else None)


def write_answer(b: Batch, action: Action, text: str) -> Outcome:
    text = text if text.strip() else ""
    hid = set_annotation(b.db, action.dataset, action.item, action.annotator, "answer",
                         text or None)
    follow_answer(b.db, action.dataset, action.item, action.annotator)
    return written(action, hid)


def apply_answer(b: Batch, action: Action) -> Outcome:
    grounding_item(b, action)
    return write_answer(b, action, action.value)


def apply_deflect(b: Batch, action: Action) -> Outcome:
    grounding_item(b, action)
    answer = get_value(b.db, action.dataset, action.item, action.annotator, "answer") or ""
    if answer.strip():
        return Outcome(action.id, "unchanged", "the answer is not empty")
    return write_answer(b, action, DEFLECTION)


def apply_rest(b: Batch, action: Action) -> Outcome:
    """Label the passages the annotator has not labeled yet as irrelevant, each typed
    (:func:`typed_via`: ``changed`` where a suggestion shown said otherwise)."""
    count = len(gitem.passages(grounding_item(b, action)))
    marked, last = [], None
    for number in range(1, count + 1):
        name = f"{LABEL_PREFIX}{number}"
        if get_value(b.db, action.dataset, action.item, action.annotator, name) is None:
            last = set_annotation(b.db, action.dataset, action.item, action.annotator, name,
                                  IRRELEVANT, via=typed_via(b, action, IRRELEVANT, name))
            marked.append(number)
    if not marked:
        return Outcome(action.id, "unchanged", "every passage has a label", tell=True)
    return Outcome(action.id, "applied", f"{len(marked)} unlabeled passage(s) marked irrelevant",
                   history_id=last, tell=True)


def apply_view(b: Batch, action: Action) -> Outcome:
    """``view``: the person's H (:func:`needlework.view.prefs.set_hides_suggestions`,
    with its rules: in team mode only the signed-in person, for themselves), in order
    with the labels pressed around it, so that each label counts what was on screen."""
    grounding_item(b, action)
    try:
        before = set_hides_suggestions(b.db, action.annotator, bool(action.value), actor=b.actor)
    except ValueError as e:  # no name: refused with the reason (a PermissionDenied too)
        raise Rejected(str(e)) from e
    if before == bool(action.value):
        return Outcome(action.id, "unchanged")
    return Outcome(action.id, "applied", "hidden" if action.value else "shown")


def grounding_accept(b: Batch, action: Action) -> Outcome:
    """Take every suggestion of the question the annotator has no value of yet: each
    passage without a label of theirs gets the label suggested for it, each dimension
    without a value of theirs the value suggested for it (every field of a dimension of
    several from one source) — by ``action.value``, a source, or the first source by name
    — decided on what is saved and on the suggestions the actor may see when it applies.
    Each field gets its own change, kept with ``via`` ``{"how": "accepted", "source": ...,
    "score": ...}``; the changes are one group (:func:`store.annotations.group`), so one
    undo takes the accept back whole."""
    count = len(gitem.passages(grounding_item(b, action)))
    if (held := held_back(b, action)) is not None:
        return held
    offered = shown_suggestions(b, action)
    if not offered:
        return Outcome(action.id, "unchanged", "no suggestions to accept on this question", tell=True)
    taken: list[tuple[str, dict[str, Any]]] = []
    for number in range(1, count + 1):
        name = f"{LABEL_PREFIX}{number}"
        rows = [r for r in offered.get(name, []) if action.value in (None, r["source"])]
        if rows and _unset(b, action, [name]):
            taken.append((name, rows[0]))
    # every dimension the keys set, and the category (a free value, set from its list)
    for names in [[f"dim:{f}" for f in dim["fields"]] for dim in dimension_keys()] + [[CATEGORY]]:
        sources = sorted({r["source"] for name in names for r in offered.get(name, [])
                          if action.value in (None, r["source"])})
        if sources and _unset(b, action, names):
            taken += [(name, row) for name in names for row in offered.get(name, [])
                      if row["source"] == sources[0]]
    written_ids = [hid for name, row in taken if (hid := set_annotation(
        b.db, action.dataset, action.item, action.annotator, name, row["value"],
        via={"how": "accepted", "source": row["source"], "score": row["score"]})) is not None]
    if not written_ids:
        return Outcome(action.id, "unchanged", "every suggested passage and dimension has your value", tell=True)
    group(b.db, written_ids)
    return Outcome(action.id, "applied", f"{len(written_ids)} suggestion(s) accepted",
                   history_id=written_ids[-1], tell=True)


def _unset(b: Batch, action: Action, names: list[str]) -> bool:
    """Whether the annotator has no value of any of the fields ``names`` on the item."""
    return all(get_value(b.db, action.dataset, action.item, action.annotator, name) is None
               for name in names)
