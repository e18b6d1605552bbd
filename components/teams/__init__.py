"""Team mode's components (light): sign-in, who is signed in, and the team pages.

Shared by every page (``tests/test_import_graph.py`` lists the package as shared):

- :mod:`.session`: the sign-in gate ``app.py`` calls first, the pages each role is
  offered, the session cookie, who is signed in and the sign-out button;
- :mod:`.signin`: the sign-in form (password, or the identity provider's ``st.login``);
- :mod:`.guidelines`: a dataset's guidelines beside the task (and the admin's editor);
- :mod:`.progress`: progress per annotator and per dataset (Home, Assignment).

The team pages' own: :mod:`.users` (accounts), :mod:`.assign` (overlap, distribution,
reassignment), :mod:`.quality` (gold items, accuracy, agreement, active time) and
:mod:`.audit` (the history export).
"""
