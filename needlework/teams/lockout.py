"""The lock-out rules of password sign-in (team mode): how long a pause lasts
(:func:`pause_end`) and what a paused sign-in is told (:func:`refusal_words`).

Lock-out follows OWASP's device cookies ("Slow Down Online Guessing Attacks with Device
Cookies"). Each successful sign-in gives the browser a new **device token** (random,
256 bits; the store keeps its SHA-256, bound to the account; the page keeps the token in
an HttpOnly cookie, :data:`needlework.teams.accounts.DEVICE_COOKIE`) and retires the one
it presented. A sign-in attempt that presents a valid device token of the account it
names counts its wrong passwords against that token only: after ``Policy.lock_failures``
in a row that browser alone is paused. An attempt without one counts against the name as
typed (its SHA-256, known account or not), and the pause holds for browsers without a
device token of the account only. So a stranger's wrong passwords never pause a browser
where the person signed in before. Pauses grow: 1 minute at the ``lock_failures``-th
wrong password in a row, doubling at each further one, at most ``Policy.lock_minutes``
(even the right password is refused meanwhile); a right password ends the count, and a
count forgets wrong passwords older than
:data:`needlework.teams.accounts.FAILURE_MEMORY`. A name nobody has gets the same
answers, pauses included, as a real one. :mod:`needlework.teams.accounts` keeps the
counts and the pauses; an admin lists and lifts pauses with
:mod:`needlework.teams.pauses`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from needlework.teams.config import Policy


def pause_end(count: int, policy: Policy, moment: datetime) -> datetime | None:
    """When a pause after ``count`` wrong passwords in a row ends (``None``: no pause):
    1 minute at the ``lock_failures``-th, doubling with each further one, at most
    ``lock_minutes``."""
    if count < policy.lock_failures:
        return None
    minutes = min(policy.lock_minutes, 2.0 ** min(count - policy.lock_failures, 20))
    return moment + timedelta(minutes=minutes)


def clock(when: str) -> str:
    """The ISO moment ``when`` as a time of day in UTC, with its date unless it is today:
    ``14:05 UTC``, ``14:05 UTC on 2026-11-28``."""
    moment = datetime.fromisoformat(when)
    return moment.strftime("%H:%M") + " UTC" + ("" if moment.date() == datetime.now(UTC).date()
                                                else moment.strftime(" on %Y-%m-%d"))


def refusal_words(policy: Policy, until: str, *, here: bool, count: int = 0) -> str:
    """What a paused sign-in is told: a pause just begun after ``count`` wrong passwords,
    or (0) one in force, until ``until``; ``here``: the pause is of this browser (its
    device token), else of the name for browsers without one."""
    where = ("in this browser" if here else
             "in browsers it has not signed in from before")
    if count:
        return (f"wrong name or password, {count} times in a row: sign-in with this name is "
                f"paused {where} until {clock(until)}")
    return (f"after {policy.lock_failures} wrong passwords in a row, sign-in with this name is "
            f"paused {where}: try again after {clock(until)}")
