"""Verbs ``import``, ``export`` and ``datasets``."""

from __future__ import annotations

import argparse
import json
import sys

from needlework.cli import add_db_argument
from needlework.datasets import ExportError, export_file, export_text, import_file
from needlework.formats import FORMATS, FormatError
from store import connect
from store.datasets import DatasetExists, list_datasets


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "import",
        help="import a file as a dataset (all-or-nothing)",
        description="Validate FILE and import it as a dataset. Nothing is written when any "
        "record is invalid: every problem is printed on stderr with file, line and field.",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--format", choices=sorted(FORMATS), help="input format (default: detected)")
    p.add_argument("--dataset", help="dataset name (default: the file's stem)")
    p.add_argument("--replace", action="store_true", help="replace an existing dataset of that name")
    add_db_argument(p)
    p.set_defaults(func=cmd_import)

    p = subparsers.add_parser(
        "export",
        help="write a dataset to a file",
        description="Write dataset NAME in FORMAT to FILE (annotations applied where the format "
        "carries them).",
    )
    p.add_argument("--dataset", required=True, metavar="NAME")
    p.add_argument("--format", required=True, metavar="FORMAT",
                   help="garage, lfrb, rmbench, pairs, needle, or trl (TRL preference JSONL "
                   "with review verdicts applied: flips swapped, skips dropped; docs/review.md)")
    p.add_argument("--out", required=True, metavar="FILE")
    p.add_argument("--conversational", action="store_true",
                   help="trl: prompt/chosen/rejected as message lists")
    p.add_argument("--keep-ties", action="store_true",
                   help="trl: keep comparisons judged tie or both-bad (dropped by default)")
    p.add_argument("--annotator", metavar="NAME",
                   help="trl: use NAME's verdicts (default: the latest verdict by anyone)")
    add_db_argument(p)
    p.set_defaults(func=cmd_export)

    p = subparsers.add_parser(
        "seed-demo",
        help="import the built-in demo datasets",
        description="Import the demo grounding and preference datasets written by the project.",
    )
    p.add_argument("--if-empty", action="store_true",
                   help="do nothing when the database already has datasets")
    add_db_argument(p)
    p.set_defaults(func=cmd_seed_demo)

    p = subparsers.add_parser("datasets", help="list datasets",
                              description="List the datasets in the database.")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    add_db_argument(p)
    p.set_defaults(func=cmd_datasets)


def cmd_import(args: argparse.Namespace) -> int:
    db = connect(args.db)
    try:
        summary = import_file(db, args.file, format=args.format, dataset=args.dataset,
                              replace=args.replace, created_by="cli")
    except FormatError as e:
        for problem in e.problems:
            print(problem, file=sys.stderr)
        print(f"nothing imported: {len(e.problems)} problem(s)", file=sys.stderr)
        return 1
    except DatasetExists as e:
        print(f"{args.file}: {e} (use --replace or --dataset NAME)", file=sys.stderr)
        return 1
    print(summary)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    db = connect(args.db)
    try:
        if args.format == "trl":
            text = export_text(db, args.dataset, "trl", conversational=args.conversational,
                               keep_ties=args.keep_ties, annotator=args.annotator)
            with open(args.out, "w", encoding="utf-8") as out:
                out.write(text)
            size = len(text.encode("utf-8"))
        else:
            size = export_file(db, args.dataset, args.format, args.out)
    except ExportError as e:
        print(f"export: {e}", file=sys.stderr)
        return 1
    print(f"wrote {args.out} ({size} bytes, {args.format})")
    return 0


def cmd_seed_demo(args: argparse.Namespace) -> int:
    from needlework.seed import seed_demo  # noqa: PLC0415

    done = seed_demo(connect(args.db), if_empty=args.if_empty)
    for summary in done:
        print(summary)
    if not done:
        print("demo data already present: nothing to do")
    return 0


def cmd_datasets(args: argparse.Namespace) -> int:
    db = connect(args.db)
    rows = [
        {"name": r["name"], "kind": r["kind"], "format": r["format"], "items": r["items"]}
        for r in list_datasets(db)
    ]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
    else:
        for r in rows:
            print(f"{r['name']}\t{r['kind']}\t{r['format']}\t{r['items']}")
    return 0
