"""Verb ``metrics``: reward-model metrics from a scores file."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from needlework.cli import add_db_argument
from needlework.figures import metrics, stats_text
from needlework.figures.lines import rmbench_lines, share_words

SIDES = ("chosen_scores", "rejected_scores")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "metrics", help="compute best-of-n, pairwise, RM-Bench or RewardBench 2 metrics from a "
        "scores file, or the leaderboard of a stored dataset",
        description="Read a scores file in Long-form RewardBench output format (one JSON object "
        "per line: id, subset, chosen_scores, rejected_scores; for RM-Bench the three scores in "
        "style order, with an optional domain field) and print its metrics, each with its "
        "counts and 95 %% interval (method named). Ties count wrong. A "
        "missing score (null, NaN, Infinity) makes a best-of-n entry wrong (it stays in the "
        "denominator, as in Long-form RewardBench's scorer); pairwise accuracy leaves out only "
        "the pairs with a missing score; RM-Bench counts such a comparison as not won. "
        "rewardbench2: the official rules (chosen_scores the correct completions, rejected_scores "
        "the incorrect ones; a tie at the top shares the credit, the Ties subset by its own rule "
        "with ids ref:N / tied:N, overall the mean of the subsets; docs/benchmarks.md §8). With "
        "--leaderboard --dataset NAME: every reward model that scored a stored dataset and "
        "every judge run on it, best accuracy first (docs/rewards.md, Leaderboard).")
    p.add_argument("--kind", choices=("bon", "rmbench", "pairwise", "rewardbench2"),
                   help="the metric of --scores (required with --scores)")
    p.add_argument("--scores", metavar="FILE")
    p.add_argument("--leaderboard", action="store_true",
                   help="the leaderboard of a stored dataset (with --dataset)")
    p.add_argument("--dataset", metavar="NAME", help="the stored dataset of --leaderboard")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--csv", action="store_true", help="with --leaderboard: print CSV")
    add_db_argument(p)
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
    return stats_text.percent(value)


def _ci(bounds: dict[str, Any] | None, name: str | None = None) -> dict[str, Any] | None:
    """The interval of the overall figure (``name`` None) or of one subset or domain."""
    if not bounds:
        return None
    if name is None:
        return bounds.get("overall")
    return (bounds.get("subsets") or bounds.get("domains") or {}).get(name)


def describe(kind: str, result: dict[str, Any], bounds: dict[str, Any] | None = None) -> list[str]:
    """The human-readable lines of a metrics result: the headline with its counts and, when
    ``bounds`` (:func:`json_intervals`) is given, its 95 % interval with the method named
    (``bon: 61.5 % (16/26 entries), 95 % Wilson 42.5–77.6 %``), the missing count, the
    labelled scored-only figure, the RM-Bench domain note, then one line per part with its
    own counts and interval."""
    overall = _ci(bounds)
    if kind == "rewardbench2":
        return rewardbench2_lines(result, bounds)
    if kind == "rmbench":
        lines = [f"rmbench: {share_words(result['accuracy'], n=result['n'], interval=overall, unit='entries')}",
                 *rmbench_lines(result, bounds)]
    elif kind == "pairwise":
        lines = [f"pairwise: {share_words(result['accuracy'], result['correct'], result['pairs'], overall, unit='pairs')}"]
    else:
        lines = [f"bon: {share_words(result['accuracy'], result['correct'], result['n'], overall, unit='entries')}"]
    if kind == "bon":
        lines.append(f"  missing: {result['missing']} entries with a missing score "
                     f"({result['missing_scores']} scores), counted wrong")
        if result["missing"]:
            s = result["scored_only"]
            lines.append(f"  scored entries only (not the benchmark figure): "
                         f"{share_words(s['accuracy'], s['correct'], s['n'])}")
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
        ci = _ci(bounds, name)
        if kind == "rmbench":
            won = (part.get("counts") or {}).get("score") or [None, None]
            counts = part.get("counts") or {}
            words = (share_words(part.get("score"), won[0], won[1], ci, unit="comparisons")
                     + f"; {part.get('n')} entries; " + ", ".join(
                         f"{key} {_pct(part.get(key))} ({counts[key][0]}/{counts[key][1]})"
                         for key in ("hard", "normal", "easy") if key in counts))
        elif kind == "pairwise":
            words = share_words(part.get("accuracy"), part.get("correct"), part.get("pairs"), ci,
                                unit="pairs")
        else:
            words = share_words(part.get("accuracy"), part.get("correct"), part.get("n"), ci,
                                unit="entries")
        gaps = part.get("missing_pairs" if kind == "pairwise" else "missing", 0)
        lines.append(f"  {name}: {words}" + (f"; missing {gaps}" if gaps else ""))
    if bounds:
        lines.append(f"  intervals: {_method_note(bounds)}")
    return lines


def rewardbench2_lines(result: dict[str, Any], bounds: dict[str, Any] | None = None) -> list[str]:
    """A RewardBench 2 result as text: the overall mean with its interval, the missing
    count, the comparability note, then each subset with its rule's counts and interval."""
    from needlework.figures.rewardbench2 import credit_words, ties_words  # noqa: PLC0415

    if "error" in result:
        return [f"rewardbench2: cannot be computed: {result['error']}"]
    overall = _ci(bounds)
    subsets = result["subsets"]
    lines = [f"rewardbench2: {share_words(result['accuracy'], interval=overall)} (mean of "
             f"{len(subsets)} subset figure{'s' if len(subsets) != 1 else ''}, "
             f"{result['n']} entries)",
             f"  missing: {result['missing']} entries with a missing score "
             f"({result['missing_scores']} scores), counted wrong"]
    if result["note"]:
        lines.append(f"  NOT COMPARABLE: {result['note']}")
    for name, part in subsets.items():
        ci = _ci(bounds, name)
        if part["rule"] == "ties":
            head = share_words(part["accuracy"], n=part["prompts"], interval=ci, unit="prompts")
            lines.append(f"  {name} (Ties rule): {head}; {ties_words(part)}"
                         + (f"; {part['note']}" if part.get("note") else ""))
        else:
            right = part["right"] if not part["shared"] else None
            head = share_words(part["accuracy"], right, part["n"], ci, unit="entries")
            lines.append(f"  {name}: {head}; {credit_words(part)}"
                         + (f"; missing {part['missing']}" if part["missing"] else ""))
    if bounds:
        lines.append(f"  intervals: {_method_note(bounds)} (Ties: the prompt)")
    return lines


def _method_note(bounds: dict[str, Any]) -> str:
    """How the shown intervals were made, in words (:func:`needlework.figures.stats_text.how`)."""
    shown = [bounds.get("overall"), *(bounds.get("subsets") or bounds.get("domains") or {}).values()]
    return stats_text.how(*[s for s in shown if s]) + ", the unit the entry"


def json_intervals(kind: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The 95 % intervals of ``kind``'s figures for ``--json`` and the text (the unit the
    entry; each interval's own ``method``: Wilson for a share of 0/1 outcomes, else the
    percentile bootstrap, 1,000 resamples, seed 0; :mod:`needlework.figures.stats`)."""
    from needlework.figures.rewardbench2 import intervals as rewardbench2_intervals  # noqa: PLC0415
    from needlework.rewards.results import (  # noqa: PLC0415
        bon_intervals,
        pairwise_intervals,
        rmbench_intervals,
    )

    found = {"bon": bon_intervals, "pairwise": pairwise_intervals,
             "rmbench": rmbench_intervals, "rewardbench2": rewardbench2_intervals}[kind](entries)
    return {"method": _method_note(found), "level": 0.95, "unit": "item", **found}


def cmd_leaderboard(args: argparse.Namespace) -> int:
    """``metrics --leaderboard --dataset NAME``: the table, as text, JSON or CSV."""
    from needlework.figures.lines import leaderboard_lines  # noqa: PLC0415
    from needlework.results.leaderboard import as_dicts, leaderboard, table_csv  # noqa: PLC0415
    from store import connect  # noqa: PLC0415

    if not args.dataset:
        print("error: --leaderboard needs --dataset NAME (a stored dataset)", file=sys.stderr)
        return 2
    try:
        rows = leaderboard(connect(args.db), args.dataset)
    except LookupError as exc:
        print(f"error: {exc.args[0]}: import it first, or check --db",
              file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"dataset": args.dataset, "rows": as_dicts(rows)}, indent=2))
    elif args.csv:
        sys.stdout.write(table_csv(rows))
    else:
        print(f"{args.dataset}: {len(rows)} run{'s' if len(rows) != 1 else ''}, best accuracy first")
        print("\n".join(leaderboard_lines(as_dicts(rows))))
    return 0


def cmd_metrics(args: argparse.Namespace) -> int:
    if args.leaderboard:
        if args.scores or args.kind:
            print("error: --leaderboard reads the store: give --dataset, not --scores or --kind",
                  file=sys.stderr)
            return 2
        return cmd_leaderboard(args)
    if not args.kind or not args.scores:
        print("error: metrics needs --kind and --scores FILE (or --leaderboard --dataset NAME)",
              file=sys.stderr)
        return 2
    if args.csv:
        print("error: --csv goes with --leaderboard", file=sys.stderr)
        return 2
    try:
        entries = read_scores(args.scores)
        if args.kind == "rewardbench2":
            from needlework.figures.rewardbench2 import rewardbench2  # noqa: PLC0415

            result = rewardbench2(entries)
        else:
            result = metrics.compute(args.kind, entries)
        bounds = json_intervals(args.kind, entries)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({**result, "intervals": bounds}, indent=2))
        return 0
    print("\n".join(describe(args.kind, result, bounds)))
    return 0
