"""The Users page's widgets (admins): the accounts, the sign-in pauses in force (lift one
or all), a new account, and changes to one (role, e-mail, disable or enable, unlock, a
new password).

Every change goes through :mod:`needlework.teams.accounts` with the signed-in admin as
``actor`` (the logic checks the role again). Password fields are cleared as soon as
their form is sent: a password never stays in the session state, and only its argon2id
hash reaches the database.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from components.callbacks import uninterrupted
from components.state import get_db, signed_in
from components.text import label, option
from needlework.teams import accounts, pauses
from needlework.teams.passwords import PasswordRejected
from needlework.teams.permissions import ROLES, PermissionDenied, User

FLASH = "nw-users-flash"
NEW = "nw-user-new-"  # prefix of the new-account form's widgets
RESET = "nw-user-reset-"
ERRORS = (accounts.AccountError, PasswordRejected, PermissionDenied)


def _flash(ok: bool, message: str) -> None:
    st.session_state[FLASH] = (ok, message)


def render_flash() -> None:
    """The outcome of the last change (kept across the rerun its callback causes), in a box
    drawn on every run: the forms below keep their place, so a form's emptied password
    fields are emptied where they are rather than drawn again (under load the browser put
    the typed value back in a form moved down by a new message)."""
    box = st.container()
    flash = st.session_state.pop(FLASH, None)
    if flash:
        (box.success if flash[0] else box.error)(label(flash[1], 400),
                                                 icon=":material/check:" if flash[0] else
                                                 ":material/error:")


def _paused(user: User) -> bool:
    return bool(user.locked_until and user.locked_until > accounts.iso())


def _status(user: User) -> str:
    """The status cell: short, so that a table column shows it whole (a pause in full is
    :func:`_pause_line`'s, under the table)."""
    if user.disabled:
        return "disabled"
    return "active, paused" if _paused(user) else "active"


def _pause_line(user: User) -> str:
    return (f"{user.name}: active; sign-in paused in some browsers until "
            f"{(user.locked_until or '')[11:16]} UTC (Paused sign-ins, below).")


def _sign_in(user: User) -> str:
    ways = (["password"] if user.has_password else []) + (["identity provider"] if user.email
                                                           else [])
    return " or ".join(ways)


def render_accounts(users: Sequence[User]) -> None:
    """Every account: status, role, e-mail, how it signs in, last sign-in; then each
    paused account's pause in a whole sentence."""
    if not users:
        st.info("No accounts yet.")
        return
    st.dataframe(pd.DataFrame([{
        "name": u.name, "status": _status(u), "role": u.role, "e-mail": u.email or "",
        "signs in with": _sign_in(u),
        "last sign-in": (u.last_sign_in_at or "")[:16].replace("T", " "),
        "created": u.created_at[:10],
    } for u in users]), hide_index=True, width="stretch", key="nw-users-table")
    paused = [u for u in users if not u.disabled and _paused(u)]
    if paused:
        with st.container(key="nw-users-paused"):
            for u in paused:
                st.caption(label(_pause_line(u), 300))


@uninterrupted
def _add() -> None:
    values = {k: st.session_state.get(NEW + k) for k in ("name", "role", "email", "password",
                                                         "again")}
    for k in ("password", "again"):
        st.session_state[NEW + k] = ""
    password = values["password"] or None
    if password is not None and password != values["again"]:
        _flash(False, "The two passwords differ: nothing was created.")
        return
    try:
        user = accounts.add_user(get_db(), values["name"] or "", values["role"] or "annotator",
                                 password=password, email=values["email"] or None,
                                 actor=signed_in())
    except ERRORS as e:
        _flash(False, str(e))
        return
    for k in ("name", "email"):
        st.session_state[NEW + k] = ""
    _flash(True, f"Account {user.name} created ({user.role}).")


def render_add_account() -> None:
    """A form for a new account: a password, or an e-mail only (identity provider)."""
    with st.form("nw-user-add", border=True):
        cols = st.columns([2, 1, 2])
        cols[0].text_input("Name", key=NEW + "name", max_chars=accounts.MAX_NAME,
                           help="Also the name every change of this person is saved under.")
        cols[1].selectbox("Role", ROLES, key=NEW + "role")
        cols[2].text_input("E-mail", key=NEW + "email",
                           help="Needed to sign in through the identity provider (matched by "
                           "e-mail). Optional with a password.")
        pw_cols = st.columns(2)
        pw_cols[0].text_input("Password", key=NEW + "password", type="password",
                              autocomplete="new-password",
                              help="8 to 1024 characters, not the name. Leave empty for an account "
                              "that signs in through the identity provider only.")
        pw_cols[1].text_input("Password again", key=NEW + "again", type="password",
                              autocomplete="new-password")
        st.form_submit_button("Create the account", type="primary", on_click=_add,
                              key="nw-user-add-go", icon=":material/person_add:")


@uninterrupted
def _change(name: str, change: Callable[..., Any], *args: Any, done: str) -> None:
    try:
        change(get_db(), name, *args, actor=signed_in())
    except ERRORS as e:
        _flash(False, str(e))
        return
    _flash(True, done)


@uninterrupted
def _reset(name: str) -> None:
    password = st.session_state.get(RESET + "password") or ""
    again = st.session_state.get(RESET + "again") or ""
    st.session_state[RESET + "password"] = st.session_state[RESET + "again"] = ""
    if password != again:
        _flash(False, "The two passwords differ: the password was not changed.")
        return
    _change(name, accounts.reset_password, password,
            done=f"New password set for {name}; their sessions ended and any lock is lifted.")


def render_manage_account(users: Sequence[User], me: User | None) -> None:
    """Pick an account, then change its role or e-mail, disable or enable it, lift a
    lock, or set a new password."""
    if not users:
        return
    names = [u.name for u in users]
    name = st.selectbox("Account", names, key="nw-user-pick", format_func=lambda n: option(n, 60))
    user = next(u for u in users if u.name == name)
    cols = st.columns([1, 1, 1], gap="medium", vertical_alignment="bottom")
    with cols[0]:
        role = st.selectbox("Role", ROLES, index=ROLES.index(user.role),
                            key=f"nw-user-role|{user.name}")
        st.button("Save the role", key="nw-user-role-go", disabled=role == user.role,
                  on_click=_change, args=(user.name, accounts.set_role, role),
                  kwargs={"done": f"{user.name} is now {role}."})
    with cols[1]:
        email = st.text_input("E-mail", user.email or "", key=f"nw-user-email|{user.name}")
        st.button("Save the e-mail", key="nw-user-email-go",
                  disabled=(email or "") == (user.email or ""),
                  on_click=_change, args=(user.name, accounts.set_email, email or None),
                  kwargs={"done": f"E-mail of {user.name} saved."})
    with cols[2]:
        if user.disabled:
            st.button("Enable the account", key="nw-user-enable", on_click=_change,
                      args=(user.name, accounts.set_disabled, False),
                      kwargs={"done": f"{user.name} can sign in again."})
        else:
            st.button("Disable the account", key="nw-user-disable",
                      disabled=me is not None and me.id == user.id,
                      help="Ends every session of the account; its work stays.",
                      on_click=_change, args=(user.name, accounts.set_disabled, True),
                      kwargs={"done": f"{user.name} is disabled and signed out everywhere."})
        st.button("Unlock", key="nw-user-unlock", disabled=not _paused(user),
                  help="Lifts every pause of the account after wrong passwords now (its name, "
                  "its e-mail, each browser).",
                  on_click=_change, args=(user.name, pauses.unlock),
                  kwargs={"done": f"{user.name} is unlocked."})
    with st.form("nw-user-reset", border=True):
        st.markdown(f"**New password for {label(user.name, 60)}**")
        pw_cols = st.columns(2)
        pw_cols[0].text_input("New password", key=RESET + "password", type="password",
                              autocomplete="new-password")
        pw_cols[1].text_input("New password again", key=RESET + "again", type="password",
                              autocomplete="new-password")
        st.form_submit_button("Set the password", on_click=_reset, args=(user.name,),
                              key="nw-user-reset-go", icon=":material/password:",
                              help="Ends every session of the account and lifts any lock.")


@uninterrupted
def _lift(pause_id: str | None) -> None:
    try:
        if pause_id is None:
            count = pauses.lift_all_pauses(get_db(), actor=signed_in())
            _flash(True, f"{count} pause{'s' if count != 1 else ''} lifted.")
        else:
            pause = pauses.lift_pause(get_db(), pause_id, actor=signed_in())
            _flash(True, f"The pause of {pause.account or 'that name'} ({pause.about}) is lifted.")
    except ERRORS as e:
        _flash(False, str(e))


def _pause_label(pause: pauses.Pause) -> str:
    who = option(pause.account, 60) if pause.account else "a name no account has"
    return f"{who}: {pause.about}, until {pause.until[11:16]} UTC"


def render_pauses() -> None:
    """The sign-in pauses in force after wrong passwords (of a name for browsers that
    never signed in with it, or of one browser), and buttons that lift one or all."""
    in_force = pauses.list_pauses(get_db(), actor=signed_in())
    if not in_force:
        st.caption("No sign-in is paused.", help="Wrong passwords pause sign-in with a name: "
                   "in a browser the account signed in from before, that browser only; "
                   "elsewhere, browsers that never signed in with it. See docs/security.md.")
        return
    st.dataframe(pd.DataFrame([{
        "account": p.account or "(no such account)", "paused": p.about,
        "wrong passwords in a row": p.failures,
        "until": p.until[:16].replace("T", " ") + " UTC",
    } for p in in_force]), hide_index=True, width="stretch", key="nw-pauses-table")
    ids = [p.id for p in in_force]
    by_id = {p.id: p for p in in_force}
    cols = st.columns([3, 1, 1], vertical_alignment="bottom")
    pick = cols[0].selectbox("Pause", ids, key="nw-pause-pick",
                             format_func=lambda i: _pause_label(by_id[i]))
    cols[1].button("Lift this pause", key="nw-pause-lift", on_click=_lift, args=(pick,),
                   icon=":material/lock_open:")
    cols[2].button("Lift every pause", key="nw-pause-lift-all", on_click=_lift, args=(None,),
                   icon=":material/lock_open:")
