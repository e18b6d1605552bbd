"""What each person chose for their own view of the pages, kept in the database
(:mod:`store.view_prefs`) so that the server reads the same choice the page was drawn
with.

:data:`HIDE_SUGGESTIONS` is the Annotate page's H: it hides the labels and dimensions the
file came with and every model suggestion (passages and dimensions). The server asks
:func:`hides_suggestions` when it decides whether a value was saved with a suggestion on
screen (:mod:`needlework.actions.service`): a label typed with H on is typed with nothing shown.
The choice is the person's, on every dataset and in every tab, and stays after a reload.

:data:`COMPACT` is Annotate's compact layout: the outlined passage whole and the others
folded to two lines, tighter cards, the dimensions above the answer, so that five passages
and the dimensions fit the first screen at 1440x900. Kept the same way, per person.

:data:`REVIEW_VIEW` and :data:`REVIEW_MARKDOWN` are Review's view of the two responses
(:data:`REVIEW_VIEWS`: Auto, Side by side, Differences; and the Markdown switch), kept per
person the same way so that a page load keeps them; they decide nothing the server
records, so changing them is no audit event.
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from needlework.teams.events import record
from needlework.teams.permissions import PermissionDenied, User, check
from store import view_prefs

HIDE_SUGGESTIONS = "hide_suggestions"
COMPACT = "compact_annotate"
REVIEW_VIEW = "review_view"
REVIEW_MARKDOWN = "review_markdown"
#: Review's views of a comparison: the differences when near-identical, else side by
#: side (``auto``); side by side; the differences.
REVIEW_VIEWS = ("auto", "side", "diff")


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
    return bool(_set(db, who, COMPACT, bool(on), actor))


def review_view(db: Database, who: str) -> str:
    """``who``'s view of Review's responses, one of :data:`REVIEW_VIEWS` (``auto`` when
    never chosen, for an empty name, and for a value no longer known)."""
    value = view_prefs.get_pref(db, who, REVIEW_VIEW) if who else None
    return value if value in REVIEW_VIEWS else "auto"


def set_review_view(db: Database, who: str, view: str, *, actor: User | None) -> str:
    """Keep ``who``'s view of Review's responses (:data:`REVIEW_VIEWS`; anything else is a
    :class:`ValueError`); returns the view before. The same rules as
    :func:`set_hides_suggestions`, without the audit event."""
    if view not in REVIEW_VIEWS:
        raise ValueError(f"unknown view {view!r}: one of {', '.join(REVIEW_VIEWS)}")
    before = review_view(db, who)
    _set(db, who, REVIEW_VIEW, view, actor, audit=False)
    return before


def review_markdown(db: Database, who: str) -> bool:
    """Whether ``who`` reads Review's responses with their Markdown drawn (off when never
    chosen, and for an empty name)."""
    return bool(who) and bool(view_prefs.get_pref(db, who, REVIEW_MARKDOWN))


def set_review_markdown(db: Database, who: str, on: bool, *, actor: User | None) -> bool:
    """Keep ``who``'s Markdown switch on Review; returns the value before (as
    :func:`set_review_view`)."""
    return bool(_set(db, who, REVIEW_MARKDOWN, bool(on), actor, audit=False))


def set_hides_suggestions(db: Database, who: str, on: bool, *, actor: User | None) -> bool:
    """Turn ``who``'s H on or off; returns the value before. In team mode only the
    signed-in person sets their own, with an account that may annotate
    (:class:`PermissionDenied` otherwise); a name is
    needed. A change is an audit event (``view.setting``), as it decides what later
    values count as seen with a suggestion."""
    return bool(_set(db, who, HIDE_SUGGESTIONS, bool(on), actor))


def _set(db: Database, who: str, name: str, on: Any, actor: User | None, *,
         audit: bool = True) -> Any:
    """Set ``who``'s choice ``name`` to ``on`` (see :func:`set_hides_suggestions`; an
    ``audit`` event when it changed)."""
    who = (who or "").strip()
    if not who:
        raise ValueError("a name is needed to keep the choice")
    if actor is not None:
        fresh = check(db, actor, "annotate")
        if fresh is None or fresh.name != who:
            raise PermissionDenied(f"{actor.name} is signed in: only {who} sets their own view")
        actor = fresh
    with db.atomic():
        before = view_prefs.set_pref(db, who, name, on)
        if isinstance(on, bool):
            before = bool(before)
        if audit and before != on:
            record(db, actor if actor is not None else who, "view.setting", name,
                   before={name: before}, after={name: on})
    return before
