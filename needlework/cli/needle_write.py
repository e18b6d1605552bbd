"""Verb ``needle write`` of :mod:`needlework.cli.needle`: haystacks → needles written and
verified by an LLM → needle JSONL (and a dataset); every record carries the prompts used in
its ``writer`` field. Also the two helpers the ``needle`` verbs share: ``--lengths`` read as
token counts (:func:`lengths_type`) and a format error's problems printed (:func:`print_problems`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, NamedTuple

from needlework import files
from needlework.cli import add_db_argument
from needlework.cli.acting import Stop, acting_user, add_as_argument
from needlework.formats import FormatError


def lengths_type(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"--lengths wants comma-separated token counts, got {text!r}") from None
    if not values or any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError("--lengths wants positive token counts")
    return values


def print_problems(e: FormatError) -> int:
    for problem in e.problems:
        print(problem, file=sys.stderr)
    print(f"nothing written: {len(e.problems)} problem(s)", file=sys.stderr)
    return 1


def add_write(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "write", help="needles written by an LLM: minimal flawed rewrites, verified, kept",
        description="For each haystack (cut to each --lengths, or whole), pick a paragraph at random "
        "(seeded), ask the model behind an OpenAI-compatible endpoint for a minimal erroneous "
        "(factuality: the paper's prompt, a true and a false version) or harmful (safety) rewrite "
        "of it, ask again (the verifier) whether the "
        "rewrite has exactly that one flaw, and keep it only when it says yes. Writes needle "
        "JSONL (import --format needle reads it); each record holds the prompts used in its "
        "'writer' field. Every answer is cached in the database: a re-run sends no request, a "
        "killed run resumes.")
    p.add_argument("--haystacks", required=True, metavar="FILE_OR_DATASET_OR_demo",
                   help="'demo', a JSONL of {prompt, response}, a preference file, or a dataset name")
    p.add_argument("--aspect", choices=("factuality", "safety"), default="factuality",
                   help="factuality: one false fact; safety: one rude or harmful sentence")
    p.add_argument("--base-url", required=True, metavar="URL",
                   help="the API root of an OpenAI-compatible server, e.g. https://api.openai.com/v1")
    p.add_argument("--model", required=True, metavar="M", help="the writer model, as the server names it")
    p.add_argument("--key-env", default="OPENAI_API_KEY", metavar="VAR",
                   help="environment variable holding the API key (default OPENAI_API_KEY; the key "
                   "is never written anywhere)")
    p.add_argument("--template", metavar="NAME_OR_FILE",
                   help="the writer's prompt: long-form-rewardbench (the paper's: a positive and a "
                   "negative modification), needlework (the project's one-flaw rewrite), or a file "
                   "with an edited template (default: the paper's for factuality, the project's "
                   "for safety, which the paper wrote from fixed phrases)")
    p.add_argument("--verifier-model", metavar="M2", help="a second model that checks the rewrites, "
                   "on the same server (default: the writer checks its own)")
    p.add_argument("--verifier-base-url", metavar="URL", help="the verifier's server (default --base-url)")
    p.add_argument("--per-haystack", type=int, default=1, metavar="N",
                   help="needles per haystack, length and position slot (default 1)")
    p.add_argument("--lengths", type=lengths_type, default=None, metavar="N,N,...",
                   help="cut each haystack to these token counts first, as needle build does "
                   "(default: each haystack whole, its length rounded to 1000s as the heatmap row)")
    p.add_argument("--positions", type=int, default=1, metavar="K",
                   help="write --per-haystack needles into each of K equal slices of each response "
                        "(10: the heatmap's position buckets; default 1: anywhere)")
    p.add_argument("--even", action="store_true",
                   help="keep only haystacks that fill every length x position cell, so every "
                        "cell holds the same number of needles")
    p.add_argument("--tries", type=int, default=3, metavar="N",
                   help="paragraphs tried per needle at most, when rewrites are refused (default 3)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--demo-count", type=int, default=3, metavar="N", help="demo haystacks (default 3)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="S",
                   help="seconds to wait for one answer (default 120)")
    p.add_argument("--max-tokens", type=int, default=512, metavar="N",
                   help="longest answer in tokens (default 512; a rewrite always gets room for "
                   "twice its paragraph)")
    p.add_argument("--temperature", type=float, default=0.0, help="default 0")
    p.add_argument("--out", required=True, metavar="FILE")
    p.add_argument("--dataset", metavar="NAME", help="also import the records as needle dataset NAME")
    add_as_argument(p)
    p.add_argument("--replace", action="store_true", help="replace an existing dataset NAME")
    p.add_argument("--json", action="store_true", help="print the summary and every attempt as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    add_db_argument(p)
    p.set_defaults(func=cmd_write)


def needle_template(aspect: str, given: str | None):  # noqa: ANN201 - a Template
    """The writer's template: the needle template named ``given``, else the file at
    ``given`` (checked against the needle mode), else the default for ``aspect``."""
    from needlework.judges.prompts import TEMPLATES, default_template  # noqa: PLC0415
    from needlework.judges.templates import from_file  # noqa: PLC0415

    base = default_template("needle", aspect=aspect)
    if given is None:
        return base
    for known in TEMPLATES["needle"]:
        if known.name == given:
            return known
    return from_file(base, given)


def _write_connections(args: argparse.Namespace) -> tuple[Any, Any]:
    """The writer's connection and the verifier's (``None``: the writer checks)."""
    from needlework.judges.connection import Connection  # noqa: PLC0415

    common = {"key_env": args.key_env or None, "timeout": args.timeout,
              "max_tokens": args.max_tokens, "temperature": args.temperature}
    writer = Connection(args.base_url, args.model, **common)
    verifier = None
    if args.verifier_model or args.verifier_base_url:
        verifier = Connection(args.verifier_base_url or args.base_url,
                              args.verifier_model or args.model, **common)
    return writer, verifier


def _write_lines(summary: dict[str, Any], attempts: list[dict[str, Any]]) -> list[str]:
    """The summary and the reason of every attempt not kept, in words."""
    out = [f"{summary['kept']} needles kept, {summary['rejected']} rejected by the parse or the check "
           f"({summary['attempts']} rewrites tried); {summary['requests']} requests sent (the rest "
           f"from the cache); tokens counted with {summary['token_method']}; prompts "
           f"{summary['prompt_version']}, recorded in each record's 'writer' field"]
    for a in attempts:
        if not a["kept"]:
            where = f" at {a['length']} tokens" if a.get("length") else ""
            span = f" paragraph at {a['span'][0]}" if a.get("span") else ""
            out.append(f"  {a['haystack_id']}{where}{span}: {a['reason']}")
    return out


def cmd_write(args: argparse.Namespace) -> int:
    setup = _set_up(args)
    if isinstance(setup, int):
        return setup
    written = _write(args, setup)
    if isinstance(written, int):
        return written
    return _report(args, setup, written)


class _Setup(NamedTuple):
    """What writing needs, checked before any request: the database, the writer's and the
    verifier's connections, the template, who imports, the token counter, the haystacks."""

    db: Any
    writer: Any
    verifier: Any
    template: Any
    actor: Any
    counter: Any
    haystacks: list[Any]


def _set_up(args: argparse.Namespace) -> _Setup | int:
    """The checks, connections and haystacks; an exit code when one fails (said on stderr)."""
    from needlework.judges.templates import TemplateError  # noqa: PLC0415
    from needlework.needle.inputs import load_haystacks  # noqa: PLC0415
    from needlework.needle.sites import resolve_counter  # noqa: PLC0415
    from store import connect  # noqa: PLC0415
    for name in ("per_haystack", "tries", "positions"):
        if getattr(args, name) < 1:
            print(f"error: --{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}",
                  file=sys.stderr)
            return 2
    try:
        writer, verifier = _write_connections(args)
        template = needle_template(args.aspect, args.template)
    except (ValueError, TypeError, TemplateError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    db = connect(args.db)
    try:  # who imports the dataset (team mode: --as), asked before any request is sent
        actor = acting_user(args, db, "needle write --dataset") if args.dataset else None
    except Stop as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    counter = resolve_counter()
    try:
        haystacks = load_haystacks(args.haystacks, db=db, demo_count=args.demo_count,
                                   demo_tokens=max(args.lengths) if args.lengths else 2000,
                                   count=counter.count, seed=args.seed)
    except FormatError as e:
        return print_problems(e)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return _Setup(db, writer, verifier, template, actor, counter, haystacks)


def _write(args: argparse.Namespace, setup: _Setup) -> Any:
    """The needles written (a ``NeedleWriting``) under a progress bar; an exit code when
    the run is cancelled or fails."""
    from tqdm import tqdm  # noqa: PLC0415

    from needlework.judges.errors import JudgeCancelled, JudgeError  # noqa: PLC0415
    from needlework.judges.needles import write_needles  # noqa: PLC0415
    bar = None if args.no_progress else tqdm(total=0, unit="needle", desc=f"writing ({args.aspect})",
                                             file=sys.stderr, dynamic_ncols=True)

    def progress(done: int, total: int) -> None:
        if bar is not None:
            bar.total = total
            bar.n = done
            bar.refresh()

    try:
        return write_needles(setup.db, setup.writer, setup.haystacks, aspect=args.aspect,
                             per_haystack=args.per_haystack, seed=args.seed,
                             verifier=setup.verifier, lengths=args.lengths, tries=args.tries,
                             counter=setup.counter, positions=args.positions, even=args.even,
                             template=setup.template, progress=progress)
    except JudgeCancelled as e:
        print(f"error: {e}", file=sys.stderr)
        return 130
    except JudgeError as e:
        print(f"error: {e} (answers received so far are cached: run again to resume)", file=sys.stderr)
        return 1
    finally:
        if bar is not None:
            bar.close()


def _report(args: argparse.Namespace, setup: _Setup, written: Any) -> int:
    """The summary, the needles' file and, with ``--dataset``, their import."""
    from needlework.datasets.transfer import import_bytes  # noqa: PLC0415
    from needlework.formats import needle as needle_format  # noqa: PLC0415
    from needlework.teams.permissions import PermissionDenied  # noqa: PLC0415
    from store.datasets import DatasetExists  # noqa: PLC0415
    template = setup.template
    summary = written.summary()
    if args.json:
        print(json.dumps({**summary, "template": template.identity(), "cells": written.cells(), "out": args.out if written.records else None,
                          "attempts_list": written.attempts}, indent=2, ensure_ascii=False))
    else:
        print("\n".join(_write_lines(summary, written.attempts)))
        print(f"  prompt: {template.label}, {template.source}")
    if not written.records:
        print("error: no rewrite was verified: nothing written", file=sys.stderr)
        return 1
    data = needle_format.dump(written.records).encode("utf-8")
    files.write_bytes(args.out, data)  # whole or not at all
    if not args.json:
        print(f"wrote {args.out}")
    if args.dataset:
        try:
            done = import_bytes(setup.db, data, Path(args.out).name, format="needle",
                                dataset=args.dataset, replace=args.replace,
                                created_by="cli (LLM-written needles)", actor=setup.actor)
        except FormatError as e:
            return print_problems(e)
        except (DatasetExists, PermissionDenied) as e:
            print(f"error: {e}" + (" (use --replace)" if isinstance(e, DatasetExists) else ""),
                  file=sys.stderr)
            return 1
        print(done, file=sys.stderr if args.json else sys.stdout)
    return 0
