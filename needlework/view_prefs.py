"""What each person chose for their own view of the pages, kept in the database
(:mod:`store.view_prefs`) so that the server reads the same choice the page was drawn
with.

:data:`HIDE_SUGGESTIONS` is the Annotate page's H: it hides the labels and dimensions the
file came with and every model suggestion (passages and dimensions). The server asks
:func:`hides_suggestions` when it decides whether a value was saved with a suggestion on
screen (:mod:`needlework.actions`): a label typed with H on is typed with nothing shown.
The choice is the person's, on every dataset and in every tab, and stays after a reload.

:data:`COMPACT` is Annotate's compact layout: the outlined passage whole and the others
folded to two lines, tighter cards, the dimensions above the answer, so that five passages
and the dimensions fit the first screen at 1440x900. Kept the same way, per person.
"""

from __future__ import annotations

from sqlite_utils import Database

from needlework.teams.events import record
from needlework.teams.permissions import PermissionDenied, User, check
from store import view_prefs

HIDE_SUGGESTIONS = "hide_suggestions"
COMPACT = "compact_annotate"


def hides_suggestions(db: Database, who: str) -> bool:
    """Whether ``who`` (the signed-in name in team mode, the annotator's name locally)
    has H on: the file's labels and the suggestions hidden on Annotate (off when never
    chosen, and for an empty name)."""
    return bool(who) and bool(view_prefs.get_pref(db, who, HIDE_SUGGESTIONS))


def compact(db: Database, who: str) -> bool:
    """Whether ``who`` chose Annotate's compact layout (off when never chosen, and for an
    empty name)."""
    return bool(who) and bool(view_prefs.get_pref(db, who, COMPACT))


def set_compact(db: Database, who: str, on: bool, *, actor: User | None) -> bool:
    """Turn ``who``'s compact layout on or off; returns the value before. The same rules
    and audit event as :func:`set_hides_suggestions`."""
    return _set(db, who, COMPACT, on, actor)


def set_hides_suggestions(db: Database, who: str, on: bool, *, actor: User | None) -> bool:
    """Turn ``who``'s H on or off; returns the value before. In team mode only the
    signed-in person sets their own, with an account that may annotate
    (:class:`PermissionDenied` otherwise); a name is
    needed. A change is an audit event (``view.setting``), as it decides what later
    values count as seen with a suggestion."""
    return _set(db, who, HIDE_SUGGESTIONS, on, actor)


def _set(db: Database, who: str, name: str, on: bool, actor: User | None) -> bool:
    """Set ``who``'s choice ``name`` (see :func:`set_hides_suggestions`)."""
    who = (who or "").strip()
    if not who:
        raise ValueError("a name is needed to keep the choice")
    if actor is not None:
        fresh = check(db, actor, "annotate")
        if fresh is None or fresh.name != who:
            raise PermissionDenied(f"{actor.name} is signed in: only {who} sets their own view")
        actor = fresh
    with db.atomic():
        before = bool(view_prefs.set_pref(db, who, name, bool(on)))
        if before != bool(on):
            record(db, actor if actor is not None else who, "view.setting", name,
                   before={name: before}, after={name: bool(on)})
    return before
