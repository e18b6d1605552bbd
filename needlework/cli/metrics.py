"""Verb ``metrics``: reward-model metrics from a scores file."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from needlework import metrics

SIDES = ("chosen_scores", "rejected_scores")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "metrics", help="compute best-of-n, pairwise or RM-Bench metrics from a scores file",
        description="Read a scores file in Long-form RewardBench output format (one JSON object "
        "per line: id, subset, chosen_scores, rejected_scores; for RM-Bench the three scores in "
        "style order, with an optional domain field) and print its metrics. Ties count wrong. A "
        "missing score (null, NaN, Infinity) makes a best-of-n entry wrong (it stays in the "
        "denominator, as in Long-form RewardBench's scorer); pairwise accuracy leaves out only "
        "the pairs with a missing score; RM-Bench counts such a comparison as not won.")
    p.add_argument("--kind", required=True, choices=("bon", "rmbench", "pairwise"))
    p.add_argument("--scores", required=True, metavar="FILE")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_metrics)


def _check(entry: Any, where: str) -> list[str]:
    """Problems of one entry: it must be an object whose score fields are lists of numbers
    or nulls (a missing score is valid input; a string is not)."""
    if not isinstance(entry, dict):
        return [f"{where}: an entry must be a JSON object, got {type(entry).__name__}"]
    problems = []
    for side in SIDES:
        value = entry.get(side)
        if side not in entry:
            problems.append(f"{where}: field {side} is missing")
        elif not isinstance(value, list):
            problems.append(f"{where}: field {side} must be a list of numbers or nulls, "
                            f"got {type(value).__name__}")
        else:
            bad = [k for k, s in enumerate(value)
                   if s is not None and (isinstance(s, bool) or not isinstance(s, (int, float)))]
            if bad:
                problems.append(f"{where}: field {side}[{bad[0]}] must be a number or null, "
                                f"got {value[bad[0]]!r}")
    return problems


def read_scores(path: str | Path) -> list[dict[str, Any]]:
    """Entries of a scores file: JSON lines (or one JSON array). Raises ``ValueError``
    naming file, line and field for every problem; nothing is computed from a bad file."""
    text = Path(path).read_text(encoding="utf-8-sig")
    problems: list[str] = []
    entries: list[dict[str, Any]] = []
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
        for k, item in enumerate(items):
            problems.extend(_check(item, f"{path} entry {k}"))
            entries.append(item)
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(f"{path}:{number}: invalid JSON ({exc.msg})")
                continue
            problems.extend(_check(item, f"{path}:{number}"))
            entries.append(item)
    if problems:
        raise ValueError("\n".join(problems[:20]) + (f"\n… {len(problems) - 20} more problems"
                                                     if len(problems) > 20 else ""))
    return entries


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}%"


def describe(kind: str, result: dict[str, Any]) -> list[str]:
    """The human-readable lines of a metrics result: the headline with its missing count,
    the labelled scored-only figure, the RM-Bench domain note, then one line per part."""
    count = "pairs" if kind == "pairwise" else "n"
    lines = [f"{kind}: {_pct(result['accuracy'])} ({result['correct']} of {result[count]} "
             f"{'pairs' if kind == 'pairwise' else 'entries'})" if kind != "rmbench"
             else f"rmbench: {_pct(result['accuracy'])} (hard {_pct(result['hard'])}, normal "
                  f"{_pct(result['normal'])}, easy {_pct(result['easy'])}; {result['n']} entries)"]
    if kind == "bon":
        lines.append(f"  missing: {result['missing']} entries with a missing score "
                     f"({result['missing_scores']} scores), counted wrong")
        if result["missing"]:
            s = result["scored_only"]
            lines.append(f"  scored entries only (not the benchmark figure): {_pct(s['accuracy'])} "
                         f"({s['correct']} of {s['n']})")
    elif kind == "pairwise":
        lines.append(f"  missing: {result['missing_pairs']} pairs left out (a score missing) in "
                     f"{result['missing']} entries")
    else:
        lines.append(f"  missing: {result['missing']} entries with a missing score "
                     f"({result['missing_scores']} scores); a comparison with one is not won")
        lines.append(f"  domains present: {', '.join(result['domains_present']) or 'none'}")
        if result["note"]:
            lines.append(f"  NOT COMPARABLE: {result['note']}")
    for name, part in (result.get("subsets") or result.get("domains") or {}).items():
        value = part.get("score", part.get("accuracy"))
        size = part.get("pairs", part.get("n"))
        gaps = part.get("missing_pairs" if kind == "pairwise" else "missing", 0)
        lines.append(f"  {name}: {_pct(value)} (n={size}" + (f", missing {gaps}" if gaps else "") + ")")
    return lines


def json_intervals(kind: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The 95 % bootstrap intervals of ``kind``'s figures for ``--json`` (the unit the
    entry, 1,000 resamples, seed 0; :func:`needlework.rewards.results.intervals`)."""
    from needlework.rewards.results import (  # noqa: PLC0415
        bon_intervals,
        pairwise_intervals,
        rmbench_intervals,
    )

    found = {"bon": bon_intervals, "pairwise": pairwise_intervals,
             "rmbench": rmbench_intervals}[kind](entries)
    return {"method": "percentile bootstrap", "level": 0.95, "unit": "item", **found}


def cmd_metrics(args: argparse.Namespace) -> int:
    try:
        entries = read_scores(args.scores)
        result = metrics.compute(args.kind, entries)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({**result, "intervals": json_intervals(args.kind, entries)}, indent=2))
        return 0
    print("\n".join(describe(args.kind, result)))
    return 0
