"""Accounts from a CSV file (team mode, admins): one account per row, each with a
one-time password shown once.

The file has a header row naming the columns ``name``, ``e-mail`` (or ``email``) and
``role``, in any order, then one account per row; it is UTF-8 (a BOM is fine), blank
lines are skipped, the e-mail may be empty. The import is all-or-nothing: every row is
checked first (the name and e-mail rules of :mod:`needlework.teams.accounts`, a known
role, no name or e-mail twice in the file or already taken by an account, up to case),
and any problem raises :class:`CsvImportError`, whose message names the file, the line
and the field of the first problems; nothing is created then. Otherwise every account is
created in one transaction, each with a fresh random password
(:func:`one_time_password`) of which only the argon2id hash is stored, flagged so that
the person must choose their own at their first sign-in
(:mod:`needlework.teams.first_password`), and one ``account.created`` audit event
(``"how": "csv"``, never the password).

The passwords are returned to the caller once (:class:`NewAccount`), to be shown or
written for the admin (:func:`credentials_csv`); nothing here logs, stores or raises
with one.
"""

from __future__ import annotations

import csv
import io
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sqlite_utils import Database

from needlework.teams import accounts, passwords
from needlework.teams.events import record
from needlework.teams.permissions import ROLES, User, check
from store import users as store_users

log = logging.getLogger(__name__)

MAX_BYTES = 1024 * 1024  # a file of accounts is small; a larger one is a mistake
MAX_ACCOUNTS = 500  # hashing each password takes a moment
SHOWN = 10  # problems named in the error (the count of the others follows)
COLUMNS = ("name", "e-mail", "role")
_HEADERS = {"name": "name", "e-mail": "e-mail", "email": "e-mail", "role": "role"}
#: Letters and digits that cannot be mistaken for one another when read aloud or typed
#: from paper (no 0/o, 1/l/i).
ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"
GROUPS, GROUP = 4, 5  # 20 characters of 31: about 99 bits


class CsvImportError(ValueError):
    """A file of accounts that cannot be imported; ``problems`` are its sentences, each
    naming the file, the line and the field. Nothing was created."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        shown = self.problems[:SHOWN]
        more = len(self.problems) - len(shown)
        super().__init__("; ".join(shown) + (f"; and {more} more problem(s)" if more else "")
                         + ". No account was created.")


@dataclass(frozen=True)
class AccountRow:
    """One checked row of the file: where it is and the account it asks for."""

    line: int
    name: str
    email: str | None
    role: str


@dataclass(frozen=True)
class NewAccount:
    """An account just created and its one-time password (shown once, never stored)."""

    name: str
    email: str | None
    role: str
    password: str = field(repr=False)


def one_time_password() -> str:
    """A random password that is easy to read and type: four groups of five characters
    of :data:`ALPHABET` joined by ``-`` (from :mod:`secrets`, about 99 bits)."""
    return "-".join("".join(secrets.choice(ALPHABET) for _ in range(GROUP))
                    for _ in range(GROUPS))


def _decode(data: bytes, where: str) -> str:
    if len(data) > MAX_BYTES:
        raise CsvImportError([f"{where}: {len(data):,} bytes, at most {MAX_BYTES:,} (a file of "
                              "accounts)"])
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise CsvImportError([f"{where} line {line}: byte {e.start} is not UTF-8 (save the "
                              "file as UTF-8)"]) from None


def _header(cells: list[str], where: str, line: int) -> dict[str, int]:
    """Column -> index from the header row, or :class:`CsvImportError`."""
    found: dict[str, int] = {}
    problems = []
    for i, cell in enumerate(cells):
        if not cell.strip():  # a spreadsheet's empty column: its cells are left out
            continue
        name = _HEADERS.get(cell.strip().casefold())
        if name is None:
            problems.append(f"{where} line {line}: the column {cell.strip()!r} is not one of "
                            f"{', '.join(COLUMNS)} (the first row names the columns)")
        elif name in found:
            problems.append(f"{where} line {line}: the column {name!r} is named twice")
        else:
            found[name] = i
    problems += [f"{where} line {line}: no column {name!r} (the first row names the columns "
                 f"{', '.join(COLUMNS)})" for name in COLUMNS if name not in found]
    if problems:
        raise CsvImportError(problems)
    return found


def read_accounts(data: bytes, file_name: str, db: Database | None = None) -> list[AccountRow]:
    """The rows of a file of accounts, each checked on its own, against the others and,
    with ``db``, against the existing accounts; raises :class:`CsvImportError` naming
    every problem in line order."""
    where = Path(file_name).name or "the file"
    text = _decode(data, where)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[AccountRow] = []
    problems: list[tuple[int, str]] = []
    seen: dict[str, tuple[int, str]] = {}  # casefolded name or e-mail -> (line, what)
    columns: dict[str, int] | None = None
    line, count = 1, 0
    try:
        for cells in reader:
            start, line = line, reader.line_num + 1  # a quoted field may span lines
            if not any(c.strip() for c in cells):
                continue
            if columns is None:
                columns, width = _header(cells, where, start), len(cells)
                continue
            count += 1
            if count > MAX_ACCOUNTS:
                raise CsvImportError([f"{where} line {start}: more than {MAX_ACCOUNTS} accounts "
                                      "in one file"])
            problems += [(start, p) for p in _row(cells, columns, width, where, start, rows,
                                                  seen)]
    except csv.Error as e:
        problems.append((reader.line_num, f"{where} line {reader.line_num}: not CSV ({e})"))
    if columns is None:
        raise CsvImportError([f"{where}: empty (the first row names the columns "
                              f"{', '.join(COLUMNS)})"])
    if not rows and not problems:
        raise CsvImportError([f"{where}: no account after the header row"])
    if db is not None:
        problems += _taken(db, rows, where)
    if problems:
        raise CsvImportError([p for _, p in sorted(problems, key=lambda p: p[0])])
    return rows


def _row(cells: list[str], columns: dict[str, int], width: int, where: str, line: int,
         rows: list[AccountRow], seen: dict[str, tuple[int, str]]) -> list[str]:
    """Check one row (``width``: the header's fields): append it to ``rows`` or return
    its problems."""
    at = f"{where} line {line}"
    if len(cells) > width and any(c.strip() for c in cells[width:]):
        return [f"{at}: {len(cells)} fields, the header has {width}"]
    if len(cells) <= max(columns.values()):
        return [f"{at}: {len(cells)} field(s), the header has {width} "
                f"({', '.join(COLUMNS)})"]
    problems = []
    name = email = role = None
    try:
        name = accounts.check_name(cells[columns["name"]])
    except accounts.AccountError as e:
        problems.append(f"{at}, name: {e}")
    try:
        email = accounts.check_email(cells[columns["e-mail"]])
    except accounts.AccountError as e:
        problems.append(f"{at}, e-mail: {e}")
    role_text = cells[columns["role"]].strip().casefold()
    if role_text in ROLES:
        role = role_text
    else:
        problems.append(f"{at}, role: {cells[columns['role']].strip()!r} is not a role "
                        f"({', '.join(ROLES)})")
    for what, value in (("name", name), ("e-mail", email)):
        if value is None:
            continue
        key = value.casefold()
        if key in seen:
            first, other = seen[key]
            problems.append(f"{at}, {what}: {value!r} is already the {other} of line {first}")
        else:
            seen[key] = (line, what)
    if not problems:
        assert name is not None and role is not None
        rows.append(AccountRow(line, name, email, role))
    return problems


def _taken(db: Database, rows: Sequence[AccountRow], where: str) -> list[tuple[int, str]]:
    """The rows whose name or e-mail an existing account has (as its name or e-mail)."""
    problems = []
    for row in rows:
        for what, value in (("name", row.name), ("e-mail", row.email)):
            if value is None:
                continue
            found = store_users.find_user(db, value.strip().casefold())
            if found is not None:
                problems.append((row.line, f"{where} line {row.line}, {what}: {value!r} is "
                                             f"taken by the account {found['name']!r}"))
    return problems


def import_accounts(db: Database, data: bytes, file_name: str, *,
                    actor: User | None = None) -> list[NewAccount]:
    """Create every account of a CSV file (see the module's docstring), all or none;
    returns them with their one-time passwords, in file order. Admins only."""
    actor = check(db, actor, "manage_users")
    where = Path(file_name).name or "the file"
    rows = read_accounts(data, file_name, db)
    made = [(row, one_time_password()) for row in rows]
    hashes = [passwords.hash_password(password) for _, password in made]  # before the lock
    at, by = accounts.iso(), actor.name if actor else ""
    try:
        with db.atomic():
            for (row, _), hashed in zip(made, hashes, strict=True):
                key = row.email.casefold() if row.email else None
                user_id = store_users.insert_user(
                    db, name=row.name, name_key=row.name.casefold(), email=row.email,
                    email_key=key, role=row.role, password_hash=hashed, created_by=by, at=at)
                store_users.set_must_change_password(db, user_id, True, at)
                record(db, actor, "account.created", row.name, after={
                    "role": row.role, "email": row.email, "password": True, "one_time": True,
                    "how": "csv"})
    except store_users.NameTaken as e:  # an account made meanwhile
        raise CsvImportError([f"{where}: {e}"]) from None
    log.info("%d account(s) created from %s", len(made), where)
    return [NewAccount(row.name, row.email, row.role, password) for row, password in made]


def import_file(db: Database, path: str | Path, *,
                actor: User | None = None) -> list[NewAccount]:
    """:func:`import_accounts` of the file at ``path`` (a regular file)."""
    path = Path(path)
    if not path.is_file():
        raise CsvImportError([f"{path}: not a file"])
    with path.open("rb") as f:
        data = f.read(MAX_BYTES + 1)
    return import_accounts(db, data, path.name, actor=actor)


def credentials_csv(made: Sequence[NewAccount]) -> str:
    """``name,e-mail,password`` and one row per account: what the admin hands out."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("name", "e-mail", "password"))
    for account in made:
        writer.writerow((account.name, account.email or "", account.password))
    return out.getvalue()
