"""Accounts, password sign-in, sessions and lock-out (team mode).

An admin creates accounts (:func:`add_user`, the ``users`` CLI verb or the users page);
nobody signs up. The team's first admin and the account a command-line verb acts as
(``--as``) are :mod:`needlework.teams.command_line`. A password is checked against its argon2id hash
(:mod:`needlework.teams.passwords`).

Wrong passwords pause sign-in by the rules of :mod:`needlework.teams.lockout` (OWASP's
device cookies: a stranger's wrong passwords never pause a browser where the person signed
in before); the counts and the pauses are kept here (:func:`count_wrong_password`). An
admin lists and lifts pauses with :mod:`needlework.teams.pauses`.

A successful sign-in returns a :class:`SignIn` whose ``token`` (random, 256 bits) is
what the browser keeps, in a cookie or its local storage: the page hands it back to
:func:`resume` on every run, so a reload stays signed in until ``expires_at``
(``Policy.session_hours`` after sign-in). Only the token's SHA-256 is stored, so the
database alone cannot be used to sign in. :func:`sign_out` ends one session;
disabling an account or resetting its password ends all of them.

Nothing here logs or raises with a password or a token in it; failed sign-ins are
logged by account name only, and never with the text typed as the name when no
account has it (that text is sometimes a password typed in the wrong box). Audit rows
of sign-ins and refusals carry the client address (:mod:`needlework.teams.proxies`)
and whether a valid device token was presented.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlite_utils import Database

from needlework.teams import passwords
from needlework.teams.config import Policy
from needlework.teams.events import record
from needlework.teams.lockout import pause_end, refusal_words
from needlework.teams.permissions import ADMIN, ROLES, User, check
from store import users as store_users

log = logging.getLogger(__name__)

MAX_NAME = 60
TOKEN_PREFIX = "nw_"
#: The name under which the page keeps the session token (a cookie, or the browser's
#: local storage); it holds the token only, never a password.
SESSION_COOKIE = "needlework_session"
_TOKEN = re.compile(r"^nw_[A-Za-z0-9_-]{43}$")
DEVICE_PREFIX = "nwd_"
#: The cookie that keeps this browser's device token (never a password nor a session).
DEVICE_COOKIE = "needlework_device"
_DEVICE = re.compile(r"^nwd_[A-Za-z0-9_-]{43}$")
DEVICE_DAYS = 90  # a device token is good this long after the sign-in that gave it
FAILURE_MEMORY = timedelta(hours=24)  # a count of wrong passwords forgets older ones
NOT_SIGNED_IN = "(not signed in)"  # who a refused sign-in is, in the audit trail
TOUCH_EVERY = timedelta(minutes=5)  # how often a session's last_seen_at is brought up to date
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class AccountError(ValueError):
    """A request about accounts that cannot be done (the message says why)."""


class SignInRefused(Exception):
    """Sign-in failed: the message is safe to show (no password, no hint whether an
    unknown name exists)."""


@dataclass(frozen=True)
class SignIn:
    """A started session. ``token`` goes to the browser and nowhere else."""

    user: User
    token: str = field(repr=False)
    expires_at: str = ""
    #: The browser's new device token (password sign-ins; "" otherwise) and its end.
    device_token: str = field(default="", repr=False)
    device_expires_at: str = ""


def iso(moment: datetime | None = None) -> str:
    """``moment`` (default now) as the ISO 8601 UTC text the store compares."""
    moment = moment or datetime.now(UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def _now(now: datetime | None) -> datetime:
    return (now or datetime.now(UTC)).astimezone(UTC)


def token_hash(token: str) -> str:
    """The SHA-256 hex of a session token: what the store keeps."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_name(name: str) -> str:
    """An account name trimmed: 1 to :data:`MAX_NAME` printable characters (it is
    also the annotator name every change is saved under)."""
    if not isinstance(name, str) or not name.strip():
        raise AccountError("the account name is empty")
    name = name.strip()
    if len(name) > MAX_NAME:
        raise AccountError(f"the account name has {len(name)} characters: at most {MAX_NAME}")
    bad = next((ch for ch in name if not ch.isprintable()), None)
    if bad is not None:
        raise AccountError(f"the account name holds the unprintable character U+{ord(bad):04X}")
    return name


def check_email(email: str | None) -> str | None:
    """An e-mail address trimmed (``None`` or empty: none), or :class:`AccountError`."""
    if email is None or not email.strip():
        return None
    email = email.strip()
    if len(email) > 254 or not _EMAIL.match(email):
        raise AccountError(f"{email!r} is not an e-mail address")
    return email


def _check_role(role: str) -> str:
    if role not in ROLES:
        raise AccountError(f"role {role!r}: expected one of {', '.join(ROLES)}")
    return role


def _key(text: str | None) -> str | None:
    return None if text is None else text.strip().casefold()


def _found(db: Database, name: str) -> User:
    row = store_users.find_user(db, _key(name) or "")
    if row is None:
        raise AccountError(f"no account named {name!r}")
    return User.from_row(row)


def add_user(db: Database, name: str, role: str, *, password: str | None = None,
             email: str | None = None, actor: User | None = None) -> User:
    """Create an account. ``password=None`` makes an account that signs in only through
    the identity provider (OIDC), matched by ``email``. Admins only in team mode."""
    actor = check(db, actor, "manage_users")
    name, email, role = check_name(name), check_email(email), _check_role(role)
    if password is None and email is None:
        raise AccountError(f"account {name!r} needs a password or an e-mail (for sign-in "
                           "through the identity provider)")
    user = _create(db, name, role, password, email, created_by=actor.name if actor else "")
    record(db, actor, "account.created", user.name,
           after={"role": role, "email": email, "password": password is not None})
    return user


def _create(db: Database, name: str, role: str, password: str | None, email: str | None, *,
            created_by: str) -> User:
    hashed = None
    if password is not None:
        hashed = passwords.hash_password(passwords.check_new_password(password, name))
    try:
        user_id = store_users.insert_user(
            db, name=name, name_key=_key(name) or "", email=email, email_key=_key(email),
            role=role, password_hash=hashed, created_by=created_by, at=iso())
    except store_users.NameTaken as e:
        raise AccountError(str(e)) from None
    log.info("account %r created (%s)", name, role)
    return User.from_row(store_users.get_user(db, user_id) or {})


def get_user(db: Database, name: str) -> User | None:
    """The account with this name or e-mail (any case), or ``None``."""
    row = store_users.find_user(db, _key(name) or "")
    return User.from_row(row) if row else None


def list_users(db: Database, *, actor: User | None = None) -> list[User]:
    """Every account, by name (admins only in team mode)."""
    check(db, actor, "manage_users")
    return [User.from_row(r) for r in store_users.list_users(db)]


def _keep_an_admin(db: Database, user: User) -> None:
    if user.role == ADMIN and not user.disabled and store_users.active_admins(db) == [user.name]:
        raise AccountError(f"{user.name} is the last active admin: make another account admin "
                           "first")


def set_disabled(db: Database, name: str, disabled: bool = True, *,
                 actor: User | None = None) -> User:
    """Disable (ending every session) or enable an account."""
    actor = check(db, actor, "manage_users")
    user = _found(db, name)
    if disabled:
        if actor is not None and actor.id == user.id:
            raise AccountError("you cannot disable your own account")
        _keep_an_admin(db, user)
    store_users.update_user(db, user.id, iso(), disabled=int(disabled))
    if disabled:
        store_users.delete_user_sessions(db, user.id)
    log.info("account %r %s", user.name, "disabled" if disabled else "enabled")
    record(db, actor, "account.disabled" if disabled else "account.enabled", user.name,
           before={"disabled": user.disabled}, after={"disabled": disabled})
    return _found(db, user.name)


def set_role(db: Database, name: str, role: str, *, actor: User | None = None) -> User:
    """Change an account's role (the last active admin keeps theirs)."""
    actor = check(db, actor, "manage_users")
    user = _found(db, name)
    if _check_role(role) != ADMIN:
        _keep_an_admin(db, user)
    store_users.update_user(db, user.id, iso(), role=role)
    log.info("account %r is now %s", user.name, role)
    record(db, actor, "account.role", user.name, before={"role": user.role}, after={"role": role})
    return _found(db, user.name)


def set_email(db: Database, name: str, email: str | None, *, actor: User | None = None) -> User:
    """Change (or with ``None`` remove) an account's e-mail."""
    actor = check(db, actor, "manage_users")
    user = _found(db, name)
    email = check_email(email)
    if email is None and not user.has_password:
        raise AccountError(f"account {user.name!r} has no password: it needs its e-mail")
    try:
        store_users.update_user(db, user.id, iso(), email=email, email_key=_key(email))
    except store_users.NameTaken as e:
        raise AccountError(str(e)) from None
    if email != user.email:
        record(db, actor, "account.email", user.name, before={"email": user.email},
               after={"email": email})
    return _found(db, user.name)


def reset_password(db: Database, name: str, password: str, *,
                   actor: User | None = None) -> User:
    """Set a new password: clears any lock and ends every session of the account."""
    actor = check(db, actor, "manage_users")
    user = _found(db, name)
    hashed = passwords.hash_password(passwords.check_new_password(password, user.name))
    store_users.update_user(db, user.id, iso(), password_hash=hashed, failed_logins=0,
                            locked_until=None)
    store_users.clear_failures(db, _login_keys(user))
    store_users.clear_device_pauses(db, user.id)
    store_users.delete_user_sessions(db, user.id)
    log.info("password of %r reset", user.name)
    record(db, actor, "account.password_reset", user.name, after={"password": "reset"})
    return _found(db, user.name)


def change_password(db: Database, user: User, current: str, new: str) -> None:
    """A signed-in user changes their own password (their other sessions end)."""
    stored = store_users.password_hash(db, user.id)
    if not passwords.verify_password(stored, current):
        raise AccountError("the current password is wrong")
    hashed = passwords.hash_password(passwords.check_new_password(new, user.name))
    store_users.update_user(db, user.id, iso(), password_hash=hashed)
    store_users.delete_user_sessions(db, user.id)


def login_key(login: str | None) -> str:
    """What the wrong-password count is kept under: the SHA-256 of the name or e-mail as
    typed, casefolded (never the text, which may be a password typed in the wrong box)."""
    return hashlib.sha256((_key(login) or "").encode("utf-8")).hexdigest()


def _login_keys(user: User) -> list[str]:
    return [login_key(user.name)] + ([login_key(user.email)] if user.email else [])


def start_session(db: Database, user: User, *, method: str = "password",
                  policy: Policy | None = None, now: datetime | None = None) -> SignIn:
    """A new session for ``user`` (after a password or the identity provider)."""
    policy = policy or Policy()
    moment = _now(now)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    expires = iso(moment + timedelta(hours=policy.session_hours))
    store_users.purge_expired(db, iso(moment))
    store_users.insert_session(db, token_hash=token_hash(token), user_id=user.id, method=method,
                               created_at=iso(moment), expires_at=expires)
    return SignIn(user, token, expires)


def _device(db: Database, token: str | None, row: dict | None, moment: datetime,
            ) -> dict | None:
    """The device cookie ``token`` names when it is valid for the account ``row``."""
    if row is None or not isinstance(token, str) or not _DEVICE.match(token):
        return None
    return store_users.device(db, token_hash(token), row["id"], iso(moment))


def count_wrong_password(db: Database, key: str, trusted: dict | None, policy: Policy,
                         moment: datetime) -> tuple[int, str | None]:
    """Count one more wrong password in a row, against the device token ``trusted`` (its
    row) when the browser presented a valid one, else against the name's ``key``
    (:func:`login_key`): the count, and when the pause it begins ends (``None``: none;
    :func:`needlework.teams.lockout.pause_end`)."""
    if trusted is not None:
        recent = trusted["last_used_at"] > iso(moment - FAILURE_MEMORY)
        count = (trusted["failures"] if recent else 0) + 1
    else:
        count = store_users.name_failures(db, key, iso(moment - FAILURE_MEMORY)) + 1
    end = pause_end(count, policy, moment)
    locked = None if end is None else iso(end)
    if trusted is not None:
        store_users.record_device_failure(db, trusted["id"], count=count, locked_until=locked,
                                          at=iso(moment))
    else:
        store_users.record_name_failure(db, key, count=count, locked_until=locked,
                                        at=iso(moment))
    return count, locked


def pause_account(db: Database, row: dict, locked: str, moment: datetime) -> None:
    """Show the account ``row`` paused until ``locked`` (or the later pause it has)."""
    store_users.update_user(db, row["id"], iso(moment),
                            locked_until=max(locked, row["locked_until"] or ""))


def sign_in(db: Database, login: str, password: str, *, client: str = "",
            device: str | None = None, policy: Policy | None = None,
            now: datetime | None = None) -> SignIn:
    """Check a name (or e-mail) and password and start a session; ``client`` is the
    address the request came from (for the audit trail and the log only), ``device`` the
    device token the browser presented (its cookie), if any. Raises
    :class:`SignInRefused`: "wrong name or password", a pause (of this browser when it
    presented a valid device token of the account, else of the name for browsers without
    one; the same for a name nobody has) with its end, or a disabled account (the last
    only after a right password). The :class:`SignIn` holds a new device token."""
    policy = policy or Policy()
    moment = _now(now)
    typed = login if isinstance(login, str) else ""
    key = login_key(typed)
    row = store_users.find_user(db, _key(typed) or "")
    trusted = _device(db, device, row, moment)
    where = client or "an unknown client"
    audit = {"client": client, "device_cookie": trusted is not None}
    if trusted is not None:
        paused = trusted["locked_until"] if (trusted["locked_until"] or "") > iso(moment) else None
    else:
        paused = store_users.name_pause(db, key, iso(moment))
    if paused:
        log.warning("sign-in refused: a paused name from %s", where)
        record(db, NOT_SIGNED_IN, "sign_in.refused", row["name"] if row is not None else "",
               after={**audit, "reason": "paused"})
        raise SignInRefused(refusal_words(policy, paused, here=trusted is not None))
    stored = store_users.password_hash(db, row["id"]) if row is not None else None
    ok = (isinstance(password, str) and len(password) <= passwords.MAX_LENGTH
          and passwords.verify_password(stored, password))
    if not ok:
        raise _wrong_password(db, row, stored, key, trusted, policy, moment, audit, where)
    assert row is not None and stored is not None
    if row["disabled"]:
        log.warning("sign-in refused: %r is disabled", row["name"])
        record(db, NOT_SIGNED_IN, "sign_in.refused", row["name"],
               after={**audit, "reason": "disabled"})
        raise SignInRefused("this account is disabled: ask an admin")
    if trusted is not None:
        store_users.delete_device(db, trusted["id"])  # replaced by a new one below
    else:
        store_users.clear_failures(db, [key])
    store_users.record_success(db, row["id"], iso(moment))
    if passwords.needs_rehash(stored):
        store_users.update_user(db, row["id"], iso(moment),
                                password_hash=passwords.hash_password(password))
    user = User.from_row(store_users.get_user(db, row["id"]) or row)
    log.info("signed in: %r from %s", user.name, where)
    record(db, user, "sign_in", user.name, after={**audit, "method": "password"})
    session = start_session(db, user, method="password", policy=policy, now=moment)
    device_token = DEVICE_PREFIX + secrets.token_urlsafe(32)
    device_expires = iso(moment + timedelta(days=DEVICE_DAYS))
    store_users.insert_device(db, token_hash=token_hash(device_token), user_id=user.id,
                              at=iso(moment), expires_at=device_expires)
    return SignIn(user, session.token, session.expires_at, device_token, device_expires)


def _wrong_password(db: Database, row: dict | None, stored: str | None, key: str,
                    trusted: dict | None, policy: Policy, moment: datetime, audit: dict,
                    where: str) -> SignInRefused:
    """A wrong password of :func:`sign_in` (or a name nobody has) counted, logged by account
    name only and audited, the account shown paused when the count begins a pause: the
    refusal to raise."""
    count, locked = count_wrong_password(db, key, trusted, policy, moment)
    if row is None:
        log.warning("sign-in refused: no such account")
    elif stored is None:
        log.warning("sign-in refused: %r has no password (identity provider only)", row["name"])
    else:
        log.warning("sign-in refused: wrong password for %r (%d in a row from %s, %s)",
                    row["name"], count, where,
                    "a browser it signed in from" if trusted else "no device cookie")
    record(db, NOT_SIGNED_IN, "sign_in.refused", row["name"] if row is not None else "",
           after={**audit, "reason": "wrong password", "paused_until": locked})
    if not locked:
        return SignInRefused("wrong name or password")
    if row is not None:
        pause_account(db, row, locked, moment)
        log.warning("account %r paused %s until %s", row["name"],
                    "in one browser" if trusted else "for browsers without its device cookie",
                    locked)
    return SignInRefused(refusal_words(policy, locked, here=trusted is not None, count=count))


def resume(db: Database, token: str | None, *, now: datetime | None = None) -> User | None:
    """The signed-in user of a session token the browser kept, or ``None`` (no token,
    unknown, expired, signed out, account disabled)."""
    if not isinstance(token, str) or not _TOKEN.match(token):
        return None
    moment = _now(now)
    row = store_users.session_user(db, token_hash(token), iso(moment))
    if row is None or row["disabled"]:
        return None
    if row["session_last_seen_at"] < iso(moment - TOUCH_EVERY):  # not a write on every rerun
        store_users.touch_session(db, token_hash(token), iso(moment))
    return User.from_row(row)


def session_expiry(db: Database, token: str | None, *, now: datetime | None = None) -> str | None:
    """When a live session ends (for the cookie's lifetime), or ``None``."""
    if not isinstance(token, str) or not _TOKEN.match(token):
        return None
    row = store_users.session_user(db, token_hash(token), iso(_now(now)))
    return row["session_expires_at"] if row else None


def seconds_left(expires_at: str, *, now: datetime | None = None) -> int:
    """Whole seconds until ``expires_at`` (0 when past): the cookie's ``max-age``."""
    left = (datetime.fromisoformat(expires_at) - _now(now)).total_seconds()
    return max(0, int(left))


def sign_out(db: Database, token: str | None) -> bool:
    """End the session of ``token``; True when there was one."""
    if not isinstance(token, str) or not _TOKEN.match(token):
        return False
    return store_users.delete_session(db, token_hash(token))


def sign_out_everywhere(db: Database, user: User) -> int:
    """End every session of ``user``; returns how many."""
    return store_users.delete_user_sessions(db, user.id)
