"""All SQL lives here: the schema (migrations), and small typed query functions.

Every function takes a :class:`sqlite_utils.Database` as its first argument, so
tests can pass an in-memory database and the app a file-backed one.
"""

from store.db import connect, default_path, thread_connection

__all__ = ["connect", "default_path", "thread_connection"]
