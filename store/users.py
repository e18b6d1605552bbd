"""Accounts and sign-in sessions (the SQL behind :mod:`needlework.teams.accounts`).

``users`` holds names, e-mails, roles and argon2id password hashes; only
:func:`password_hash` reads a hash back, every other query leaves it out.
``sessions`` holds the SHA-256 of each session token (the browser keeps the token),
with its expiry. Times are ISO 8601 UTC strings, compared as text.
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
        return int(cursor.lastrowid)


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


def sign_in_lock(db: Database, login_key: str, client: str, now: str) -> str | None:
    """When the pause of ``login_key`` for ``client`` ends, or ``None`` (not paused)."""
    row = db.execute("select locked_until from sign_in_failures where login_key = ? and "
                     "client = ?", [login_key, client]).fetchone()
    return row[0] if row and row[0] and row[0] > now else None


def record_failure(db: Database, login_key: str, client: str, *, limit: int, lock_until: str,
                   at: str) -> tuple[int, str | None]:
    """Count one wrong password for ``login_key`` from ``client``; the ``limit``-th in a
    row pauses that pair until ``lock_until`` and starts the count again. Returns
    ``(count, locked_until)``."""
    with db.atomic():
        row = db.execute("select failures from sign_in_failures where login_key = ? and "
                         "client = ?", [login_key, client]).fetchone()
        count = (row[0] if row else 0) + 1
        locked = lock_until if count >= limit else None
        db.execute("insert into sign_in_failures (login_key, client, failures, locked_until, "
                   "updated_at) values (?, ?, ?, ?, ?) on conflict (login_key, client) do update "
                   "set failures = excluded.failures, locked_until = excluded.locked_until, "
                   "updated_at = excluded.updated_at",
                   [login_key, client, 0 if locked else count, locked, at])
        return count, locked


def clear_failures(db: Database, login_keys: list[str], client: str | None = None) -> int:
    """Forget the wrong passwords and pauses of ``login_keys`` (from ``client``, or from
    every client); returns how many pairs were paused."""
    keys = [k for k in login_keys if k]
    if not keys:
        return 0
    where = f"login_key in ({', '.join('?' * len(keys))})" + (" and client = ?" if client is not None else "")
    params = [*keys, *([client] if client is not None else [])]
    with db.atomic():
        paused = db.execute(f"select count(*) from sign_in_failures where {where} and "
                            "locked_until is not null", params).fetchone()[0]
        db.execute(f"delete from sign_in_failures where {where}", params)
    return paused


def paused_until(db: Database, login_keys: list[str], now: str) -> str | None:
    """The latest end of a pause of any of ``login_keys`` (any client), or ``None``."""
    keys = [k for k in login_keys if k]
    if not keys:
        return None
    row = db.execute(f"select max(locked_until) from sign_in_failures where login_key in "
                     f"({', '.join('?' * len(keys))}) and locked_until > ?", [*keys, now]).fetchone()
    return row[0] if row else None


def record_success(db: Database, user_id: int, at: str) -> None:
    """A correct password: when it happened (a pause of the name for another client stays,
    and so does ``locked_until``, which shows the latest such pause)."""
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
