"""What a suggestion on screen means for a write (:mod:`needlework.actions.service`): which
suggestions the actor sees on an item when an action applies, and the provenance
(``via``) a typed value gets from them.

A suggestion counts as shown unless the lead's timing hides it (``never``; ``after``: only
on fields the annotator has saved a value of) or, on Annotate, the annotator's H hides it
(:mod:`needlework.view.prefs`); Annotate draws a dimension of several fields only where
one source's values amount to one option.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from needlework.actions.base import GROUNDING, Batch, Outcome
from needlework.actions.parse import Action
from needlework.grounding.keymap import choice_of, dimension_keys
from needlework.grounding.labels import LABEL_PREFIX
from needlework.teams.blind import AFTER, NEVER, suggestion_timing
from needlework.verdicts import verdict_of
from needlework.view.prefs import hides_suggestions
from store.annotations import get_value
from store.suggestions import item_suggestions


def shown_suggestions(b: Batch, action: Action) -> dict[str, list[dict[str, Any]]]:
    """Field → the suggestions on the actor's screen on the action's item when it applies:
    none where the timing is ``never`` (:func:`suggestion_timing`: the lead's choice, the
    same on every item, gold or not) or, on a grounding dataset (Annotate), where the
    annotator has H on (:func:`hides_suggestions`); with ``after``, only on fields the
    annotator has already saved a value of."""
    timing = suggestion_timing(b.db, action.dataset, action.item, b.actor, action.annotator)
    if timing == NEVER:
        return {}
    if b.targets.kind(action.dataset) in GROUNDING and hides_suggestions(b.db, action.annotator):
        return {}
    out: dict[str, list[dict[str, Any]]] = {}
    for row in item_suggestions(b.db, action.dataset, action.item):
        out.setdefault(row["field"], []).append(row)
    if timing == AFTER:
        out = {name: rows for name, rows in out.items() if _answered(
            get_value(b.db, action.dataset, action.item, action.annotator, name))}
    if b.targets.kind(action.dataset) in GROUNDING:
        out = drawn_dimensions(out)
    return out


def drawn_dimensions(offered: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """``offered`` without the dimension suggestions Annotate cannot draw: a dimension of
    several fields (time sensitivity) marks a source's option only where that source's
    values of its fields (as shown) amount to one (:func:`choice_of`)."""
    out = dict(offered)
    for dim in dimension_keys():
        if len(dim["fields"]) < 2:
            continue
        names = [f"dim:{f}" for f in dim["fields"]]
        by_source: dict[str, dict[str, Any]] = {}
        for name in names:
            for row in out.get(name, []):
                by_source.setdefault(row["source"], {})[name] = row["value"]
        drawn = {source for source, values in by_source.items()
                 if choice_of(dim, [values.get(name) for name in names]) is not None}
        for name in names:
            if name in out:
                out[name] = [row for row in out[name] if row["source"] in drawn]
    return {name: rows for name, rows in out.items() if rows}


def _answered(value: Any) -> bool:
    """Whether a saved value counts as the annotator's own answer (a verdict: its verdict)."""
    return verdict_of(value) is not None if isinstance(value, Mapping) else value is not None


def typed_via(b: Batch, action: Action, value: Any, field: str | None = None
               ) -> dict[str, Any] | None:
    """A typed value's provenance, by the suggestions shown for the field (``field``,
    default the action's) when it is saved: ``None`` when none is shown (or the value is
    cleared); ``typed`` when it equals one (naming the first that does); else
    ``changed`` (naming the first shown)."""
    field = field or action.field
    if value is None or not field.startswith((LABEL_PREFIX, "dim:", "verdict:")):
        return None
    offered = shown_suggestions(b, action).get(field, [])
    if not offered:
        return None
    same = [row for row in offered if row["value"] == value]
    if same:
        return {"how": "typed", "source": same[0]["source"], "suggested": same[0]["value"]}
    return {"how": "changed", "source": offered[0]["source"], "suggested": offered[0]["value"]}



def held_back(b: Batch, action: Action) -> Outcome | None:
    """An accept where the timing is ``after`` takes nothing: a suggestion shows there
    only once the field has the annotator's own value, and an accept fills only fields
    without one. ``None``: the accept goes on."""
    if suggestion_timing(b.db, action.dataset, action.item, b.actor, action.annotator) != AFTER:
        return None
    yours = "verdict" if action.field.startswith("verdict:") else "label"
    return Outcome(action.id, "unchanged", f"suggestions show here only after your own "
                   f"{yours}: nothing to accept", tell=True)
