"""The ``python -m needlework`` command line.

Each module in this package that defines ``register(subparsers)`` adds its verbs;
a verb's handler is set with ``parser.set_defaults(func=handler)`` and returns the
process exit code. Scripts depend on these verbs: change them compatibly.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m needlework",
        description="Needlework: RAG grounding annotation and reward-model inspection.",
    )
    subparsers = parser.add_subparsers(dest="verb", metavar="VERB")
    subparsers.required = True
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(subparsers)
    return parser


def add_db_argument(parser: argparse.ArgumentParser) -> None:
    """Add the shared ``--db PATH`` option (default: $NEEDLEWORK_DB or data/needlework.db)."""
    parser.add_argument(
        "--db",
        default=None,
        help="SQLite database (default: $NEEDLEWORK_DB or data/needlework.db)",
    )


def main(argv: list[str] | None = None) -> int:
    """Run one verb. Errors end in one line on stderr (exit 1), never a traceback, unless
    ``NEEDLEWORK_DEBUG=1`` asks for it."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a verb's own errors say what to do; anything else is a bug
        if os.environ.get("NEEDLEWORK_DEBUG") == "1":
            raise
        text = " ".join(str(exc).split()) or type(exc).__name__
        known = type(exc).__module__.startswith("needlework")
        print(f"error: {text}" if known else
              f"error: {type(exc).__name__}: {text} (unexpected: run again with NEEDLEWORK_DEBUG=1 "
              "for the details, and report it)", file=sys.stderr)
        return 1
