"""Annotation teams: modes, accounts, roles, assignment, quality control, audit.

- :mod:`~needlework.teams.config`: local or team mode, and where ``make run`` listens.
- :mod:`~needlework.teams.accounts`: accounts, password sign-in, sessions, lock-out.
- :mod:`~needlework.teams.oidc`: Streamlit's ``st.login`` settings and account matching.
- :mod:`~needlework.teams.permissions`: roles, :func:`~needlework.teams.permissions.require`,
  the key-action guard.
- :mod:`~needlework.teams.assignment`: overlap, even distribution, queues, progress.
- :mod:`~needlework.teams.quality`: gold items, accuracy, agreement, active time, rankings.
- :mod:`~needlework.teams.guidelines`: per-dataset Markdown guidelines.
- :mod:`~needlework.teams.audit`: history export.

docs/teams.md tells how to run a team.
"""
