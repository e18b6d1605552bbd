"""The ``users`` verbs of :mod:`needlework.cli.teams` (``add``, ``import``, ``list``,
``simple-password``, ``reset-password``, ``role``, ``email``), and the helpers every team verb
shares: a one-line failure (:class:`Stop`), a secret read from a prompt or stdin, never the
command line (:func:`read_secret`), a verb run with its refusals printed to stderr
(:func:`run_verb`), and the database (:func:`open_db`).
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from typing import Any

from needlework.cli import add_db_argument
from needlework.cli.acting import Stop, acting_user, add_as_argument, team_mode
from needlework.teams import pauses

ROLES = ("annotator", "reviewer", "admin")


def add_user_verbs(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "users", help="manage team accounts (add, import, list, disable, enable, reset, role, "
        "unlock)",
        description="Accounts for team mode. Passwords are read from a prompt (twice) or, with "
        "--password-stdin, from the first line of stdin; never from the command line.")
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True

    q = sub.add_parser("add", help="create an account")
    q.add_argument("name", metavar="NAME")
    q.add_argument("--role", choices=ROLES, required=True)
    q.add_argument("--email", help="for sign-in through the identity provider (OIDC)")
    how = q.add_mutually_exclusive_group()
    how.add_argument("--password-stdin", action="store_true",
                     help="read the password from the first line of stdin")
    how.add_argument("--no-password", action="store_true",
                     help="no password: signs in only through the identity provider (needs --email)")
    add_as_argument(q)
    add_db_argument(q)
    q.set_defaults(func=cmd_users_add)

    q = sub.add_parser("list", help="list accounts")
    q.add_argument("--json", action="store_true", help="print a JSON list")
    add_db_argument(q)
    q.set_defaults(func=cmd_users_list)

    for action, text in (("disable", "disable an account and end its sessions"),
                         ("enable", "enable a disabled account"),
                         ("unlock", "lift every sign-in pause of the account (its name, e-mail, "
                                    "each browser)")):
        q = sub.add_parser(action, help=text)
        q.add_argument("name", metavar="NAME")
        add_as_argument(q)
        add_db_argument(q)
        q.set_defaults(func=cmd_users_simple, action=action)

    q = sub.add_parser("reset", help="set a new password (ends the account's sessions)")
    q.add_argument("name", metavar="NAME")
    q.add_argument("--password-stdin", action="store_true",
                   help="read the password from the first line of stdin")
    add_as_argument(q)
    add_db_argument(q)
    q.set_defaults(func=cmd_users_reset)

    q = sub.add_parser(
        "import", help="create accounts from a CSV file, each with a one-time password",
        description="Create one account per row of FILE (UTF-8 CSV with a header row naming "
        "the columns name, e-mail, role), all or none: on any problem nothing is created and "
        "the problems are named with their line and field. Each account gets a random "
        "one-time password, printed once as CSV (name,e-mail,password) to stdout or written "
        "to --out (readable by its owner only); the person chooses their own at their first "
        "sign-in. Only the passwords' hashes are stored.")
    q.add_argument("file", metavar="FILE")
    q.add_argument("--out", metavar="FILE",
                   help="write name,e-mail,password here (a new file, mode 0600) instead of "
                   "stdout")
    add_as_argument(q)
    add_db_argument(q)
    q.set_defaults(func=cmd_users_import)

    q = sub.add_parser("role", help="change an account's role")
    q.add_argument("name", metavar="NAME")
    q.add_argument("role", choices=ROLES)
    add_as_argument(q)
    add_db_argument(q)
    q.set_defaults(func=cmd_users_role)

    q = sub.add_parser("email", help="set (or with no EMAIL remove) an account's e-mail")
    q.add_argument("name", metavar="NAME")
    q.add_argument("email", nargs="?", metavar="EMAIL")
    add_as_argument(q)
    add_db_argument(q)
    q.set_defaults(func=cmd_users_email)


def read_secret(from_stdin: bool, what: str, *, confirm: bool) -> str:
    if from_stdin:
        value = sys.stdin.readline().rstrip("\r\n")
        if not value:
            raise Stop(f"no {what} on stdin")
        return value
    if not sys.stdin.isatty():
        raise Stop(f"stdin is not a terminal: give the {what} on stdin with "
                    f"--{'password' if what == 'password' else 'client-secret'}-stdin")
    value = getpass.getpass(f"{what.capitalize()}: ")
    if confirm and getpass.getpass(f"{what.capitalize()} again: ") != value:
        raise Stop(f"the two {what}s differ")
    return value


def run_verb(verb: str, fn: Any, args: argparse.Namespace) -> int:
    from needlework.teams.accounts import AccountError  # noqa: PLC0415
    from needlework.teams.accounts_csv import CsvImportError  # noqa: PLC0415
    from needlework.teams.assignment import AssignmentError  # noqa: PLC0415
    from needlework.teams.audit import AuditError  # noqa: PLC0415
    from needlework.teams.passwords import PasswordRejected  # noqa: PLC0415
    from needlework.teams.permissions import PermissionDenied  # noqa: PLC0415

    try:
        return fn(args)
    except (Stop, AccountError, AssignmentError, AuditError, CsvImportError,
            PasswordRejected, PermissionDenied) as e:
        print(f"{verb}: {e}", file=sys.stderr)
        return 1


def open_db(args: argparse.Namespace) -> Any:
    from store import connect  # noqa: PLC0415

    return connect(args.db)


def cmd_users_add(args: argparse.Namespace) -> int:
    from needlework.teams import accounts, command_line  # noqa: PLC0415
    from store import users as store_users  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        if args.no_password and not args.email:
            raise Stop("--no-password needs --email (the account signs in through the "
                        "identity provider)")
        db = open_db(args)
        first = (not args.as_name and args.role == "admin" and team_mode()
                 and not store_users.active_admins(db))
        actor = None if first else acting_user(args, db, "users add")
        password = None if args.no_password else read_secret(args.password_stdin, "password",
                                                            confirm=True)
        if first:
            user = command_line.add_first_admin(db, args.name, password=password, email=args.email)
        else:
            user = accounts.add_user(db, args.name, args.role, password=password,
                                     email=args.email, actor=actor)
        print(f"added {user.role} {user.name!r}" + (f" <{user.email}>" if user.email else ""))
        return 0

    return run_verb("users add", go, args)


def _private_file(path: str) -> Any:
    """A new file at ``path`` that only its owner can read (it will hold passwords)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise Stop(f"{path} exists: name a new file for the passwords") from None
    except OSError as e:
        raise Stop(f"{path}: {e.strerror}") from None
    os.fchmod(fd, 0o600)  # whatever the umask
    return os.fdopen(fd, "w", encoding="utf-8", newline="")


def cmd_users_import(args: argparse.Namespace) -> int:
    from needlework.teams import accounts_csv  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        db = open_db(args)
        path = args.file
        if not os.path.isfile(path):
            raise Stop(f"{path}: not a file")
        with open(path, "rb") as f:
            data = f.read(accounts_csv.MAX_BYTES + 1)
        actor = acting_user(args, db, "users import")
        accounts_csv.read_accounts(data, path, db)  # every problem before the --out file
        out = _private_file(args.out) if args.out else None
        try:
            made = accounts_csv.import_accounts(db, data, path, actor=actor)
        except BaseException:
            if out is not None:
                out.close()
                os.unlink(args.out)
            raise
        text = accounts_csv.credentials_csv(made)
        if out is None:
            sys.stdout.write(text)
            print(f"created {len(made)} accounts; the passwords above are shown once and "
                  "must be changed at the first sign-in", file=sys.stderr)
        else:
            with out:
                out.write(text)
            print(f"created {len(made)} accounts; their one-time passwords are in {args.out} "
                  "(readable by you only)")
        return 0

    return run_verb("users import", go, args)


def _user_json(user: Any) -> dict[str, Any]:
    return {"name": user.name, "email": user.email, "role": user.role, "disabled": user.disabled,
            "password": user.has_password, "locked_until": user.locked_until,
            "last_sign_in_at": user.last_sign_in_at}


def cmd_users_list(args: argparse.Namespace) -> int:
    from needlework.teams import accounts  # noqa: PLC0415

    users = accounts.list_users(open_db(args))
    if args.json:
        print(json.dumps([_user_json(u) for u in users], ensure_ascii=False))
        return 0
    if not users:
        print("no accounts")
    for u in users:
        flags = [f for f, on in (("disabled", u.disabled), ("no password", not u.has_password),
                                 (f"locked until {u.locked_until}", bool(u.locked_until)))
                 if on]
        print(f"{u.name}\t{u.role}\t{u.email or '-'}" + (f"\t({', '.join(flags)})" if flags else ""))
    return 0


def cmd_users_simple(args: argparse.Namespace) -> int:
    from needlework.teams import accounts  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        db = open_db(args)
        actor = acting_user(args, db, f"users {args.action}")
        if args.action == "unlock":
            user = pauses.unlock(db, args.name, actor=actor)
        else:
            user = accounts.set_disabled(db, args.name, args.action == "disable", actor=actor)
        print(f"{user.name}: " + ("unlocked" if args.action == "unlock" else f"{args.action}d"))
        return 0

    return run_verb(f"users {args.action}", go, args)


def cmd_users_reset(args: argparse.Namespace) -> int:
    from needlework.teams import accounts  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        db = open_db(args)
        actor = acting_user(args, db, "users reset")
        if accounts.get_user(db, args.name) is None:
            raise Stop(f"no account named {args.name!r}")
        user = accounts.reset_password(db, args.name,
                                       read_secret(args.password_stdin, "password", confirm=True),
                                       actor=actor)
        print(f"{user.name}: new password set, sessions ended")
        return 0

    return run_verb("users reset", go, args)


def cmd_users_role(args: argparse.Namespace) -> int:
    from needlework.teams import accounts  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        db = open_db(args)
        user = accounts.set_role(db, args.name, args.role,
                                 actor=acting_user(args, db, "users role"))
        print(f"{user.name}: {user.role}")
        return 0

    return run_verb("users role", go, args)


def cmd_users_email(args: argparse.Namespace) -> int:
    from needlework.teams import accounts  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        db = open_db(args)
        user = accounts.set_email(db, args.name, args.email,
                                  actor=acting_user(args, db, "users email"))
        print(f"{user.name}: {user.email or 'no e-mail'}")
        return 0

    return run_verb("users email", go, args)
