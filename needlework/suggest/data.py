"""Model suggestions as data (issue 30): what a suggestion is, which fields and values it
may carry, and reading them from a file, all or nothing.

A suggestion names its dataset, item, field, value, an optional score, an optional
confidence (a probability in [0, 1] that the value is right, where the source gives one)
and its source. The fields are the ones annotators write:

- grounding datasets: ``label:N`` (passage N, 1-based) with one of the five GaRAGe labels,
  and ``dim:NAME`` with one of that dimension's values (``dim:question_category``: any
  short text);
- preference datasets: ``verdict:I:J`` (chosen I against rejected J, 0-based) with one of
  the verdicts (``agree``, ``flip``, ``tie``, ``both-bad``, ``skip``).

Tools that cannot put ``:`` in a name (Argilla's question names) write ``_`` instead:
``label_2``, ``dim_question_type``, ``verdict_0_1`` (:func:`field_name`).

A file holds one JSON object per line, in one of three shapes (:func:`read_suggestions`):

- ours: ``{"item": "q1", "field": "label:2", "value": "OUTDATED", "score": 0.8,
  "confidence": 0.8, "source": "gpt-4o-mini", "detail": {...}}`` (``source``: optional,
  default the file's name; ``score``, ``confidence`` (a number from 0 to 1), ``detail``:
  optional);
- Label Studio's task with ``predictions``: ``{"data": {"id": "q1", ...}, "predictions":
  [{"model_version": "v3", "score": 0.8, "result": [{"from_name": "label:2", "type":
  "choices", "value": {"choices": ["OUTDATED"]}}]}]}`` (the item is ``data.id``, the field
  ``from_name``, the source ``model_version``, a result's own ``score`` before the
  prediction's);
- Argilla's record with ``suggestions``: ``{"id": "q1", "suggestions": {"label_2":
  {"value": "OUTDATED", "score": 0.8, "agent": "gpt-4o"}}}`` (Argilla 2; Argilla 1's list
  ``[{"question_name": ..., "value": ..., "score": ..., "agent": ...}]`` too; the source is
  ``agent``).

Label Studio's and Argilla's ``score`` is the model's confidence in its prediction: a
score from 0 to 1 is kept as the confidence too (another is a score only).

Every problem is reported with file, line and field, and nothing is stored unless every
line is right (:func:`import_suggestions`).
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from dataclasses import field as _field
from typing import Any

from needlework.formats.errors import FormatError, Problem, ProblemList
from needlework.formats.garage import DIMENSIONS
from needlework.formats.reader import ByteSource, decode, iter_jsonl
from needlework.grounding.labels import LABELS
from needlework.teams.permissions import User, check
from needlework.verdicts import VERDICTS
from store.datasets import get_dataset
from store.suggestions import delete_source, item_bounds, put_suggestions

MAX_SOURCE = 120  # characters of a source's name
MAX_TEXT = 300  # characters of a free-text value (the category)
FREE_DIMS = ("question_category",)
_LABEL = re.compile(r"^label[:_]([1-9][0-9]{0,3})$")
_VERDICT = re.compile(r"^verdict[:_]([0-9]{1,3})[:_]([0-9]{1,3})$")
_DIM = re.compile(r"^dim[:_]([a-z_]{1,60})$")


@dataclass(frozen=True)
class Suggestion:
    """One proposed value for one field of one item, from one source."""

    item: str
    field: str
    value: str
    source: str
    score: float | None = None
    detail: dict[str, Any] = _field(default_factory=dict)
    confidence: float | None = None  # a probability in [0, 1] that the value is right

    def row(self, dataset: str) -> dict[str, Any]:
        """The row :func:`store.suggestions.put_suggestions` stores."""
        return {"dataset": dataset, "item_key": self.item, "field": self.field,
                "source": self.source, "value": self.value, "score": self.score,
                "confidence": self.confidence, "detail": self.detail}


def sure_text(row: Mapping[str, Any]) -> str:
    """How sure a suggestion row's source is, in words for beside it: `` 82% sure`` from
    its confidence, else its score (`` 0.70``), else ``""``."""
    confidence, score = row.get("confidence"), row.get("score")
    if isinstance(confidence, (int, float)):
        return f" {confidence * 100:.0f}% sure"
    return f" {score:.2f}" if isinstance(score, (int, float)) else ""


def field_name(name: str) -> str | None:
    """Our field name for ``name`` (``label:2`` or ``label_2``, ``dim:X`` or ``dim_X``,
    ``verdict:0:1`` or ``verdict_0_1``), or ``None`` when it is not a field a suggestion
    may carry."""
    if m := _LABEL.match(name):
        return f"label:{int(m.group(1))}"
    if m := _VERDICT.match(name):
        return f"verdict:{int(m.group(1))}:{int(m.group(2))}"
    if m := _DIM.match(name):
        dim = m.group(1)
        return f"dim:{dim}" if dim in DIMENSIONS or dim in FREE_DIMS else None
    return None


def check_value(kind: str, name: str, value: Any) -> str | None:
    """Why ``value`` cannot be suggested for field ``name`` of a ``kind`` dataset
    (``grounding`` or ``preference``), or ``None`` when it can."""
    if name.startswith("verdict:"):
        if kind != "preference":
            return f"{name}: verdicts are suggested for preference datasets, not {kind} ones"
        return None if value in VERDICTS else (
            f"{name}: value must be one of {', '.join(VERDICTS)}, not {_shown(value)}")
    if kind != "grounding":
        return f"{name}: passage labels and dimensions are suggested for grounding datasets, not {kind} ones"
    if name.startswith("label:"):
        return None if value in LABELS else (
            f"{name}: value must be one of {', '.join(LABELS)}, not {_shown(value)}")
    dim = name[len("dim:"):]
    if dim in FREE_DIMS:
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT:
            return f"{name}: value must be a text of 1 to {MAX_TEXT} characters"
        return None
    allowed = DIMENSIONS[dim]
    return None if value in allowed else (
        f"{name}: value must be one of {', '.join(allowed)}, not {_shown(value)}")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _score(raw: Any) -> tuple[float | None, str | None]:
    if raw is None:
        return None, None
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
        return None, f"score must be a finite number, not {_shown(raw)}"
    return float(raw), None


def _confidence(raw: Any) -> tuple[float | None, str | None]:
    if raw is None:
        return None, None
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 <= raw <= 1:
        return None, f"confidence must be a number from 0 to 1, not {_shown(raw)}"
    return float(raw), None


def as_confidence(score: Any) -> float | None:
    """A tool's score kept as a confidence: a number from 0 to 1, else ``None``."""
    return float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) \
        and 0 <= score <= 1 else None


def _source(raw: Any, default: str) -> tuple[str, str | None]:
    if raw is None or raw == "":
        return default, None
    if not isinstance(raw, str) or len(raw.strip()) == 0 or len(raw) > MAX_SOURCE:
        return default, f"source must be a text of 1 to {MAX_SOURCE} characters"
    return raw.strip(), None


# -- the three shapes -------------------------------------------------------------------


@dataclass
class _Entry:
    """One suggestion as read, before its checks (``where``: the field path for errors)."""

    item: Any
    field: Any
    value: Any
    score: Any
    source: Any
    detail: Any
    where: str
    confidence: Any = None


def _ours(obj: Mapping[str, Any]) -> Iterator[_Entry]:
    yield _Entry(obj.get("item"), obj.get("field"), obj.get("value"), obj.get("score"),
                 obj.get("source"), obj.get("detail"), "", obj.get("confidence"))


def _label_studio(obj: Mapping[str, Any]) -> Iterator[_Entry]:
    data = obj.get("data")
    item = data.get("id") if isinstance(data, Mapping) else None
    predictions = obj.get("predictions")
    if not isinstance(predictions, list):
        yield _Entry(item, None, None, None, None, None, "predictions")
        return
    for p, prediction in enumerate(predictions):
        if not isinstance(prediction, Mapping) or not isinstance(prediction.get("result"), list):
            yield _Entry(item, None, None, None, None, None, f"predictions[{p}].result")
            continue
        for r, result in enumerate(prediction["result"]):
            where = f"predictions[{p}].result[{r}]"
            if not isinstance(result, Mapping):
                yield _Entry(item, None, None, None, None, None, where)
                continue
            value = result.get("value")
            choices = value.get("choices") if isinstance(value, Mapping) else None
            picked = choices[0] if isinstance(choices, list) and len(choices) == 1 else None
            score = result.get("score", prediction.get("score"))
            yield _Entry(item, result.get("from_name"), picked, score,
                         prediction.get("model_version"),
                         {"model_version": prediction.get("model_version")}, where,
                         as_confidence(score))


def _argilla(obj: Mapping[str, Any]) -> Iterator[_Entry]:
    item = obj.get("id")
    suggestions = obj.get("suggestions")
    if isinstance(suggestions, Mapping):  # Argilla 2: question name → suggestion
        pairs = [(name, s, f"suggestions.{name}") for name, s in suggestions.items()]
    elif isinstance(suggestions, list):  # Argilla 1: a list with question_name
        pairs = [((s or {}).get("question_name") if isinstance(s, Mapping) else None, s,
                  f"suggestions[{k}]") for k, s in enumerate(suggestions)]
    else:
        yield _Entry(item, None, None, None, None, None, "suggestions")
        return
    for name, s, where in pairs:
        if not isinstance(s, Mapping):
            yield _Entry(item, name, None, None, None, None, where)
            continue
        yield _Entry(item, name, s.get("value"), s.get("score"), s.get("agent"),
                     {"agent": s.get("agent")} if s.get("agent") else {}, where,
                     as_confidence(s.get("score")))


def shape_of(obj: Any) -> str | None:
    """``ours``, ``label-studio`` or ``argilla`` for one line's object, or ``None``."""
    if not isinstance(obj, Mapping):
        return None
    if "predictions" in obj and "data" in obj:
        return "label-studio"
    if "suggestions" in obj:
        return "argilla"
    if "item" in obj and "field" in obj:
        return "ours"
    return None


SHAPES = {"ours": _ours, "label-studio": _label_studio, "argilla": _argilla}


def read_suggestions(text: str, file: str, kind: str, default_source: str) -> list[Suggestion]:
    """Every suggestion in ``text`` (the file ``file``, one JSON object a line) for a dataset
    of ``kind``; :class:`FormatError` with every problem (file, line, field) when any line
    is wrong. Items are not checked here (:func:`import_suggestions` does)."""
    return [s for s, _ in _read(text, file, kind, default_source)]


def _read(text: str, file: str, kind: str, default_source: str) -> list[tuple[Suggestion, int]]:
    problems = ProblemList()
    out: list[tuple[Suggestion, int]] = []
    source = ByteSource(io.BytesIO(text.encode("utf-8", "surrogatepass")))
    for raw in iter_jsonl(source):
        if raw.error:
            problems.add(Problem(file, raw.line, raw.error))
            continue
        shape = shape_of(raw.value)
        if shape is None:
            problems.add(Problem(file, raw.line, "not a suggestion: expected an object with item "
                                 "and field (ours), data and predictions (Label Studio) or "
                                 "suggestions (Argilla)"))
            continue
        for entry in SHAPES[shape](raw.value):
            found = _suggestion(entry, kind, default_source)
            if isinstance(found, str):
                problems.add(Problem(file, raw.line, found))
            else:
                out.append((found, raw.line))
    if problems.total:
        raise FormatError(problems.problems, problems.total)
    if not out:
        raise FormatError([Problem(file, 1, "the file holds no suggestion")])
    return out


def _suggestion(entry: _Entry, kind: str, default_source: str) -> Suggestion | str:
    """The checked suggestion, or the problem (naming the field)."""
    at = f"{entry.where}: " if entry.where else ""
    if not isinstance(entry.item, str) or not entry.item.strip():
        return f"{at}item: missing (the item's id, a text)"
    if not isinstance(entry.field, str):
        return f"{at}field: missing"
    name = field_name(entry.field)
    if name is None:
        return (f"{at}field: {_shown(entry.field)} is not a field a suggestion may carry "
                "(label:N, dim:NAME or verdict:I:J)")
    if entry.value is None:
        return f"{at}{name}: value missing"
    problem = check_value(kind, name, entry.value)
    if problem:
        return at + problem
    score, problem = _score(entry.score)
    if problem:
        return f"{at}{problem}"
    confidence, problem = _confidence(entry.confidence)
    if problem:
        return f"{at}{problem}"
    source, problem = _source(entry.source, default_source)
    if problem:
        return f"{at}{problem}"
    detail = entry.detail if isinstance(entry.detail, Mapping) else {}
    if entry.detail is not None and not isinstance(entry.detail, Mapping):
        return f"{at}detail: must be an object"
    return Suggestion(entry.item.strip(), name, entry.value, source, score,
                      {k: v for k, v in detail.items() if v is not None}, confidence)


# -- the write service --------------------------------------------------------------------


@dataclass(frozen=True)
class ImportedSuggestions:
    """What :func:`import_suggestions` stored: how many, for how many items, per source."""

    dataset: str
    suggestions: int
    items: int
    sources: dict[str, int]


def _out_of_bounds(found: Suggestion, bounds: tuple[int, int]) -> str | None:
    if found.field.startswith("label:"):
        number = int(found.field.split(":")[1])
        return (None if number <= bounds[0] else
                f"{found.field}: the item has {bounds[0]} passage(s)")
    if found.field.startswith("verdict:"):
        i, j = (int(x) for x in found.field.split(":")[1:])
        return (None if i < bounds[0] and j < bounds[1] else
                f"{found.field}: the item has {bounds[0]} chosen and {bounds[1]} rejected "
                "response(s) (I and J count from 0)")
    return None


def import_suggestions(db: Any, data: bytes, file: str, dataset: str, by: str,
                       source: str | None = None, *, actor: User | None = None
                       ) -> ImportedSuggestions:
    """Read ``data`` (the file ``file``) and store its suggestions for ``dataset``, all or
    nothing: :class:`FormatError` naming file, line and field for every line that is not
    a suggestion, names an item the dataset lacks, a passage or comparison the item lacks,
    or a value the field cannot take. ``source`` names the source of lines that name none
    (default: ``file:`` and the file's name). Raises ``ValueError`` for an unknown dataset
    or one of a kind that takes no suggestions; ``PermissionDenied`` unless ``actor`` (team
    mode) is a lead."""
    check(db, actor, "suggest", dataset)
    row = get_dataset(db, dataset)
    if row is None:
        raise ValueError(f"no dataset named {dataset!r}")
    kind = row["kind"]
    if kind not in ("grounding", "preference"):
        raise ValueError(f"{dataset} is a {kind} dataset: suggestions are for grounding "
                         "(passage labels, dimensions) and preference (verdicts) datasets")
    text = decode(data, file)
    default = (source or f"file:{file}").strip()[:MAX_SOURCE]
    read = _read(text, file, kind, default)
    bounds = item_bounds(db, dataset, kind)
    problems = ProblemList()
    for suggestion, line in read:
        if suggestion.item not in bounds:
            problems.add(Problem(file, line, f"item: {_shown(suggestion.item)} is not an item of {dataset}"))
            continue
        problem = _out_of_bounds(suggestion, bounds[suggestion.item])
        if problem:
            problems.add(Problem(file, line, problem))
    problems.raise_if_any()
    found = [s for s, _ in read]
    put_suggestions(db, (s.row(dataset) for s in found), by)
    sources: dict[str, int] = {}
    for s in found:
        sources[s.source] = sources.get(s.source, 0) + 1
    return ImportedSuggestions(dataset, len(found), len({s.item for s in found}), sources)


def delete_suggestions(db: Any, dataset: str, source: str, *, actor: User | None = None) -> int:
    """Delete every suggestion of ``source`` in ``dataset`` (a lead's decision in team mode);
    returns how many. Annotations accepted from them keep their provenance."""
    check(db, actor, "suggest", dataset)
    return delete_source(db, dataset, source)
