"""Who a command-line verb acts as: ``--as NAME`` and that account's password.

In team mode (``needlework.toml``, or ``$NEEDLEWORK_CONFIG``: the config the server reads)
the verbs that change accounts, assignments, gold items, datasets or the lead's settings act
as a person, so that their audit rows name who did it, as the app's do: ``--as NAME`` names
the account, and its password comes from ``$NEEDLEWORK_PASSWORD`` or, in a terminal, a
prompt; never from the command line, where it would stay in the shell's history and the
process list. Without ``--as`` such a verb refuses in one line; the one exception is the
team's first admin (``users add NAME --role admin`` while no enabled admin exists). The
password is checked as a sign-in is (:func:`needlework.teams.command_line.command_line_user`:
wrong passwords count and pause the name, a refusal is an audit row). Local mode acts as
nobody, as before: ``--as`` is optional there.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from typing import TYPE_CHECKING, Any

from needlework.teams.config import load_config

if TYPE_CHECKING:
    from needlework.teams.permissions import User

PASSWORD_ENV = "NEEDLEWORK_PASSWORD"


class Stop(Exception):
    """A one-line failure for stderr."""


def add_as_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--as NAME`` option of a verb that changes what the team sees."""
    parser.add_argument(
        "--as", dest="as_name", metavar="NAME",
        help=f"act as this account (required in team mode): its password is read from "
        f"${PASSWORD_ENV} or asked for, never taken from the command line")


def team_mode() -> bool:
    """Whether the config the server reads says team mode."""
    return load_config().team


def _password(name: str) -> str:
    password = os.environ.get(PASSWORD_ENV)
    if password:
        return password
    if not sys.stdin.isatty():
        raise Stop(f"--as {name}: no password: set ${PASSWORD_ENV} to the password of {name}, "
                   "or run the verb in a terminal to be asked for it")
    password = getpass.getpass(f"Password of {name}: ")
    if not password:
        raise Stop(f"--as {name}: no password given")
    return password


def acting_user(args: argparse.Namespace, db: Any, verb: str) -> User | None:
    """The account ``verb`` acts as (``--as``, its password checked), or ``None`` in local
    mode without ``--as``; :class:`Stop` in team mode without ``--as`` or when the account
    is refused."""
    from needlework.teams import accounts, command_line  # noqa: PLC0415
    from store import users as store_users  # noqa: PLC0415

    config = load_config()
    name = (getattr(args, "as_name", None) or "").strip()
    if not name:
        if not config.team:
            return None
        first = ("" if store_users.active_admins(db) else
                 " (no admin yet: make the first with `users add NAME --role admin`)")
        raise Stop(f"team mode: {verb} acts as a person: add --as NAME (an admin{first}) and "
                   f"give that account's password in ${PASSWORD_ENV} or at the prompt")
    try:
        return command_line.command_line_user(db, name, _password(name), policy=config.policy)
    except accounts.SignInRefused as e:
        raise Stop(f"--as {name}: {e}") from None
