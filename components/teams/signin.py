"""The sign-in screen of team mode, drawn in the main area by the gate
(:func:`components.teams.session.sign_in_gate`) while nobody is signed in.

A name (or e-mail) and password form checked by
:func:`needlework.teams.accounts.sign_in` (wrong passwords pause sign-in after the
configured count: in this browser when it holds a device token of the account, else for
browsers without one; the refusal says until when), and, where an identity provider is
configured, a button that starts Streamlit's ``st.login``. The password is taken out
of the session state in the form's callback, before anything else runs.

The attempt carries the browser's device token: the one this browser session got at its
last sign-in (:data:`DEVICE`), else the device cookie the browser sent when the session
started; and the client address (:func:`needlework.teams.proxies.client_address`, from
Streamlit's peer address, ``X-Forwarded-For`` and ``[server] trusted_proxies``), which
goes to the audit trail.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from components.callbacks import uninterrupted
from components.state import get_db
from needlework.teams import accounts
from needlework.teams.config import Policy
from needlework.teams.proxies import Network, client_address

LOGIN = "nw-sign-in-login"
PASSWORD = "nw-sign-in-password"
ERROR = "nw-sign-in-error"
DEVICE = "nw-device-token"  # the device token this browser got at its last sign-in


def _client(trusted: Sequence[Network]) -> str:
    """The address the sign-in came from ("" where it cannot be read)."""
    try:
        peer, forwarded = st.context.ip_address, st.context.headers.get_all("x-forwarded-for")
    except (AttributeError, RuntimeError):  # no browser (AppTest)
        return ""
    return client_address(peer if isinstance(peer, str) else None, forwarded, trusted)


def device_token() -> str | None:
    """This browser's device token: the one it got at its last sign-in in this session,
    else the cookie it sent when the session started."""
    if st.session_state.get(DEVICE):
        return st.session_state[DEVICE]
    try:
        return st.context.cookies.get(accounts.DEVICE_COOKIE)
    except (AttributeError, RuntimeError):  # no browser (AppTest)
        return None


@uninterrupted
def _submit(policy: Policy, on_signed_in: Callable[[accounts.SignIn], None],
            trusted: Sequence[Network]) -> None:
    """The form's callback: check the password, start the session or keep the refusal
    (shown on every run until the next try, so a rerun nobody asked for cannot hide it)."""
    login = st.session_state.get(LOGIN) or ""
    password = st.session_state.get(PASSWORD) or ""
    st.session_state[PASSWORD] = ""
    st.session_state.pop(ERROR, None)
    if not login.strip() or not password:
        st.session_state[ERROR] = "Enter your name (or e-mail) and your password."
        return
    try:
        signed = accounts.sign_in(get_db(), login, password, policy=policy,
                                  client=_client(trusted), device=device_token())
    except accounts.SignInRefused as e:
        st.session_state[ERROR] = str(e)
        return
    on_signed_in(signed)


def render_sign_in(policy: Policy, on_signed_in: Callable[[accounts.SignIn], None], *,
                   notice: str | None = None, oidc: bool = False, refused: bool = False,
                   trusted_proxies: Sequence[Network] = ()) -> None:
    """The sign-in form; ``on_signed_in`` keeps the new session. ``oidc``: offer the
    identity provider; ``refused``: its identity was not let in (``notice`` says why);
    ``trusted_proxies``: whose ``X-Forwarded-For`` names the client."""
    _, middle, _ = st.columns([1, 2, 1])
    with middle:
        st.title("🪡 Needlework")
        st.caption("This server runs in team mode: sign in with the account your admin made "
                   "for you.")
        error = st.session_state.get(ERROR)
        if error:
            st.error(error, icon=":material/lock:")
        elif notice:
            st.info(notice, icon=":material/info:")
        with st.form("nw-sign-in", border=True, enter_to_submit=True):
            st.text_input("Name or e-mail", key=LOGIN, autocomplete="username")
            st.text_input("Password", key=PASSWORD, type="password",
                          autocomplete="current-password")
            st.form_submit_button("Sign in", type="primary", on_click=_submit,
                                  args=(policy, on_signed_in, tuple(trusted_proxies)),
                                  key="nw-sign-in-go")
        st.caption(f"After {policy.lock_failures} wrong passwords in a row, sign-in with that "
                   "name pauses: in this browser if you signed in here before, else in "
                   "browsers you never signed in from; the pause grows from 1 minute up to "
                   f"{policy.lock_minutes:g} minutes. Forgot your password? Ask an admin to "
                   "reset it.")
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
