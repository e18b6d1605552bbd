"""Instructions that name another page, worded for the role reading them: a page tells a
person to do something there only when their role may open it; otherwise it says who
does it (:func:`components.teams.session.may_open`, ``needlework.teams.permissions``)."""

from __future__ import annotations

from components.teams.session import may_open
from needlework.teams.permissions import User

IMPORT_PAGE = "data"  # url_path of Import & export


def import_words(user: User | None, what: str = "one") -> str:
    """``import one on the Import & export page`` for a role that may open that page;
    ``ask an admin to import one`` for one that may not (``what``: what is imported,
    Markdown-safe words of ours)."""
    if may_open(user, IMPORT_PAGE):
        return f"import {what} on the Import & export page"
    return f"ask an admin to import {what} (and assign it to you)"
