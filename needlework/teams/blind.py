"""What annotators see of a dataset beyond its text: blind by default in team mode.

A lead chooses per dataset (:data:`SETTINGS`) whether annotators see the labels and
dimensions the file came with (and the model suggestions, which follow that setting and
never show on a gold item), and whether Review shows them model scores and judge
verdicts. Both are off unless the lead turns them on, so that an annotator's label is
their own and a gold check (whose answers often start as the file's labels) cannot be
read off the page. Reviewers and admins see everything; local mode (one person) too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlite_utils import Database

from needlework.teams.events import record
from needlework.teams.permissions import REVIEWER, User, check
from store import dataset_settings
from store.gold import is_gold

#: name -> (default for annotators in team mode, what it shows, in words)
SETTINGS: dict[str, tuple[bool, str]] = {
    "annotators_see_file_labels": (False, "the labels and dimensions the file came with"),
    "annotators_see_model_outputs": (False, "model scores, margins and judge verdicts"),
}


@dataclass(frozen=True)
class Visibility:
    """What one person may see of one dataset besides its text."""

    file_labels: bool = True
    model_outputs: bool = True


def visibility(db: Database, dataset: str, actor: User | None) -> Visibility:
    """What ``actor`` sees of ``dataset``: everything locally and for reviewers and admins;
    for an annotator, what the dataset's settings allow (nothing by default)."""
    if actor is None or actor.at_least(REVIEWER):
        return Visibility()
    chosen = {**{name: default for name, (default, _) in SETTINGS.items()},
              **dataset_settings.get_settings(db, dataset)}
    return Visibility(file_labels=bool(chosen["annotators_see_file_labels"]),
                      model_outputs=bool(chosen["annotators_see_model_outputs"]))


def sees_suggestions(db: Database, dataset: str, item_key: str, actor: User | None) -> bool:
    """Whether ``actor`` sees the model suggestions on one item: they follow the file's
    labels (the lead's setting), and an annotator in team mode never sees them on a gold
    item (they could give its answers away). Reviewers, admins and local mode see them."""
    if actor is None or actor.at_least(REVIEWER):
        return True
    return visibility(db, dataset, actor).file_labels and not is_gold(db, dataset, item_key)


def settings(db: Database, dataset: str) -> dict[str, bool]:
    """Every setting of :data:`SETTINGS` for ``dataset`` (defaults where never set)."""
    chosen = dataset_settings.get_settings(db, dataset)
    return {name: bool(chosen.get(name, default)) for name, (default, _) in SETTINGS.items()}


def set_visibility(db: Database, dataset: str, name: str, on: bool, *,
                   actor: User | None) -> bool:
    """Turn one setting of :data:`SETTINGS` on or off (admins: it is part of the
    assignment); returns the value before."""
    if name not in SETTINGS:
        raise ValueError(f"unknown setting {name!r}: one of {', '.join(SETTINGS)}")
    actor = check(db, actor, "assign", dataset)
    before = dataset_settings.set_setting(
        db, dataset, name, bool(on), by=actor.name if actor else "",
        at=datetime.now(UTC).isoformat(timespec="milliseconds"))
    was = bool(SETTINGS[name][0] if before is None else before)
    record(db, actor, "dataset.setting", name, dataset=dataset, before={name: was},
           after={name: bool(on)})
    return was
