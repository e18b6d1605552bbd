"""Saved needle reports: what the needle lab shows, under a name, to reopen exactly.

A :class:`Report` names the needle dataset, the result sets shown (one, or two side by side:
*Results of* then *Compare with*), the slide title and the slide's finding (the presenter's
words, or empty for the computed headline; or hidden). Each result set is kept by a
:class:`SetRef` that finds it again in a later session:

- ``model``: a stored run of the dataset, by the model's fingerprint and run variant
  (dtype, device: the key of ``store.scores.item_scores``);
- ``judge``: a finished LLM-judge run, by its ``run_key``;
- ``uploaded``: a scores file uploaded in one session is not in the database, so the
  report keeps its results frame (``results_csv``) and reopens it as it was.

:func:`resolve` matches a report's references against the result sets a page has now
(by :func:`set_key`); a set that is gone (its scores or run deleted, the dataset deleted or
re-imported) is returned in ``missing`` with the name it had, so the page can say so.

The report itself is stored by :mod:`store.needle_reports` as :meth:`Report.to_json`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

SET_KINDS = ("model", "judge", "uploaded")
MAX_SETS = 2  # Results of, Compare with
MAX_NAME = 100
MAX_TITLE = 200
MAX_FINDING = 300
SPEC_VERSION = 1

T = TypeVar("T")


class ReportError(ValueError):
    """A report that cannot be saved or read; the message names the field."""


@dataclass(frozen=True)
class SetRef:
    """One result set of a report: ``kind`` (see the module), the ``name`` it was shown under,
    and what finds it again (``fingerprint``/``variant``, ``run_key``, or the uploaded
    results as CSV)."""

    kind: str
    name: str
    fingerprint: str | None = None
    variant: str | None = None
    run_key: str | None = None
    results_csv: str | None = None

    def key(self) -> str:
        """The key :func:`set_key` gives the same set on a page."""
        return set_key(self.kind, name=self.name, fingerprint=self.fingerprint,
                       variant=self.variant, run_key=self.run_key)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


def set_key(kind: str, *, name: str = "", fingerprint: str | None = None, variant: str | None = None,
            run_key: str | None = None) -> str:
    """A result set's identity across sessions: ``model:FINGERPRINT|VARIANT``,
    ``judge:RUN_KEY`` or ``uploaded:NAME``."""
    if kind == "model":
        return f"model:{fingerprint}|{variant or ''}"
    if kind == "judge":
        return f"judge:{run_key}"
    if kind == "uploaded":
        return f"uploaded:{name}"
    raise ReportError(f"result set kind must be one of {', '.join(SET_KINDS)}, not {kind!r}")


@dataclass(frozen=True)
class Report:
    """A saved view of the needle lab: ``dataset``, the result sets in panel order, the
    slide ``title`` (empty: the default title), the slide's ``finding`` (empty: the
    computed headline) and whether the finding is ``finding_hidden``."""

    dataset: str
    sets: tuple[SetRef, ...]
    title: str = ""
    finding: str = ""
    finding_hidden: bool = False

    def check(self) -> None:
        """Raise :class:`ReportError` naming the field when the report cannot be kept."""
        if not self.dataset:
            raise ReportError("dataset: a report belongs to a needle dataset")
        if not 1 <= len(self.sets) <= MAX_SETS:
            raise ReportError(f"sets: a report shows 1 to {MAX_SETS} result sets, not {len(self.sets)}")
        for k, ref in enumerate(self.sets):
            if ref.kind not in SET_KINDS:
                raise ReportError(f"sets[{k}].kind: one of {', '.join(SET_KINDS)}, not {ref.kind!r}")
            if ref.kind == "model" and not ref.fingerprint:
                raise ReportError(f"sets[{k}].fingerprint: a model's result set needs it")
            if ref.kind == "judge" and not ref.run_key:
                raise ReportError(f"sets[{k}].run_key: a judge's result set needs it")
            if ref.kind == "uploaded" and not ref.results_csv:
                raise ReportError(f"sets[{k}].results_csv: an uploaded result set keeps its results")
        if len(self.title) > MAX_TITLE:
            raise ReportError(f"title: at most {MAX_TITLE} characters")
        if len(self.finding) > MAX_FINDING:
            raise ReportError(f"finding: at most {MAX_FINDING} characters")

    def to_json(self) -> str:
        """The stored form (checked first)."""
        self.check()
        return json.dumps({"version": SPEC_VERSION, "dataset": self.dataset, "title": self.title,
                           "finding": self.finding, "finding_hidden": self.finding_hidden,
                           "sets": [ref.as_dict() for ref in self.sets]})

    @classmethod
    def from_json(cls, text: str) -> Report:
        """Read :meth:`to_json`'s form; :class:`ReportError` naming the field when it is not."""
        try:
            data = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise ReportError(f"spec: not JSON ({exc})") from None
        if not isinstance(data, dict) or not isinstance(data.get("sets"), list):
            raise ReportError("spec: an object with a list of sets")
        sets = []
        for k, raw in enumerate(data["sets"]):
            if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
                raise ReportError(f"sets[{k}]: an object with a name")
            known = {f for f in SetRef.__dataclass_fields__}
            sets.append(SetRef(**{f: raw[f] for f in known if f in raw}))
        hidden = data.get("finding_hidden", False)
        if not isinstance(hidden, bool):
            raise ReportError("finding_hidden: true or false")
        report = cls(str(data.get("dataset") or ""), tuple(sets), str(data.get("title") or ""),
                     str(data.get("finding") or ""), hidden)
        report.check()
        return report


def clean_name(name: str) -> str:
    """A report's name, trimmed; :class:`ReportError` when empty or too long."""
    name = " ".join((name or "").split())
    if not name:
        raise ReportError("name: give the report a name")
    if len(name) > MAX_NAME:
        raise ReportError(f"name: at most {MAX_NAME} characters")
    return name


@dataclass
class Resolved(Generic[T]):
    """A report matched against a page's result sets: ``found`` in the report's order,
    ``missing`` the references that match nothing (gone since it was saved)."""

    found: list[T] = field(default_factory=list)
    missing: list[SetRef] = field(default_factory=list)

    def missing_line(self) -> str:
        """Words for what is gone, or ``""``."""
        if not self.missing:
            return ""
        names = ", ".join(f"'{ref.name}'" for ref in self.missing)
        if not self.found:
            return (f"None of its result sets is here any more ({names}): their scores or runs "
                    "were deleted, or the needle dataset was deleted or imported again.")
        return (f"Its result set {names} is no longer here (its scores or run were deleted): "
                "shown without it.")


def resolve(report: Report, available: Mapping[str, T]) -> Resolved[T]:
    """Match ``report``'s sets against ``available`` (``{set_key: set}``), keeping their order."""
    out: Resolved[T] = Resolved()
    for ref in report.sets:
        found = available.get(ref.key())
        if found is None:
            out.missing.append(ref)
        else:
            out.found.append(found)
    return out


def uploads_of(report: Report) -> Sequence[SetRef]:
    """The report's uploaded sets (their results travel with the report)."""
    return [ref for ref in report.sets if ref.kind == "uploaded"]
