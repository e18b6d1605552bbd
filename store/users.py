"""Accounts and sign-in sessions (the SQL behind :mod:`needlework.teams.accounts`).

``users`` holds names, e-mails, roles and argon2id password hashes; only
:func:`password_hash` reads a hash back, every other query leaves it out.
``sessions`` holds the SHA-256 of each session token (the browser keeps the token),
with its expiry. ``device_cookies`` holds the SHA-256 of each device token (a browser
where an account signed in) with that browser's wrong passwords and pause;
``sign_in_failures`` the wrong passwords and pause of each name (its SHA-256) for
browsers without such a cookie. Times are ISO 8601 UTC strings, compared as text.
``session_tickets`` holds the one-time sign-in tickets by their SHA-256, the tokens they
stand for sealed under the ticket (:mod:`needlework.teams.session_cookie`), with their
expiry in Unix seconds.
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

# Every column but the password hash; has_password says whether one is set.
_COLUMNS = ("id", "name", "email", "role", "disabled", "failed_logins", "locked_until",
            "created_at", "created_by", "updated_at", "last_sign_in_at")
_PUBLIC = ", ".join(_COLUMNS) + ", password_hash is not null as has_password"


class NameTaken(ValueError):
    """An account name or e-mail already in use (up to case)."""


def insert_user(db: Database, *, name: str, name_key: str, email: str | None,
                email_key: str | None, role: str, password_hash: str | None, created_by: str,
                at: str) -> int:
    """Add an account; raises :class:`NameTaken` when the name or e-mail is in use."""
    with db.atomic():
        clash = db.execute(
            "select name, name_key = ? from users where name_key = ? or email_key = ?",
            [name_key, name_key, email_key],
        ).fetchone()
        if clash is not None:
            what = f"the name {name!r}" if clash[1] else f"the e-mail {email!r}"
            raise NameTaken(f"{what} is taken by account {clash[0]!r}")
        cursor = db.execute(
            "insert into users (name, name_key, email, email_key, role, password_hash, "
            "created_at, created_by, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [name, name_key, email, email_key, role, password_hash, at, created_by, at],
        )
        assert cursor.lastrowid is not None  # an insert sets it
        return cursor.lastrowid


def get_user(db: Database, user_id: int) -> dict[str, Any] | None:
    """One account (no password hash) by id."""
    rows = db.execute_returning_dicts(f"select {_PUBLIC} from users where id = ?", [user_id])
    return rows[0] if rows else None


def find_user(db: Database, key: str) -> dict[str, Any] | None:
    """One account whose casefolded name or e-mail is ``key`` (names first)."""
    rows = db.execute_returning_dicts(
        f"select {_PUBLIC} from users where name_key = ? or email_key = ? "
        "order by name_key = ? desc limit 1", [key, key, key])
    return rows[0] if rows else None


def find_by_email(db: Database, email_key: str) -> dict[str, Any] | None:
    """The account with the casefolded e-mail ``email_key``."""
    rows = db.execute_returning_dicts(f"select {_PUBLIC} from users where email_key = ?",
                                      [email_key])
    return rows[0] if rows else None


def list_users(db: Database) -> list[dict[str, Any]]:
    """Every account (no password hashes), by name."""
    return db.execute_returning_dicts(f"select {_PUBLIC} from users order by name_key")


def password_hash(db: Database, user_id: int) -> str | None:
    """The stored argon2id hash of one account (``None``: no password set)."""
    row = db.execute("select password_hash from users where id = ?", [user_id]).fetchone()
    return row[0] if row else None


def update_user(db: Database, user_id: int, at: str, **fields: Any) -> None:
    """Set columns of one account (``role``, ``disabled``, ``email``, ``email_key``,
    ``password_hash``, ``failed_logins``, ``locked_until``) and ``updated_at``."""
    allowed = {"role", "disabled", "email", "email_key", "password_hash", "failed_logins",
               "locked_until"}
    unknown = set(fields) - allowed
    if unknown:
        raise ValueError(f"not an account column: {sorted(unknown)[0]}")
    sets = ", ".join(f"{name} = ?" for name in fields)
    with db.atomic():
        if "email_key" in fields and fields["email_key"] is not None:
            clash = db.execute("select name from users where email_key = ? and id != ?",
                               [fields["email_key"], user_id]).fetchone()
            if clash is not None:
                raise NameTaken(f"the e-mail {fields.get('email')!r} is taken by account "
                                f"{clash[0]!r}")
        db.execute(f"update users set {sets}, updated_at = ? where id = ?",
                   [*fields.values(), at, user_id])


def active_admins(db: Database) -> list[str]:
    """Names of the admins that are not disabled."""
    return [r[0] for r in db.execute(
        "select name from users where role = 'admin' and disabled = 0 order by name_key")]


def name_pause(db: Database, login_key: str, now: str) -> str | None:
    """When the pause of ``login_key`` for browsers without its device cookie ends, or
    ``None`` (not paused)."""
    row = db.execute("select locked_until from sign_in_failures where login_key = ?",
                     [login_key]).fetchone()
    return row[0] if row and row[0] and row[0] > now else None


def name_failures(db: Database, login_key: str, since: str) -> int:
    """Wrong passwords in a row for ``login_key`` from browsers without its device cookie,
    the last of them after ``since`` (0 when older)."""
    row = db.execute("select failures from sign_in_failures where login_key = ? and "
                     "updated_at > ?", [login_key, since]).fetchone()
    return row[0] if row else 0


def record_name_failure(db: Database, login_key: str, *, count: int, locked_until: str | None,
                        at: str) -> None:
    """Keep ``count`` wrong passwords in a row for ``login_key`` (browsers without its
    device cookie) and its pause (``None``: none)."""
    with db.atomic():
        db.execute("insert into sign_in_failures (login_key, failures, locked_until, updated_at) "
                   "values (?, ?, ?, ?) on conflict (login_key) do update set "
                   "failures = excluded.failures, locked_until = excluded.locked_until, "
                   "updated_at = excluded.updated_at", [login_key, count, locked_until, at])


def clear_failures(db: Database, login_keys: list[str]) -> int:
    """Forget the wrong passwords and pauses of ``login_keys``; returns how many were
    paused at any time not yet lifted (``locked_until`` set)."""
    keys = [k for k in login_keys if k]
    if not keys:
        return 0
    where = f"login_key in ({', '.join('?' * len(keys))})"
    with db.atomic():
        paused = db.execute(f"select count(*) from sign_in_failures where {where} and "
                            "locked_until is not null", keys).fetchone()[0]
        db.execute(f"delete from sign_in_failures where {where}", keys)
    return paused


def paused_until(db: Database, login_keys: list[str], now: str) -> str | None:
    """The latest end of a pause of any of ``login_keys``, or ``None``."""
    keys = [k for k in login_keys if k]
    if not keys:
        return None
    row = db.execute(f"select max(locked_until) from sign_in_failures where login_key in "
                     f"({', '.join('?' * len(keys))}) and locked_until > ?", [*keys, now]).fetchone()
    return row[0] if row else None


def name_pauses(db: Database, now: str) -> list[dict[str, Any]]:
    """Every name paused at ``now``: ``login_key``, ``failures``, ``locked_until``, soonest
    end first."""
    return db.execute_returning_dicts(
        "select login_key, failures, locked_until from sign_in_failures where locked_until > ? "
        "order by locked_until, login_key", [now])


def insert_device(db: Database, *, token_hash: str, user_id: int, at: str,
                  expires_at: str) -> int:
    """Store a new device cookie (by the hash of its token) bound to ``user_id``; returns
    its id. Expired device cookies go."""
    with db.atomic():
        db.execute("delete from device_cookies where expires_at <= ?", [at])
        cursor = db.execute(
            "insert into device_cookies (token_hash, user_id, created_at, last_used_at, "
            "expires_at) values (?, ?, ?, ?, ?)", [token_hash, user_id, at, at, expires_at])
        assert cursor.lastrowid is not None  # an insert sets it
        return cursor.lastrowid


def device(db: Database, token_hash: str, user_id: int, now: str) -> dict[str, Any] | None:
    """The unexpired device cookie ``token_hash`` when it is bound to ``user_id``: ``id``,
    ``failures``, ``locked_until``, ``created_at``, ``last_used_at``; else ``None``."""
    rows = db.execute_returning_dicts(
        "select id, failures, locked_until, created_at, last_used_at from device_cookies "
        "where token_hash = ? and user_id = ? and expires_at > ?", [token_hash, user_id, now])
    return rows[0] if rows else None


def record_device_failure(db: Database, device_id: int, *, count: int,
                          locked_until: str | None, at: str) -> None:
    """Keep ``count`` wrong passwords in a row typed with one device cookie, and its pause."""
    with db.atomic():
        db.execute("update device_cookies set failures = ?, locked_until = ?, last_used_at = ? "
                   "where id = ?", [count, locked_until, at, device_id])


def delete_device(db: Database, device_id: int) -> None:
    """Forget one device cookie (it is replaced by a new one at each sign-in)."""
    with db.atomic():
        db.execute("delete from device_cookies where id = ?", [device_id])


def clear_device_pauses(db: Database, user_id: int | None = None,
                        device_id: int | None = None) -> int:
    """Forget the wrong passwords and pauses of the device cookies of ``user_id`` (or the
    one ``device_id``, or every one); returns how many were paused."""
    where, params = "1", []
    if user_id is not None:
        where, params = "user_id = ?", [user_id]
    if device_id is not None:
        where, params = f"{where} and id = ?", [*params, device_id]
    with db.atomic():
        paused = db.execute(f"select count(*) from device_cookies where {where} and "
                            "locked_until is not null", params).fetchone()[0]
        db.execute(f"update device_cookies set failures = 0, locked_until = null where {where}",
                   params)
    return paused


def device_pauses(db: Database, now: str) -> list[dict[str, Any]]:
    """Every device cookie paused at ``now``: ``id``, ``user_id``, ``name`` (its account),
    ``failures``, ``locked_until``, ``created_at``, ``last_used_at``, soonest end first."""
    return db.execute_returning_dicts(
        "select d.id, d.user_id, u.name, d.failures, d.locked_until, d.created_at, "
        "d.last_used_at from device_cookies d join users u on u.id = d.user_id "
        "where d.locked_until > ? order by d.locked_until, d.id", [now])


def device_paused_until(db: Database, user_id: int, now: str) -> str | None:
    """The latest end of a pause of any device cookie of ``user_id``, or ``None``."""
    row = db.execute("select max(locked_until) from device_cookies where user_id = ? and "
                     "locked_until > ?", [user_id, now]).fetchone()
    return row[0] if row else None


def record_success(db: Database, user_id: int, at: str) -> None:
    """A correct password: when it happened (pauses stay, and so does ``locked_until``,
    which shows the latest of them)."""
    with db.atomic():
        db.execute("update users set failed_logins = 0, last_sign_in_at = ? where id = ?",
                   [at, user_id])


def insert_session(db: Database, *, token_hash: str, user_id: int, method: str,
                   created_at: str, expires_at: str) -> None:
    """Store a new session by the hash of its token."""
    with db.atomic():
        db.execute(
            "insert into sessions (token_hash, user_id, method, created_at, expires_at, "
            "last_seen_at) values (?, ?, ?, ?, ?, ?)",
            [token_hash, user_id, method, created_at, expires_at, created_at],
        )


def session_user(db: Database, token_hash: str, at: str) -> dict[str, Any] | None:
    """The account of an unexpired session (``expires_at`` later than ``at``), with the
    session's ``expires_at`` and ``last_seen_at`` as ``session_expires_at`` and
    ``session_last_seen_at``."""
    rows = db.execute_returning_dicts(
        f"select {', '.join('u.' + c for c in _COLUMNS)}, "
        "u.password_hash is not null as has_password, s.expires_at as session_expires_at, "
        "s.last_seen_at as session_last_seen_at "
        "from sessions s join users u on u.id = s.user_id "
        "where s.token_hash = ? and s.expires_at > ?", [token_hash, at])
    return rows[0] if rows else None


def touch_session(db: Database, token_hash: str, at: str) -> None:
    """Note when a session was last used."""
    with db.atomic():
        db.execute("update sessions set last_seen_at = ? where token_hash = ?",
                   [at, token_hash])


def delete_session(db: Database, token_hash: str) -> bool:
    """End one session; True when there was one."""
    with db.atomic():
        return db.execute("delete from sessions where token_hash = ?",
                          [token_hash]).rowcount > 0


def delete_user_sessions(db: Database, user_id: int) -> int:
    """End every session of one account; returns how many."""
    with db.atomic():
        return db.execute("delete from sessions where user_id = ?", [user_id]).rowcount


def purge_expired(db: Database, at: str) -> int:
    """Delete sessions that expired before ``at``."""
    with db.atomic():
        return db.execute("delete from sessions where expires_at <= ?", [at]).rowcount


def count_sessions(db: Database, user_id: int, at: str) -> int:
    """Unexpired sessions of one account."""
    return db.execute("select count(*) from sessions where user_id = ? and expires_at > ?",
                      [user_id, at]).fetchone()[0]


def must_change_password(db: Database, user_id: int) -> bool:
    """Whether the account still has a one-time password it must replace before it may
    open any page (``users.must_change_password``)."""
    row = db.execute("select must_change_password from users where id = ?",
                     [user_id]).fetchone()
    return bool(row and row[0])


def set_must_change_password(db: Database, user_id: int, must: bool, at: str) -> None:
    """Set or clear the one-time-password flag of one account (and ``updated_at``)."""
    with db.atomic():
        db.execute("update users set must_change_password = ?, updated_at = ? where id = ?",
                   [int(must), at, user_id])


def insert_ticket(db: Database, *, ticket_hash: str, sealed: str, max_age: int,
                  device_max_age: int | None, expires_at: float, now: float) -> None:
    """Keep a one-time sign-in ticket by its hash (``sealed``: the tokens it stands for,
    unreadable without the ticket; times in Unix seconds); tickets expired by ``now`` go
    first."""
    with db.atomic():
        db.execute("delete from session_tickets where expires_at <= ?", [now])
        db.execute(
            "insert into session_tickets (ticket_hash, sealed, max_age, device_max_age, "
            "expires_at) values (?, ?, ?, ?, ?)",
            [ticket_hash, sealed, max_age, device_max_age, expires_at])


def take_ticket(db: Database, ticket_hash: str) -> dict[str, Any] | None:
    """Remove the ticket ``ticket_hash`` and return its row (``sealed``, ``max_age``,
    ``device_max_age``, ``expires_at``), or ``None`` when there is none. One statement:
    of two connections taking the same ticket at once, exactly one gets it."""
    with db.atomic():
        rows = db.execute(
            "delete from session_tickets where ticket_hash = ? "
            "returning sealed, max_age, device_max_age, expires_at", [ticket_hash]).fetchall()
    if not rows:
        return None
    sealed, max_age, device_max_age, expires_at = rows[0]
    return {"sealed": sealed, "max_age": max_age, "device_max_age": device_max_age,
            "expires_at": expires_at}
