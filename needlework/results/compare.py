"""Every result of a preference dataset, classifier runs and LLM-judge runs alike, and two
of them side by side.

A :class:`RunRef` names one result: a reward model's stored scores
(``score:FINGERPRINT|VARIANT``) or a finished judge run (``judge:RUN_KEY``).
:func:`outcomes` reads a result as a number per item, the share of its comparisons
the model got right by the benchmark's strict rule (a classifier: 1 or 0 by
best-of-n, a missing score wrong; a judge: the share of right trials, so a needle pair
judged in both orders gives 0, 0.5 or 1; an invalid answer and a trial skipped as too
long wrong; with several chosen responses, as RM-Bench has, the share of chosen/rejected
pairs for both), and :func:`compare` puts two of them side by side per subset, on the
items both judged.

Every figure of :func:`compare` is a **mean per item** (each item weighs the same), with
its 95 % interval (Wilson's for a share of 0/1 outcomes, else the percentile bootstrap:
:func:`needlework.figures.stats.bootstrap_mean`), and each row has a paired test of the two
(:func:`needlework.figures.paired.paired`): McNemar's exact test when every outcome is 0 or 1
(one trial per item on each side), the Wilcoxon signed-rank test on the items' differences when
some are shares in between (rotation trials, a needle pair's two orders), named in the
row's ``paired["test"]``. The items counted as one side's better, the other's, and tied are
the items whose outcomes differ or not, the same items :func:`compare` lists under
``differ``. A judge's headline accuracy is per
trial: the two agree when every item has the same number of trials (one shuffled order,
a needle pair's two orders) and :func:`headline_note` says so where they do not.

It reads both engines' stored results (:mod:`needlework.rewards.results`,
:mod:`needlework.judges.results`), so it stands above both.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from needlework.figures import metrics, paired, stats, stats_text
from needlework.judges.results import item_outcomes, run_title
from needlework.rewards.results import entries_from_rows, item_domains
from needlework.words import short_name
from store import judges as store_judges
from store.scores import item_scores, scored_models


@dataclass(frozen=True)
class RunRef:
    """One result of a dataset: ``kind`` is ``classifier`` or ``judge``."""

    key: str
    kind: str
    title: str
    updated_at: str
    items: int
    row: dict[str, Any]

    @property
    def short(self) -> str:
        """A name for column headers: the model's short name (``judge`` prefixed for a judge)."""
        name = short_name(str(self.row.get("model") or ""))
        return f"judge {name}" if self.kind == "judge" else name


def classifier_key(run: Mapping[str, Any]) -> str:
    return f"score:{run['fingerprint']}|{run['variant']}"


def list_runs(db: Any, dataset: str) -> list[RunRef]:
    """Every result of ``dataset``, newest first: the reward models' stored scores and
    the finished judge runs."""
    refs = []
    for run in scored_models(db, dataset):
        refs.append(RunRef(classifier_key(run), "classifier",
                           f"{short_name(run['model'])} · {run['variant']} · reward model",
                           run.get("updated_at") or "", int(run["items"]), dict(run)))
    for run in store_judges.finished_runs(db, dataset):
        refs.append(RunRef(f"judge:{run['run_key']}", "judge", run_title(run),
                           run.get("updated_at") or "", int(run.get("judged_items") or 0), run))
    return sorted(refs, key=lambda r: r.updated_at, reverse=True)


def outcomes(db: Any, dataset: Mapping[str, Any], ref: RunRef) -> dict[str, dict[str, Any]]:
    """``{item: {"subset", "outcome"}}``: the share of the item's comparisons ``ref`` got
    right (a judge's trial skipped as too long counts wrong, as a classifier's missing
    score does)."""
    if ref.kind == "judge":
        rows = store_judges.run_results(db, ref.row["run_key"])
        entries = [r["entry"] for r in rows]
        per = item_outcomes(ref.row.get("mode") or "selection", entries)
        subsets = {e["item_key"]: e.get("subset", "") for e in entries}
        return {k: {"subset": subsets.get(k, ""), "outcome": v} for k, v in per.items()}
    domains = item_domains(db, dataset["name"]) if dataset.get("format") == "rmbench" else None
    rows = item_scores(db, dataset["name"], ref.row["fingerprint"], ref.row["variant"])
    out = {}
    for e in entries_from_rows(rows, domains):
        out[str(e["id"])] = {"subset": e.get("subset", ""),
                             "outcome": classifier_outcome(e["chosen_scores"], e["rejected_scores"])}
    return out


def classifier_outcome(chosen: list[Any], rejected: list[Any]) -> float:
    """A classifier's outcome on one item, by the rule a judge is held to on it: with one
    chosen response, best-of-n (1 or 0); with several (RM-Bench, judged pair by pair), the
    share of (chosen, rejected) pairs where chosen scores strictly higher. A missing score
    loses its pairs."""
    if len(chosen) <= 1:
        return float(metrics.bon_correct(chosen, rejected))
    pairs = [(c, r) for c in chosen for r in rejected]
    won = sum(1 for c, r in pairs if not metrics.missing(c) and not metrics.missing(r) and c > r)
    return won / len(pairs) if pairs else 0.0


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


class _Differ(TypedDict):
    item: str
    subset: str
    first: float
    second: float


def compare(first: Mapping[str, Mapping[str, Any]],
            second: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Two results side by side on the items both judged: per subset and overall, the
    mean outcome per item of each (``first``, ``second``) with its 95 % interval
    (``first_interval``, ``second_interval``), on how many items each did better and how
    many are tied (``only_first``, ``only_second``, ``tied``: outcomes higher, lower or
    equal), and the paired test of the two (``paired``: :class:`needlework.figures.paired.Paired` as
    a dict, its test named); then every item whose outcomes differ (``differ``: as many as
    the overall row's ``only_first`` + ``only_second``), most different first."""
    common = sorted(k for k in first if k in second and first[k]["outcome"] is not None
                    and second[k]["outcome"] is not None)
    per: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: {"a": {}, "b": {}})
    differ: list[_Differ] = []
    for key in common:
        a, b = float(first[key]["outcome"]), float(second[key]["outcome"])
        subset = str(first[key].get("subset") or second[key].get("subset") or "")
        per[subset]["a"][key] = a
        per[subset]["b"][key] = b
        if a != b:
            differ.append({"item": key, "subset": subset, "first": a, "second": b})

    def row(name: str, a: dict[str, float], b: dict[str, float]) -> dict[str, Any]:
        test = paired.paired_by_key(a, b)
        return {"subset": name, "items": len(a), "first": _mean(list(a.values())),
                "second": _mean(list(b.values())),
                "first_interval": stats.bootstrap_mean(a).as_dict(),
                "second_interval": stats.bootstrap_mean(b).as_dict(),
                "only_first": test.first_better, "only_second": test.second_better,
                "tied": test.tied, "paired": test.as_dict()}

    rows = [row(name, v["a"], v["b"]) for name, v in sorted(per.items())]
    all_a = {k: x for v in per.values() for k, x in v["a"].items()}
    all_b = {k: x for v in per.values() for k, x in v["b"].items()}
    rows.append(row("overall", all_a, all_b))
    differ.sort(key=lambda d: (-abs(d["first"] - d["second"]), d["item"]))
    return {"rows": rows, "differ": differ, "only_in_first": sum(1 for k in first if k not in second),
            "only_in_second": sum(1 for k in second if k not in first)}


def headline_note(ref: RunRef, per_item: float | None, items: int) -> str | None:
    """For a judge run whose headline accuracy (per trial) differs from its mean per item
    on the ``items`` compared: the two figures and why they differ; ``None`` when they
    agree to the shown digit (or for a classifier, whose headline is per item)."""
    summary = ref.row.get("summary") or {}
    headline = summary.get("accuracy")
    if ref.kind != "judge" or headline is None or per_item is None:
        return None
    if stats_text.percent(float(headline)) == stats_text.percent(per_item):
        return None
    unit = "trial" if (summary.get("mode") or ref.row.get("mode")) == "selection" else "item"
    judged = summary.get("items")
    why = (f"items with more {unit}s weigh more there" if judged in (None, items)
           else f"over its {judged:,} items, {items:,} of them compared here")
    return (f"{ref.short}: {stats_text.percent(per_item, space=False)} here is the mean per item on "
            f"the {items:,} items compared (every item weighs the same); its headline accuracy, "
            f"{stats_text.percent(float(headline), space=False)}, is per {unit} ({why}).")
