"""The leaderboard of a preference dataset: every reward model that scored it and every
judge run on it, one row each, best accuracy first.

Each row carries the run's own headline figure, counted as its own results count it
(:mod:`needlework.rewards.results` for a reward model, the judge run's summary for a
judge), so a row says what the run's Results view and ``metrics``/``judge`` say:

- a reward model on a Long-form RewardBench, pairs or needle set: **best-of-n** accuracy
  (a chosen response must score strictly above every rejected one; a missing score
  counts wrong), ``right`` of ``n`` items, with its 95 % interval
  (:func:`needlework.rewards.results.bon_intervals`: Wilson for these 0/1 outcomes);
- a reward model on an RM-Bench set: the **RM-Bench score** (hard, normal and easy
  averaged per domain, the domains averaged), no count, a stratified bootstrap interval
  (:func:`needlework.rewards.results.rmbench_intervals`); its columns are the domains;
- a reward model on a RewardBench 2 set: the **RewardBench 2 score** (the mean of the six
  subset figures, the Ties subset by its own rule: :mod:`needlework.figures.rewardbench2`), no
  count, its stratified bootstrap interval; its columns are the subsets, each with its own
  interval (Wilson where every instance is 0 or 1);
- a judge run: its headline **accuracy over the answered trials** (selection) or items
  (scoring), ``right`` of ``n``, with the run's stored interval
  (:func:`needlework.judges.results.with_intervals`); failed requests (refused, timed out,
  server error) are left out of both counts and shown apart in ``failed``;
- a RewardBench 2 judging (:mod:`needlework.judges.rewardbench2`: a four-way run and a
  Ties ratings run, each carrying the combined figures): one row with the
  **RewardBench 2 score**, its subsets and its interval, the failed requests of both runs;
  the Ties run has no row of its own while its four-way run is listed.

The interval's method is named in every row (``interval["method"]``). Rows are sorted by
accuracy, highest first (a run with none last), then newest first, then by key. Seeing the
models' results is a reviewer's right in team mode, as the Reward model page is:
:func:`leaderboard` raises :class:`needlework.teams.permissions.PermissionDenied` for an
annotator. Nothing is written.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from needlework.figures import metrics, rewardbench2, stats, stats_text
from needlework.figures.lines import method_words
from needlework.judges.results import ORDER_WORDS, with_intervals
from needlework.results.compare import list_runs
from needlework.rewards import results as rewards_results
from needlework.teams.permissions import REVIEWER, PermissionDenied, User
from needlework.words import short_name
from store import judges as store_judges
from store.datasets import get_dataset
from store.scores import item_scores

REWARD_MODEL, JUDGE = "reward model", "judge"
BEST_OF_N, RMBENCH_SCORE = "best-of-n", "RM-Bench score"
RB2_SCORE = "RewardBench 2 score"


@dataclass(frozen=True)
class Row:
    """One run on the dataset. ``accuracy`` in [0, 1] (``None`` when nothing was counted),
    ``right`` of ``n`` ``unit``s (``right`` ``None`` for a figure that is not a count),
    ``interval`` a :class:`needlework.figures.stats.Interval` as a dict (``method`` named),
    ``subsets`` ``{name: {accuracy, right, n, interval}}``, ``items`` the items answered,
    ``failed`` the failed requests (``None`` for a reward model, which sends none)."""

    key: str
    name: str
    kind: str
    mode: str
    metric: str
    accuracy: float | None
    right: int | None
    n: int
    unit: str
    interval: dict[str, Any] | None
    items: int
    failed: int | None
    date: str
    model: str
    endpoint: str | None = None
    temperature: str | None = None
    subsets: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: RM-Bench: the comparisons behind the score, [won, made] (its ``right`` is ``None``:
    #: the score is a mean over domains, not won / made where they differ in size)
    comparisons: list[int] | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: every field by name."""
        return asdict(self)


def may_see(actor: User | None, dataset: str) -> None:
    """Raise ``PermissionDenied`` (one sentence) unless ``actor`` may see the models' results
    of ``dataset``: a reviewer or admin in team mode, anyone in local mode (``None``)."""
    if actor is None:
        return
    if actor.disabled:
        raise PermissionDenied(f"the account {actor.name!r} is disabled: it may not see the "
                               "models' results")
    if not actor.at_least(REVIEWER):
        raise PermissionDenied(f"{actor.name} is an {actor.role} and may not see the models' "
                               f"results in dataset {dataset!r}: that needs the reviewer role")


def _part(value: float | None, right: int | None, n: int,
          interval: Mapping[str, Any] | None,
          comparisons: list[int] | None = None) -> dict[str, Any]:
    return {"accuracy": value, "right": right, "n": n,
            "interval": stats.interval_dict(interval) if interval else None,
            **({"comparisons": list(comparisons)} if comparisons else {})}


def _classifier_row(db: Any, dataset: Mapping[str, Any], ref: Any) -> Row:
    run = ref.row
    comparisons = None
    domains = (rewards_results.item_domains(db, dataset["name"])
               if dataset.get("format") == "rmbench" else None)
    entries = rewards_results.entries_from_rows(
        item_scores(db, dataset["name"], run["fingerprint"], run["variant"]), domains)
    if dataset.get("format") == "rewardbench2":
        figure = rewardbench2.rewardbench2(entries)
        bounds = rewardbench2.intervals(entries)
        subsets = {name: _part(part["accuracy"], part.get("right") if part["rule"] != "ties"
                               and not part.get("shared") else None, part["n"],
                               bounds["subsets"].get(name))
                   for name, part in figure["subsets"].items()}
        metric = RB2_SCORE if figure["comparable"] else f"{RB2_SCORE} (not comparable)"
        right = None
    elif dataset.get("format") == "rmbench":
        figure = metrics.rmbench(entries)
        bounds = rewards_results.rmbench_intervals(entries)
        subsets = {name: _part(part["score"], None, part["n"], bounds["domains"].get(name),
                               (part.get("counts") or {}).get("score"))
                   for name, part in figure["domains"].items()}
        metric, right = RMBENCH_SCORE, None
        comparisons = (figure.get("counts") or {}).get("score")
    else:
        figure = metrics.best_of_n(entries)
        bounds = rewards_results.bon_intervals(entries)
        subsets = {name: _part(part["accuracy"], part["correct"], part["n"],
                               bounds["subsets"].get(name))
                   for name, part in figure["subsets"].items()}
        metric, right = BEST_OF_N, figure["correct"]
    if len(subsets) == 1 and next(iter(subsets)) == metrics.DEFAULT_SUBSET:
        subsets = {}
    return Row(key=ref.key, name=short_name(str(run["model"])), kind=REWARD_MODEL,
               mode=str(run["variant"]), metric=metric, accuracy=figure["accuracy"], right=right,
               n=int(figure["n"]), unit="items", interval=stats.interval_dict(bounds["overall"]),
               items=len(entries), failed=None, date=str(run.get("updated_at") or ""),
               model=str(run["model"]), subsets=subsets, comparisons=comparisons)


def _temperature(run: Mapping[str, Any]) -> str | None:
    summary = run.get("summary") or {}
    for default in summary.get("provider_defaults") or []:
        if default.get("param") == "temperature":
            return "provider default"
    params = (run.get("options") or {}).get("params") or {}
    value = params.get("temperature")
    return None if value is None else f"{float(value):g}"


def _judge_mode(run: Mapping[str, Any]) -> str:
    summary = run.get("summary") or {}
    options = run.get("options") or {}
    mode = str(run.get("mode") or summary.get("mode") or "?")
    order = summary.get("order") or options.get("order")
    if mode == "selection" and order:
        mode += f", {ORDER_WORDS.get(order, order)}"
        seed = summary.get("seed", options.get("seed"))
        if order == "shuffle" and seed is not None:
            mode += f" (seed {seed})"
    return mode


def _judge_row(db: Any, ref: Any) -> Row:
    run = ref.row
    summary = run.get("summary") or {}
    if not summary.get("intervals"):
        entries = [r["entry"] for r in store_judges.run_results(db, run["run_key"])]
        summary = with_intervals(summary, entries)
    mode = str(summary.get("mode") or run.get("mode") or "selection")
    unit = "trials" if mode == "selection" else "items"
    bon = (summary.get("metrics") or {}).get("bon") or {}
    intervals = summary.get("intervals") or {}
    subsets = {name: _part(part.get("accuracy"), part.get("correct"), int(part.get("n") or 0),
                           (intervals.get("subsets") or {}).get(name))
               for name, part in (summary.get("subsets") or {}).items()}
    if len(subsets) == 1 and next(iter(subsets)) == metrics.DEFAULT_SUBSET:
        subsets = {}
    answered = summary.get("answered_items", summary.get("items_judged", ref.items))
    return Row(key=ref.key, name=f"judge {short_name(str(run.get('model') or ''))}", kind=JUDGE,
               mode=_judge_mode(run), metric=f"accuracy per {unit[:-1]}",
               accuracy=summary.get("accuracy"), right=bon.get("correct"),
               n=int(bon.get("n") or 0), unit=unit, interval=intervals.get("overall"),
               items=int(answered or 0), failed=int(summary.get("failed") or 0),
               date=str(run.get("updated_at") or ""), model=str(run.get("model") or ""),
               endpoint=str(run.get("endpoint") or ""), temperature=_temperature(run),
               subsets=subsets)


def _rewardbench2_judge_row(ref: Any, combined: Mapping[str, Any]) -> Row:
    run = ref.row
    bounds = combined.get("intervals") or {}
    subsets = {name: _part(part.get("accuracy"),
                           part.get("right") if part.get("rule") != "ties"
                           and not part.get("shared") else None,
                           int(part.get("n") or 0), (bounds.get("subsets") or {}).get(name))
               for name, part in (combined.get("subsets") or {}).items()}
    metric = RB2_SCORE if combined.get("comparable") else f"{RB2_SCORE} (not comparable)"
    return Row(key=ref.key, name=f"judge {short_name(str(run.get('model') or ''))}", kind=JUDGE,
               mode="RewardBench 2: four-way, Ties by ratings", metric=metric,
               accuracy=combined.get("accuracy"), right=None, n=int(combined.get("n") or 0),
               unit="items", interval=bounds.get("overall"), items=int(combined.get("n") or 0),
               failed=int(combined.get("failed") or 0), date=str(run.get("updated_at") or ""),
               model=str(run.get("model") or ""), endpoint=str(run.get("endpoint") or ""),
               temperature=_temperature(run), subsets=subsets)


def leaderboard(db: Any, dataset: str, actor: User | None = None) -> list[Row]:
    """Every reward-model scoring and every finished judge run stored for ``dataset``,
    best accuracy first (see the module docstring for each figure). Raises ``LookupError``
    for a dataset not in the store and ``PermissionDenied`` for an ``actor`` below the
    reviewer role; ``[]`` when nothing has been scored or judged yet."""
    may_see(actor, dataset)
    row = get_dataset(db, dataset)
    if row is None:
        raise LookupError(f"no dataset named {dataset!r} in the store")
    refs = list_runs(db, dataset)
    judged = {ref.row.get("run_key") for ref in refs if ref.kind == "judge"}
    out = []
    for ref in refs:
        combined = (ref.row.get("summary") or {}).get("rewardbench2") if ref.kind == "judge" else None
        if combined:
            if (combined.get("part") == rewardbench2.TIES_PART
                    and (combined.get("runs") or {}).get(rewardbench2.FOUR_WAY_PART) in judged):
                continue  # shown with its four-way run
            out.append(_rewardbench2_judge_row(ref, combined))
        elif ref.kind == "judge":
            out.append(_judge_row(db, ref))
        else:
            out.append(_classifier_row(db, row, ref))
    out.sort(key=lambda r: r.key)
    out.sort(key=lambda r: r.date, reverse=True)  # stable: ties keep the order above
    out.sort(key=lambda r: (r.accuracy is None, -(r.accuracy or 0.0)))
    return out


def signature(db: Any, dataset: str) -> tuple[Any, ...]:
    """What the leaderboard of ``dataset`` depends on, cheaply read: the database file, the
    dataset's format and every run's key, date and item count. The same signature gives
    the same rows (a cache key for the page)."""
    files = db.execute("pragma database_list").fetchall()
    row = get_dataset(db, dataset)
    return (files[0][2] if files else "", dataset, row and row.get("format"),
            tuple((r.key, r.updated_at, r.items) for r in list_runs(db, dataset)))


def as_dicts(rows: list[Row]) -> list[dict[str, Any]]:
    """The rows as JSON-ready dicts, in order."""
    return [r.as_dict() for r in rows]


def subset_names(rows: list[Row]) -> list[str]:
    """Every subset (or RM-Bench domain) any row has, in first-seen order."""
    names: list[str] = []
    for row in rows:
        names += [n for n in row.subsets if n not in names]
    return names


def table(rows: list[Row]) -> list[dict[str, Any]]:
    """The rows as the page's and the CSV's table: figures as text, rounded as
    :func:`needlework.figures.stats_text.percent` rounds them (the same strings the command prints),
    one column per subset."""
    names = subset_names(rows)
    out = []
    for rank, row in enumerate(rows, start=1):
        counts = (f"{row.right}/{row.n}" if row.right is not None else f"n={row.n}")
        won = (f", {row.comparisons[0]:,}/{row.comparisons[1]:,} comparisons"
               if row.comparisons else "")
        cells: dict[str, Any] = {
            "#": rank, "run": row.name, "kind": row.kind, "mode": row.mode, "metric": row.metric,
            "accuracy": _share(row.accuracy, row.right, row.n),
            "counted": f"{counts} {row.unit}{won}",
            "95 % interval": stats_text.percent_range(row.interval),
            "method": method_words(row.interval, row.n),
            "items answered": row.items,
            "failed requests": "–" if row.failed is None else str(row.failed),
        }
        for name in names:
            part = row.subsets.get(name)
            cells[name] = "–" if part is None else _part_cell(part, row.unit)
        cells.update({"endpoint": row.endpoint or "–", "temperature": row.temperature or "–",
                      "model": row.model, "date": row.date[:16].replace("T", " ")})
        out.append(cells)
    return out


def _part_cell(part: Mapping[str, Any], unit: str) -> str:
    """A subset's (or RM-Bench domain's) cell: its share with the counts it is made of
    and its interval, ``75.0 % (3/4 items; 30.1–95.4 %)``, an RM-Bench domain's
    ``100.0 % (27/27 comparisons, 3 items; 43.9–100.0 %)``."""
    if part.get("comparisons"):
        won, made = part["comparisons"]
        counts = f"{won:,}/{made:,} comparisons, {part['n']:,} {unit}"
    elif part.get("right") is not None:
        counts = f"{part['right']:,}/{part['n']:,} {unit}"
    else:
        counts = f"n={part['n']:,} {unit}"
    return (f"{_share(part['accuracy'], part.get('right'), part['n'])} ({counts}; "
            f"{stats_text.percent_range(part['interval'])})")


def _share(value: float | None, right: int | None, n: int) -> str:
    if right is not None and n:
        return stats_text.percent(right, n)
    return stats_text.percent(value)


def table_csv(rows: list[Row]) -> str:
    """:func:`table` as CSV text (header first)."""
    cells = table(rows)
    buffer = io.StringIO()
    if cells:
        writer = csv.DictWriter(buffer, fieldnames=list(cells[0]))
        writer.writeheader()
        writer.writerows(cells)
    return buffer.getvalue()
