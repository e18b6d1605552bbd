"""Reading one key action sent by the browser: its shape checked, never its target.

:func:`parse` turns the JSON of one action (the kinds are listed in
:mod:`needlework.actions`) into an :class:`Action`, or raises :class:`Rejected` with a
sentence naming the field that is wrong. Whether the target exists (the dataset, the
item, the passage) is checked when the action applies, by :mod:`needlework.actions`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from needlework.grounding.labels import LABEL_PREFIX
from needlework.review.verdicts import REASONS, VERDICTS, field_name

KINDS = ("set", "deflect", "rest", "verdict", "reasons", "undo", "redo")
#: What an undo or redo key may revert, by page (``scope``): the annotate page's fields
#: (the ``deflected`` flag follows the answer) and the review page's verdicts.
UNDO_SCOPES: dict[str, tuple[str, ...]] = {
    "annotate": (LABEL_PREFIX, "dim:", "answer", "flag", "skipped", "comment"),
    "review": ("verdict:",),
}
ID = re.compile(r"^[A-Za-z0-9_.:-]{8,100}$")
MAX_TEXT = 2000  # longest note or dimension value an action may carry


class Rejected(ValueError):
    """Why an action cannot apply (a sentence naming the field)."""


@dataclass(frozen=True)
class Action:
    """One parsed action (see the module docstring for the JSON)."""

    id: str
    kind: str
    dataset: str
    item: str
    annotator: str
    field: str = ""
    value: Any = None
    reasons: tuple[str, ...] = ()
    note: str | None = None
    toggle: bool = False  # ``set`` only: clear the field instead when it already holds ``value``
    flip: str | None = None  # ``reasons`` only: the one reason to add or remove, on what is saved


def _text(raw: Mapping[str, Any], name: str, *, required: bool = True, limit: int = 300) -> str:
    value = raw.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise Rejected(f"{name}: expected a non-empty string")
    if len(value) > limit:
        raise Rejected(f"{name}: longer than {limit} characters")
    return value


def _index(raw: Mapping[str, Any], name: str) -> int:
    value = raw.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise Rejected(f"{name}: expected a whole number ≥ 0")
    return value


def _reasons(raw: Mapping[str, Any]) -> tuple[str, ...]:
    value = raw.get("reasons") or []
    if not isinstance(value, list) or not all(isinstance(r, str) for r in value):
        raise Rejected("reasons: expected a list of reason names")
    unknown = sorted(set(value) - set(REASONS))
    if unknown:
        raise Rejected(f"reasons: unknown reason {unknown[0]!r}")
    return tuple(r for r in REASONS if r in value)


def parse(raw: Any) -> Action:
    """Check an action's shape (not yet its target); raises :class:`Rejected`."""
    if not isinstance(raw, Mapping):
        raise Rejected("an action must be a JSON object")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise Rejected(f"kind: expected one of {', '.join(KINDS)}")
    if kind in ("undo", "redo"):
        scope = raw.get("scope")
        if scope not in UNDO_SCOPES:
            raise Rejected(f"scope: expected one of {', '.join(UNDO_SCOPES)}")
        return Action(str(raw.get("id")), kind, _text(raw, "dataset"), "",
                      _text(raw, "annotator").strip(), field=scope)
    common = {"id": str(raw.get("id")), "kind": kind, "dataset": _text(raw, "dataset"),
              "item": _text(raw, "item", limit=1000), "annotator": _text(raw, "annotator").strip()}
    if kind == "set":
        name = _text(raw, "field")
        value = raw.get("value")
        if value is not None and not isinstance(value, str):
            raise Rejected("value: expected a string or null")
        if value is not None and len(value) > MAX_TEXT:
            raise Rejected(f"value: longer than {MAX_TEXT} characters")
        toggle = raw.get("toggle", False)
        if not isinstance(toggle, bool):
            raise Rejected("toggle: expected true or false")
        return Action(**common, field=name, value=value, toggle=toggle)
    if kind == "deflect":
        return Action(**common, field="answer")
    if kind == "rest":
        return Action(**common, field=LABEL_PREFIX + "*")
    i, j = _index(raw, "i"), _index(raw, "j")
    note = raw.get("note")
    if note is not None and (not isinstance(note, str) or len(note) > MAX_TEXT):
        raise Rejected(f"note: expected a string of at most {MAX_TEXT} characters")
    if kind == "verdict":
        verdict = raw.get("verdict")
        if verdict not in VERDICTS:
            raise Rejected(f"verdict: expected one of {', '.join(VERDICTS)}")
        return Action(**common, field=field_name(i, j), value=verdict, reasons=_reasons(raw),
                      note=note)
    flip = raw.get("flip")
    if flip is not None:
        if flip not in REASONS:
            raise Rejected(f"flip: expected one of {', '.join(REASONS)}")
        if raw.get("reasons"):
            raise Rejected("reasons: give either the reasons or the one reason to flip, not both")
        return Action(**common, field=field_name(i, j), flip=flip)
    return Action(**common, field=field_name(i, j), reasons=_reasons(raw))
