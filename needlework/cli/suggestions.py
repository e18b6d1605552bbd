"""Verb ``suggestions``: import, list and delete model suggestions (docs/suggestions.md).

An import is all or nothing: every problem is printed on stderr (file, line, field) and
nothing is stored unless every line is right.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from needlework.cli import add_db_argument
from needlework.formats import FormatError
from needlework.suggestions import import_suggestions
from store import connect
from store.suggestions import delete_source, suggestion_sources


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "suggestions", help="model suggestions for a dataset (import, list, delete)",
        description="Suggestions propose passage labels, dimensions or verdicts; they never "
        "count as annotations. See docs/suggestions.md for the file shapes (ours, Label "
        "Studio's predictions, Argilla's suggestions).")
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True

    q = sub.add_parser("import", help="import suggestions from a JSON-lines file (all or nothing)")
    q.add_argument("file", metavar="FILE")
    q.add_argument("--dataset", required=True, help="the dataset the suggestions are for")
    q.add_argument("--source", default=None,
                   help="the source of lines that name none (default: file:FILE)")
    add_db_argument(q)
    q.set_defaults(func=cmd_import)

    q = sub.add_parser("list", help="each source's suggestions in a dataset")
    q.add_argument("--dataset", required=True)
    q.add_argument("--json", action="store_true", help="print a JSON list")
    add_db_argument(q)
    q.set_defaults(func=cmd_list)

    q = sub.add_parser("delete", help="delete one source's suggestions in a dataset")
    q.add_argument("--dataset", required=True)
    q.add_argument("--source", required=True)
    add_db_argument(q)
    q.set_defaults(func=cmd_delete)


def cmd_import(args: argparse.Namespace) -> int:
    name = Path(args.file).name
    try:
        data = Path(args.file).read_bytes()
    except OSError as e:
        print(f"{name}: cannot read the file: {e.strerror or e}; nothing imported", file=sys.stderr)
        return 1
    db = connect(args.db)
    try:
        done = import_suggestions(db, data, name, args.dataset, "cli", source=args.source)
    except FormatError as e:
        for problem in e.problems:
            print(str(problem), file=sys.stderr)
        if e.total > len(e.problems):
            print(f"... and {e.total - len(e.problems)} more problem(s)", file=sys.stderr)
        print(f"nothing imported: {e.total} problem(s)", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"{name}: {e}; nothing imported", file=sys.stderr)
        return 1
    sources = ", ".join(f"{s} ({n})" for s, n in sorted(done.sources.items()))
    print(f"imported {done.suggestions} suggestion(s) for {done.items} item(s) of "
          f"{done.dataset}: {sources}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    rows = suggestion_sources(connect(args.db), args.dataset)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print(f"no suggestions for {args.dataset}")
    for r in rows:
        print(f"{r['source']}: {r['suggestions']} suggestion(s) for {r['items']} item(s), "
              f"last {r['last']}")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    gone = delete_source(connect(args.db), args.dataset, args.source)
    print(f"deleted {gone} suggestion(s) of {args.source} in {args.dataset}")
    return 0
