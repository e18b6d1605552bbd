"""Looking after the datasets themselves: rename, archive and delete, and what deleting
loses, said in words before it happens.

Every function takes ``actor``: the signed-in user in team mode (admins only, as for
replacing a dataset), ``None`` in local mode.
"""

from __future__ import annotations

from sqlite_utils import Database

from needlework.datasets.transfer import delete_dataset
from needlework.teams.events import record
from needlework.teams.permissions import User, check
from store import datasets as store_datasets

__all__ = ["archive", "delete", "loss_text", "rename"]


def rename(db: Database, old: str, new: str, *, actor: User | None = None) -> str:
    """Rename a dataset; its items, annotations, history, scores and runs follow.
    Returns the new name (trimmed). Raises ``InvalidDatasetName``, ``DatasetExists``,
    ``DatasetBusy`` (a job of it runs), ``KeyError`` or ``PermissionDenied``."""
    actor = check(db, actor, "replace", old)
    new = store_datasets.rename_dataset(db, old, new)
    if new != old:
        record(db, actor, "dataset.renamed", new, dataset=new, before={"name": old},
               after={"name": new})
    return new


def archive(db: Database, name: str, archived: bool = True, *, actor: User | None = None) -> None:
    """Archive a dataset (hidden from the dataset pickers, nothing deleted) or restore it."""
    actor = check(db, actor, "replace", name)
    store_datasets.set_archived(db, name, archived)
    record(db, actor, "dataset.archived" if archived else "dataset.restored", name, dataset=name)


def delete(db: Database, name: str, *, actor: User | None = None) -> bool:
    """Delete a dataset and everything that belongs to it (see :func:`loss_text`)."""
    return delete_dataset(db, name, actor=actor)


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def loss_text(db: Database, name: str) -> str:
    """What deleting ``name`` deletes, in one sentence: ``its 2,400 items, 1,310
    annotations by 3 annotators, 1,622 changes of history, model scores of 28 items and
    2 judge runs``."""
    lost = store_datasets.dataset_losses(db, name)
    parts = [_count(lost["items"], "item")]
    if lost["annotations"]:
        parts.append(_count(lost["annotations"], "annotation")
                     + f" by {_count(lost['annotators'], 'annotator')}")
    if lost["history"]:
        parts.append(_count(lost["history"], "change") + " of history")
    if lost["scored_items"]:
        parts.append("model scores of " + _count(lost["scored_items"], "item"))
    for key, one in (("judge_runs", "judge run"), ("rag_runs", "RAG evaluation run"),
                     ("assignments", "assignment")):
        if lost[key]:
            parts.append(_count(lost[key], one))
    return "its " + (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0])
