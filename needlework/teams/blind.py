"""What annotators see of a dataset beyond its text: blind by default in team mode.

Two separate choices, per dataset:

- what annotators see besides the text (:data:`SETTINGS`): the labels and dimensions the
  file came with, and (on Review) model scores and judge verdicts. Both are off unless the
  lead turns them on, so that an annotator's label is their own. On a dataset with gold
  items the file's labels never show to an annotator, on any item: gold answers often
  start as the file's labels, and a switch that showed them on the other items only would
  tell the gold items apart (:func:`visibility`);
- when annotators see the model suggestions (:func:`suggestion_timing`), against
  anchoring: always, only after they saved their own value of the field (the page then
  shows where they differ), or never; and for whom: the annotators named (the test group)
  get that timing, the others (the control group) see none. It does not depend on the
  file's labels: a test group sees suggestions without the file's labels, a control group
  neither. Every item of a dataset gets the same timing, gold or not, so a gold item looks
  like any other.

Reviewers and admins see everything; local mode (one person) too, but for the timing,
which goes by annotator name there as well.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, cast

from sqlite_utils import Database

from needlework.teams.events import record
from needlework.teams.permissions import REVIEWER, User, check
from store import dataset_settings
from store.gold import gold_count

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


#: Why the file-labels setting does nothing on a dataset with gold items (the Assignment page).
GOLD_KEEPS_FILE_LABELS = (
    "This dataset has gold items, so annotators see no file's labels or dimensions on any "
    "item, whatever this switch says: the gold answers often are the file's labels, and "
    "showing them on the other items only would tell the gold items apart.")


def file_labels_blocked(db: Database, dataset: str) -> bool:
    """Whether ``dataset`` has gold items, so that annotators never see its file's labels
    and dimensions (:data:`GOLD_KEEPS_FILE_LABELS`)."""
    return gold_count(db, dataset) > 0


def visibility(db: Database, dataset: str, actor: User | None) -> Visibility:
    """What ``actor`` sees of ``dataset``: everything locally and for reviewers and admins;
    for an annotator, what the dataset's settings allow (nothing by default), and never
    the file's labels on a dataset with gold items (:func:`file_labels_blocked`)."""
    if actor is None or actor.at_least(REVIEWER):
        return Visibility()
    chosen = {**{name: default for name, (default, _) in SETTINGS.items()},
              **dataset_settings.get_settings(db, dataset)}
    file_labels = bool(chosen["annotators_see_file_labels"])
    return Visibility(file_labels=file_labels and not file_labels_blocked(db, dataset),
                      model_outputs=bool(chosen["annotators_see_model_outputs"]))


Timing = Literal["always", "after", "never"]
ALWAYS: Timing = "always"
AFTER: Timing = "after"
NEVER: Timing = "never"
#: when annotators see suggestions -> in words (the Assignment page, the CLI)
TIMINGS: dict[Timing, str] = {
    ALWAYS: "annotators see the suggestions at once",
    AFTER: "annotators see a field's suggestion only after their own value of it",
    NEVER: "annotators see no suggestions",
}
WHEN_SETTING, FOR_SETTING = "suggestions_when", "suggestions_for"


@dataclass(frozen=True)
class SuggestionSetting:
    """A dataset's choice of when annotators see suggestions: ``when`` for the annotators
    named in ``names`` (empty: for everyone; else the test group); those not named (the
    control group) see none."""

    when: Timing = ALWAYS
    names: tuple[str, ...] = ()

    def timing_for(self, name: str) -> Timing:
        """The timing that applies to the annotator ``name``."""
        if self.names and name not in self.names:
            return NEVER
        return self.when


def suggestion_setting(db: Database, dataset: str, *, team: bool = False) -> SuggestionSetting:
    """The lead's choice for ``dataset``. Where never set: for everyone, ``always`` in
    local mode (one person, who asked for the suggestions) and ``never`` in team mode
    (``team``), where annotators are blind until the lead chooses who sees them."""
    chosen = dataset_settings.get_settings(db, dataset)
    when = chosen.get(WHEN_SETTING, NEVER if team else ALWAYS)
    names = chosen.get(FOR_SETTING) or []
    return SuggestionSetting(when=cast(Timing, when) if when in TIMINGS else ALWAYS,
                             names=tuple(str(n) for n in names if isinstance(n, str)))


def suggestion_timing(db: Database, dataset: str, item_key: str, actor: User | None,
                      annotator: str) -> Timing:
    """When the person working as ``annotator`` (``actor`` signed in; ``None`` locally)
    sees the model suggestions on one item: ``always``, ``after`` (a field's suggestion
    only once they saved their own value of it) or ``never``.

    Reviewers and admins in team mode: always. Everyone else: the dataset's
    :func:`suggestion_setting` for their account's name (locally: for ``annotator``),
    whatever the file-labels setting says. The same on every item of the dataset:
    ``item_key`` names the item drawn, but whether it is a gold item is never asked, so
    a gold item shows its suggestions like any other."""
    if actor is not None and actor.at_least(REVIEWER):
        return ALWAYS
    return suggestion_setting(db, dataset, team=actor is not None).timing_for(
        actor.name if actor else annotator)


#: A timing as a group's share of the page (:func:`groups_in_words`).
SEES: dict[Timing, str] = {ALWAYS: "suggestions at once",
                           AFTER: "suggestions only after their own label", NEVER: "no suggestions"}


def groups_in_words(db: Database, dataset: str, *, team: bool = True) -> str:
    """What each group of annotators sees of ``dataset`` now, in one or two sentences
    (the Assignment and Suggestions pages): the test group (the names of
    :func:`suggestion_setting`, or every annotator) and the control group (the others),
    each with the suggestions and (``team``: in team mode, where annotators are blind by
    default) the file's labels they see."""
    chosen = {**{name: default for name, (default, _) in SETTINGS.items()},
              **dataset_settings.get_settings(db, dataset)}
    file_on = bool(chosen["annotators_see_file_labels"]) and not file_labels_blocked(db, dataset)
    files = "" if not team else " and the file's labels" if file_on else " and no file's labels"
    setting = suggestion_setting(db, dataset, team=team)
    if not setting.names:
        return f"Every annotator sees {SEES[setting.when]}{files}."
    return (f"Test group ({', '.join(setting.names)}): {SEES[setting.when]}{files}. "
            f"Control group (every other annotator): no suggestions{files}.")


def shows_suggestion(timing: Timing, answered: bool) -> bool:
    """Whether a field's suggestion shows now: ``answered`` says whether the person has
    saved their own value of the field."""
    return timing == ALWAYS or (timing == AFTER and answered)


def against_yours(mine: object, suggested: Iterable[object]) -> str:
    """How suggested values compare with the person's own saved value (what the ``after``
    timing shows beside them): ``differs from yours`` when none is theirs, ``same as
    yours`` when every one is, else ``some differ from yours``."""
    same = [value == mine for value in suggested]
    if same and all(same):
        return "same as yours"
    return "some differ from yours" if any(same) else "differs from yours"


def set_suggestion_timing(db: Database, dataset: str, when: str, names: Iterable[str], *,
                          actor: User | None) -> SuggestionSetting:
    """Choose when annotators see suggestions in ``dataset`` and for whom (``names``;
    empty: everyone, else the test group, the others seeing none), as the lead (admins: it is part of the
    assignment); recorded as one audit event. Returns the setting before."""
    if when not in TIMINGS:
        raise ValueError(f"unknown timing {when!r}: one of {', '.join(TIMINGS)}")
    chosen = tuple(sorted({n.strip() for n in names if n and n.strip()}))
    actor = check(db, actor, "assign", dataset)
    was = suggestion_setting(db, dataset, team=actor is not None)
    by, at = actor.name if actor else "", datetime.now(UTC).isoformat(timespec="milliseconds")
    with db.atomic():
        dataset_settings.set_setting(db, dataset, WHEN_SETTING, when, by=by, at=at)
        dataset_settings.set_setting(db, dataset, FOR_SETTING, list(chosen), by=by, at=at)
        record(db, actor, "dataset.setting", "suggestion_timing", dataset=dataset,
               before={"when": was.when, "for": list(was.names)},
               after={"when": when, "for": list(chosen)})
    return was


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
