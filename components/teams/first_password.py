"""The "choose your password" screen: drawn by the sign-in gate
(:func:`components.teams.session.sign_in_gate`) instead of any page while the signed-in
account still has a one-time password (:mod:`needlework.teams.first_password`).

Two password fields checked by :func:`needlework.teams.first_password.choose_password`;
the form's callback takes their values out of the session state before anything else
runs, so a password never stays there, and every try draws the fields afresh under new
keys (:func:`field_keys`): a new field is empty in the browser, whatever was typed in the
one before. The new session it starts is handed to
``on_chosen`` (the gate's ``start_session``), and the next run opens the page the
browser asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import streamlit as st

from components.callbacks import uninterrupted
from components.state import get_db
from components.text import label
from needlework.teams import accounts
from needlework.teams.config import Policy
from needlework.teams.first_password import choose_password
from needlework.teams.passwords import MIN_LENGTH, PasswordRejected
from needlework.teams.permissions import User

NEW = "nw-first-password"
AGAIN = "nw-first-password-again"
ERROR = "nw-first-password-error"
TRY = "nw-first-password-try"


class _State(Protocol):
    """What :func:`field_keys` reads: the session state, or a test's copy of it."""

    def __contains__(self, key: str) -> bool: ...
    def __getitem__(self, key: str) -> Any: ...


def field_keys(state: _State) -> tuple[str, str]:
    """The keys of the two fields on this try: ``NEW-n`` and ``AGAIN-n``, n the number of
    tries so far (a field's key never changes while it is on screen)."""
    n = state[TRY] if TRY in state else 0
    return f"{NEW}-{n}", f"{AGAIN}-{n}"


@uninterrupted
def _submit(user: User, policy: Policy,
            on_chosen: Callable[[accounts.SignIn], None]) -> None:
    """The form's callback: take the passwords out of the session state and count a try
    (the next run draws new, empty fields), then store the password or keep the reason
    (shown on every run until the next try, so a rerun nobody asked for cannot hide it)."""
    new_key, again_key = field_keys(st.session_state)
    password = st.session_state.pop(new_key, None) or ""
    again = st.session_state.pop(again_key, None) or ""
    st.session_state[TRY] = st.session_state.get(TRY, 0) + 1
    st.session_state.pop(ERROR, None)
    if not password:
        st.session_state[ERROR] = "Type a password of your own, twice."
        return
    try:
        signed = choose_password(get_db(), user, password, again, policy=policy)
    except (accounts.AccountError, PasswordRejected) as e:
        st.session_state[ERROR] = f"{str(e)[:1].upper()}{str(e)[1:]}: choose another."
        return
    on_chosen(signed)


def render_first_password(user: User, policy: Policy,
                          on_chosen: Callable[[accounts.SignIn], None],
                          on_sign_out: Callable[[], None]) -> None:
    """The screen: who is signed in, why a password is asked for, the form, and a way
    out (``on_sign_out``)."""
    _, middle, _ = st.columns([1, 2, 1])
    with middle:
        st.title("🪡 Choose your password")
        st.markdown(f"You signed in as **{label(user.name, 60)}** with a one-time password. "
                    "Choose a password of your own before you go on: the one-time password "
                    "stops working now.")
        # the reason sits in a box drawn on every run: the form keeps its place on the page,
        # so its fields are emptied where they are (a form moved down by a new message was
        # drawn again, and under load the browser put the typed password back in it)
        notice = st.container()
        error = st.session_state.get(ERROR)
        if error:
            notice.error(label(error, 300), icon=":material/lock:")
        new_key, again_key = field_keys(st.session_state)
        with st.form("nw-first-password-form", border=True, enter_to_submit=True):
            st.text_input("New password", key=new_key, type="password",
                          autocomplete="new-password",
                          help=f"At least {MIN_LENGTH} characters, not your name.")
            st.text_input("New password again", key=again_key, type="password",
                          autocomplete="new-password")
            st.form_submit_button("Save my password", type="primary", on_click=_submit,
                                  args=(user, policy, on_chosen), key="nw-first-password-go")
        st.button("Sign out", key="nw-first-password-out", on_click=uninterrupted(on_sign_out),
                  icon=":material/logout:", type="tertiary")
