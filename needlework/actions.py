"""Actions: every annotation write, applied exactly once, to the target it names.

Each write, a key press in the browser or a widget's callback on the server, is an
*action* that names everything it changes (dataset, item, field or comparison, the new
value, who) and carries an id. The key scripts make the id in the browser, keep each
action in its storage and send it to the action route until the server acknowledges
it, whatever happens in between (a rerun, a reconnect, a server restart, a reload);
the pages' widgets call :func:`submit` (through :mod:`needlework.teams.writes`). Both
reach :func:`apply_actions`, which applies a batch in order, in one transaction, after
one permission check, and records each id in that same transaction
(``store.actions``), so an action sent twice changes the database once.

:data:`KINDS` is the table of kinds: each one's parser (:mod:`needlework.action_parse`,
which documents its fields), how it applies, and whether the key scripts may send it.
Every action has ``id``, ``kind``, ``dataset``, ``item`` (not undo / redo) and
``annotator`` (the name the change is saved under; in team mode the signed-in one).

- ``set``: a passage label (``label:N``, one of the five labels), a dimension
  (``dim:FIELD``), the flag, the skip mark or the comment; ``null`` clears. With
  ``toggle`` the field is cleared instead when the database holds ``value`` when the
  action applies (decided here, not on the browser's copy, which may still show a value
  an undo just took back).
- ``deflect``: the standard deflection as the answer, only if the answer is empty.
- ``answer``: the whole answer text (empty removes it); the ``deflected`` flag follows.
- ``rest``: every passage with no label of the annotator's yet becomes irrelevant,
  decided on what is saved when it applies; each passage gets its own change.
- ``accept``: every passage with no label of the annotator's yet gets its suggested label
  (of ``source``, or the first source by name), decided on what is saved and on the
  suggestions the actor may see when it applies; each passage gets its own change, with
  its provenance (``via``). With ``i`` and ``j``: that comparison's suggested verdict, when
  it has no verdict of the annotator's yet. Where the lead shows suggestions only after the
  annotator's own answer (``after``), an accept takes nothing.

Every label, dimension and verdict records whether a suggestion was on screen when it was
saved (``via``, decided here by what the page shows at that moment, never recomputed
later): ``accepted`` (the accept key), ``typed`` (typed equal to a suggestion shown),
``changed`` (typed over a suggestion shown, different from every one), or ``null``
(nothing shown: none stored, the lead's timing hides it, or the annotator's H hides it
on Annotate, :mod:`needlework.view_prefs`).
- ``verdict``: the verdict (``null`` clears), reasons and note of comparison
  chosen[i] vs rejected[j] (``note`` absent keeps the saved note).
- ``reasons``: the reasons of an existing verdict, or with ``flip`` one reason added or
  removed on what is saved. ``note``: the note of an existing verdict.
- ``undo`` / ``redo``: the annotator's newest own change on that page's fields not
  undone yet (redo: the newest undo, unless a new change came after it).
- ``final``: a reviewer's adjudicated value (``final:*`` fields).
- ``revert``: one history entry reverted (Data page): one's own change with the usual
  check, another person's with the reviewer role.
- ``move``: the tab's place on the annotate or review page (:mod:`needlework.positions`);
  its outcome carries the position's ``seq``.

An action that cannot apply (unknown item, passage out of range, a label that does not
exist, a refused permission) is *rejected*: acknowledged with the reason, recorded, and
nothing changes. A database that is busy or full applies nothing and acknowledges
nothing (:attr:`Delivery.error`): the browser keeps the actions and sends them again.
Any other exception while an action applies is a programming error, never a refusal:
it is logged with its traceback, that action and those after it are neither written
nor recorded (the ones before it are), and the batch ends with :data:`INTERNAL`.
"""

from __future__ import annotations

import logging
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from sqlite_utils import Database

from needlework import action_parse as ap
from needlework import positions
from needlework.action_parse import ID, UNDO_SCOPES, Action, Rejected
from needlework.formats import preference_view
from needlework.formats.garage import DEFLECTION, DIMENSIONS
from needlework.grounding import answer as ga
from needlework.grounding import item as gitem
from needlework.grounding.keymap import choice_of, dimension_keys
from needlework.grounding.labels import IRRELEVANT, LABEL_PREFIX, LABELS
from needlework.review.verdicts import make_value, verdict_of
from needlework.teams import access
from needlework.teams.blind import AFTER, NEVER, suggestion_timing
from needlework.teams.permissions import PermissionDenied, User, action_guard, check
from needlework.view_prefs import hides_suggestions
from store import actions as store_actions
from store.annotations import (
    AnnotatorRequired,
    get_value,
    get_via,
    last_redoable,
    last_undoable,
    set_annotation,
    undo,
)
from store.datasets import get_item
from store.suggestions import item_suggestions

log = logging.getLogger(__name__)

#: Item fields the annotate keys set besides labels and dimensions (value: a string or null).
ITEM_FIELDS = {"flag": ("flagged",), "skipped": ("skipped",), "comment": None}
#: What a toggle of these fields tells the person who pressed the key (field, set?).
TOLD = {("flag", True): "flagged for later", ("flag", False): "flag removed"}
MAX_BATCH = 500  # actions applied per call; the rest wait for the next delivery
BUSY_MS = 1500  # wait this long for the write lock, then report "busy" and retry later
GROUNDING = ("grounding",)
PREFERENCE = ("preference", "needle")
Allowed = Callable[[Action], str | None]
MOVED = "seq "  # a move's outcome message: the position's seq follows
INTERNAL = "internal"  # Delivery.error of a programming error (the route answers 500)


@dataclass(frozen=True)
class Outcome:
    """What became of one action: ``applied`` (a change was written), ``unchanged``
    (already so, or nothing to do) or ``rejected`` (with ``message``; ``refused`` when
    a permission said no)."""

    id: str
    status: str
    message: str = ""
    history_id: int | None = None
    item: str = ""   # what an undo or redo reverted
    field: str = ""
    tell: bool = False  # ``message`` is for the person who pressed the key (``rest``)
    refused: bool = False
    seq: int | None = None  # a move: the position's seq


@dataclass
class Delivery:
    """The outcome of one batch; ``error`` (``busy``, ``full``, ``failed``, or
    :data:`INTERNAL` with the exception in ``fault``) means nothing of the not-yet-applied
    part was written and it must be sent again."""

    outcomes: list[Outcome] = field(default_factory=list)
    error: str | None = None
    detail: str = ""
    fault: Exception | None = None

    @property
    def acked(self) -> list[str]:
        """Ids the browser may forget: applied now or before, unchanged, or rejected."""
        return [o.id for o in self.outcomes]

    @property
    def rejected(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "rejected"]


class _Refused(Rejected):
    """A permission refused the action."""


class _Targets:
    """Datasets and items a batch touches, read once per batch."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._datasets: dict[str, tuple[str, str] | None] = {}
        self._items: dict[tuple[str, str], dict[str, Any] | None] = {}

    def kind(self, name: str) -> str | None:
        """The dataset's kind (``grounding``, ``preference``, ...), ``None`` when none."""
        if name not in self._datasets:
            self._datasets[name] = store_actions.dataset_kind(self.db, name)
        found = self._datasets[name]
        return found[0] if found else None

    def dataset(self, name: str, kinds: tuple[str, ...]) -> str:
        self.kind(name)
        found = self._datasets[name]
        if found is None:
            raise Rejected(f"dataset {name!r} does not exist")
        if found[0] not in kinds:
            raise Rejected(f"dataset {name!r} is a {found[0]} dataset")
        return found[1]

    def record(self, dataset: str, key: str) -> dict[str, Any]:
        if (dataset, key) not in self._items:
            self._items[(dataset, key)] = get_item(self.db, dataset, key)
        found = self._items[(dataset, key)]
        if found is None:
            raise Rejected(f"item {key!r} is not in dataset {dataset!r}")
        return found["record"]


@dataclass
class Batch:
    """What an apply function gets besides its action: the connection, the batch's
    targets, the permission hook and the signed-in user (``None`` locally)."""

    db: Database
    targets: _Targets
    allowed: Allowed | None
    actor: User | None

    def refuse_unless_allowed(self, target: Action) -> None:
        why = self.allowed(target) if self.allowed else None
        if why:
            raise _Refused(why)


def _written(action: Action, hid: int | None, message: str = "", *, tell: bool = False) -> Outcome:
    return Outcome(action.id, "unchanged" if hid is None else "applied", message,
                   history_id=hid, tell=tell)


def _grounding_item(b: Batch, action: Action) -> dict[str, Any]:
    b.targets.dataset(action.dataset, GROUNDING)
    return b.targets.record(action.dataset, action.item)


def _check_set(b: Batch, action: Action) -> None:
    record = _grounding_item(b, action)
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


def _shown_suggestions(b: Batch, action: Action) -> dict[str, list[dict[str, Any]]]:
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
        out = _drawn_dimensions(out)
    return out


def _drawn_dimensions(offered: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
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


def _typed_via(b: Batch, action: Action, value: Any, field: str | None = None
               ) -> dict[str, Any] | None:
    """A typed value's provenance, by the suggestions shown for the field (``field``,
    default the action's) when it is saved: ``None`` when none is shown (or the value is
    cleared); ``typed`` when it equals one (naming the first that does); else
    ``changed`` (naming the first shown)."""
    field = field or action.field
    if value is None or not field.startswith((LABEL_PREFIX, "dim:", "verdict:")):
        return None
    offered = _shown_suggestions(b, action).get(field, [])
    if not offered:
        return None
    same = [row for row in offered if row["value"] == value]
    if same:
        return {"how": "typed", "source": same[0]["source"], "suggested": same[0]["value"]}
    return {"how": "changed", "source": offered[0]["source"], "suggested": offered[0]["value"]}


def _set(b: Batch, action: Action) -> Outcome:
    _check_set(b, action)
    value = action.value
    if action.toggle and value is not None and value == get_value(
            b.db, action.dataset, action.item, action.annotator, action.field):
        value = None
    hid = set_annotation(b.db, action.dataset, action.item, action.annotator, action.field, value,
                         via=_typed_via(b, action, value))
    told = TOLD.get((action.field, value is not None)) if action.toggle else None
    return _written(action, hid, told or "", tell=told is not None)


def _follow_answer(db: Database, dataset: str, item: str, annotator: str) -> None:
    """The ``deflected`` flag follows the saved answer."""
    text = get_value(db, dataset, item, annotator, "answer") or ""
    set_annotation(db, dataset, item, annotator, "deflected",
                   True if ga.is_deflection(text) else None)


def _write_answer(b: Batch, action: Action, text: str) -> Outcome:
    text = text if text.strip() else ""
    hid = set_annotation(b.db, action.dataset, action.item, action.annotator, "answer",
                         text or None)
    _follow_answer(b.db, action.dataset, action.item, action.annotator)
    return _written(action, hid)


def _answer(b: Batch, action: Action) -> Outcome:
    _grounding_item(b, action)
    return _write_answer(b, action, action.value)


def _deflect(b: Batch, action: Action) -> Outcome:
    _grounding_item(b, action)
    answer = get_value(b.db, action.dataset, action.item, action.annotator, "answer") or ""
    if answer.strip():
        return Outcome(action.id, "unchanged", "the answer is not empty")
    return _write_answer(b, action, DEFLECTION)


def _rest(b: Batch, action: Action) -> Outcome:
    """Label the passages the annotator has not labeled yet as irrelevant, each typed
    (:func:`_typed_via`: ``changed`` where a suggestion shown said otherwise)."""
    count = len(gitem.passages(_grounding_item(b, action)))
    marked, last = [], None
    for number in range(1, count + 1):
        name = f"{LABEL_PREFIX}{number}"
        if get_value(b.db, action.dataset, action.item, action.annotator, name) is None:
            last = set_annotation(b.db, action.dataset, action.item, action.annotator, name,
                                  IRRELEVANT, via=_typed_via(b, action, IRRELEVANT, name))
            marked.append(number)
    if not marked:
        return Outcome(action.id, "unchanged", "every passage has a label", tell=True)
    return Outcome(action.id, "applied", f"{len(marked)} unlabeled passage(s) marked irrelevant",
                   history_id=last, tell=True)


def _accept(b: Batch, action: Action) -> Outcome:
    """Give every passage the annotator has not labeled yet the label suggested for it
    (by ``action.value``, a source, or the first source by name), decided on what is saved
    and on the suggestions the actor may see when it applies; each passage gets its own
    change, kept with ``via`` ``{"how": "accepted", "source": ..., "score": ...}``."""
    if action.field.startswith("verdict:"):
        return _accept_verdict(b, action)
    count = len(gitem.passages(_grounding_item(b, action)))
    if (held := _held_back(b, action)) is not None:
        return held
    offered = _shown_suggestions(b, action)
    if not offered:
        return Outcome(action.id, "unchanged", "no suggestions to accept on this question", tell=True)
    taken, last = [], None
    for number in range(1, count + 1):
        name = f"{LABEL_PREFIX}{number}"
        rows = [r for r in offered.get(name, []) if action.value in (None, r["source"])]
        if not rows or get_value(b.db, action.dataset, action.item, action.annotator, name) is not None:
            continue
        row = rows[0]
        last = set_annotation(b.db, action.dataset, action.item, action.annotator, name,
                              row["value"], via={"how": "accepted", "source": row["source"],
                                                 "score": row["score"]})
        taken.append(number)
    if not taken:
        return Outcome(action.id, "unchanged", "every suggested passage has a label", tell=True)
    return Outcome(action.id, "applied", f"{len(taken)} suggestion(s) accepted",
                   history_id=last, tell=True)


def _held_back(b: Batch, action: Action) -> Outcome | None:
    """An accept where the timing is ``after`` takes nothing: a suggestion shows there
    only once the field has the annotator's own value, and an accept fills only fields
    without one. ``None``: the accept goes on."""
    if suggestion_timing(b.db, action.dataset, action.item, b.actor, action.annotator) != AFTER:
        return None
    yours = "verdict" if action.field.startswith("verdict:") else "label"
    return Outcome(action.id, "unchanged", f"suggestions show here only after your own "
                   f"{yours}: nothing to accept", tell=True)


def _saved_verdict(b: Batch, action: Action) -> Mapping[str, Any]:
    """The comparison's saved value (checked to exist in the item)."""
    fmt = b.targets.dataset(action.dataset, PREFERENCE)
    pref = preference_view(fmt, b.targets.record(action.dataset, action.item))
    i, j = (int(x) for x in action.field.split(":")[1:])
    if i >= len(pref.chosen) or j >= len(pref.rejected):
        raise Rejected(f"comparison chosen {i + 1} vs rejected {j + 1}: the item has "
                       f"{len(pref.chosen)} chosen and {len(pref.rejected)} rejected")
    saved = get_value(b.db, action.dataset, action.item, action.annotator, action.field)
    return saved if isinstance(saved, Mapping) else {}


def _verdict(b: Batch, action: Action) -> Outcome:
    """Set (or clear) a verdict; reasons and note not given are the saved ones (a reason
    key flips on what is saved, so a verdict typed after it keeps what the flips left)."""
    saved = _saved_verdict(b, action)
    had = saved.get("reasons")
    reasons = action.reasons if action.reasons is not None else (had if isinstance(had, list) else [])
    value = None if action.value is None else make_value(
        action.value, reasons, saved.get("note", "") if action.note is None else action.note)
    hid = set_annotation(b.db, action.dataset, action.item, action.annotator, action.field, value,
                         via=_typed_via(b, action, action.value))
    return _written(action, hid)


def _accept_verdict(b: Batch, action: Action) -> Outcome:
    """Review's accept: the comparison gets the verdict suggested for it (of
    ``action.value``, a source, or the first source by name) when it has none of the
    annotator's yet, decided on what is saved and on what the actor may see."""
    saved = _saved_verdict(b, action)
    if (held := _held_back(b, action)) is not None:
        return held
    rows = [r for r in _shown_suggestions(b, action).get(action.field, [])
            if action.value in (None, r["source"])]
    if not rows:
        return Outcome(action.id, "unchanged", "no suggestion to accept on this comparison", tell=True)
    if verdict_of(saved) is not None:
        return Outcome(action.id, "unchanged", "this comparison has your verdict", tell=True)
    row = rows[0]
    value = make_value(row["value"], (), saved.get("note", ""))
    hid = set_annotation(b.db, action.dataset, action.item, action.annotator, action.field, value,
                         via={"how": "accepted", "source": row["source"], "score": row["score"]})
    return _written(action, hid, "the suggested verdict accepted", tell=True)


def _amend_verdict(b: Batch, action: Action) -> Outcome:
    """``reasons`` and ``note``: change an existing verdict, decided on what is saved; the
    verdict keeps where it came from (an accepted one stays accepted)."""
    saved = _saved_verdict(b, action)
    verdict = verdict_of(saved)
    if verdict is None:
        return Outcome(action.id, "unchanged", f"no verdict yet: the {action.kind} is kept with it")
    had = saved.get("reasons")
    reasons: Iterable[str] = had if isinstance(had, list) else []
    if action.kind == "reasons":
        reasons = set(reasons) ^ {action.flip} if action.flip is not None else action.reasons
    note = saved.get("note", "") if action.note is None else action.note
    hid = set_annotation(b.db, action.dataset, action.item, action.annotator, action.field,
                         make_value(verdict, reasons, note),
                         via=get_via(b.db, action.dataset, action.item, action.annotator,
                                     action.field))
    return _written(action, hid)


def _final(b: Batch, action: Action) -> Outcome:
    b.targets.record(action.dataset, action.item)
    hid = set_annotation(b.db, action.dataset, action.item, action.annotator, action.field,
                         action.value)
    return _written(action, hid)


def _revert_entry(b: Batch, action: Action, entry: Mapping[str, Any], verb: str) -> Outcome:
    hid = undo(b.db, entry["id"], action.annotator, action=verb)
    if entry["field"] == "answer":
        _follow_answer(b.db, entry["dataset"], entry["item_key"], entry["annotator"])
    return Outcome(action.id, "applied", f"{verb}: {entry['field']} of {entry['item_key']}", history_id=hid,
                   item=entry["item_key"], field=entry["field"])


def _undo(b: Batch, action: Action) -> Outcome:
    """Undo or redo the annotator's newest change on the page's fields; the change it
    reverts must be allowed too."""
    b.targets.dataset(action.dataset, GROUNDING if action.field == "annotate" else PREFERENCE)
    find = last_undoable if action.kind == "undo" else last_redoable
    row = find(b.db, action.dataset, action.annotator, UNDO_SCOPES[action.field])
    if row is None:
        return Outcome(action.id, "unchanged", f"nothing to {action.kind}")
    b.refuse_unless_allowed(replace(action, item=row["item_key"], field=row["field"]))
    entry = {"id": row["id"], "dataset": action.dataset, "item_key": row["item_key"],
             "field": row["field"], "annotator": action.annotator}
    return _revert_entry(b, action, entry, action.kind)


def _revert(b: Batch, action: Action) -> Outcome:
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
            raise _Refused(str(e)) from None
        if fresh is not None and fresh.name != action.annotator:
            raise _Refused(f"{fresh.name} is signed in: changes are saved under that name, "
                           f"not {action.annotator!r}")
    return _revert_entry(b, action, entry, "undo")


def _move(b: Batch, action: Action) -> Outcome:
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
        _grounding_item(b, action)
    who = ""
    if b.actor is not None:
        try:
            fresh = check(b.db, b.actor, "annotate", action.dataset)
        except PermissionDenied as e:
            raise _Refused(str(e)) from None
        if fresh is not None and not access.may_open(b.db, action.dataset, action.item, fresh):
            raise _Refused(access.refusal(action.dataset, fresh))
        who = fresh.name if fresh is not None else ""
    if action.field == "review":
        found = positions.move(b.db, who, action.tab, "review", action.dataset, action.item,
                               i=action.i, j=action.j)
    else:
        found = positions.move(b.db, who, action.tab, "annotate", action.dataset, action.item,
                               cursor=action.i)
    return Outcome(action.id, "applied", f"{MOVED}{found.seq}", seq=found.seq)


@dataclass(frozen=True)
class Kind:
    """One kind of action: how its JSON is read, how it applies, whether the key
    scripts may send it (the action route accepts only those), and whether the
    permission check runs on the action's own target before it applies (undo and redo
    check the change they revert instead)."""

    parse: Callable[[ap.Raw, str], Action]
    apply: Callable[[Batch, Action], Outcome]
    keys: bool = True
    guarded: bool = True


KINDS: dict[str, Kind] = {
    "set": Kind(ap.parse_set, _set),
    "deflect": Kind(ap.parse_deflect, _deflect),
    "rest": Kind(ap.parse_rest, _rest),
    "accept": Kind(ap.parse_accept, _accept),
    "verdict": Kind(ap.parse_verdict, _verdict),
    "reasons": Kind(ap.parse_reasons, _amend_verdict),
    "undo": Kind(ap.parse_undo, _undo, guarded=False),
    "redo": Kind(ap.parse_undo, _undo, guarded=False),
    "answer": Kind(ap.parse_answer, _answer, keys=False),
    "note": Kind(ap.parse_note, _amend_verdict, keys=False),
    "final": Kind(ap.parse_final, _final, keys=False),
    "revert": Kind(ap.parse_revert, _revert, keys=False, guarded=False),
    "move": Kind(ap.parse_move, _move, guarded=False),
}
KEY_KINDS = tuple(name for name, kind in KINDS.items() if kind.keys)


def parse(raw: Any, kinds: Iterable[str] = KEY_KINDS) -> Action:
    """Check an action's shape (not yet its target) against ``kinds``; raises
    :class:`Rejected`."""
    if not isinstance(raw, Mapping):
        raise Rejected("an action must be a JSON object")
    kinds = tuple(kinds)
    name = raw.get("kind")
    if name not in kinds:
        raise Rejected(f"kind: expected one of {', '.join(kinds)}")
    return KINDS[name].parse(raw, name)


def _error_kind(exc: sqlite3.Error) -> str:
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return "busy"
    if "full" in text:
        return "full"
    return "failed"


def apply_actions(db: Database, raws: Iterable[Any], allowed: Allowed | None = None, *,
                  actor: User | None = None, kinds: Iterable[str] = KEY_KINDS,
                  busy_ms: int | None = BUSY_MS) -> Delivery:
    """Apply a batch of actions in order, each at most once (see the module docstring).

    ``kinds``: the kinds accepted (default: those the key scripts send; others are
    rejected). ``allowed(action)`` may return a reason to refuse an action. ``actor``
    (team mode: the signed-in user) adds the role and assignment checks of
    :func:`needlework.teams.permissions.action_guard`; a refused action is rejected with
    that sentence. ``busy_ms``: how long to wait for the write lock (``None``: the
    connection's own timeout). Never raises for what was sent; a database error ends
    the batch with :attr:`Delivery.error` set and nothing of it written (earlier
    batches stay); a programming error ends it at that action with :data:`INTERNAL`
    (the actions before it stay written).
    """
    if actor is not None:
        guard, extra = action_guard(db, actor), allowed
        allowed = guard if extra is None else (lambda a: extra(a) or guard(a))
    kinds = tuple(kinds)
    delivery = Delivery()
    parsed: list[Action] = []
    seen: set[str] = set()
    for raw in list(raws)[:MAX_BATCH]:
        action_id = str(raw.get("id")) if isinstance(raw, Mapping) else ""
        if action_id in seen:
            continue
        seen.add(action_id)
        if not ID.match(action_id):
            delivery.outcomes.append(Outcome(action_id, "rejected", "id: malformed"))
            continue
        try:
            parsed.append(parse(raw, kinds))
        except Rejected as exc:
            parsed.append(Action(action_id, "invalid", "", "", "", value=str(exc)))
    if not parsed:
        return delivery
    try:
        done = store_actions.applied(db, [a.id for a in parsed])
        delivery.outcomes.extend(_earlier(a, done[a.id]) for a in parsed if a.id in done)
        todo = [a for a in parsed if a.id not in done]
        if todo:
            outcomes, fault = _apply_batch(db, todo, allowed, actor, busy_ms)
            delivery.outcomes.extend(outcomes)
            if fault is not None:
                delivery.error, delivery.detail, delivery.fault = INTERNAL, repr(fault), fault
    except sqlite3.Error as exc:  # busy, full, I/O: nothing of this batch was written
        delivery.error = _error_kind(exc)
        delivery.detail = str(exc)
        log.warning("actions not applied (%s): %s", delivery.error, exc)
    return delivery


def _earlier(action: Action, row: Mapping[str, Any]) -> Outcome:
    """The outcome of an action applied before (sent again: its answer was lost)."""
    status, _, message = str(row["outcome"]).partition(": ")
    seq = None
    if action.kind == "move":  # its seq again (0: it was refused)
        digits = message[len(MOVED):] if message.startswith(MOVED) else ""
        seq = int(digits) if digits.isdigit() else 0
    return Outcome(action.id, status, history_id=row["history_id"], seq=seq)


def _apply_batch(db: Database, todo: list[Action], allowed: Allowed | None, actor: User | None,
                 busy_ms: int | None) -> tuple[list[Outcome], Exception | None]:
    """The outcomes of ``todo`` applied in order in one transaction, and the programming
    error that stopped it (``None``: none did). Refusals (:class:`Rejected`, a
    :class:`PermissionDenied`, no annotator name) are outcomes, recorded; a database
    error propagates with nothing written; any other exception is logged, and it and
    the actions after it are neither written nor recorded."""
    out: list[Outcome] = []
    fault: Exception | None = None
    previous = db.execute("pragma busy_timeout").fetchone()[0]
    if busy_ms is not None:
        db.execute(f"pragma busy_timeout = {int(busy_ms)}")
    try:
        with db.atomic():
            again = store_actions.applied(db, [a.id for a in todo])  # another run got there
            batch = Batch(db, _Targets(db), allowed, actor)
            for action in todo:
                if action.id in again:
                    out.append(_earlier(action, again[action.id]))
                    continue
                try:
                    if action.kind == "invalid":
                        raise Rejected(action.value)
                    kind = KINDS[action.kind]
                    if kind.guarded:
                        batch.refuse_unless_allowed(action)
                    with db.atomic():  # a savepoint: a rejected action leaves nothing behind
                        outcome = kind.apply(batch, action)
                except (Rejected, PermissionDenied, AnnotatorRequired) as exc:
                    outcome = Outcome(action.id, "rejected", str(exc),
                                      refused=isinstance(exc, (_Refused, PermissionDenied)),
                                      seq=0 if action.kind == "move" else None)
                except sqlite3.Error:
                    raise
                except Exception as exc:  # a bug: the browser keeps the action and resends it
                    log.exception("action %s (%s) not applied: programming error",
                                  action.id, action.kind)
                    fault = exc
                    break
                store_actions.record(db, action.id, action.dataset, action.item, action.annotator,
                                     action.kind, outcome.status + (f": {outcome.message}"
                                                                    if outcome.message else ""),
                                     outcome.history_id)
                out.append(outcome)
    finally:
        if busy_ms is not None:
            db.execute(f"pragma busy_timeout = {int(previous)}")
    return out, fault


def submit(db: Database, raw: Mapping[str, Any], *, actor: User | None = None) -> Outcome:
    """Apply one action made on the server (a widget's callback) through the same path
    as the keys: any kind of :data:`KINDS`, an id made here, the permission check for
    ``actor``, the connection's own lock timeout. Returns its outcome; raises
    :class:`~needlework.teams.permissions.PermissionDenied` when a permission refused
    it, ``ValueError`` when it cannot apply, ``sqlite3.OperationalError`` when the
    database could not take it (nothing written); a programming error is raised as
    itself (logged, nothing written)."""
    delivery = apply_actions(db, [{**raw, "id": f"srv-{uuid.uuid4().hex}"}], actor=actor,
                             kinds=KINDS, busy_ms=None)
    if delivery.fault is not None:
        raise delivery.fault
    if delivery.error:
        raise sqlite3.OperationalError(delivery.detail)
    outcome = delivery.outcomes[0]
    if outcome.status == "rejected":
        raise (PermissionDenied if outcome.refused else ValueError)(outcome.message)
    return outcome
