"""Verbs ``import``, ``export`` and ``datasets``.

Failures print one line per problem on stderr (file, line, field) and exit 1; never a
traceback. ``import`` shows a progress bar on stderr when stderr is a terminal; in team
mode it acts as a person (``--as NAME``, :mod:`needlework.cli.acting`).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import TextIO

from needlework.cli import add_db_argument
from needlework.cli.acting import Stop, acting_user, add_as_argument
from needlework.datasets.transfer import (
    ExportError,
    ImportFailed,
    export_file,
    import_file,
    storage_message,
)
from needlework.formats import FORMATS, FormatError
from needlework.teams.permissions import PermissionDenied
from store import connect, default_path
from store.datasets import AnnotationsExist, DatasetExists, list_datasets


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "import",
        help="import a file as a dataset (all-or-nothing)",
        description="Validate FILE (JSON Lines, a JSON array, or a RewardBench 2 Parquet file) "
        "and import it as a dataset, streaming it in batches (memory "
        "stays bounded whatever its size). Nothing is written when any record is invalid: "
        "every problem is printed on stderr with file, line and field.",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--format", choices=sorted(FORMATS), help="input format (default: detected)")
    p.add_argument("--dataset", help="dataset name (default: the file's stem); 1-120 printable "
                   "characters, unique regardless of case and spaces")
    p.add_argument("--replace", action="store_true",
                   help="replace an existing dataset of that name (its items and model scores go); "
                   "refused while it has annotations, unless --drop-annotations")
    p.add_argument("--drop-annotations", action="store_true",
                   help="with --replace: also delete the replaced dataset's annotations and their "
                   "history")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar on stderr (default: when stderr is a terminal)")
    add_as_argument(p)
    add_db_argument(p)
    p.set_defaults(func=cmd_import)

    p = subparsers.add_parser(
        "export",
        help="write a dataset to a file",
        description="Write dataset NAME in FORMAT to FILE (annotations applied where the format "
        "carries them). The file is written whole or not at all: a failure leaves any previous "
        "FILE as it was.",
    )
    p.add_argument("--dataset", required=True, metavar="NAME")
    p.add_argument("--format", required=True, metavar="FORMAT",
                   help="garage, lfrb, rmbench, pairs, needle, rewardbench2 (JSONL), or trl (TRL "
                   "preference JSONL "
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


class ProgressBar:
    """A one-line progress bar redrawn in place (``\r``) on a terminal, at most ten
    times a second; :meth:`close` ends the line."""

    def __init__(self, label: str, stream: TextIO | None = None, width: int = 30):
        self.label = label
        self.stream = stream or sys.stderr
        self.width = width
        self.started = time.monotonic()
        self.last = 0.0
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last < 0.1 and done < total:
            return
        self.last = now
        mb, elapsed = done / 1e6, max(now - self.started, 1e-6)
        if total > 0:
            fraction = min(done / total, 1.0)
            filled = int(fraction * self.width)
            bar = "#" * filled + "-" * (self.width - filled)
            text = f"{self.label} [{bar}] {fraction:4.0%} {mb:.1f}/{total / 1e6:.1f} MB"
        else:
            text = f"{self.label} {mb:.1f} MB"
        self.stream.write(f"\r{text} {mb / elapsed:.1f} MB/s ")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False


def _say(*lines: str) -> int:
    for line in lines:
        print(line, file=sys.stderr)
    return 1


def cmd_import(args: argparse.Namespace) -> int:
    name = Path(args.file).name
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    bar = ProgressBar(f"importing {name}") if show else None
    try:
        db = connect(args.db)
        actor = acting_user(args, db, "import")
        summary = import_file(db, args.file, format=args.format, dataset=args.dataset,
                              replace=args.replace, drop_annotations=args.drop_annotations,
                              created_by="" if actor else "cli", progress=bar, actor=actor)
    except (Stop, PermissionDenied) as e:  # before OSError: PermissionDenied is one
        return _say(f"import: {e}")
    except FormatError as e:
        if bar:
            bar.close()
        more = [f"... and {e.total - len(e.problems)} more problem(s)"] if e.total > len(e.problems) else []
        return _say(*(str(p) for p in e.problems), *more, f"nothing imported: {e.total} problem(s)")
    except AnnotationsExist as e:
        hint = ("export it first, or add --drop-annotations to delete them" if args.replace
                else "use --dataset NAME")
        return _say(f"{name}: {e} ({hint}); nothing imported")
    except DatasetExists as e:
        return _say(f"{name}: {e} (use --replace or --dataset NAME)")
    except ImportFailed as e:
        return _say(str(e))
    except sqlite3.Error as e:  # opening the database
        path = args.db or default_path()
        return _say(f"{name}: cannot open the database {path}: {storage_message(e, path)}")
    except OSError as e:
        return _say(f"{name}: cannot read the file: {e.strerror or e}; nothing imported")
    except Exception as e:  # noqa: BLE001  (one line, never a traceback)
        return _say(f"{name}: import failed ({type(e).__name__}: {e}); nothing imported")
    finally:
        if bar:
            bar.close()
    print(summary)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    try:
        db = connect(args.db)
        size = export_file(db, args.dataset, args.format, args.out,
                           conversational=args.conversational, keep_ties=args.keep_ties,
                           annotator=args.annotator)
    except ExportError as e:
        return _say(f"export: {e}")
    except OSError as e:
        return _say(f"export: cannot write {args.out}: {e.strerror or e}; any previous file "
                    "is unchanged")
    except sqlite3.Error as e:
        return _say(f"export: cannot read the database: {e}")
    print(f"wrote {args.out} ({size} bytes, {args.format})")
    return 0


def cmd_seed_demo(args: argparse.Namespace) -> int:
    from needlework.seeding.demo import seed_demo  # noqa: PLC0415

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
        for r in list_datasets(db, archived=True)
    ]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
    else:
        for r in rows:
            print(f"{r['name']}\t{r['kind']}\t{r['format']}\t{r['items']}")
    return 0
