"""Figures of model suggestions (issue 30, point 6): how often each source is right, how
often annotators take or override what they are shown, whether suggestions change the time
an item takes, and whether they anchor annotators.

Plain rows in, JSON-ready dicts out. Every rate carries its numerator and denominator, and
a figure that is undefined (nothing to divide by; kappa when one label only is used) is
``None`` with a ``note`` saying why, never NaN. :func:`suggestion_report` reads a dataset
and gives them all, for the Quality and Agreement pages and ``progress --json``.

Words used here:

- a **unit** is a passage label ``label:N`` (grounding) or a verdict ``verdict:I:J``
  (preference; ``skip`` is no answer and is left out, as in the agreement figures);
- a **suggestible field** is a unit or a dimension ``dim:NAME``: a field a suggestion may
  carry;
- a value was saved **with a suggestion shown** (:func:`shown_how`) when its ``via``
  says so: ``accepted``, ``typed`` (equal to a suggestion shown) or ``changed`` (typed
  over one). ``via`` is decided when the value is saved, by what the page showed then
  (:mod:`needlework.actions.service`: the lead's timing for that person, their H); a null ``via``
  is a value saved with nothing shown. Nothing is recomputed from today's settings, so a
  setting changed during the work counts as it was. Values saved before ``via`` recorded
  ``typed`` (a null ``via`` then also meant "typed equal to a suggestion shown") count as
  not shown.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlite_utils import Database

from needlework.grounding.agreement import Kappa, cohen_kappas
from needlework.grounding.labels import LABELS, passage_number
from needlework.teams.permissions import User, check
from needlework.teams.quality import IDLE_SECONDS, agreement_by_annotator, item_times, units_of
from needlework.verdicts import VERDICTS, parse_field, verdict_of
from store.datasets import get_dataset
from store.gold import gold_items
from store.suggestion_figures import annotation_rows, suggestion_rows

#: Anchoring? when kappa with a source is at least HIGH and kappa with the others below LOW
#: (Landis and Koch: above 0.8 "almost perfect", 0.6 and below "moderate" or less).
HIGH, LOW = 0.8, 0.6
FINAL = "final:"
Unit = tuple[str, int | str]
HOWS = ("accepted", "changed", "typed")


# --- figures and their denominators ---------------------------------------------------------

def share(count: int, n: int, undefined: str) -> dict[str, Any]:
    """``count / n`` as ``{"value", "count", "n", "note"}``; with ``n == 0`` the value is
    ``None`` and ``note`` is ``undefined`` (why)."""
    return {"value": count / n if n else None, "count": count, "n": n,
            "note": "" if n else undefined}


def seconds(values: Sequence[float], undefined: str) -> dict[str, Any]:
    """The median and mean of ``values`` (seconds) with ``n = len(values)``; both ``None``
    with ``note`` ``undefined`` when there is none."""
    if not values:
        return {"median": None, "mean": None, "n": 0, "note": undefined}
    return {"median": statistics.median(values), "mean": statistics.fmean(values),
            "n": len(values), "note": ""}


def kappa_figure(kappa: Kappa | None) -> dict[str, Any]:
    """Cohen's kappa and the raw share of equal answers over ``n`` shared units, as
    ``{"value", "agreement", "n", "note"}`` (``note``: why ``value`` is ``None``)."""
    if kappa is None or not kappa.units:
        return {"value": None, "agreement": None, "n": 0, "note": "no shared unit"}
    note = "" if kappa.value is not None else "one label only: kappa is undefined"
    return {"value": kappa.value, "agreement": kappa.agreement, "n": kappa.units, "note": note}


# --- what counts as what ----------------------------------------------------------------------

def answer_of(field: str, value: Any) -> Any:
    """The compared value of a field: a verdict's name for ``verdict:I:J`` (its stored
    value is an object), the value itself otherwise."""
    return verdict_of(value) if field.startswith("verdict:") else value


def unit_of(kind: str, field: str) -> int | str | None:
    """The unit a field is (passage number N of ``label:N`` on a grounding dataset, the
    field ``verdict:I:J`` otherwise), or ``None`` when it is not a unit field."""
    if kind == "grounding":
        return passage_number(field)
    return field if parse_field(field) is not None else None


def suggestible(field: str) -> bool:
    """Whether a suggestion may carry ``field`` (``label:N``, ``dim:NAME``, ``verdict:I:J``)."""
    return field.startswith(("label:", "dim:", "verdict:"))


def labels_of(kind: str) -> tuple[str, ...]:
    """The answers a unit takes, in the pages' order: the five passage labels, or the
    verdicts but skip."""
    return LABELS if kind == "grounding" else tuple(v for v in VERDICTS if v != "skip")


def references(kind: str, rows: Iterable[Mapping[str, Any]],
               gold: Mapping[str, Mapping[str, Any]]) -> dict[tuple[str, str], tuple[Any, str]]:
    """``{(item, field): (value, "adjudicated" | "gold")}`` for every unit field with a
    reference: the adjudicated value (``final:FIELD``; the latest saved where reviewers
    differ) where there is one, else the gold answer of a gold item (``gold``:
    ``{item: answers}``). ``rows``: annotation rows, of which the ``final:`` ones are read.
    A skip verdict is no reference."""
    out: dict[tuple[str, str], tuple[Any, str]] = {}
    for item, answers in gold.items():
        for field, value in answers.items():
            if unit_of(kind, field) is not None and answer_of(field, value) not in (None, "skip"):
                out[(item, field)] = (answer_of(field, value), "gold")
    finals = sorted((r for r in rows if r["field"].startswith(FINAL)),
                    key=lambda r: r["updated_at"])
    for r in finals:
        field = r["field"][len(FINAL):]
        value = answer_of(field, r["value"])
        if unit_of(kind, field) is not None and value not in (None, "skip"):
            out[(r["item_key"], field)] = (value, "adjudicated")
    return out


def shown_how(via: Mapping[str, Any] | None) -> str | None:
    """How one saved value met the suggestions, as recorded when it was saved (``via``):
    ``accepted`` (the accept key), ``typed`` (typed equal to a suggestion shown),
    ``changed`` (typed over a suggestion shown: an override), or ``None`` (no suggestion
    shown: ``via`` null, or anything else)."""
    how = (via or {}).get("how")
    return how if how in HOWS else None


def provenance(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``{annotator, item_key, field, how}`` for every saved suggestible value of
    ``rows`` (annotation rows with ``via``; ``final:`` ones left out), ``how`` by
    :func:`shown_how`."""
    out = []
    for r in rows:
        field = r["field"]
        if field.startswith(FINAL) or not suggestible(field) or r["value"] is None:
            continue
        out.append({"annotator": r["annotator"], "item_key": r["item_key"], "field": field,
                    "how": shown_how(r["via"])})
    return out


# --- the four figures -------------------------------------------------------------------------

def source_accuracy(kind: str, suggestions: Iterable[Mapping[str, Any]],
                    refs: Mapping[tuple[str, str], tuple[Any, str]]) -> list[dict[str, Any]]:
    """Per source, by name, over its suggestions for unit fields (skip verdicts left out):

    - ``suggestions``: how many; ``referenced``: those whose field has a reference
      (:func:`references`), split in ``reference`` as ``adjudicated`` and ``gold``;
    - ``accuracy``: suggested value equal to the reference / ``referenced``;
    - ``per_label``: for each reference label L (:func:`labels_of` first, in order), the
      suggestions equal to L / the referenced suggestions whose reference is L (the
      source's recall of L);
    - ``confusion``: ``{reference: {suggested: count}}`` over the referenced suggestions,
      and ``labels``, every label either side, in order."""
    order = labels_of(kind)
    by_source: dict[str, list[tuple[Any, Any, str] | None]] = {}
    for s in suggestions:
        if unit_of(kind, s["field"]) is None:
            continue
        suggested = answer_of(s["field"], s["value"])
        if suggested in (None, "skip"):
            continue
        ref = refs.get((s["item_key"], s["field"]))
        by_source.setdefault(s["source"], []).append(
            None if ref is None else (ref[0], suggested, ref[1]))
    out = []
    for source in sorted(by_source):
        pairs = [p for p in by_source[source] if p is not None]
        seen = {x for ref, got, _ in pairs for x in (ref, got)}
        labels = [v for v in order if v in seen] + sorted(seen - set(order), key=str)
        confusion: dict[str, dict[str, int]] = {}
        for ref, got, _ in pairs:
            row = confusion.setdefault(str(ref), {})
            row[str(got)] = row.get(str(got), 0) + 1
        per_label = {}
        for value in [*order, *sorted({ref for ref, _, _ in pairs} - set(order), key=str)]:
            mine = [got for ref, got, _ in pairs if ref == value]
            per_label[str(value)] = share(sum(got == value for got in mine), len(mine),
                                          "no field has this reference")
        out.append({
            "source": source, "suggestions": len(by_source[source]), "referenced": len(pairs),
            "reference": {"adjudicated": sum(w == "adjudicated" for _, _, w in pairs),
                          "gold": sum(w == "gold" for _, _, w in pairs)},
            "accuracy": share(sum(ref == got for ref, got, _ in pairs), len(pairs),
                              "no suggestion of this source has an adjudicated or gold value"),
            "per_label": per_label, "labels": [str(v) for v in labels], "confusion": confusion})
    return out


def acceptance(prov: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per annotator, by name, over the suggestible fields where they have a saved value
    (``saved``; :func:`provenance`): ``shown``, those saved with a suggestion shown, and
    over ``shown`` the shares ``accepted`` (the accept key), ``changed`` (a different value
    typed over it: an override) and ``typed`` (the suggested value typed); the three add
    up to ``shown``."""
    tally: dict[str, dict[str | None, int]] = {}
    for p in prov:
        counts = tally.setdefault(p["annotator"], {})
        counts[p["how"]] = counts.get(p["how"], 0) + 1
    out = []
    for who in sorted(tally):
        counts = tally[who]
        shown = sum(counts.get(h, 0) for h in HOWS)
        why = "no value saved with a suggestion shown"
        out.append({"annotator": who, "saved": sum(counts.values()), "shown": shown,
                    **{h: share(counts.get(h, 0), shown, why) for h in HOWS}})
    return out


def time_with_without(times: Mapping[str, Mapping[str, float]],
                      prov: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per annotator, by name, the active seconds per item (``times``: ``{annotator:
    {item: seconds}}``, :func:`needlework.teams.quality.item_times`) on the items where
    they have a saved suggestible value, split in ``with`` (at least one of those values
    saved with a suggestion shown, :func:`provenance`) and ``without`` (none): each the
    median and mean over its items and ``n``, how many. An item with no active time (its
    changes all came after a pause) is left out, as on the Quality page."""
    items: dict[str, dict[str, bool]] = {}
    for p in prov:
        mine = items.setdefault(p["annotator"], {})
        mine[p["item_key"]] = mine.get(p["item_key"], False) or p["how"] is not None
    out = []
    for who in sorted(items):
        timed = {k: s for k, s in times.get(who, {}).items() if s > 0 and k in items[who]}
        out.append({"annotator": who,
                    "with": seconds([s for k, s in timed.items() if items[who][k]],
                                    "no timed item with a suggestion shown"),
                    "without": seconds([s for k, s in timed.items() if not items[who][k]],
                                       "no timed item without a suggestion shown")})
    return out


def anchoring(kind: str, rows: Iterable[Mapping[str, Any]],
              suggestions: Iterable[Mapping[str, Any]],
              prov: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per source and annotator (by name), over U, the units the annotator answered and
    the source suggested (skip verdicts left out):

    - ``with_source``: Cohen's kappa (and the raw share of equal answers) of the
      annotator's answers against the source's suggestions over U;
    - ``with_others``: the annotator's kappa with each other annotator over the units of U
      both answered, averaged weighted by shared units (as on the Quality page), with the
      raw share of equal answers and ``partners``;
    - ``shown``: the units of U the annotator saved with a suggestion shown;
    - ``anchoring``: kappa with the source at least :data:`HIGH`, kappa with the others
      below :data:`LOW`, and ``shown`` at least one (an annotator never shown a
      suggestion cannot follow it).

    ``rows``: annotation rows (``final:`` ones left out)."""
    mine = [r for r in rows if not r["field"].startswith(FINAL)]
    units = units_of(kind, mine)
    offered: dict[str, dict[Unit, Any]] = {}
    for s in suggestions:
        unit = unit_of(kind, s["field"])
        value = answer_of(s["field"], s["value"])
        if unit is not None and value not in (None, "skip"):
            offered.setdefault(s["source"], {})[(s["item_key"], unit)] = value
    shown: dict[str, set[Unit]] = {}
    for p in prov:
        unit = unit_of(kind, p["field"])
        if unit is not None and p["how"] is not None:
            shown.setdefault(p["annotator"], set()).add((p["item_key"], unit))
    people = sorted({a for votes in units.values() for a in votes})
    out = []
    for source in sorted(offered):
        for who in people:
            common = [u for u, votes in units.items() if who in votes and u in offered[source]]
            if not common:
                continue
            [with_source] = cohen_kappas({u: {"annotator": units[u][who],
                                              "source": offered[source][u]} for u in common})
            peers = agreement_by_annotator(cohen_kappas({u: units[u] for u in common})).get(who)
            others: dict[str, Any] = {"value": None, "agreement": None, "n": 0, "partners": 0,
                                      "note": "no other annotator answered these units"}
            if peers is not None and peers.units:
                others = {"value": peers.kappa, "agreement": peers.agreement, "n": peers.units,
                          "partners": peers.partners,
                          "note": "" if peers.kappa is not None else
                          "one label only: kappa is undefined"}
            seen = len(shown.get(who, set()) & set(common))
            k = with_source.value
            out.append({"source": source, "annotator": who, "units": len(common), "shown": seen,
                        "with_source": kappa_figure(with_source), "with_others": others,
                        "anchoring": bool(seen and k is not None and k >= HIGH
                                          and others["value"] is not None
                                          and others["value"] < LOW)})
    return out


# --- one dataset --------------------------------------------------------------------------------

def suggestion_report(db: Database, dataset: str, *, actor: User | None = None) -> dict[str, Any]:
    """Every suggestion figure of ``dataset`` (JSON-ready): ``suggestions`` and ``sources``
    (how many, which), ``accuracy`` (:func:`source_accuracy`), ``acceptance``
    (:func:`acceptance`), ``time`` (:func:`time_with_without`, gaps of at most
    ``idle_seconds``), ``anchoring`` (:func:`anchoring`, with its ``thresholds``); ``unit``
    names what a unit is. Reviewers and admins (team mode), like the quality figures;
    ``ValueError`` for an unknown dataset."""
    check(db, actor, "quality", dataset)
    row = get_dataset(db, dataset)
    if row is None:
        raise ValueError(f"no dataset named {dataset!r}")
    kind = row["kind"]
    suggestions = suggestion_rows(db, dataset)
    report: dict[str, Any] = {
        "dataset": dataset, "kind": kind,
        "unit": "passage label" if kind == "grounding" else "verdict",
        "suggestions": len(suggestions), "sources": sorted({s["source"] for s in suggestions}),
        "thresholds": {"high": HIGH, "low": LOW}, "idle_seconds": IDLE_SECONDS,
        "accuracy": [], "acceptance": [], "time": [], "anchoring": []}
    if not suggestions:
        return report
    rows = annotation_rows(db, dataset)
    mine = [r for r in rows if not r["field"].startswith(FINAL)]
    prov = provenance(mine)
    times = item_times(db, dataset, sorted({p["annotator"] for p in prov}))
    return {**report,
            "accuracy": source_accuracy(kind, suggestions,
                                        references(kind, rows, gold_items(db, dataset))),
            "acceptance": acceptance(prov), "time": time_with_without(times, prov),
            "anchoring": anchoring(kind, mine, suggestions, prov)}
