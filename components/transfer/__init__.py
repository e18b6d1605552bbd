"""The Import & export page's components (light): :mod:`.import_export`, a streamed,
all-or-nothing import and an export written when it is clicked. (Not named ``data``:
that name is the local database folder, ignored by git and ruff.)
"""
