"""Reading one action: its shape checked, never its target.

Each kind of action has a parser here (:data:`needlework.actions.service.KINDS` pairs it with
how the kind applies). A parser takes the JSON object and the fields every action has
(:func:`common`) and returns an :class:`Action`, or raises :class:`Rejected` with a
sentence naming the field that is wrong. Whether the target exists (the dataset, the
item, the passage) is checked when the action applies, by :mod:`needlework.actions.service`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from needlework.grounding.labels import LABEL_PREFIX
from needlework.review.sides import POSITIONAL
from needlework.verdicts import REASONS, VERDICTS, field_name

#: What an undo or redo key may revert, by page (``scope``): the annotate page's fields
#: (the ``deflected`` flag follows the answer) and the review page's verdicts.
UNDO_SCOPES: dict[str, tuple[str, ...]] = {
    "annotate": (LABEL_PREFIX, "dim:", "answer", "flag", "skipped", "comment"),
    "review": ("verdict:",),
}
ID = re.compile(r"^[A-Za-z0-9_.:-]{8,100}$")
TAB = re.compile(r"^[A-Za-z0-9_-]{4,64}$")
MOVE_PAGES = ("annotate", "review")
MAX_TEXT = 2000  # longest note, comment or dimension value an action may carry
MAX_ANSWER = 100_000  # longest answer or adjudicated value
FINAL = "final:"

Raw = Mapping[str, Any]


class Rejected(ValueError):
    """Why an action cannot apply (a sentence naming the field)."""


@dataclass(frozen=True)
class Action:
    """One parsed action (the JSON of each kind: :mod:`needlework.actions.service`)."""

    id: str
    kind: str
    dataset: str
    item: str
    annotator: str
    field: str = ""
    value: Any = None
    reasons: tuple[str, ...] | None = ()  # ``verdict`` only: None keeps the saved reasons
    note: str | None = None
    toggle: bool = False  # ``set`` only: clear the field instead when it already holds ``value``
    flip: str | None = None  # ``reasons`` only: the one reason to add or remove, on what is saved
    owner: str = ""  # ``revert`` only: whose change the history entry is
    tab: str = ""  # ``move`` only: the browser tab that moves
    i: int = 0  # ``move`` only: the comparison (review) or the passage cursor (annotate)
    j: int = 0


def _text(raw: Raw, name: str, *, required: bool = True, limit: int = 300) -> str:
    value = raw.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise Rejected(f"{name}: expected a non-empty string")
    if len(value) > limit:
        raise Rejected(f"{name}: longer than {limit} characters")
    return value


def _index(raw: Raw, name: str) -> int:
    value = raw.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise Rejected(f"{name}: expected a whole number ≥ 0")
    return value


def _value(raw: Raw, limit: int) -> str | None:
    value = raw.get("value")
    if value is not None and not isinstance(value, str):
        raise Rejected("value: expected a string or null")
    if value is not None and len(value) > limit:
        raise Rejected(f"value: longer than {limit} characters")
    return value


def _reasons(raw: Raw) -> tuple[str, ...]:
    value = raw.get("reasons") or []
    if not isinstance(value, list) or not all(isinstance(r, str) for r in value):
        raise Rejected("reasons: expected a list of reason names")
    unknown = sorted(set(value) - set(REASONS))
    if unknown:
        raise Rejected(f"reasons: unknown reason {unknown[0]!r}")
    return tuple(r for r in REASONS if r in value)


def _note(raw: Raw) -> str | None:
    note = raw.get("note")
    if note is not None and (not isinstance(note, str) or len(note) > MAX_TEXT):
        raise Rejected(f"note: expected a string of at most {MAX_TEXT} characters")
    return note


class Common(TypedDict):
    """The fields every :class:`Action` has (:func:`common`)."""

    id: str
    kind: str
    dataset: str
    item: str
    annotator: str


def common(raw: Raw, kind: str, *, item: bool = True) -> Common:
    """The fields every action has: ``id``, ``kind``, ``dataset``, ``item`` (unless
    ``item=False``) and ``annotator`` (the name the change is saved under)."""
    return {"id": str(raw.get("id")), "kind": kind, "dataset": _text(raw, "dataset"),
            "item": _text(raw, "item", limit=1000) if item else "",
            "annotator": _text(raw, "annotator").strip()}


def _comparison(raw: Raw) -> str:
    return field_name(_index(raw, "i"), _index(raw, "j"))


def parse_set(raw: Raw, kind: str) -> Action:
    """``set``: ``field`` (``label:N``, ``dim:FIELD``, ``flag``, ``skipped``, ``comment``),
    ``value`` (a string, or null to clear), optional ``toggle``."""
    toggle = raw.get("toggle", False)
    if not isinstance(toggle, bool):
        raise Rejected("toggle: expected true or false")
    return Action(**common(raw, kind), field=_text(raw, "field"), value=_value(raw, MAX_TEXT),
                  toggle=toggle)


def parse_answer(raw: Raw, kind: str) -> Action:
    """``answer``: ``value`` the whole answer text (empty removes it)."""
    return Action(**common(raw, kind), field="answer", value=_value(raw, MAX_ANSWER) or "")


def parse_deflect(raw: Raw, kind: str) -> Action:
    """``deflect``: no further fields."""
    return Action(**common(raw, kind), field="answer")


def parse_rest(raw: Raw, kind: str) -> Action:
    """``rest``: no further fields."""
    return Action(**common(raw, kind), field=LABEL_PREFIX + "*")


def parse_accept(raw: Raw, kind: str) -> Action:
    """``accept``: optional ``source`` (the suggestions of that source; default: the first
    source, by name, that suggests for each field); with ``i`` and ``j`` the verdict of that
    comparison (Review), else the passage labels (Annotate)."""
    source = raw.get("source")
    if source is not None and (not isinstance(source, str) or not source or len(source) > 120):
        raise Rejected("source: expected a string of 1 to 120 characters, or nothing")
    field = _comparison(raw) if "i" in raw or "j" in raw else LABEL_PREFIX + "*"
    return Action(**common(raw, kind), field=field, value=source)


def parse_verdict(raw: Raw, kind: str) -> Action:
    """``verdict``: ``i``, ``j``, ``verdict`` (null clears), optional ``reasons`` (absent or
    null: the reasons saved on the comparison stay) and ``note`` (the same)."""
    verdict = raw.get("verdict")
    if verdict is not None and verdict not in VERDICTS and verdict not in POSITIONAL:
        raise Rejected(f"verdict: expected one of {', '.join([*VERDICTS, *POSITIONAL])}")
    return Action(**common(raw, kind), field=_comparison(raw), value=verdict,
                  reasons=None if raw.get("reasons") is None else _reasons(raw),
                  note=_note(raw))


def parse_reasons(raw: Raw, kind: str) -> Action:
    """``reasons``: ``i``, ``j`` and either ``reasons`` (the list) or ``flip`` (one reason)."""
    base = common(raw, kind)
    flip = raw.get("flip")
    if flip is not None:
        if flip not in REASONS:
            raise Rejected(f"flip: expected one of {', '.join(REASONS)}")
        if raw.get("reasons"):
            raise Rejected("reasons: give either the reasons or the one reason to flip, not both")
        return Action(**base, field=_comparison(raw), flip=flip)
    return Action(**base, field=_comparison(raw), reasons=_reasons(raw))


def parse_note(raw: Raw, kind: str) -> Action:
    """``note``: ``i``, ``j``, ``note`` (kept with the verdict saved)."""
    base = common(raw, kind)
    note = _note(raw)
    if note is None:
        raise Rejected("note: expected a string")
    return Action(**base, field=_comparison(raw), note=note)


def parse_final(raw: Raw, kind: str) -> Action:
    """``final``: ``field`` (``final:label:N``, ``final:dim:FIELD``, ``final:answer``) and
    ``value`` (null clears); ``annotator`` is the reviewer."""
    name = _text(raw, "field")
    if not name.startswith(FINAL):
        raise Rejected(f"field {name!r}: adjudications are final:* fields")
    return Action(**common(raw, kind), field=name, value=_value(raw, MAX_ANSWER))


def parse_undo(raw: Raw, kind: str) -> Action:
    """``undo`` / ``redo``: ``scope`` (``annotate`` or ``review``), no item."""
    scope = raw.get("scope")
    if scope not in UNDO_SCOPES:
        raise Rejected(f"scope: expected one of {', '.join(UNDO_SCOPES)}")
    return Action(**common(raw, kind, item=False), field=scope)


def parse_revert(raw: Raw, kind: str) -> Action:
    """``revert``: ``history`` (the entry's id) with the entry's ``item``, ``field`` and
    ``owner``, checked against the history when it applies."""
    return Action(**common(raw, kind), field=_text(raw, "field"),
                  value=_index(raw, "history"), owner=_text(raw, "owner").strip())


#: What a ``view`` action may set: the person's own view choices (needlework.view.prefs)
VIEW_FIELDS = ("hide_suggestions",)


def parse_view(raw: Raw, kind: str) -> Action:
    """``view``: ``field`` (one of :data:`VIEW_FIELDS`) and ``value`` (true or false), on
    the ``item`` on screen when the key was pressed."""
    name = raw.get("field")
    if name not in VIEW_FIELDS:
        raise Rejected(f"field: expected one of {', '.join(VIEW_FIELDS)}")
    value = raw.get("value")
    if not isinstance(value, bool):
        raise Rejected("value: expected true or false")
    return Action(**common(raw, kind), field=name, value=value)


def parse_move(raw: Raw, kind: str) -> Action:
    """``move``: ``tab`` (the browser tab's id), ``page`` (``annotate`` or ``review``),
    ``dataset``, ``item``; on review ``i`` and ``j``, on annotate ``cursor`` (the
    passage outlined). ``annotator`` may be empty (moving needs no name)."""
    tab = raw.get("tab")
    if not isinstance(tab, str) or not TAB.match(tab):
        raise Rejected("tab: expected the tab's id (letters and digits)")
    page = raw.get("page")
    if page not in MOVE_PAGES:
        raise Rejected(f"page: expected one of {', '.join(MOVE_PAGES)}")
    who = _text(raw, "annotator", required=False).strip()
    base: Common = {"id": str(raw.get("id")), "kind": kind, "dataset": _text(raw, "dataset"),
                    "item": _text(raw, "item", limit=1000), "annotator": who}
    if page == "review":
        return Action(**base, field=page, tab=tab, i=_index(raw, "i"), j=_index(raw, "j"))
    cursor = raw.get("cursor", 0)
    return Action(**base, field=page, tab=tab, i=_index({"cursor": cursor}, "cursor"))
