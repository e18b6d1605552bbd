"""The first sign-in with a one-time password (:mod:`needlework.teams.accounts_csv`): the
person chooses their own password before any page opens.

:func:`must_choose` says whether the signed-in account still has its one-time password
(the sign-in gate asks on every run, so no page is reached before the choice).
:func:`choose_password` stores the argon2id hash of the chosen one, clears the flag,
ends every session of the account (the one-time password's included) and starts a new
one, recorded as ``account.password_chosen`` (never the password).
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlite_utils import Database

from needlework.teams import accounts, passwords
from needlework.teams.config import Policy
from needlework.teams.events import record
from needlework.teams.permissions import User
from store import users as store_users

log = logging.getLogger(__name__)


def must_choose(db: Database, user: User) -> bool:
    """Whether ``user`` signed in with a one-time password they have not replaced yet."""
    return store_users.must_change_password(db, user.id)


def choose_password(db: Database, user: User, password: str, again: str, *,
                    policy: Policy | None = None, now: datetime | None = None) -> accounts.SignIn:
    """Replace ``user``'s one-time password with ``password`` (typed twice, the rule of
    :func:`needlework.teams.passwords.check_new_password`, not the one-time password);
    returns the new session. Raises :class:`needlework.teams.accounts.AccountError` or
    :class:`needlework.teams.passwords.PasswordRejected` (nothing changes then)."""
    if not must_choose(db, user):
        raise accounts.AccountError(f"{user.name} has no one-time password to replace")
    if password != again:
        raise accounts.AccountError("the two passwords differ")
    passwords.check_new_password(password, user.name)
    if passwords.verify_password(store_users.password_hash(db, user.id), password):
        raise passwords.PasswordRejected("choose a password of your own, not the one-time "
                                         "password")
    hashed = passwords.hash_password(password)
    at = accounts.iso(now)
    with db.atomic():
        store_users.update_user(db, user.id, at, password_hash=hashed)
        store_users.set_must_change_password(db, user.id, False, at)
        store_users.delete_user_sessions(db, user.id)
        record(db, user, "account.password_chosen", user.name, after={"password": "chosen"})
    log.info("%r chose their password", user.name)
    return accounts.start_session(db, user, method="password", policy=policy, now=now)
