"""Schema migrations for the Needlework database.

Every schema change is one function, registered on :data:`migrations` in the order of
:data:`store.migrations_base.STEPS` then :data:`store.migrations_facts.STEPS`, and
applied in that order by :func:`store.db.open_db`. sqlite-utils records each applied
migration by its function's name in ``_sqlite_migrations``.

Never edit a migration that has shipped: add a new function at the end of
``store/migrations_facts.py`` and of its ``STEPS``.
"""

from __future__ import annotations

from sqlite_utils.migrations import Migrations

from store import migrations_base, migrations_facts

migrations = Migrations("needlework")

for _step in (*migrations_base.STEPS, *migrations_facts.STEPS):
    migrations()(_step)
