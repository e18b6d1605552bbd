"""Sign-in pauses an admin sees and lifts (:mod:`needlework.teams.accounts` sets them at
sign-in): every pause in force (:func:`list_pauses`), one lifted (:func:`lift_pause`), all
of them (:func:`lift_all_pauses`), or every pause of one account (:func:`unlock`). Each lift
is an audit event; only an admin may (``manage_users``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlite_utils import Database

from needlework.teams.accounts import (
    AccountError,
    _found,
    _login_keys,
    _now,
    iso,
    login_key,
)
from needlework.teams.events import record
from needlework.teams.permissions import User, check
from store import users as store_users


@dataclass(frozen=True)
class Pause:
    """A sign-in pause an admin may lift: ``kind`` "name" (the name or e-mail as typed,
    for browsers without its device token) or "browser" (one device token); ``account``
    is "" for a name no account has."""

    id: str
    kind: str
    account: str
    until: str
    failures: int
    about: str


def unlock(db: Database, name: str, *, actor: User | None = None) -> User:
    """Lift every pause of the account: of its name and e-mail, and of each browser."""
    actor = check(db, actor, "manage_users")
    user = _found(db, name)
    paused = (store_users.clear_failures(db, _login_keys(user))
              + store_users.clear_device_pauses(db, user.id))
    store_users.update_user(db, user.id, iso(), failed_logins=0, locked_until=None)
    record(db, actor, "account.unlocked", user.name, before={"pauses": paused},
           after={"pauses": 0})
    return _found(db, user.name)


def list_pauses(db: Database, *, actor: User | None = None,
                now: datetime | None = None) -> list[Pause]:
    """Every sign-in pause in force, soonest end first (admins only in team mode)."""
    check(db, actor, "manage_users")
    moment = iso(_now(now))
    owners: dict[str, tuple[str, str]] = {}
    for row in store_users.list_users(db):
        if row["email"]:
            owners[login_key(row["email"])] = (row["name"], "its e-mail")
        owners[login_key(row["name"])] = (row["name"], "its name")
    pauses = [Pause(id=f"name:{r['login_key']}", kind="name",
                    account=owners.get(r["login_key"], ("", ""))[0], until=r["locked_until"],
                    failures=r["failures"],
                    about=(f"{owners[r['login_key']][1]}, in browsers it has not signed in "
                           "from before" if r["login_key"] in owners else
                           "a name or e-mail no account has"))
              for r in store_users.name_pauses(db, moment)]
    pauses += [Pause(id=f"browser:{r['id']}", kind="browser", account=r["name"],
                     until=r["locked_until"], failures=r["failures"],
                     about=f"one browser where it signed in on {r['created_at'][:10]}")
               for r in store_users.device_pauses(db, moment)]
    return sorted(pauses, key=lambda p: (p.until, p.id))


def _lift(db: Database, pause: Pause, actor: User | None, moment: datetime) -> None:
    kind, _, key = pause.id.partition(":")
    if kind == "name":
        store_users.clear_failures(db, [key])
    else:
        store_users.clear_device_pauses(db, device_id=int(key))
    if pause.account:
        user = _found(db, pause.account)
        store_users.update_user(db, user.id, iso(moment),
                                locked_until=_latest_pause(db, user, iso(moment)))
    record(db, actor, "sign_in.pause_lifted", pause.account,
           before={"kind": pause.kind, "until": pause.until, "failures": pause.failures},
           after=None)


def lift_pause(db: Database, pause_id: str, *, actor: User | None = None,
               now: datetime | None = None) -> Pause:
    """Lift one pause of :func:`list_pauses` (by its ``id``); :class:`AccountError` when
    it is not in force."""
    moment = _now(now)
    pause = next((p for p in list_pauses(db, actor=actor, now=moment) if p.id == pause_id), None)
    if pause is None:
        raise AccountError("that pause is not in force any more (it ended or was lifted)")
    _lift(db, pause, actor, moment)
    return pause


def lift_all_pauses(db: Database, *, actor: User | None = None,
                    now: datetime | None = None) -> int:
    """Lift every pause in force; returns how many."""
    moment = _now(now)
    pauses = list_pauses(db, actor=actor, now=moment)
    for pause in pauses:
        _lift(db, pause, actor, moment)
    return len(pauses)


def _latest_pause(db: Database, user: User, now: str) -> str | None:
    ends = [store_users.paused_until(db, _login_keys(user), now),
            store_users.device_paused_until(db, user.id, now)]
    return max((e for e in ends if e), default=None)
