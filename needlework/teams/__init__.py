"""Annotation teams: modes, accounts, roles, assignment, quality control, audit.

- :mod:`~needlework.teams.config`: local or team mode, and where ``make run`` listens.
- :mod:`~needlework.teams.accounts`: accounts, password sign-in, sessions, lock-out counts.
- :mod:`~needlework.teams.lockout`: the lock-out rules (pauses after wrong passwords).
- :mod:`~needlework.teams.command_line`: the first admin, and the account ``--as`` acts as.
- :mod:`~needlework.teams.oidc`: Streamlit's ``st.login`` settings and account matching.
- :mod:`~needlework.teams.permissions`: roles, :func:`~needlework.teams.permissions.require`,
  the key-action guard.
- :mod:`~needlework.teams.assignment`: overlap, even distribution, queues, progress.
- :mod:`~needlework.teams.item_names`: an item as a person reads its name (``16. Write…``).
- :mod:`~needlework.teams.quality`: gold items, accuracy, agreement, active time, rankings.
- :mod:`~needlework.teams.guidelines`: per-dataset Markdown guidelines.
- :mod:`~needlework.teams.audit`: history export.

docs/teams.md tells how to run a team.
"""
