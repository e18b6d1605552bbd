"""The sign-in screen of team mode, drawn in the main area by the gate
(:func:`components.teams.session.sign_in_gate`) while nobody is signed in.

A name (or e-mail) and password form checked by
:func:`needlework.teams.accounts.sign_in` (wrong passwords lock the account after the
configured count; the refusal says until when), and, where an identity provider is
configured, a button that starts Streamlit's ``st.login``. The password is taken out
of the session state in the form's callback, before anything else runs.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from components.state import get_db
from needlework.teams import accounts
from needlework.teams.config import Policy

LOGIN = "nw-sign-in-login"
PASSWORD = "nw-sign-in-password"
ERROR = "nw-sign-in-error"


def _client() -> str:
    """The address the sign-in came from ("" where Streamlit does not know it)."""
    address = st.context.ip_address
    return address if isinstance(address, str) else ""


def _submit(policy: Policy, on_signed_in: Callable[[accounts.SignIn], None]) -> None:
    """The form's callback: check the password, start the session or keep the refusal."""
    login = st.session_state.get(LOGIN) or ""
    password = st.session_state.get(PASSWORD) or ""
    st.session_state[PASSWORD] = ""
    if not login.strip() or not password:
        st.session_state[ERROR] = "Enter your name (or e-mail) and your password."
        return
    try:
        signed = accounts.sign_in(get_db(), login, password, policy=policy, client=_client())
    except accounts.SignInRefused as e:
        st.session_state[ERROR] = str(e)
        return
    on_signed_in(signed)


def render_sign_in(policy: Policy, on_signed_in: Callable[[accounts.SignIn], None], *,
                   notice: str | None = None, oidc: bool = False, refused: bool = False) -> None:
    """The sign-in form; ``on_signed_in`` keeps the new session. ``oidc``: offer the
    identity provider; ``refused``: its identity was not let in (``notice`` says why)."""
    _, middle, _ = st.columns([1, 2, 1])
    with middle:
        st.title("🪡 Needlework")
        st.caption("This server runs in team mode: sign in with the account your admin made "
                   "for you.")
        error = st.session_state.pop(ERROR, None)
        if error:
            st.error(error, icon=":material/lock:")
        elif notice:
            st.info(notice, icon=":material/info:")
        with st.form("nw-sign-in", border=True, enter_to_submit=True):
            st.text_input("Name or e-mail", key=LOGIN, autocomplete="username")
            st.text_input("Password", key=PASSWORD, type="password",
                          autocomplete="current-password")
            st.form_submit_button("Sign in", type="primary", on_click=_submit,
                                  args=(policy, on_signed_in), key="nw-sign-in-go")
        st.caption(f"After {policy.lock_failures} wrong passwords in a row an account is locked "
                   f"for {policy.lock_minutes:g} minutes. Forgot your password? Ask an admin "
                   "to reset it.")
        if oidc:
            st.divider()
            if refused:
                again, out = st.columns(2)
                if again.button("Sign in again with your organisation's account",
                                key="nw-oidc-again", icon=":material/badge:"):
                    st.login()
                if out.button("Sign out of the identity provider", key="nw-oidc-out",
                              icon=":material/logout:"):
                    st.logout()
            elif st.button("Sign in with your organisation's account", key="nw-oidc-login",
                           icon=":material/badge:", type="secondary"):
                st.login()
