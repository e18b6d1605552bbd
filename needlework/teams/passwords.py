"""Password hashing with argon2id (``argon2-cffi``, RFC 9106 low-memory profile).

Only the PHC string (``$argon2id$v=19$m=...,t=...,p=...$salt$hash``) is ever stored;
the password itself is never written anywhere. :func:`verify_password` takes as long
for an unknown account as for a known one (it checks against a dummy hash), so the
time of an answer does not tell which names exist.
"""

from __future__ import annotations

import functools
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

MIN_LENGTH = 8
MAX_LENGTH = 1024

_HASHER = PasswordHasher()  # argon2id, RFC 9106 low-memory parameters


class PasswordRejected(ValueError):
    """A new password that breaks the rule (the message says which part)."""


def check_new_password(password: str, name: str = "") -> str:
    """The password unchanged, or :class:`PasswordRejected`: at least
    :data:`MIN_LENGTH` and at most :data:`MAX_LENGTH` characters, not the account name.
    The message never contains the password."""
    if not isinstance(password, str):
        raise PasswordRejected("the password must be text")
    if len(password) < MIN_LENGTH:
        raise PasswordRejected(f"the password must have at least {MIN_LENGTH} characters")
    if len(password) > MAX_LENGTH:
        raise PasswordRejected(f"the password must have at most {MAX_LENGTH} characters")
    if name and password.strip().casefold() == name.strip().casefold():
        raise PasswordRejected("the password must not be the account name")
    return password


def hash_password(password: str) -> str:
    """The argon2id PHC string of ``password`` (a fresh random salt each time)."""
    return _HASHER.hash(password)


@functools.cache
def _dummy_hash() -> str:
    return _HASHER.hash(secrets.token_urlsafe(24))


def verify_password(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches the ``stored`` hash; ``stored=None`` (no such
    account, or no password set) spends the same time and answers False."""
    if not stored:
        try:
            _HASHER.verify(_dummy_hash(), password)
        except VerificationError:
            pass
        return False
    try:
        return _HASHER.verify(stored, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def needs_rehash(stored: str) -> bool:
    """True when ``stored`` was made with weaker parameters than today's."""
    try:
        return _HASHER.check_needs_rehash(stored)
    except InvalidHashError:
        return True
