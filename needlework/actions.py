"""Key actions from the browser, applied exactly once, to the target they name.

The annotate and review pages do not write on the server's idea of "the current
passage": every key press becomes an *action* in the browser that names everything it
changes (dataset, item, field or comparison, the new value, who) and carries an id made
in the browser. The browser keeps each action in its storage and sends it again until
the server acknowledges it, whatever happens in between (a rerun, a reconnect, a server
restart, a page reload). :func:`apply_actions` applies a batch in order, in one
transaction, and records each id in that same transaction (``store.actions``), so an
action sent twice changes the database once.

Kinds (the JSON the browser sends, all fields strings unless said):

- ``set``: ``{"id", "kind": "set", "dataset", "item", "annotator", "field", "value"}``;
  ``field`` is ``label:N`` (value one of the five labels, or ``null`` to clear) or
  ``dim:FIELD`` (a question dimension; ``null`` clears). With ``"toggle": true`` (a
  click on the label a passage has, the F key) the field is cleared instead when the
  database holds ``value`` when the action applies: decided here, not on the browser's
  copy, which may still show a value an undo just took back.
- ``deflect``: write the standard deflection as the answer, only if the answer is empty.
- ``rest``: ``{"id", "kind": "rest", "dataset", "item", "annotator"}`` labels every
  passage of the item that has no label of the annotator's yet as irrelevant. Which
  passages those are is decided here, on what the database holds when the action
  applies (after the undo sent just before it, say), never on the browser's copy.
  Each passage gets its own change, so undo takes them back one at a time.
- ``verdict``: ``{..., "i": int, "j": int, "verdict", "reasons": [...], "note"?}`` on the
  comparison chosen[i] vs rejected[j] (``note`` absent keeps the saved note).
- ``reasons``: ``{..., "i", "j", "reasons": [...]}`` replaces the reasons of an existing
  verdict (no verdict yet: nothing changes). With ``"flip": REASON`` instead of the list
  (the 1-7 keys) that one reason is added to or removed from the reasons saved when the
  action applies: decided here, since right after Z the page may still show the reasons
  the undo took back.
- ``undo`` / ``redo``: ``{"id", "kind", "dataset", "annotator", "scope": "annotate"|"review"}``
  reverts the annotator's newest own change on that page's fields not undone yet (redo:
  the newest undo, unless a new change came after it). Sent twice, it still reverts once.

Each action's shape is checked by :func:`needlework.action_parse.parse`. An action that
cannot apply (unknown item, passage out of range, a label that does not exist) is *rejected*: it is acknowledged with the reason, recorded, and changes nothing.
A database that is busy or full applies nothing and acknowledges nothing
(:attr:`Delivery.error`): the browser keeps the actions and sends them again.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from sqlite_utils import Database

from needlework.action_parse import ID, UNDO_SCOPES, Action, Rejected, parse
from needlework.formats import preference_view
from needlework.formats.garage import DEFLECTION, DIMENSIONS
from needlework.grounding import answer as ga
from needlework.grounding import item as gitem
from needlework.grounding.labels import IRRELEVANT, LABEL_PREFIX, LABELS
from needlework.review.verdicts import make_value, verdict_of
from needlework.teams.permissions import User, action_guard, check_write
from store import actions as store_actions
from store.annotations import get_value, last_redoable, last_undoable, set_annotation, undo
from store.datasets import get_item

log = logging.getLogger(__name__)

#: Item fields the annotate keys set besides labels and dimensions (value: a string or null).
ITEM_FIELDS = {"flag": ("flagged",), "skipped": ("skipped",), "comment": None}
#: What a toggle of these fields tells the person who pressed the key (field, set?).
TOLD = {("flag", True): "flagged for later", ("flag", False): "flag removed"}
MAX_BATCH = 500  # actions applied per call; the rest wait for the next delivery
BUSY_MS = 1500  # wait this long for the write lock, then report "busy" and retry later
GROUNDING = ("grounding",)
PREFERENCE = ("preference", "needle")


@dataclass(frozen=True)
class Outcome:
    """What became of one action: ``applied`` (a change was written), ``unchanged``
    (already so, or nothing to do) or ``rejected`` (with ``message``)."""

    id: str
    status: str
    message: str = ""
    history_id: int | None = None
    item: str = ""   # what an undo or redo reverted
    field: str = ""
    tell: bool = False  # ``message`` is for the person who pressed the key (``rest``)


@dataclass
class Delivery:
    """The outcome of one batch; ``error`` (``busy``, ``full``, ``failed``) means nothing
    of the not-yet-applied part was written and it must be sent again."""

    outcomes: list[Outcome] = field(default_factory=list)
    error: str | None = None
    detail: str = ""

    @property
    def acked(self) -> list[str]:
        """Ids the browser may forget: applied now or before, unchanged, or rejected."""
        return [o.id for o in self.outcomes]

    @property
    def rejected(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "rejected"]


def save_answer(db: Database, dataset: str, item: str, annotator: str, text: str, *,
                actor: User | None = None) -> int | None:
    """Save an answer (an empty one is removed) and its ``deflected`` flag; returns the
    history id of the answer's change (``None`` when it was already so). ``actor``: the
    signed-in user in team mode (:func:`needlework.teams.permissions.check_write`)."""
    check_write(db, actor, dataset, item, annotator, "answer")
    text = text if text.strip() else ""
    with db.atomic():
        hid = set_annotation(db, dataset, item, annotator, "answer", text or None)
        set_annotation(db, dataset, item, annotator, "deflected",
                       True if ga.is_deflection(text) else None)
    return hid


class _Targets:
    """Datasets and items a batch touches, read once per batch."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._datasets: dict[str, tuple[str, str] | None] = {}
        self._items: dict[tuple[str, str], dict[str, Any] | None] = {}

    def dataset(self, name: str, kinds: tuple[str, ...]) -> str:
        if name not in self._datasets:
            self._datasets[name] = store_actions.dataset_kind(self.db, name)
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


def _check_set(targets: _Targets, action: Action) -> None:
    targets.dataset(action.dataset, GROUNDING)
    record = targets.record(action.dataset, action.item)
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


def _revert(db: Database, targets: _Targets, action: Action,
            allowed: Callable[[Action], str | None] | None) -> Outcome:
    """Undo or redo (see the module docstring); the change it reverts must be allowed too."""
    prefixes = UNDO_SCOPES[action.field]
    targets.dataset(action.dataset, GROUNDING if action.field == "annotate" else PREFERENCE)
    find = last_undoable if action.kind == "undo" else last_redoable
    row = find(db, action.dataset, action.annotator, prefixes)
    if row is None:
        return Outcome(action.id, "unchanged", f"nothing to {action.kind}")
    target = replace(action, item=row["item_key"], field=row["field"])
    why = allowed(target) if allowed else None
    if why:
        raise Rejected(why)
    hid = undo(db, row["id"], action.annotator, action=action.kind)
    if row["field"] == "answer":  # the deflected flag follows the restored answer
        restored = get_value(db, action.dataset, row["item_key"], action.annotator, "answer") or ""
        set_annotation(db, action.dataset, row["item_key"], action.annotator, "deflected",
                       True if ga.is_deflection(restored) else None)
    return Outcome(action.id, "applied", f"{action.kind}: {row['field']} of {row['item_key']}",
                   history_id=hid, item=row["item_key"], field=row["field"])


def _rest(db: Database, targets: _Targets, action: Action) -> Outcome:
    """Label the passages the annotator has not labeled yet as irrelevant."""
    targets.dataset(action.dataset, GROUNDING)
    count = len(gitem.passages(targets.record(action.dataset, action.item)))
    marked, last = [], None
    for number in range(1, count + 1):
        name = f"{LABEL_PREFIX}{number}"
        if get_value(db, action.dataset, action.item, action.annotator, name) is None:
            last = set_annotation(db, action.dataset, action.item, action.annotator, name,
                                  IRRELEVANT)
            marked.append(number)
    if not marked:
        return Outcome(action.id, "unchanged", "every passage has a label", tell=True)
    return Outcome(action.id, "applied", f"{len(marked)} unlabeled passage(s) marked irrelevant",
                   history_id=last, tell=True)


def _apply_one(db: Database, targets: _Targets, action: Action) -> Outcome:
    """Apply one checked action (inside the batch's transaction)."""
    if action.kind == "set":
        _check_set(targets, action)
        value = action.value
        if action.toggle and value is not None and value == get_value(
                db, action.dataset, action.item, action.annotator, action.field):
            value = None
        hid = set_annotation(db, action.dataset, action.item, action.annotator, action.field,
                             value)
        told = TOLD.get((action.field, value is not None)) if action.toggle else None
        return Outcome(action.id, "unchanged" if hid is None else "applied", told or "",
                       history_id=hid, tell=told is not None)
    if action.kind == "deflect":
        targets.dataset(action.dataset, GROUNDING)
        targets.record(action.dataset, action.item)
        answer = get_value(db, action.dataset, action.item, action.annotator, "answer") or ""
        if answer.strip():
            return Outcome(action.id, "unchanged", "the answer is not empty")
        hid = save_answer(db, action.dataset, action.item, action.annotator, DEFLECTION)
        return Outcome(action.id, "applied", history_id=hid)
    if action.kind == "rest":
        return _rest(db, targets, action)
    fmt = targets.dataset(action.dataset, PREFERENCE)
    pref = preference_view(fmt, targets.record(action.dataset, action.item))
    i, j = (int(x) for x in action.field.split(":")[1:])
    if i >= len(pref.chosen) or j >= len(pref.rejected):
        raise Rejected(f"comparison chosen {i + 1} vs rejected {j + 1}: the item has "
                       f"{len(pref.chosen)} chosen and {len(pref.rejected)} rejected")
    saved = get_value(db, action.dataset, action.item, action.annotator, action.field) or {}
    saved_note = saved.get("note", "") if isinstance(saved, Mapping) else ""
    if action.kind == "verdict":
        value = make_value(action.value, action.reasons,
                           saved_note if action.note is None else action.note)
    else:
        verdict = verdict_of(saved)
        if verdict is None:
            return Outcome(action.id, "unchanged", "no verdict yet: reasons are kept with it")
        reasons = action.reasons
        if action.flip is not None:
            had = saved.get("reasons") if isinstance(saved, Mapping) else None
            reasons = tuple(set(had if isinstance(had, list) else []) ^ {action.flip})
        value = make_value(verdict, reasons, saved_note)
    hid = set_annotation(db, action.dataset, action.item, action.annotator, action.field, value)
    return Outcome(action.id, "unchanged" if hid is None else "applied", history_id=hid)


def _error_kind(exc: sqlite3.Error) -> str:
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return "busy"
    if "full" in text:
        return "full"
    return "failed"


def apply_actions(db: Database, raws: Iterable[Any],
                  allowed: Callable[[Action], str | None] | None = None, *,
                  actor: User | None = None) -> Delivery:
    """Apply a batch of actions in order, each at most once (see the module docstring).

    ``allowed(action)`` may return a reason to refuse an action (e.g. it names another
    annotator than the signed-in one). ``actor`` (team mode: the signed-in user) adds
    the role and assignment checks of :func:`needlework.teams.permissions.action_guard`;
    a refused action is rejected with that sentence. Never raises for what the browser
    sent; a database error ends the batch with :attr:`Delivery.error` set and nothing of
    it written (earlier batches stay).
    """
    if actor is not None:
        guard, extra = action_guard(db, actor), allowed
        allowed = guard if extra is None else (lambda a: extra(a) or guard(a))
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
            parsed.append(parse(raw))
        except Rejected as exc:
            parsed.append(Action(action_id, "invalid", "", "", "", value=str(exc)))
    if not parsed:
        return delivery
    try:
        done = store_actions.applied(db, [a.id for a in parsed])
        delivery.outcomes.extend(Outcome(a.id, done[a.id]["outcome"].split(":")[0],
                                         history_id=done[a.id]["history_id"])
                                 for a in parsed if a.id in done)
        todo = [a for a in parsed if a.id not in done]
        if todo:
            delivery.outcomes.extend(_apply_batch(db, todo, allowed))
    except sqlite3.Error as exc:  # busy, full, I/O: nothing of this batch was written
        delivery.error = _error_kind(exc)
        delivery.detail = str(exc)
        log.warning("key actions not applied (%s): %s", delivery.error, exc)
    return delivery


def _apply_batch(db: Database, todo: list[Action],
                 allowed: Callable[[Action], str | None] | None) -> list[Outcome]:
    out: list[Outcome] = []
    previous = db.execute("pragma busy_timeout").fetchone()[0]
    db.execute(f"pragma busy_timeout = {BUSY_MS}")
    try:
        with db.atomic():
            again = store_actions.applied(db, [a.id for a in todo])  # another run got there
            targets = _Targets(db)
            for action in todo:
                if action.id in again:
                    out.append(Outcome(action.id, again[action.id]["outcome"].split(":")[0]))
                    continue
                try:
                    if action.kind == "invalid":
                        raise Rejected(action.value)
                    why = allowed(action) if allowed and action.kind not in ("undo", "redo") \
                        else None
                    if why:
                        raise Rejected(why)
                    with db.atomic():  # a savepoint: a rejected action leaves nothing behind
                        outcome = (_revert(db, targets, action, allowed)
                                   if action.kind in ("undo", "redo")
                                   else _apply_one(db, targets, action))
                except (Rejected, ValueError, KeyError, TypeError) as exc:
                    outcome = Outcome(action.id, "rejected", str(exc))
                store_actions.record(db, action.id, action.dataset, action.item, action.annotator,
                                     action.kind, outcome.status + (f": {outcome.message}"
                                                                    if outcome.message else ""),
                                     outcome.history_id)
                out.append(outcome)
    finally:
        db.execute(f"pragma busy_timeout = {int(previous)}")
    return out
