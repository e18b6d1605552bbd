"""The command line's ways into team mode, where no browser signs in: the team's first
admin (:func:`add_first_admin`, while nobody can act as an admin yet) and the account a
verb acts as (:func:`command_line_user`, ``--as NAME``, its password checked by the
sign-in's lock-out rules, :mod:`needlework.teams.lockout`, as for a browser without the
account's device cookie; :mod:`needlework.cli.acting` asks for the password).
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlite_utils import Database

from needlework.teams import passwords
from needlework.teams.accounts import (
    NOT_SIGNED_IN,
    AccountError,
    SignInRefused,
    _create,
    _key,
    _now,
    check_email,
    check_name,
    count_wrong_password,
    iso,
    login_key,
    pause_account,
)
from needlework.teams.config import Policy
from needlework.teams.events import record
from needlework.teams.lockout import clock, refusal_words
from needlework.teams.permissions import ADMIN, User
from store import users as store_users

log = logging.getLogger(__name__)


def add_first_admin(db: Database, name: str, *, password: str | None = None,
                    email: str | None = None) -> User:
    """The team's first admin, made from the command line while no enabled admin account
    exists (nobody could act as one yet): the audit trail records it as made by itself,
    so even this row names a person. Raises :class:`AccountError` once an admin exists."""
    name, email = check_name(name), check_email(email)
    if password is None and email is None:
        raise AccountError(f"account {name!r} needs a password or an e-mail (for sign-in "
                           "through the identity provider)")
    admins = store_users.active_admins(db)
    if admins:
        raise AccountError(f"{admins[0]} is an admin already: add accounts as an admin "
                           "(--as NAME)")
    user = _create(db, name, ADMIN, password, email, created_by=name)
    record(db, user, "account.created", user.name,
           after={"role": ADMIN, "email": email, "password": password is not None,
                  "first_admin": True})
    return user


COMMAND_LINE = "command line"  # the client of an --as check, in the audit trail


def command_line_user(db: Database, login: str, password: str, *,
                      policy: Policy | None = None, now: datetime | None = None) -> User:
    """The account a command-line verb acts as (``--as``), after its password: the rules
    of a browser without the account's device cookie (wrong passwords count against the
    name as typed and pause it; a paused name is refused even with the right password),
    without a session, a device token or a sign-in event: the verb's own audit rows name
    the person. A refusal is a ``sign_in.refused`` event that names the account, with
    ``client`` "command line". An account still on its one-time password is refused
    until its person has chosen their own. Raises :class:`SignInRefused`."""
    policy = policy or Policy()
    moment = _now(now)
    typed = login if isinstance(login, str) else ""
    key = login_key(typed)
    row = store_users.find_user(db, _key(typed) or "")
    target = row["name"] if row is not None else ""
    audit = {"client": COMMAND_LINE, "device_cookie": False}
    paused = store_users.name_pause(db, key, iso(moment))
    if paused:
        record(db, NOT_SIGNED_IN, "sign_in.refused", target, after={**audit, "reason": "paused"})
        raise SignInRefused(f"sign-in with this name is paused after wrong passwords: try "
                            f"again after {clock(paused)}, or ask an admin to lift the pause "
                            "(Users page)")
    stored = store_users.password_hash(db, row["id"]) if row is not None else None
    if not (isinstance(password, str) and len(password) <= passwords.MAX_LENGTH
            and passwords.verify_password(stored, password)):
        count, locked = count_wrong_password(db, key, None, policy, moment)
        log.warning("command line refused: wrong name or password (%d in a row)", count)
        record(db, NOT_SIGNED_IN, "sign_in.refused", target,
               after={**audit, "reason": "wrong password", "paused_until": locked})
        if locked:
            if row is not None:
                pause_account(db, row, locked, moment)
            raise SignInRefused(refusal_words(policy, locked, here=False, count=count))
        raise SignInRefused("wrong name or password")
    assert row is not None
    if row["disabled"]:
        record(db, NOT_SIGNED_IN, "sign_in.refused", target, after={**audit, "reason": "disabled"})
        raise SignInRefused("this account is disabled: ask an admin")
    store_users.clear_failures(db, [key])
    if store_users.must_change_password(db, row["id"]):
        raise SignInRefused(f"{row['name']} still has its one-time password: sign in on the "
                            "app once and choose a password of your own first")
    return User.from_row(store_users.get_user(db, row["id"]) or row)
