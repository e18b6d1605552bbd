"""Users (team mode, admins): the accounts, a new account, accounts from a CSV file (with
one-time passwords shown once), and changes to one (role, e-mail, disable, unlock, a new
password). See docs/teams.md."""

import streamlit as st

from components.state import get_db, signed_in
from components.teams.session import require_page
from components.teams.users import (
    render_accounts,
    render_add_account,
    render_flash,
    render_manage_account,
    render_pauses,
)
from components.teams.users_import import render_import
from needlework.teams.accounts import list_users

db = get_db()
st.title("👥 Users")
me = require_page("manage_users")
st.caption("Nobody signs up: accounts are made here (or with `python -m needlework users`). "
           "The name is also the name every change of that person is saved under.")
render_flash()
users = list_users(db, actor=me)
render_accounts(users)
st.subheader("Paused sign-ins")
render_pauses()
st.subheader("Add an account")
render_add_account()
st.subheader("Accounts from a CSV file")
render_import()
st.subheader("Change an account")
render_manage_account(users, signed_in())
