"""Recording audit events: who did what to which account, dataset or setting, when, and
the values before and after (``audit_events``, :mod:`store.audit`).

Annotations have their own history (``history``); everything else a person does that
changes what others see or may do is an event here: account changes, sign-ins and
refusals, assignments, the lead's settings. A password, a token or a key is never a
value: a reset is recorded as ``{"password": "reset"}``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlite_utils import Database

from needlework.teams.permissions import User
from store import audit as store_audit

LOCAL = "(local)"  # who acts in local mode, where nobody signs in


def record(db: Database, actor: User | str | None, action: str, target: str, *,
           dataset: str | None = None, before: Any = None, after: Any = None) -> int:
    """Append one event: ``actor`` (a signed-in user, a name, or ``None`` in local mode)
    did ``action`` (e.g. ``account.role``) to ``target``; returns its id."""
    by = actor.name if isinstance(actor, User) else (actor or LOCAL)
    return store_audit.add_event(db, at=datetime.now(UTC).isoformat(timespec="milliseconds"),
                                 by=by, action=action, target=target, dataset=dataset,
                                 before=before, after=after)
