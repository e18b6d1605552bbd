"""Judge results as figures: accuracy by the classifier rules, invalid rates, position bias.

Accuracy is computed by :mod:`needlework.figures.metrics` (the same functions, and so the
same rules for ties and missing scores, as for classifiers), on *entries* built
from the judge's answers:

- selection: one entry per trial, with a one-hot "score" per candidate: 1 for the
  one the judge named, 0 for the others. Best-of-n on it is right iff the judge
  named the chosen response; an invalid answer names nobody, so all are 0, a tie,
  and a tie is wrong. A skipped trial (prompt too long under ``skip``) has no
  scores: it is *missing*, handled as metrics handles missing scores.
- scoring: one entry per item with the judge's score for each response. An invalid
  answer counts as wrong: the response gets a score just outside the scale on its
  losing side (below the scale for a chosen response, above it for a rejected one),
  so every comparison it takes part in is wrong whatever the other score. Ties are
  wrong (strict comparisons). Skipped responses are missing.

A *failed* trial (``failed`` set: the request was refused, timed out or met a server
error after the retries) has no answer: it is left out of every figure here, numerator
and denominator alike (accuracy, subsets, intervals, position bias, consistency, RM-Bench),
and counted apart (``failed``, ``failures``: per kind, with the endpoint's sentence). In
scoring, an item with a failed rating is left out whole (its responses cannot be
compared). An *invalid* trial is a real answer the parser could not read: it counts wrong.

The invalid rate is invalid answers over answered trials (skipped and failed ones left
out), per subset and overall. :func:`position_bias` reads rotation runs.

The headline ``accuracy`` is **per trial** (selection) or **per item** (scoring): right
trials over the trials that got an answer or were skipped, a skipped one counted wrong. Its 95 % interval
(:func:`accuracy_intervals`) resamples *items*, an item's trials together, so the
estimate is that same figure (:func:`needlework.figures.stats.bootstrap_mean` with each item's
trials as its weight). :func:`item_accuracy` is the per-item share the Compare view
pairs with another result; with the same number of trials per item the two agree.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from needlework.figures import metrics, stats
from needlework.judges.prompts import SCORE_HIGH, SCORE_LOW

Result = Mapping[str, Any]
INVALID_CHOSEN = SCORE_LOW - 1.0  # below the scale: an invalid chosen score loses every pair
INVALID_REJECTED = SCORE_HIGH + 1.0  # above the scale: an invalid rejected score wins every pair


def selection_entry(result: Result) -> dict[str, Any]:
    """The metrics entry of one selection trial (one-hot scores, see the module docstring).

    ``chosen_scores[i]`` and ``rejected_scores[i]`` are the scores of the dataset's
    response ``chosen[i]`` / ``rejected[i]`` (the index in ``members``' labels), whatever
    position the trial showed it at."""
    members: Sequence[str] = result["members"]
    sides: dict[str, dict[int, float | None]] = {"chosen": {}, "rejected": {}}
    for position, label in enumerate(members):
        if result.get("skipped"):
            value: float | None = None
        else:
            value = 1.0 if result.get("valid") and result.get("picked") == position else 0.0
        side, index = _member(label)
        sides[side][index] = value
    return {"id": result["item_key"], "subset": result["subset"],
            "chosen_scores": [sides["chosen"][k] for k in sorted(sides["chosen"])],
            "rejected_scores": [sides["rejected"][k] for k in sorted(sides["rejected"])]}


def answered(results: Iterable[Result]) -> list[Result]:
    """The results that are not failed requests (answers, valid or not, and skipped trials)."""
    return [r for r in results if not r.get("failed")]


def scoring_entries(results: Iterable[Result]) -> list[dict[str, Any]]:
    """One metrics entry per item from its per-response scoring results (in item order);
    an item with a failed request is left out (its responses cannot all be compared)."""
    results = list(results)
    failed = {r["item_key"] for r in results if r.get("failed")}
    items: dict[str, dict[str, Any]] = {}
    for r in results:
        if r["item_key"] in failed:
            continue
        entry = items.setdefault(r["item_key"], {"id": r["item_key"], "subset": r["subset"],
                                                  "chosen": {}, "rejected": {}})
        side, index = _member(r["members"][0])
        if r.get("skipped"):
            value: float | None = None
        elif r.get("valid"):
            value = float(r["score"])
        else:
            value = INVALID_CHOSEN if side == "chosen" else INVALID_REJECTED
        entry[side][index] = value
    out = []
    for e in items.values():
        out.append({"id": e["id"], "subset": e["subset"],
                    "chosen_scores": [e["chosen"][k] for k in sorted(e["chosen"])],
                    "rejected_scores": [e["rejected"][k] for k in sorted(e["rejected"])]})
    return out


def _member(label: str) -> tuple[str, int]:
    side, _, rest = label.partition("[")
    return side, int(rest.rstrip("]"))


def invalid_rates(results: Iterable[Result]) -> dict[str, Any]:
    """Invalid answers over answered trials, per subset and overall (skipped and failed
    left out; ``failed`` counts the failed requests)."""
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # answered, invalid, skipped, failed
    for r in results:
        counts = per[str(r.get("subset", ""))]
        if r.get("skipped"):
            counts[2] += 1
            continue
        if r.get("failed"):
            counts[3] += 1
            continue
        counts[0] += 1
        counts[1] += int(not r.get("valid"))

    def figure(answered: int, bad: int, skipped: int, failed: int) -> dict[str, Any]:
        return {"answered": answered, "invalid": bad, "skipped": skipped, "failed": failed,
                "invalid_rate": bad / answered if answered else None}

    total = [sum(c[k] for c in per.values()) for k in range(4)]
    return {**figure(*total), "subsets": {s: figure(*c) for s, c in sorted(per.items())}}


def position_bias(results: Iterable[Result]) -> dict[str, Any] | None:
    """Position-bias figures of the rotation trials (``rotation`` set), per group size.

    For groups of ``n`` candidates shown in every rotation:

    - ``accuracy_by_position[p]``: accuracy of the trials where the chosen response
      was shown at position ``p`` (invalid answers wrong, skipped trials left out);
      ``trials_by_position[p]`` counts them and ``interval_by_position[p]`` is the
      accuracy's bootstrap interval over them (:func:`needlework.figures.stats.bootstrap_mean`,
      ``None`` where the chosen response was never shown there);
    - ``spread``: max − min of those accuracies (0: the position does not matter);
    - ``pick_rate[p]``: share of valid answers that named position ``p``;
    - ``pick_deviation``: total variation distance of ``pick_rate`` from uniform,
      ½ Σ |pick_rate[p] − 1/n| (0: no favourite position; 1 − 1/n: always the same);
    - ``consistency``: share of groups whose rotations were all answered validly and
      all named the same response (the same text, wherever it was shown); a group with a
      failed request is left out (``groups`` counts the others).
    Failed requests are left out of every figure.
    Returns ``None`` when there are no rotation trials.
    """
    by_n: dict[int, list[Result]] = defaultdict(list)
    unanswered: set[tuple[str, int]] = set()  # groups with a failed request
    for r in results:
        if r.get("rotation") is not None and r.get("failed"):
            unanswered.add((r["item_key"], r.get("group", 0)))
        elif r.get("rotation") is not None and not r.get("skipped"):
            by_n[len(r["members"])].append(r)
    if not by_n:
        return None
    out: dict[str, Any] = {}
    for n, rows in sorted(by_n.items()):
        right, seen, picks = [0] * n, [0] * n, [0] * n
        outcomes: list[list[float]] = [[] for _ in range(n)]
        named: dict[tuple[str, int], list[str | None]] = defaultdict(list)
        for r in rows:
            positions = [k for k, label in enumerate(r["members"]) if label.startswith("chosen")]
            if len(positions) == 1:
                p = positions[0]
                seen[p] += 1
                hit = int(bool(r.get("valid")) and r.get("picked") == p)
                right[p] += hit
                outcomes[p].append(float(hit))
            pick = r.get("picked") if r.get("valid") else None
            if pick is not None:
                picks[pick] += 1
            if (r["item_key"], r.get("group", 0)) not in unanswered:
                named[(r["item_key"], r.get("group", 0))].append(
                    r["members"][pick] if pick is not None else None)
        acc = [right[p] / seen[p] if seen[p] else None for p in range(n)]
        known = [a for a in acc if a is not None]
        valid = sum(picks)
        rate = [c / valid if valid else None for c in picks]
        out[str(n)] = {
            "trials": len(rows),
            "accuracy_by_position": acc,
            "trials_by_position": seen,
            "interval_by_position": [stats.bootstrap_mean(o, unit="trial").as_dict() if o else None
                                     for o in outcomes],
            "spread": max(known) - min(known) if known else None,
            "pick_rate": rate,
            "pick_deviation": (0.5 * sum(abs(c / valid - 1 / n) for c in picks) if valid else None),
            "consistency": (sum(1 for v in named.values() if None not in v and len(set(v)) == 1)
                            / len(named)) if named else None,
            "groups": len(named),
        }
    return out


def rmbench_selection(results: Iterable[Result]) -> dict[str, Any]:
    """RM-Bench figures from pairwise selection trials (chosen i vs rejected j).

    Per domain (:func:`needlework.figures.metrics.rmbench_domain` of the trial's subset),
    ``M[i][j]`` = share of the (i, j) trials the judge got right (invalid answers wrong,
    skipped trials left out), then hard / normal / easy by
    :func:`needlework.figures.metrics.rmbench_from_matrix`; overall = mean over domains.
    """
    cells: dict[str, list[list[list[int]]]] = {}
    for r in results:
        if r.get("skipped") or r.get("failed") or len(r["members"]) != 2:
            continue
        domain = metrics.rmbench_domain({"subset": r["subset"], "id": r["item_key"],
                                         "domain": (r.get("meta") or {}).get("domain")})
        grid = cells.setdefault(domain, [[[0, 0] for _ in range(3)] for _ in range(3)])
        sides = dict(_member(label) for label in r["members"])
        cell = grid[sides["chosen"]][sides["rejected"]]
        cell[0] += int(bool(r.get("correct")))
        cell[1] += 1
    domains: dict[str, dict[str, Any]] = {}
    for domain, grid in cells.items():
        matrix = [[c[0] / c[1] if c[1] else 0.0 for c in row] for row in grid]
        domains[domain] = {"n": sum(c[1] for row in grid for c in row), "matrix": matrix,
                           **metrics.rmbench_from_matrix(matrix)}
    scores = [d["score"] for d in domains.values()]
    return {"kind": "rmbench-selection", "accuracy": sum(scores) / len(scores) if scores else None,
            "domains": domains}


def summarize(results: Sequence[Result], mode: str, format_name: str = "") -> dict[str, Any]:
    """Accuracy (via :mod:`needlework.figures.metrics`), invalid rates and position bias of a run,
    over the trials that got an answer (failed ones counted apart: ``failed``,
    ``failures``; ``answered_items`` of ``items``)."""
    every = list(results)
    results = answered(every)
    if mode == "selection":
        entries = [selection_entry(r) for r in results]
        figures: dict[str, Any] = {"bon": metrics.best_of_n(entries)}
        if format_name == "rmbench":
            try:
                figures["rmbench"] = rmbench_selection(results)
            except ValueError as exc:
                figures["rmbench"] = {"error": str(exc)}
    else:
        entries = scoring_entries(every)
        figures = {"bon": metrics.best_of_n(entries), "pairwise": metrics.pairwise(entries)}
        if format_name == "rmbench":
            try:
                figures["rmbench"] = metrics.rmbench(entries)
            except ValueError as exc:
                figures["rmbench"] = {"error": str(exc)}
    headline = figures["bon"]
    rates = invalid_rates(every)
    subsets = {}
    for name, part in headline.get("subsets", {}).items():
        subsets[name] = {**part, **{k: v for k, v in rates["subsets"].get(name, {}).items()}}
    for name, part in rates["subsets"].items():  # subsets with every trial skipped or failed
        subsets.setdefault(name, dict(part))
    items = {r["item_key"] for r in every}
    return {
        "mode": mode,
        "accuracy": headline.get("accuracy"),
        "intervals": accuracy_intervals(every, mode),
        "trials": len(every),
        "items_judged": len(items),
        "answered_items": len(item_units(every, mode)),
        "answered": rates["answered"],
        "failed": rates["failed"],
        "failures": failure_groups(every),
        "invalid": rates["invalid"],
        "invalid_rate": rates["invalid_rate"],
        "skipped": rates["skipped"],
        "subsets": subsets,
        "metrics": figures,
        "position_bias": position_bias(every) if mode == "selection" else None,
    }


def failure_groups(results: Iterable[Result]) -> list[dict[str, Any]]:
    """The failed requests by kind, most first: ``{kind, count, message}`` (``message``: the
    first one's sentence, as stored in its ``reason``)."""
    groups: dict[str, dict[str, Any]] = {}
    for r in results:
        if r.get("failed"):
            kind = str(r.get("failure") or "failed")
            group = groups.setdefault(kind, {"kind": kind, "count": 0, "message": r.get("reason")})
            group["count"] += 1
    return sorted(groups.values(), key=lambda g: -g["count"])


def failure_words(summary: Mapping[str, Any]) -> str | None:
    """``answered 24 of 28 trials, failed 4 (4 server error: …)`` (scoring: ratings, and the
    items the accuracy is over), or ``None`` when no request failed."""
    failed = int(summary.get("failed") or 0)
    if not failed:
        return None
    unit = "trials" if summary.get("mode") == "selection" else "ratings"
    groups = summary.get("failures") or []
    first = groups[0].get("message") if groups else None
    kinds = ", ".join(f"{g['count']} {g['kind'].replace('_', ' ')}" for g in groups)
    items = "; accuracy over the answered ones"
    if summary.get("mode") != "selection" and summary.get("items_judged") is not None:
        items = (f"; accuracy over the {summary.get('answered_items', 0)} of "
                 f"{summary['items_judged']} items with every rating answered")
    return (f"answered {summary.get('answered', 0)} of {summary.get('trials', 0)} {unit}, "
            f"failed {failed} ({kinds}{': ' + str(first) if first else ''}){items}")


def item_units(results: Iterable[Result], mode: str) -> dict[str, dict[str, Any]]:
    """Per item, in first-seen order: ``subset``, ``right`` and ``trials`` as the headline
    counts them (selection: its trials, a skipped or invalid one wrong; scoring: the item,
    1 or 0 by strict best-of-n on its ratings). Failed requests are left out (an item
    with no answered trial, or in scoring a failed rating, is absent)."""
    every = list(results)
    results = answered(every)
    out: dict[str, dict[str, Any]] = {}
    if mode == "selection":
        for r in results:
            unit = out.setdefault(r["item_key"], {"subset": str(r.get("subset", "")),
                                                  "right": 0, "trials": 0})
            entry = selection_entry(r)
            unit["trials"] += 1
            unit["right"] += int(metrics.bon_correct(entry["chosen_scores"],
                                                     entry["rejected_scores"]))
        return out
    for entry in scoring_entries(every):
        out[entry["id"]] = {"subset": str(entry.get("subset", "")), "trials": 1,
                            "right": int(metrics.bon_correct(entry["chosen_scores"],
                                                             entry["rejected_scores"]))}
    return out


def accuracy_intervals(results: Iterable[Result], mode: str) -> dict[str, Any]:
    """The 95 % interval of the headline accuracy, overall and per subset, the unit the
    item (:func:`needlework.figures.stats.bootstrap_mean`: Wilson's when every item is all right
    or all wrong and has as many trials as every other, else the percentile bootstrap,
    :data:`needlework.figures.stats.RESAMPLES` resamples, seed
    :data:`needlework.figures.stats.SEED`, items in canonical order, so the row order of the results does not matter):
    ``{"overall": Interval, "subsets": {name: Interval}, "trials_per_item": "equal" |
    "unequal"}`` (as dicts, each naming its ``method``)."""
    units = item_units(results, mode)

    def interval(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
        return stats.bootstrap_mean({k: u["right"] / u["trials"] for k, u in rows.items()},
                                    unit="item",
                                    weights={k: u["trials"] for k, u in rows.items()}).as_dict()

    rows = list(units.values())
    by_subset: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for key, u in units.items():
        by_subset[u["subset"]][key] = u
    return {"overall": interval(units),
            "subsets": {name: interval(part) for name, part in sorted(by_subset.items())},
            "trials_per_item": "equal" if len({u["trials"] for u in rows}) <= 1 else "unequal"}


def item_accuracy(results: Iterable[Result]) -> dict[str, float]:
    """Per item: the share of its selection trials that were right (both orders of a
    needle pair: 0, 0.5 or 1), a trial skipped as too long counted wrong, as in the
    headline accuracy."""
    return {k: u["right"] / u["trials"] for k, u in item_units(results, "selection").items()}
