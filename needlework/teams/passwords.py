"""Password hashing with argon2id (``argon2-cffi``) at OWASP's recommended minimum:
19 MiB of memory, 2 passes, 1 lane (:data:`TIME_COST`, :data:`MEMORY_KIB`, :data:`LANES`).

Why not RFC 9106's low-memory profile (64 MiB, 3 passes, 4 lanes): a team's annotators sign
in together at the start of a shift, and each sign-in holds its hash's memory while it is
checked. A hundred at once took 6.4 GB and about 0.14 CPU-seconds each with that profile;
with these parameters 1.9 GB and about 0.025 CPU-seconds, still at the level OWASP's
Password Storage Cheat Sheet asks for. A stored hash carries its own parameters, so hashes
made with other ones still verify, and :func:`needs_rehash` says when a sign-in should
store the password again with these.

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

#: argon2id's cost, OWASP's minimum (see the module docstring): passes, memory in KiB, lanes
TIME_COST, MEMORY_KIB, LANES = 2, 19 * 1024, 1
_HASHER = PasswordHasher(time_cost=TIME_COST, memory_cost=MEMORY_KIB, parallelism=LANES)


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
    """True when ``stored`` was made with other parameters than these."""
    try:
        return _HASHER.check_needs_rehash(stored)
    except InvalidHashError:
        return True
