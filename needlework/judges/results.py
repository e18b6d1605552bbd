"""A finished judge run as the pages show it: figures per subset, position bias, the
failures with the judge's own words, per-item outcomes (to compare with another run),
and the rows of its downloads.

Numbering is the reader's everywhere: ``chosen 1``, ``rejected 2`` are ``chosen[0]``
and ``rejected[1]`` of the record (the Review page says the same), and the letters
``A, B, ...`` are the order the judge saw.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from needlework.figures import metrics, stats
from needlework.figures.stats_text import percent, percent_range
from needlework.judges import evaluate
from needlework.judges.parse import letters
from needlework.words import plural, short_name

ORDER_WORDS = {"shuffle": "one shuffled order", "rotations": "every rotation"}


def member_words(label: str) -> str:
    """``rejected[1]`` → ``rejected 2`` (the reader's numbering)."""
    side, _, rest = label.partition("[")
    return f"{side} {int(rest.rstrip(']')) + 1}"


def member_index(label: str) -> tuple[str, int]:
    """``rejected[1]`` → ``("rejected", 1)``."""
    side, _, rest = label.partition("[")
    return side, int(rest.rstrip("]"))


def run_title(run: Mapping[str, Any]) -> str:
    """``judge demo-judge · selection, one shuffled order (seed 0) · 10 items · prompt
    long-form-rewardbench (1a2b3c4d)``: the prompt's template by name and digest, so two
    runs that differ only in their template are told apart."""
    summary = run.get("summary") or {}
    options = run.get("options") or {}
    mode = run.get("mode") or summary.get("mode")
    order = summary.get("order") or options.get("order")
    how = mode or "?"
    if mode == "selection" and order:
        how += f", {ORDER_WORDS.get(order, order)}"
        if order == "shuffle" and summary.get("seed") is not None:
            how += f" (seed {summary['seed']})"
    items = summary.get("items")
    part = f" ({selection_words(summary['selection'])})" if summary.get("selection") else ""
    template = summary.get("template") or options.get("template") or {}
    prompt = (f" · prompt {template.get('name')} ({str(template.get('digest') or '')[:8]})"
              if template.get("digest") else "")
    return (f"judge {short_name(str(run.get('model') or ''))} · {how}"
            + (f" · {plural(int(items), 'item')}{part}" if items is not None else "") + prompt)


def selection_words(selection: Mapping[str, Any] | None) -> str:
    """``{"per_subset": 2, "subsets": ["QA"]}`` → ``part of the set: subsets QA, 2 items each``."""
    if not selection:
        return "every item"
    parts = []
    if selection.get("subsets"):
        parts.append("subsets " + ", ".join(selection["subsets"]))
    if selection.get("per_subset"):
        n = int(selection["per_subset"])
        parts.append(f"{n} item{'s' if n != 1 else ''} per subset")
    return "part of the set: " + ", ".join(parts)


def with_intervals(summary: Mapping[str, Any],
                   entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``summary`` with its accuracy intervals: as stored, or computed from the run's
    result ``entries`` for a run stored without them or with intervals that do not name
    their method (the same rule as a new run's: :func:`needlework.figures.stats.bootstrap_mean`)."""
    out = dict(summary)
    stored = out.get("intervals") or {}
    if entries and (not stored or "method" not in (stored.get("overall") or {"method": None})):
        out["intervals"] = evaluate.accuracy_intervals(entries, str(out.get("mode") or "selection"))
    elif stored:  # stored before Wilson's intervals dropped "resamples": name one method
        out["intervals"] = {
            **stored,
            "overall": stats.interval_dict(stored["overall"]) if stored.get("overall") else None,
            "subsets": {k: stats.interval_dict(v) if v else v
                        for k, v in (stored.get("subsets") or {}).items()}}
    return out


def provider_defaults(summary: Mapping[str, Any]) -> list[str]:
    """``["temperature: provider default (refused 0)"]``: the parameters the endpoint
    refused as unsupported, left to its default for the run."""
    return [str(d.get("words") or d.get("param")) for d in summary.get("provider_defaults") or []]


def failure_line(summary: Mapping[str, Any]) -> str | None:
    """``answered 24 of 28 trials, failed 4 (4 server error: …)``, or ``None`` when every
    request was answered (:func:`needlework.judges.evaluate.failure_words`)."""
    return evaluate.failure_words(summary)


def failed_requests(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The trials whose request failed (no answer: refused, timed out, server error), in
    run order: ``{item, subset, trial, kind, reason}``."""
    out = []
    for row in rows:
        e = row["entry"]
        if e.get("failed"):
            out.append({"item": str(e["item_key"]), "subset": str(e.get("subset", "")),
                        "trial": int(e.get("trial", 0)), "kind": e.get("failure"),
                        "reason": e.get("reason")})
    return out


def subset_rows(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Accuracy with its 95 % interval (``low``, ``high``: ``None`` when the summary has
    none; ``method``: ``wilson``, ``bootstrap`` or ``none``), invalid rate and failed requests per subset, then an ``overall`` row (figures
    as numbers: accuracy and rates in [0, 1], ``None`` where nothing was answered;
    accuracy counts answered trials only)."""
    unit = "trials" if summary.get("mode") == "selection" else "items"
    intervals = summary.get("intervals") or {}
    rows = []
    for name, part in (summary.get("subsets") or {}).items():
        ci = (intervals.get("subsets") or {}).get(name) or {}
        rows.append({"subset": name, unit: part.get("n", 0), "correct": part.get("correct", 0),
                     "accuracy": part.get("accuracy"), "low": ci.get("low"), "high": ci.get("high"),
                     "method": ci.get("method"),
                     "answered": part.get("answered", 0),
                     "invalid": part.get("invalid", 0), "invalid rate": part.get("invalid_rate"),
                     "failed (no answer)": part.get("failed", 0),
                     "skipped (too long)": part.get("skipped", 0)})
    bon = (summary.get("metrics") or {}).get("bon") or {}
    ci = intervals.get("overall") or {}
    rows.append({"subset": "overall", unit: bon.get("n", summary.get("trials", 0)),
                 "correct": bon.get("correct", 0), "accuracy": summary.get("accuracy"),
                 "low": ci.get("low"), "high": ci.get("high"), "method": ci.get("method"),
                 "answered": summary.get("answered", 0), "invalid": summary.get("invalid", 0),
                 "invalid rate": summary.get("invalid_rate"),
                 "failed (no answer)": summary.get("failed", 0),
                 "skipped (too long)": summary.get("skipped", 0)})
    return rows


def bias_rows(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The position-bias figures of a rotation run, one row per group size (``[]`` for a
    shuffled run): accuracy with the chosen response shown at each position, their spread,
    the share of answers naming each position, and consistency across rotations. Every
    row has the columns of the largest group; a position a group does not have is
    ``None`` there (:func:`bias_table` says why)."""
    sizes = sorted((summary.get("position_bias") or {}).items(), key=lambda kv: int(kv[0]))
    widest = max((int(n) for n, _ in sizes), default=0)
    marks = letters(widest) if widest else []
    rows = []
    for n, bias in sizes:
        row: dict[str, Any] = {"responses": int(n), "groups": bias.get("groups"),
                               "trials": bias.get("trials")}
        acc = list(bias.get("accuracy_by_position") or [])
        ci = list(bias.get("interval_by_position") or [])
        seen = list(bias.get("trials_by_position") or [])
        for k in range(widest):
            row[f"accuracy, chosen shown as {marks[k]}"] = acc[k] if k < len(acc) else None
            row[f"95 % interval, {marks[k]}"] = ci[k] if k < len(ci) else None
            row[f"trials, {marks[k]}"] = seen[k] if k < len(seen) else None
        row["spread"] = bias.get("spread")
        rate = list(bias.get("pick_rate") or [])
        for k in range(widest):
            row[f"answers naming {marks[k]}"] = rate[k] if k < len(rate) else None
        row["consistency"] = bias.get("consistency")
        rows.append(row)
    return rows


def _share(x: float | None) -> str:
    return percent(x, space=False)


def bias_table(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """:func:`bias_rows` as the page shows them: shares as ``50.0%``, each position's
    accuracy with its trial count and 95 % interval in its cell (``66.7% (12 trials, CI
    41.7–91.7 %)``); a cell with no figure says why (a group of 2 has no position C; a
    position the chosen response was never shown at; no valid answer)."""
    out = []
    for row in bias_rows(summary):
        n = int(row["responses"])
        shown: dict[str, Any] = {}
        for key, value in row.items():
            if key in ("responses", "groups", "trials"):
                shown[key] = value
                continue
            if key.startswith(("95 % ", "trials, ")):
                continue  # in the accuracy's cell
            mark = key.rsplit(" ", 1)[-1] if key.startswith(("accuracy, ", "answers ")) else ""
            if value is not None and key.startswith("accuracy, "):
                shown[key] = (f"{_share(value)} ({row[f'trials, {mark}']} trials, CI "
                              f"{percent_range(row[f'95 % interval, {mark}'])})")
            elif value is not None:
                shown[key] = _share(value)
            elif mark and ord(mark) - ord("A") >= n:
                shown[key] = f"n/a: {n} responses, no {mark}"
            elif key.startswith("accuracy, "):
                shown[key] = "n/a: chosen never shown there"
            elif key == "spread":
                shown[key] = "n/a: no accuracy by position"
            elif key == "consistency":
                shown[key] = "n/a: no group"
            else:
                shown[key] = "n/a: no valid answer"
        out.append(shown)
    return out


@dataclass(frozen=True)
class JudgeFailure:
    """One trial the judge got wrong: it named a rejected response, or its answer was
    invalid (or missing), which counts wrong."""

    item: str
    subset: str
    trial: int
    rotation: int | None
    shown: tuple[str, ...]  # member labels in the order shown (A, B, ...)
    picked: str | None  # the label it named, or None (invalid or no answer)
    reason: str | None
    raw: str | None  # the judge's own words
    pair: tuple[int, int]  # (chosen i, rejected j), 0-based: the comparison to open in Review
    reasoning: str | None = None  # what it reasoned before answering (never parsed)

    @property
    def verdict(self) -> str:
        """``named rejected 2 over chosen 1`` or ``invalid answer: …``."""
        chosen = [member_words(m) for m in self.shown if m.startswith("chosen")]
        if self.picked is not None:
            return f"named {member_words(self.picked)} over {' / '.join(chosen)}"
        return f"invalid answer: {self.reason}" if self.reason else "invalid answer"

    @property
    def order_words(self) -> str:
        """``A = rejected 2, B = chosen 1``: what each letter stood for."""
        return ", ".join(f"{mark} = {member_words(m)}"
                         for mark, m in zip(letters(len(self.shown)), self.shown, strict=True))

    @property
    def comparison(self) -> str:
        """``chosen 1 vs rejected 2`` (the Review page's words for the pair to open)."""
        return f"chosen {self.pair[0] + 1} vs rejected {self.pair[1] + 1}"


def failures(rows: Iterable[Mapping[str, Any]]) -> list[JudgeFailure]:
    """The wrong trials of a selection run (``store.judges.run_results`` rows: ``entry``
    and the judge's ``raw`` answer), in run order; skipped trials and failed requests are
    not here (they are counted apart: :func:`failed_requests`)."""
    out = []
    for row in rows:
        entry = row["entry"]
        if entry.get("skipped") or entry.get("failed") or entry.get("correct"):
            continue
        members = tuple(entry["members"])
        chosen = [member_index(m)[1] for m in members if m.startswith("chosen")]
        rejected = [member_index(m)[1] for m in members if m.startswith("rejected")]
        picked = None
        if entry.get("valid") and entry.get("picked") is not None:
            picked = members[int(entry["picked"])]
        j = member_index(picked)[1] if picked and picked.startswith("rejected") else \
            (min(rejected) if rejected else 0)
        out.append(JudgeFailure(str(entry["item_key"]), str(entry.get("subset", "")),
                                int(entry.get("trial", 0)), entry.get("rotation"), members, picked,
                                entry.get("reason"), row.get("raw"), (chosen[0] if chosen else 0, j),
                                row.get("reasoning")))
    return out


def scoring_failures(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The items a scoring run gets wrong: per item, the judge's ratings (``None`` where
    invalid or skipped) and each answer, worst pair first by the classifier rule."""
    rows = list(rows)
    entries = evaluate.scoring_entries([r["entry"] for r in rows])
    answers: dict[str, dict[str, Any]] = defaultdict(dict)
    for r in rows:
        e = r["entry"]
        answers[e["item_key"]][e["members"][0]] = {
            "score": e.get("score") if e.get("valid") else None, "valid": e.get("valid"),
            "skipped": e.get("skipped"), "reason": e.get("reason"), "raw": r.get("raw"),
            "reasoning": r.get("reasoning")}
    out = []
    for entry in entries:
        if metrics.bon_correct(entry["chosen_scores"], entry["rejected_scores"]):
            continue
        chosen, rejected = entry["chosen_scores"], entry["rejected_scores"]
        pairs = [(c - r if c is not None and r is not None else float("-inf"), i, j)
                 for i, c in enumerate(chosen) for j, r in enumerate(rejected)]
        _, i, j = min(pairs) if pairs else (0, 0, 0)
        out.append({"item": entry["id"], "subset": entry["subset"], "pair": (i, j),
                    "answers": answers[entry["id"]]})
    return out


def item_outcomes(mode: str, results: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Per item, the share of its judged comparisons the judge got right, by the rules of
    the headline accuracy: selection, the share of right trials (a needle pair in both
    orders: 0, 0.5 or 1); scoring, 1 or 0 by the strict best-of-n rule. An invalid answer
    and a trial skipped as too long count wrong."""
    if mode == "selection":
        return evaluate.item_accuracy(results)
    return {k: float(u["right"]) for k, u in evaluate.item_units(results, "scoring").items()}


def trials_csv(rows: Iterable[Mapping[str, Any]]) -> str:
    """One line per trial: item, subset, trial, rotation, order shown (reader's numbering),
    what it named, right or wrong, valid, skipped, reason, and the judge's answer."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["item", "subset", "trial", "rotation", "order shown", "named", "score",
                     "correct", "valid", "skipped", "reason", "judge answer"])
    for row in rows:
        e = row["entry"]
        members = e["members"]
        named = ""
        if e.get("valid") and e.get("picked") is not None:
            named = member_words(members[int(e["picked"])])
        writer.writerow([e["item_key"], e.get("subset", ""), e.get("trial"), e.get("rotation"),
                         " | ".join(member_words(m) for m in members), named,
                         e.get("score") if e.get("score") is not None else "",
                         e.get("correct"), e.get("valid"), e.get("skipped"), e.get("reason") or "",
                         row.get("raw") or ""])
    return buffer.getvalue()


def metrics_rows_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """Rows of dicts (the per-subset figures) as CSV, columns in the first row's order."""
    if not rows:
        return ""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    return buffer.getvalue()


def jsonl(lines: Iterable[Mapping[str, Any]]) -> str:
    """JSON lines."""
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
