"""The ``gold`` verb: gold answers from a file, a share of every queue as gold, and the
list of gold items (docs/teams.md, Quality control).

``import`` and ``sample`` change what the team sees: in team mode they act as a person
(``--as NAME``, :mod:`needlework.cli.acting`), who is the gold items' "marked by" and the
audit events' author, as on the Quality page.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from needlework.cli import add_db_argument
from needlework.cli.acting import Stop, acting_user, add_as_argument
from needlework.words import plural


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "gold", help="gold items: import their answers, make a share of every queue gold, list",
        description="Gold items are items whose right answers are known; they join every "
        "annotator's queue unannounced and give each annotator's accuracy on gold.")
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True

    q = sub.add_parser(
        "import", help="record gold answers from a CSV or JSONL file, all or nothing",
        description="Read FILE: CSV with the columns item,field,value, or JSONL objects with "
        "those keys, one answer a row. Fields as stored (label:N, dim:FIELD, verdict:I:J); "
        "values as the annotation page's choices (OUTDATED or Outdated, agree or 'Chosen "
        "better'). The rows of one item are its answers (replacing earlier ones). Any bad row "
        "is reported with file, line and field, and nothing changes.")
    q.add_argument("file", metavar="FILE")
    q.add_argument("--dataset", required=True, metavar="NAME")
    q.add_argument("--format", choices=("csv", "jsonl"), help="default: from the extension")
    add_as_argument(q)
    add_db_argument(q)
    q.set_defaults(func=cmd_gold_import)

    q = sub.add_parser(
        "sample", help="make at least K %% of every annotator's queue gold",
        description="Pick items that have default answers (adjudications, else the file's "
        "labels; every preference pair) in an order shuffled with --seed, and make them gold "
        "one at a time until, for every annotator of the plan, gold items are at least K %% of "
        "the items in their queue (done or not). Without an assignment: K %% of the "
        "dataset's items. Nothing changes when that already holds, or when there are too few "
        "such items.")
    q.add_argument("--dataset", required=True, metavar="NAME")
    q.add_argument("--percent", required=True, type=float, metavar="K")
    q.add_argument("--seed", type=int, default=0, help="picks the items (default 0)")
    q.add_argument("--json", action="store_true", help="print JSON")
    add_as_argument(q)
    add_db_argument(q)
    q.set_defaults(func=cmd_gold_sample)

    q = sub.add_parser("list", help="the gold items of a dataset, with their answers",
                       description="Each gold item: how many answers, who marked it, when "
                       "(--json: the answers too), and each queue's gold share.")
    q.add_argument("--dataset", required=True, metavar="NAME")
    q.add_argument("--json", action="store_true", help="print JSON")
    add_db_argument(q)
    q.set_defaults(func=cmd_gold_list)


def _run(verb: str, fn: Any, args: argparse.Namespace) -> int:
    from needlework.formats.errors import FormatError  # noqa: PLC0415
    from needlework.teams.gold import GoldError  # noqa: PLC0415
    from needlework.teams.permissions import PermissionDenied  # noqa: PLC0415

    try:
        return fn(args)
    except (GoldError, Stop, PermissionDenied) as e:
        print(f"gold {verb}: {e}", file=sys.stderr)
        return 1
    except FormatError as e:
        print(f"gold {verb}: nothing imported:\n{e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"gold {verb}: {e.strerror or e}: {e.filename or args.file}", file=sys.stderr)
        return 1


def _db(args: argparse.Namespace) -> Any:
    from store import connect  # noqa: PLC0415

    return connect(args.db)


def cmd_gold_import(args: argparse.Namespace) -> int:
    from needlework.teams.gold_import import import_gold  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        db = _db(args)
        actor = acting_user(args, db, "gold import")
        data = Path(args.file).read_bytes()
        done = import_gold(db, args.dataset, data, Path(args.file).name, args.format,
                           actor=actor)
        again = f" ({len(done.replaced)} were gold already)" if done.replaced else ""
        print(f"imported {plural(done.answers, 'gold answer')} of "
              f"{plural(len(done.items), 'item')} into {done.dataset!r}{again}; they join "
              "every annotator's queue")
        return 0

    return _run("import", go, args)


def cmd_gold_sample(args: argparse.Namespace) -> int:
    from needlework.teams.gold import sample_gold  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        db = _db(args)
        done = sample_gold(db, args.dataset, args.percent, seed=args.seed,
                           actor=acting_user(args, db, "gold sample"))
        if args.json:
            print(json.dumps({"dataset": done.dataset, "percent": done.percent, "seed": done.seed,
                              "basis": done.basis, "added": list(done.added),
                              "shares": {k: {"gold": g, "items": n}
                                         for k, (g, n) in done.shares.items()}},
                             ensure_ascii=False))
            return 0
        print(f"{plural(len(done.added), 'item')} made gold in {done.dataset!r} (seed {done.seed})"
              + (": nothing needed" if not done.added else ""))
        from needlework.figures.stats_text import percent  # noqa: PLC0415

        for who, (gold, items) in done.shares.items():
            where = who or "dataset"
            print(f"  {where}: {gold} gold of {items} items ({percent(gold, items)})"
                  if items else f"  {where}: no items")
        return 0

    return _run("sample", go, args)


def cmd_gold_list(args: argparse.Namespace) -> int:
    from needlework.teams.gold import gold_items, queue_gold_shares  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        db = _db(args)
        rows = gold_items(db, args.dataset)
        shares = queue_gold_shares(db, args.dataset)
        if args.json:
            print(json.dumps({"items": rows, "queues": {k: {"gold": g, "items": n}
                                                        for k, (g, n) in shares.items()}},
                             ensure_ascii=False))
            return 0
        if not rows:
            print(f"no gold items in {args.dataset!r}")
        for r in rows:
            print(f"{r['item_key']}\t{len(r['answers'])} answers\t{r['marked_by'] or '(local)'}"
                  f"\t{r['marked_at'][:19]}")
        for who, (gold, items) in shares.items():
            print(f"  queue of {who}: {gold} gold of {items} items")
        return 0

    return _run("list", go, args)
