"""Gold items: recording their right answers one at a time, from a file, or by sampling a
share of every annotator's queue.

**Gold items** are items whose right answers a reviewer recorded: passage labels and
dimensions (``label:N``, ``dim:FIELD``) of a grounding item, verdicts (``verdict:I:J``)
of a preference item. By default (:func:`default_answers`) they are taken from the
reviewers' adjudications (``final:*``) and, where there is none, from the record itself
(the imported labels; for a preference pair, a reviewer's verdict, else "chosen is
better"). Gold items join every queue of the dataset's plan unannounced
(:func:`needlework.teams.assignment.add_gold_to_queues`); annotators are never told which
items are gold (:func:`gold_items` is for reviewers and admins).

Three ways to record them, reviewers and admins only, each checked by
:func:`check_answers` and all or nothing:

- :func:`mark_gold`: one item, with the answers given or its default answers; an item
  with neither is refused with one sentence saying why.
- :func:`~needlework.teams.gold_import.import_gold`: a CSV (columns ``item``, ``field``, ``value``) or JSONL file (one
  ``{"item": ..., "field": ..., "value": ...}`` a line) of answers; the rows of one item
  are that item's answers (replacing earlier ones). Any bad row raises
  :class:`~needlework.formats.errors.FormatError` naming file, line and field, and
  nothing changes. One audit event for the file.
- :func:`sample_gold`: enough items with default answers, picked with a seed, that at
  least k % of every annotator's queue is gold (the rule is in its docstring). One audit
  event for the batch.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from sqlite_utils import Database

from needlework.formats import preference_view
from needlework.formats.garage import DIMENSIONS
from needlework.grounding import item as gitem
from needlework.grounding import labels as gl
from needlework.teams import accounts
from needlework.teams.assignment import add_gold_to_queues
from needlework.teams.events import record
from needlework.teams.permissions import User, check
from needlework.verdicts import VERDICTS, field_name, parse_field, verdict_of
from store import assignments as store_assignments
from store import gold as store_gold
from store.annotations import dataset_annotations
from store.datasets import get_dataset, get_item, iter_items


class GoldError(ValueError):
    """Gold answers that cannot be recorded; the message is one sentence saying why
    (naming the field where one is wrong)."""


def _dataset(db: Database, dataset: str) -> dict[str, Any]:
    row = get_dataset(db, dataset)
    if row is None:
        raise GoldError(f"no dataset named {dataset!r}")
    return row


def _item(db: Database, dataset: str, item_key: str) -> dict[str, Any]:
    item = get_item(db, dataset, item_key)
    if item is None:
        raise GoldError(f"item {item_key!r} is not in dataset {dataset!r}")
    return item


# --- default answers ----------------------------------------------------------------------

def _reviewers(db: Database) -> set[str]:
    return {u.name for u in accounts.list_users(db) if u.at_least("reviewer")}


def _finals(db: Database, dataset: str) -> dict[str, dict[str, Any]]:
    """``{item: {field: adjudicated value}}`` (the latest of each field)."""
    out: dict[str, dict[str, Any]] = {}
    for r in sorted(dataset_annotations(db, dataset, prefix="final:"),
                    key=lambda r: r["updated_at"]):
        out.setdefault(r["item_key"], {})[r["field"][len("final:"):]] = r["value"]
    return out


def _reviewed(db: Database, dataset: str) -> dict[str, dict[str, str | None]]:
    """``{item: {verdict field: a reviewer's verdict}}`` of a preference dataset."""
    reviewers = _reviewers(db)
    out: dict[str, dict[str, str | None]] = {}
    for r in dataset_annotations(db, dataset, prefix="verdict:"):
        if r["annotator"] in reviewers:
            out.setdefault(r["item_key"], {})[r["field"]] = verdict_of(r["value"])
    return out


def _defaults(row: Mapping[str, Any], item_record: dict[str, Any], finals: Mapping[str, Any],
              reviewed: Mapping[str, str | None]) -> dict[str, Any]:
    if row["kind"] == "grounding":
        answers: dict[str, Any] = {}
        for number in range(1, len(gitem.passages(item_record)) + 1):
            name = gl.label_field(number)
            value = finals.get(name) or gl.imported_label(item_record, number)
            if value is not None:
                answers[name] = value
        answers |= {name: value for name, value in finals.items() if name.startswith("dim:")}
        return answers
    return {field_name(i, j): reviewed.get(field_name(i, j)) or "agree"
            for i, j in preference_view(row["format"], item_record).comparisons()}


def default_answers(db: Database, dataset: str, item_key: str) -> dict[str, Any]:
    """The gold answers of an item by default: adjudicated values where a reviewer set
    them, else the record's own (imported labels; chosen better than rejected, or a
    reviewer's verdict). ``{}`` when there are none (a grounding item the file did not
    label and nobody adjudicated)."""
    row = _dataset(db, dataset)
    item = _item(db, dataset, item_key)
    reviewed = _reviewed(db, dataset) if row["kind"] != "grounding" else {}
    return _defaults(row, item["record"], _finals(db, dataset).get(item_key, {}),
                     reviewed.get(item_key, {}))


def all_default_answers(db: Database, dataset: str) -> dict[str, dict[str, Any]]:
    """:func:`default_answers` of every item that has some, ``{item: answers}`` in
    dataset order (one pass over the dataset)."""
    row = _dataset(db, dataset)
    finals = _finals(db, dataset)
    reviewed = _reviewed(db, dataset) if row["kind"] != "grounding" else {}
    out = {}
    for item in iter_items(db, dataset):
        answers = _defaults(row, item["record"], finals.get(item["key"], {}),
                            reviewed.get(item["key"], {}))
        if answers:
            out[item["key"]] = answers
    return out


def no_answers_sentence(item_key: str) -> str:
    """Why an item without default answers cannot be marked gold without answers given."""
    return (f"item {item_key} has no answers to mark as gold: it has no file labels and no "
            "adjudicated values; give the answers or import them from a file")


# --- the answers an item can hold -------------------------------------------------------

@dataclass(frozen=True)
class AnswerField:
    """One answer a gold item can hold, picked with the same choices as annotation."""

    field: str  # label:N or verdict:I:J
    title: str  # "Passage 2", "Chosen 1 vs rejected 3"
    options: tuple[str, ...]  # the stored values, in the annotation page's order
    words: dict[str, str]  # value -> its button word


def answer_fields(db: Database, dataset: str, item_key: str) -> list[AnswerField]:
    """The answers ``item_key`` can hold as gold: one passage label per passage
    (grounding), one verdict per comparison (preference; skip is no answer)."""
    row = _dataset(db, dataset)
    item = _item(db, dataset, item_key)
    if row["kind"] == "grounding":
        return [AnswerField(gl.label_field(p.number), f"Passage {p.number}", gl.LABELS, gl.SHORT)
                for p in gitem.passages(item["record"])]
    verdicts = {v: words for v, (words, _) in VERDICTS.items() if v != "skip"}
    return [AnswerField(field_name(i, j), f"Chosen {i + 1} vs rejected {j + 1}", tuple(verdicts),
                        verdicts)
            for i, j in preference_view(row["format"], item["record"]).comparisons()]


def check_answers(kind: str, fmt: str, record: dict[str, Any],
                  answers: dict[str, Any]) -> dict[str, Any]:
    """``answers`` if every field exists on the item and holds a valid value, else
    :class:`GoldError` naming the first bad field."""
    if not isinstance(answers, dict) or not answers:
        raise GoldError("gold answers must be a non-empty {field: value} object")
    if kind == "grounding":
        count = len(gitem.passages(record))
        for name, value in answers.items():
            number = gl.passage_number(name)
            if number is not None:
                if not 1 <= number <= count:
                    raise GoldError(f"{name}: the item has {count} passages")
                if value not in gl.LABELS:
                    raise GoldError(f"{name}: {value!r} is not a passage label")
            elif name.startswith("dim:") and name[4:] in gitem.DIM_FIELDS:
                allowed = DIMENSIONS.get(name[4:])
                if not isinstance(value, str) or (allowed is not None and value not in allowed):
                    raise GoldError(f"{name}: {value!r} is not a value of {name[4:]}")
            else:
                raise GoldError(f"{name}: gold answers of a grounding item are label:N and "
                                "dim:FIELD fields")
        return answers
    comparisons = set(preference_view(fmt, record).comparisons())
    for name, value in answers.items():
        pair = parse_field(name)
        if pair is None or pair not in comparisons:
            raise GoldError(f"{name}: not a comparison of this item")
        if value not in VERDICTS or value == "skip":
            raise GoldError(f"{name}: {value!r} is not a verdict (skip is no answer)")
    return answers


# --- one item -----------------------------------------------------------------------------

def mark_gold(db: Database, dataset: str, item_key: str, answers: dict[str, Any] | None = None,
              *, actor: User | None = None) -> dict[str, Any]:
    """Record an item's right answers (default :func:`default_answers`) and put it in
    every queue of the dataset's plan. Reviewers and admins only. Returns the answers.

    With no answers given and no default ones, :class:`GoldError` says so in one
    sentence (:func:`no_answers_sentence`) and nothing changes."""
    actor = check(db, actor, "mark_gold", dataset)
    row = _dataset(db, dataset)
    item = _item(db, dataset, item_key)
    if answers is None:
        answers = default_answers(db, dataset, item_key)
        if not answers:
            raise GoldError(no_answers_sentence(item_key))
    answers = check_answers(row["kind"], row["format"], item["record"], answers)
    by = actor.name if actor else ""
    with db.atomic():
        store_gold.mark(db, dataset, item_key, answers, by=by, at=accounts.iso())
        add_gold_to_queues(db, dataset, item_key, by=by)
    record(db, actor, "gold.marked", item_key, dataset=dataset, after={"fields": sorted(answers)})
    return answers


def unmark_gold(db: Database, dataset: str, item_key: str, *, actor: User | None = None) -> bool:
    """Stop treating an item as gold: queues lose it where it was added as gold and not
    done. Reviewers and admins only."""
    actor = check(db, actor, "mark_gold", dataset)
    with db.atomic():
        store_assignments.clear_gold(db, dataset, item_key)
        was = store_gold.unmark(db, dataset, item_key)
    if was:
        record(db, actor, "gold.unmarked", item_key, dataset=dataset)
    return was


def gold_items(db: Database, dataset: str, *, actor: User | None = None) -> list[dict[str, Any]]:
    """The gold items with their answers (reviewers and admins only: annotators are
    never told which items are gold); :class:`GoldError` for an unknown dataset."""
    check(db, actor, "quality", dataset)
    _dataset(db, dataset)
    return store_gold.gold_rows(db, dataset)


def _mark_many(db: Database, dataset: str, answers: Mapping[str, dict[str, Any]], by: str) -> None:
    """Record several items' answers and put each in every queue (one transaction)."""
    at = accounts.iso()
    with db.atomic():
        for key, values in answers.items():
            store_gold.mark(db, dataset, key, values, by=by, at=at)
            add_gold_to_queues(db, dataset, key, by=by)


# --- k % of every queue -------------------------------------------------------------------

@dataclass(frozen=True)
class GoldSample:
    """What :func:`sample_gold` did: the items it made gold (``added``, in the order
    picked) and, after it, ``{annotator: (gold items, items)}`` of every queue of the plan
    (``basis`` ``"queues"``), or ``{"": (gold items, items)}`` of the whole dataset when it
    has no plan yet (``basis`` ``"items"``)."""

    dataset: str
    percent: float
    seed: int
    added: tuple[str, ...]
    basis: str
    shares: dict[str, tuple[int, int]] = field(default_factory=dict)


def _percent(percent: Any) -> Fraction:
    try:
        share = Fraction(str(percent)) / 100
    except (ValueError, ZeroDivisionError):
        share = Fraction(-1)
    if isinstance(percent, bool) or not 0 < share <= 1:
        raise GoldError(f"the gold share must be a percentage above 0 and at most 100, got "
                        f"{percent!r}")
    return share


def _short(shares: Mapping[str, list[int]], share: Fraction) -> list[str]:
    """The queues (keys of ``shares``) whose gold share is below ``share``."""
    return [who for who, (gold, total) in shares.items() if gold < share * total]


def plan_gold_sample(db: Database, dataset: str, percent: float, *,
                     seed: int = 0) -> GoldSample:
    """Which items :func:`sample_gold` would make gold (reads only); see there."""
    share = _percent(percent)
    _dataset(db, dataset)
    gold = set(store_gold.gold_items(db, dataset))
    candidates = [k for k in all_default_answers(db, dataset) if k not in gold]
    random.Random(seed).shuffle(candidates)
    plan = store_assignments.get_plan(db, dataset)
    names = list(plan["annotators"]) if plan else []
    if names:
        basis = "queues"
        loads = store_assignments.gold_loads(db, dataset)
        shares = {who: list(loads.get(who, (0, 0))) for who in names}  # [gold, items]
        holders = store_assignments.assignees_by_item(db, dataset)
    else:
        basis = "items"
        total = db.execute("select count(*) from items where dataset = ?", [dataset]).fetchone()[0]
        shares = {"": [len(gold), total]}
        holders = {}
    added: list[str] = []
    for key in candidates:
        if not _short(shares, share):
            break
        added.append(key)
        for who, counts in shares.items():
            counts[0] += 1
            if basis == "queues" and who not in holders.get(key, ()):
                counts[1] += 1
    if _short(shares, share):
        have = (f"only {len(candidates)} items that are not gold have" if len(candidates) != 1
                else "only 1 item that is not gold has")
        raise GoldError(f"{percent} % gold in every queue needs more items than {dataset} "
                        f"has with default answers: {have} file labels or adjudicated values; "
                        "import the answers of others from a file")
    return GoldSample(dataset, float(percent), seed, tuple(added), basis,
                      {who: (g, n) for who, (g, n) in shares.items()})


def sample_gold(db: Database, dataset: str, percent: float, *, seed: int = 0,
                actor: User | None = None) -> GoldSample:
    """Make enough items gold that at least ``percent`` % of every annotator's queue is
    gold. Reviewers and admins only.

    The rule: after it, for every annotator of the dataset's plan, (gold items in their
    queue) ≥ ``percent`` / 100 × (items in their queue), counting every item assigned to
    them, done or not. Candidates are the items not gold yet that have default answers
    (:func:`default_answers`: adjudications, else the file's labels; every preference
    pair has them); they are shuffled with ``seed`` (the same seed and data pick the same
    items) and taken one at a time, each with its default answers, until the rule holds
    for everyone. A gold item joins every queue of the plan (where it was already, it
    only becomes gold there), so each item taken raises every annotator's count.

    A dataset with no plan yet has no queues: then at least ``percent`` % of its items
    become gold, which gives every queue the Assign page makes later at least that share
    (a queue holds every gold item and at most every other item once).

    Nothing changes when the rule already holds; when the candidates run out before it
    holds, :class:`GoldError` says so and nothing changes. One audit event
    (``gold.sampled``) for the batch."""
    actor = check(db, actor, "mark_gold", dataset)
    sample = plan_gold_sample(db, dataset, percent, seed=seed)
    if not sample.added:
        return sample
    defaults = all_default_answers(db, dataset)
    by = actor.name if actor else ""
    with db.atomic():
        _mark_many(db, dataset, {k: defaults[k] for k in sample.added}, by)
        record(db, actor, "gold.sampled", f"{sample.percent:g}%", dataset=dataset,
               after={"percent": sample.percent, "seed": seed, "basis": sample.basis,
                      "items": list(sample.added)})
    return sample


def queue_gold_shares(db: Database, dataset: str, *,
                      actor: User | None = None) -> dict[str, tuple[int, int]]:
    """``{annotator: (gold items, items)}`` of every queue of ``dataset`` (reviewers and
    admins only: it tells gold items apart)."""
    check(db, actor, "quality", dataset)
    _dataset(db, dataset)
    return dict(sorted(store_assignments.gold_loads(db, dataset).items()))
