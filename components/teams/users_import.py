"""The Users page's "accounts from a CSV file" (admins): upload, create, and the one-time
passwords shown once.

The button's callback reads the uploaded file and calls
:func:`needlework.teams.accounts_csv.import_accounts` with the signed-in admin as
``actor``: all the accounts or none (the refusal names file, line and field). The new
accounts and their one-time passwords are kept in the session state for one run only:
the next run draws them as a table of text and a download of ``name,e-mail,password``
made in memory, and takes them out of the session state as it does, so any later run
(a click anywhere) no longer has them. They are never written to the database, a log
or a file on the server.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from components.callbacks import uninterrupted
from components.state import get_db, signed_in
from components.text import escape, label
from needlework.teams.accounts_csv import (
    COLUMNS,
    CsvImportError,
    NewAccount,
    credentials_csv,
    import_accounts,
)
from needlework.teams.permissions import PermissionDenied

UPLOAD = "nw-users-csv"  # + the round: a new uploader (empty) after each import
ROUND = "nw-users-csv-round"
MADE = "nw-users-csv-made"  # the accounts just made, with their passwords: for one run
ERROR = "nw-users-csv-error"
_STYLE = ("<style>.nw-one-time{border-collapse:collapse;margin:.25rem 0 .5rem 0}"
          ".nw-one-time th,.nw-one-time td{border:1px solid rgba(128,128,128,.35);"
          "padding:.25rem .6rem;text-align:left}.nw-one-time td.nw-pw{font-family:ui-monospace,"
          "SFMono-Regular,Menlo,monospace}</style>")


@uninterrupted
def _create() -> None:
    """The button's callback: create every account of the uploaded file, or keep why not."""
    upload = st.session_state.get(_upload_key())
    if upload is None:
        st.session_state[ERROR] = "Choose a CSV file first."
        return
    try:
        made = import_accounts(get_db(), upload.getvalue(), upload.name, actor=signed_in())
    except (CsvImportError, PermissionDenied) as e:
        st.session_state[ERROR] = str(e)
        return
    st.session_state[MADE] = made
    st.session_state[ROUND] = st.session_state.get(ROUND, 0) + 1  # the file is done with


def _upload_key() -> str:
    return f"{UPLOAD}-{st.session_state.get(ROUND, 0)}"


def _table(made: Sequence[NewAccount]) -> str:
    """The new accounts as an HTML table of escaped text (the passwords in their column)."""
    head = "".join(f"<th>{h}</th>" for h in ("name", "e-mail", "role", "one-time password"))
    rows = "".join(
        f"<tr><td>{escape(a.name)}</td><td>{escape(a.email or '')}</td><td>{a.role}</td>"
        f'<td class="nw-pw">{escape(a.password)}</td></tr>' for a in made)
    return f'{_STYLE}<table class="nw-one-time"><tr>{head}</tr>{rows}</table>'


def render_import() -> None:
    """The upload, the button, and the outcome: the refusal, or the new accounts with
    their one-time passwords (this run only)."""
    made = st.session_state.pop(MADE, None)
    error = st.session_state.pop(ERROR, None)
    if made:
        with st.container(border=True, key="nw-users-csv-made"):
            st.success(f"{len(made)} account(s) created. Their one-time passwords are shown "
                       "here once: download or copy them now, they are gone at your next "
                       "click. Each person chooses their own password at their first sign-in.",
                       icon=":material/key:")
            st.html(_table(made))
            st.download_button("Download name, e-mail, password (CSV)",
                               data=credentials_csv(made).encode("utf-8"),
                               file_name="needlework-one-time-passwords.csv", mime="text/csv",
                               key="nw-users-csv-download", on_click="ignore",
                               icon=":material/download:", type="primary")
    if error:
        st.error(label(error, 2000), icon=":material/error:")
    st.file_uploader("CSV file of accounts", type=["csv"], key=_upload_key(),
                     help=f"UTF-8, a header row naming the columns {', '.join(COLUMNS)} "
                     "(any order), then one account per row; the e-mail may be empty. All or "
                     "none: on any problem nothing is created.")
    st.button("Create the accounts", key="nw-users-csv-go", on_click=_create,
              icon=":material/group_add:")
