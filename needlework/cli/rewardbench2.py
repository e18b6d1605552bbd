"""Verb ``judge-rewardbench2``: a RewardBench 2 set through an LLM judge, the official way."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from needlework.cli import add_db_argument
from needlework.cli.judges import (
    _add_connection_arguments,
    _connection,
    _fail,
    reasoning_budget,
    select_subsets,
)
from needlework.figures.lines import share_words


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "judge-rewardbench2",
        help="judge a RewardBench 2 set with an LLM in the official generative mode",
        description="Send a stored RewardBench 2 dataset to a judge behind an OpenAI-compatible "
        "endpoint as the official script does: the Factuality, Precise IF, Math, Safety and "
        "Focus instances four-way (the correct completion and three incorrect ones shown "
        "together, one letter answered), the Ties rows by rating each completion from 1 to 10, "
        "scored by the Ties rule; overall = the mean of the subset figures (docs/benchmarks.md "
        "§8). Unreadable answers count wrong; failed requests are counted apart. Every answer "
        "is cached: a re-run sends no request, a killed run resumes.")
    p.add_argument("--dataset", required=True, metavar="NAME")
    _add_connection_arguments(p)
    p.add_argument("--rotations", action="store_true",
                   help="show the four completions in every rotation (default: one seeded "
                   "shuffle per instance)")
    p.add_argument("--seed", type=int, default=0, help="seed of the shuffled order (default 0)")
    p.add_argument("--subset", action="append", default=[], metavar="NAME",
                   help="judge only this subset's items (repeat for several; default all)")
    p.add_argument("--per-subset", type=int, default=None, metavar="N",
                   help="judge at most the first N items of each subset")
    p.add_argument("--concurrency", type=int, default=None, metavar="N",
                   help="requests in flight at once")
    p.add_argument("--context-window", type=int, default=None, metavar="N",
                   help="the judge's window in tokens; longer prompts follow --truncation")
    p.add_argument("--truncation", default="skip", choices=("skip", "keep-start", "keep-end"),
                   help="prompts over the window: skip them (counted wrong), or cut the "
                   "responses keeping their start or end")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    add_db_argument(p)
    p.set_defaults(func=cmd_judge_rewardbench2)


def cmd_judge_rewardbench2(args: argparse.Namespace) -> int:
    from tqdm import tqdm  # noqa: PLC0415

    from needlework.judges.errors import JudgeCancelled, JudgeError  # noqa: PLC0415
    from needlework.judges.plan import DatasetNotFound, load_items  # noqa: PLC0415
    from needlework.judges.rewardbench2 import run_rewardbench2_judge  # noqa: PLC0415
    from store import connect  # noqa: PLC0415

    if args.per_subset is not None and args.per_subset < 1:
        return _fail(f"--per-subset must be at least 1, got {args.per_subset}")
    try:
        connection = _connection(args)
    except (ValueError, TypeError) as exc:
        return _fail(str(exc))
    db = connect(args.db)
    try:
        row, items = load_items(db, args.dataset)
    except DatasetNotFound as exc:
        return _fail(str(exc).strip("'\""), 1)
    if row["format"] != "rewardbench2":
        return _fail(f"{args.dataset} is a {row['format']} dataset, not RewardBench 2: use "
                     "judge for it", 1)
    connection = reasoning_budget(db, connection, args)
    selection, items, unknown = select_subsets(args, items)
    if unknown:
        return _fail(unknown, 1)
    bar = None if args.no_progress else tqdm(total=0, unit="call", desc="judging (RewardBench 2)",
                                              file=sys.stderr, dynamic_ncols=True)

    def progress(done: int, total: int) -> None:
        if bar is not None:
            bar.total = total
            bar.n = done
            bar.refresh()

    try:
        run = run_rewardbench2_judge(
            db, connection, items, dataset=args.dataset,
            order="rotations" if args.rotations else "shuffle", seed=args.seed,
            context_policy=args.truncation, progress=progress, selection=selection or None)
    except JudgeCancelled as exc:
        return _fail(str(exc), 130)
    except JudgeError as exc:
        if str(exc).startswith("no answers"):
            return _fail(str(exc))
        return _fail(f"{exc} (answers received so far are cached: run again to resume)")
    finally:
        if bar is not None:
            bar.close()
    summary = run.summary
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print("\n".join(judge_lines(args.dataset, summary)))
    return 0


def judge_lines(dataset: str, summary: dict[str, Any]) -> list[str]:
    """A RewardBench 2 judge run's figures as text: the overall mean with its interval, the
    answers' counts (invalid and failed apart), then each subset."""
    from needlework.figures.rewardbench2 import credit_words, ties_words  # noqa: PLC0415

    bounds = summary.get("intervals") or {}
    lines = [f"{dataset}: RewardBench 2 by {summary['model']}: "
             + share_words(summary["accuracy"], interval=bounds.get("overall"))
             + f" (mean of {len(summary['subsets'])} subset figures)"]
    for part, counts in (summary.get("answers") or {}).items():
        lines.append(f"  {part}: {counts['answered']} answered, {counts['invalid']} unreadable "
                     f"(counted wrong), {counts['skipped']} skipped, {counts['failed']} failed "
                     "(left out)")
    groups = summary.get("failures") or []
    if groups:
        lines.append("  failed requests: " + ", ".join(
            f"{g['count']} {g['kind'].replace('_', ' ')}" for g in groups)
            + (f": {groups[0].get('message')}" if groups[0].get("message") else ""))
    if summary.get("note"):
        lines.append(f"  NOT COMPARABLE: {summary['note']}")
    official = summary.get("official_invalid_rule") or {}
    if summary.get("invalid") and official.get("accuracy") is not None:
        lines.append(f"  with the official script's 0.25 for an unreadable four-way answer: "
                     f"{share_words(official['accuracy'])}")
    for name, part in summary["subsets"].items():
        ci = (bounds.get("subsets") or {}).get(name)
        if part["rule"] == "ties":
            lines.append(f"  {name} (Ties rule, ratings): "
                         + share_words(part["accuracy"], n=part["prompts"], interval=ci,
                                       unit="prompts") + f"; {ties_words(part)}")
        else:
            right = part["right"] if not part["shared"] else None
            lines.append(f"  {name} (four-way): "
                         + share_words(part["accuracy"], right, part["n"], ci, unit="instances")
                         + f"; {credit_words(part)}")
    return lines
