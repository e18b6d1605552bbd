"""Verb ``metrics``: reward-model metrics from a scores file."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from needlework import metrics


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "metrics", help="compute best-of-n, pairwise or RM-Bench metrics from a scores file",
        description="Read a scores file in Long-form RewardBench output format (one JSON object "
        "per line: id, subset, chosen_scores, rejected_scores; for RM-Bench the three scores in "
        "style order, with an optional domain field) and print its metrics. Ties count wrong.")
    p.add_argument("--kind", required=True, choices=("bon", "rmbench", "pairwise"))
    p.add_argument("--scores", required=True, metavar="FILE")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_metrics)


def read_scores(path: str | Path) -> list[dict[str, Any]]:
    """Entries of a scores file: JSON lines (or one JSON array)."""
    text = Path(path).read_text(encoding="utf-8-sig")
    if text.lstrip().startswith("["):
        return list(json.loads(text))
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                entries.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: invalid JSON ({exc.msg})") from None
    return entries


def cmd_metrics(args: argparse.Namespace) -> int:
    try:
        result = metrics.compute(args.kind, read_scores(args.scores))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    acc = result["accuracy"]
    print(f"{args.kind}: {'n/a' if acc is None else f'{acc:.4f}'}")
    for name, part in (result.get("subsets") or result.get("domains") or {}).items():
        value = part.get("accuracy", part.get("score"))
        print(f"  {name}: {'n/a' if value is None else f'{value:.4f}'} (n={part.get('n', part.get('pairs'))})")
    return 0
