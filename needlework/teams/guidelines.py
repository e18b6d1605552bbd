"""Annotation guidelines per dataset, written by an admin and shown beside the task.

The text is Markdown and is rendered as such: it is trusted admin text, unlike the
data, which is always shown literally.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlite_utils import Database

from needlework.teams.accounts import iso
from needlework.teams.events import record
from needlework.teams.permissions import User, check
from store import guidelines as store_guidelines
from store.datasets import get_dataset

MAX_CHARS = 100_000


class GuidelinesError(ValueError):
    """Guidelines that cannot be saved (the message says why)."""


@dataclass(frozen=True)
class Guidelines:
    dataset: str
    text: str  # Markdown
    updated_at: str
    updated_by: str


def get_guidelines(db: Database, dataset: str) -> Guidelines | None:
    """The guidelines of ``dataset`` (everyone may read them), or ``None``."""
    row = store_guidelines.get(db, dataset)
    return Guidelines(row["dataset"], row["text"], row["updated_at"], row["updated_by"]) if row \
        else None


def set_guidelines(db: Database, dataset: str, text: str, *,
                   actor: User | None = None) -> Guidelines | None:
    """Save the guidelines of ``dataset`` (empty text removes them). Admins only."""
    actor = check(db, actor, "guidelines", dataset)
    if get_dataset(db, dataset) is None:
        raise GuidelinesError(f"no dataset named {dataset!r}")
    if not isinstance(text, str):
        raise GuidelinesError("guidelines must be text")
    if len(text) > MAX_CHARS:
        raise GuidelinesError(f"the guidelines have {len(text)} characters: at most {MAX_CHARS}")
    before = get_guidelines(db, dataset)
    store_guidelines.put(db, dataset, text, by=actor.name if actor else "", at=iso())
    record(db, actor, "guidelines.changed", dataset, dataset=dataset,
           before={"characters": len(before.text)} if before else None,
           after={"characters": len(text)})
    return get_guidelines(db, dataset)
