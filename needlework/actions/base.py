"""What every kind of action shares as it applies (:mod:`needlework.actions.service`): its
:class:`Outcome`, the :class:`Batch` it applies in (the connection, the datasets and items
the batch touches, read once, the permission hook and the signed-in user), and the fields
the annotate keys set besides labels and dimensions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from needlework.actions.parse import Action, Rejected
from needlework.teams.permissions import User
from store import actions as store_actions
from store.datasets import get_item

ITEM_FIELDS = {"flag": ("flagged",), "skipped": ("skipped",), "comment": None}
#: What a toggle of these fields tells the person who pressed the key (field, set?).
TOLD = {("flag", True): "flagged for later", ("flag", False): "flag removed"}
GROUNDING = ("grounding",)
PREFERENCE = ("preference", "needle")
Allowed = Callable[[Action], str | None]
MOVED = "seq "  # a move's outcome message: the position's seq follows


@dataclass(frozen=True)
class Outcome:
    """What became of one action: ``applied`` (a change was written), ``unchanged``
    (already so, or nothing to do) or ``rejected`` (with ``message``; ``refused`` when
    a permission said no)."""

    id: str
    status: str
    message: str = ""
    history_id: int | None = None
    item: str = ""   # what an undo or redo reverted
    field: str = ""
    tell: bool = False  # ``message`` is for the person who pressed the key (``rest``)
    refused: bool = False
    seq: int | None = None  # a move: the position's seq


class Refused(Rejected):
    """A permission refused the action."""


class Targets:
    """Datasets and items a batch touches, read once per batch."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._datasets: dict[str, tuple[str, str] | None] = {}
        self._items: dict[tuple[str, str], dict[str, Any] | None] = {}

    def kind(self, name: str) -> str | None:
        """The dataset's kind (``grounding``, ``preference``, ...), ``None`` when none."""
        if name not in self._datasets:
            self._datasets[name] = store_actions.dataset_kind(self.db, name)
        found = self._datasets[name]
        return found[0] if found else None

    def dataset(self, name: str, kinds: tuple[str, ...]) -> str:
        self.kind(name)
        found = self._datasets[name]
        if found is None:
            raise Rejected(f"dataset {name!r} does not exist")
        if found[0] not in kinds:
            raise Rejected(f"dataset {name!r} is a {found[0]} dataset")
        return found[1]

    def record(self, dataset: str, key: str) -> dict[str, Any]:
        if (dataset, key) not in self._items:
            self._items[(dataset, key)] = get_item(self.db, dataset, key)
        found = self._items[(dataset, key)]
        if found is None:
            raise Rejected(f"item {key!r} is not in dataset {dataset!r}")
        return found["record"]


@dataclass
class Batch:
    """What an apply function gets besides its action: the connection, the batch's
    targets, the permission hook and the signed-in user (``None`` locally)."""

    db: Database
    targets: Targets
    allowed: Allowed | None
    actor: User | None

    def refuse_unless_allowed(self, target: Action) -> None:
        why = self.allowed(target) if self.allowed else None
        if why:
            raise Refused(why)


def written(action: Action, hid: int | None, message: str = "", *, tell: bool = False) -> Outcome:
    return Outcome(action.id, "unchanged" if hid is None else "applied", message,
                   history_id=hid, tell=tell)


def grounding_item(b: Batch, action: Action) -> dict[str, Any]:
    b.targets.dataset(action.dataset, GROUNDING)
    return b.targets.record(action.dataset, action.item)
