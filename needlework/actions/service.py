"""Actions: every annotation write, applied exactly once, to the target it names.

Each write, a key press in the browser or a widget's callback on the server, is an
*action* that names everything it changes (dataset, item, field or comparison, the new
value, who) and carries an id. The key scripts make the id in the browser, keep each
action in its storage and send it to the action route until the server acknowledges
it, whatever happens in between (a rerun, a reconnect, a server restart, a reload);
the pages' widgets call :func:`submit` (through :mod:`needlework.actions.writes`). Both
reach :func:`apply_actions`, which applies a batch in order, in one transaction, after
one permission check, and records each id in that same transaction
(``store.actions``), so an action sent twice changes the database once.

:data:`KINDS` is the table of kinds: each one's parser (:mod:`needlework.actions.parse`,
which documents its fields), how it applies, and whether the key scripts may send it.
How each kind applies lives beside this module: :mod:`needlework.actions.grounding`
(Annotate's kinds), :mod:`needlework.actions.verdicts` (Review's), :mod:`needlework.actions.history`
(undo, redo, revert, move), on what :mod:`needlework.actions.base` (the batch, the outcome) and
:mod:`needlework.actions.shown` (the suggestions on screen, ``via``) share; this module is the
one entry: :func:`apply_actions` and :func:`submit`.
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
on Annotate, :mod:`needlework.view.prefs`).
- ``verdict``: the verdict (``null`` clears), reasons and note of comparison
  chosen[i] vs rejected[j] (``note`` absent keeps the saved note).
- ``reasons``: the reasons of an existing verdict, or with ``flip`` one reason added or
  removed on what is saved. ``note``: the note of an existing verdict.
- ``undo`` / ``redo``: the annotator's newest own change on that page's fields not
  undone yet (redo: the newest undo, unless a new change came after it).
- ``final``: a reviewer's adjudicated value (``final:*`` fields).
- ``revert``: one history entry reverted (Data page): one's own change with the usual
  check, another person's with the reviewer role.
- ``move``: the tab's place on the annotate or review page (:mod:`needlework.actions.positions`);
  its outcome carries the position's ``seq``.
- ``view``: the person's own view choice (``field`` ``hide_suggestions``, Annotate's H;
  ``value`` true or false), in order with the labels around it, so that each label
  records what was on screen (:mod:`needlework.view.prefs`).

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
from dataclasses import dataclass, field
from typing import Any

from sqlite_utils import Database

from needlework.actions import parse as ap
from needlework.actions.base import (  # noqa: F401 - the write service's names, importable here
    GROUNDING,
    ITEM_FIELDS,
    MOVED,
    PREFERENCE,
    TOLD,
    Allowed,
    Batch,
    Outcome,
    Refused,
    Targets,
)
from needlework.actions.grounding import (
    apply_answer,
    apply_deflect,
    apply_rest,
    apply_set,
    apply_view,
    grounding_accept,
)
from needlework.actions.history import apply_move, apply_revert, apply_undo
from needlework.actions.parse import ID, Action, Rejected
from needlework.actions.verdicts import accept_verdict, amend_verdict, apply_final, apply_verdict
from needlework.teams.permissions import PermissionDenied, User, action_guard
from store import actions as store_actions
from store.annotations import AnnotatorRequired

log = logging.getLogger(__name__)

MAX_BATCH = 500  # actions applied per call; the rest wait for the next delivery
BUSY_MS = 1500  # wait this long for the write lock, then report "busy" and retry later
INTERNAL = "internal"  # Delivery.error of a programming error (the route answers 500)


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



def apply_accept(b: Batch, action: Action) -> Outcome:
    """``accept``: Review's (a ``verdict:`` field) or Annotate's."""
    if action.field.startswith("verdict:"):
        return accept_verdict(b, action)
    return grounding_accept(b, action)


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
    "set": Kind(ap.parse_set, apply_set),
    "deflect": Kind(ap.parse_deflect, apply_deflect),
    "rest": Kind(ap.parse_rest, apply_rest),
    "accept": Kind(ap.parse_accept, apply_accept),
    "verdict": Kind(ap.parse_verdict, apply_verdict),
    "reasons": Kind(ap.parse_reasons, amend_verdict),
    "undo": Kind(ap.parse_undo, apply_undo, guarded=False),
    "redo": Kind(ap.parse_undo, apply_undo, guarded=False),
    "answer": Kind(ap.parse_answer, apply_answer, keys=False),
    "note": Kind(ap.parse_note, amend_verdict, keys=False),
    "final": Kind(ap.parse_final, apply_final, keys=False),
    "revert": Kind(ap.parse_revert, apply_revert, keys=False, guarded=False),
    "move": Kind(ap.parse_move, apply_move, guarded=False),
    "view": Kind(ap.parse_view, apply_view),
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
            batch = Batch(db, Targets(db), allowed, actor)
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
                                      refused=isinstance(exc, (Refused, PermissionDenied)),
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
