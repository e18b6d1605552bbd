"""Verb ``suggestions``: ask a judge for them, take them from a scoring run, import, list
and delete model suggestions (docs/suggestions.md).

An import is all or nothing: every problem is printed on stderr (file, line, field) and
nothing is stored unless every line is right. ``ask`` runs the ``suggest`` job in this
process (the same job the app runs): every judge answer is cached as it arrives and each
page of questions is committed, so a killed run resumes where it stopped.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from needlework.cli import add_db_argument
from needlework.cli.acting import Stop, acting_user, add_as_argument
from needlework.cli.judges import (
    add_estimate_argument,
    add_price_arguments,
    add_retries_argument,
    report_estimate,
    settings,
)
from needlework.formats import FormatError
from needlework.judges.connection import DEFAULT_CONCURRENCY, DEFAULT_MAX_TOKENS
from needlework.suggest.data import import_suggestions
from store import connect
from store.suggestions import dataset_suggestions, delete_source, suggestion_sources


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

    q = sub.add_parser("ask", help="ask a judge for passage labels and dimensions of a "
                       "grounding dataset",
                       description="One judge prompt per passage (GaRAGe's label definitions) "
                       "and, with --dims, one per question for its dimensions. Questions "
                       "this source has suggested for already are skipped (--replace asks "
                       "again); answers are cached, a killed run resumes.")
    q.add_argument("--dataset", required=True)
    q.add_argument("--judge-base-url", metavar="URL",
                   help="API root of an OpenAI-compatible judge (e.g. http://127.0.0.1:8000/v1)")
    q.add_argument("--judge-model", metavar="M", help="the judge's model name")
    q.add_argument("--rules-judge", action="store_true",
                   help="the rules judge (word-overlap rules, not an LLM; served on 127.0.0.1 "
                   "for this run) instead of --judge-base-url")
    q.add_argument("--judge-key-env", default="OPENAI_API_KEY", metavar="VAR",
                   help="environment variable holding the judge's API key (never written anywhere)")
    q.add_argument("--concurrency", type=int, default=None, metavar="N",
                   help=f"requests in flight at once (default {DEFAULT_CONCURRENCY}; for the "
                   "local demo judge what the page starts it with)")
    q.add_argument("--max-tokens", type=int, default=None, metavar="N",
                   help=f"longest answer in tokens (default {DEFAULT_MAX_TOKENS}; for the local "
                   "demo and rules judges what the page starts them with)")
    q.add_argument("--timeout", type=float, default=120.0, metavar="S",
                   help="seconds to wait for one answer (default 120)")
    add_retries_argument(q)
    add_price_arguments(q)
    add_estimate_argument(q)
    add_as_argument(q)
    q.add_argument("--token-param", default="auto",
                   choices=("auto", "max_tokens", "max_completion_tokens"),
                   help="how the answer's length limit is named (auto: max_tokens, the other "
                   "once refused)")
    q.add_argument("--structured", action="store_true",
                   help="send the answer's JSON schema as response_format")
    q.add_argument("--no-labels", action="store_true", help="do not ask for passage labels")
    q.add_argument("--dims", action="store_true", help="also ask for the question dimensions")
    q.add_argument("--source", default="", help="the source's name (default: judge:MODEL)")
    q.add_argument("--replace", action="store_true",
                   help="ask again for questions this source has suggested for")
    q.add_argument("--json", action="store_true", help="print the job's result as JSON")
    add_db_argument(q)
    q.set_defaults(func=cmd_ask)

    q = sub.add_parser("from-scores", help="suggest verdicts of a preference dataset from a "
                       "reward model's margins or a judge run")
    q.add_argument("--dataset", required=True)
    q.add_argument("--run", default=None, metavar="FINGERPRINT",
                   help="the scoring run (as `suggestions from-scores --list` shows; default: "
                   "the newest)")
    q.add_argument("--list", action="store_true", help="list the dataset's scoring runs")
    add_db_argument(q)
    q.set_defaults(func=cmd_from_scores)

    q = sub.add_parser("seed-demo", help="suggestions on the demo data, offline (the rules "
                       "judge; the demo reward model's margins)")
    q.add_argument("--model", default="data/demo-model",
                   help="the demo reward model's folder (default data/demo-model)")
    add_db_argument(q)
    q.set_defaults(func=cmd_seed_demo)

    q = sub.add_parser("list", help="each source's suggestions in a dataset",
                       description="One line per source (how many suggestions, for how many "
                       "items, when last); with --json every suggestion itself, as a JSON list "
                       "in the shape `suggestions import` reads.")
    q.add_argument("--dataset", required=True)
    q.add_argument("--source", default=None, metavar="NAME", help="only this source's")
    q.add_argument("--json", action="store_true",
                   help="print every suggestion as a JSON list: item, field, value, score, "
                   "confidence, source, detail, created_by, created_at")
    add_db_argument(q)
    q.set_defaults(func=cmd_list)

    q = sub.add_parser("delete", help="delete one source's suggestions in a dataset")
    q.add_argument("--dataset", required=True)
    q.add_argument("--source", required=True)
    add_db_argument(q)
    q.set_defaults(func=cmd_delete)

    q = sub.add_parser("timing", help="when annotators see a dataset's suggestions (always, "
                       "after their own label, never) and for whom",
                       description="Against anchoring: with --when after, a suggestion shows "
                       "only once the annotator saved their own value of the field; with "
                       "--for, the choice applies to those annotators only and the others "
                       "see none (two groups to compare). Without --when: print the setting.")
    q.add_argument("--dataset", required=True)
    q.add_argument("--when", choices=("always", "after", "never"), default=None)
    q.add_argument("--for", dest="names", nargs="+", default=[], metavar="NAME",
                   help="the annotators the choice applies to (default: everyone)")
    add_as_argument(q)
    add_db_argument(q)
    q.set_defaults(func=cmd_timing)


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


def cmd_ask(args: argparse.Namespace) -> int:
    from needlework.rag.rules_server import start_rules_server  # noqa: PLC0415

    fields = _ask_fields(args)
    if not fields:
        return 2
    if not args.rules_judge:
        return _ask(args, fields, args.judge_base_url, args.judge_model,
                    args.judge_key_env or None)
    with start_rules_server() as rules:
        return _ask(args, fields, rules.base_url, rules.model, None)


def _ask_fields(args: argparse.Namespace) -> tuple[str, ...]:
    """The fields to ask for, once the judge's arguments agree; ``()`` (said on stderr)
    when they do not, or nothing is asked for."""
    from needlework.suggest.job import DIMS, LABELS  # noqa: PLC0415

    if args.rules_judge == bool(args.judge_base_url and args.judge_model) or (
            bool(args.judge_base_url) != bool(args.judge_model)):
        print("suggestions ask: give --rules-judge, or --judge-base-url and --judge-model",
              file=sys.stderr)
        return ()
    fields = tuple(f for f, on in ((LABELS, not args.no_labels), (DIMS, args.dims)) if on)
    if not fields:
        print("suggestions ask: nothing to ask for (--no-labels without --dims)", file=sys.stderr)
    return fields


def _ask(args: argparse.Namespace, fields: tuple[str, ...], base_url: str, model: str,
         key_env: str | None) -> int:
    """Ask the judge at ``base_url``: its connection, the cost estimate, the job."""
    from needlework.judges import cost  # noqa: PLC0415
    from needlework.judges.connection import Connection  # noqa: PLC0415
    from needlework.judges.local import context_window_of  # noqa: PLC0415
    from needlework.suggest.job import SuggestError, SuggestSpec, run_suggest_here  # noqa: PLC0415

    try:
        conn = Connection(base_url, model, key_env=key_env, timeout=args.timeout,
                          context_window=context_window_of(model),
                          token_param=args.token_param, structured=args.structured,
                          input_price=args.input_price, output_price=args.output_price,
                          max_retries=args.max_retries, **settings(args, model))
        spec = SuggestSpec(args.dataset, conn, fields, args.source, args.replace)
        db = connect(args.db)
        actor = acting_user(args, db, "suggestions ask")
        estimate = cost.estimate(db, conn, cost.suggest_requests(db, spec))
        if report_estimate(estimate, args):
            return 0
        row = run_suggest_here(db, args.db, spec, by=actor)
    except (ValueError, TypeError, SuggestError, Stop) as exc:
        print(f"suggestions ask: {exc}", file=sys.stderr)
        return 2
    return _print_asked(args, row, estimate, cost.actual_of_calls(row.get("result") or {},
                                                                  cost.price_of(conn)))


def _print_asked(args: argparse.Namespace, row: dict[str, Any], estimate: Any, spent: Any) -> int:
    """The job's outcome: JSON, or a line of counts and what it cost; 1 when it failed."""
    result = row.get("result") or {}
    if args.json:
        print(json.dumps({"status": row["status"], "error": row.get("error"), **result,
                          "cost": {"estimate": estimate.as_dict(),
                                   "actual": spent.as_dict()}}, indent=2))
    elif row["status"] == "done":
        print(f"{result['suggestions']} suggestion(s) from {result['source']} for "
              f"{result['questions']} question(s) of {args.dataset} ({result['skipped']} "
              f"skipped: suggested before; {result['sent']} request(s) sent, "
              f"{result['cached']} from the cache, {result['invalid']} answer(s) unreadable)")
        if result.get("failures"):
            print(f"failed requests: {result['failures']}; nothing stored for them, a new "
                  "run asks again")
        print(f"cost: {spent.words()}")
        if result.get("example_invalid"):
            print(f"unreadable, for example: {result['example_invalid']}", file=sys.stderr)
    if row["status"] != "done":
        print(f"suggestions ask: {row['status']}: {row.get('error') or ''}".rstrip(": "),
              file=sys.stderr)
        return 1
    return 0


def cmd_from_scores(args: argparse.Namespace) -> int:
    from needlework.suggest.verdicts import suggest_verdicts  # noqa: PLC0415
    from store.review import scored_runs  # noqa: PLC0415

    db = connect(args.db)
    runs = scored_runs(db, args.dataset)
    if args.list or not runs:
        if not runs:
            print(f"{args.dataset} has no scoring run: score it with a reward model or a judge "
                  "first", file=sys.stderr)
            return 0 if args.list else 1
        for r in runs:
            print(f"{r['fingerprint']}  {r['model']} ({r['variant']}), {r['items']} item(s), "
                  f"{r['updated_at']}")
        return 0
    run = args.run or runs[0]["fingerprint"]
    try:
        done = suggest_verdicts(db, args.dataset, run, who="cli")
    except ValueError as exc:
        print(f"suggestions from-scores: {exc}", file=sys.stderr)
        return 1
    print(f"{done['suggestions']} verdict suggestion(s) from {done['source']} for "
          f"{done['items']} item(s) of {args.dataset}")
    return 0


def cmd_seed_demo(args: argparse.Namespace) -> int:
    from needlework.rewards.errors import RewardModelError  # noqa: PLC0415
    from needlework.suggest.demo import seed_demo_suggestions  # noqa: PLC0415

    try:
        lines = seed_demo_suggestions(connect(args.db), args.db, args.model)
    except RewardModelError as exc:
        print(f"suggestions seed-demo: {exc}", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    db = connect(args.db)
    if args.json:  # the suggestions themselves, in the import file's shape (it reads them back)
        print(json.dumps([{"item": r["item_key"], "field": r["field"], "value": r["value"],
                           "score": r["score"], "confidence": r["confidence"],
                           "source": r["source"], "detail": r["detail"],
                           "created_by": r["created_by"], "created_at": r["created_at"]}
                          for r in dataset_suggestions(db, args.dataset, args.source)],
                         indent=2, ensure_ascii=False))
        return 0
    rows = [r for r in suggestion_sources(db, args.dataset)
            if args.source is None or r["source"] == args.source]
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


def cmd_timing(args: argparse.Namespace) -> int:
    from needlework.teams.blind import TIMINGS, set_suggestion_timing, suggestion_setting  # noqa: PLC0415
    from needlework.teams.config import team_mode  # noqa: PLC0415
    from store.datasets import get_dataset  # noqa: PLC0415

    db = connect(args.db)
    if get_dataset(db, args.dataset) is None:
        print(f"suggestions timing: no dataset {args.dataset!r}", file=sys.stderr)
        return 1
    if args.when is None:
        if args.names:
            print("suggestions timing: --for needs --when", file=sys.stderr)
            return 2
    else:
        from needlework.teams.permissions import PermissionDenied  # noqa: PLC0415

        try:
            set_suggestion_timing(db, args.dataset, args.when, args.names,
                                  actor=acting_user(args, db, "suggestions timing"))
        except (Stop, PermissionDenied) as e:
            print(f"suggestions timing: {e}", file=sys.stderr)
            return 1
    now = suggestion_setting(db, args.dataset, team=team_mode())
    who = (f"for {', '.join(now.names)} (the other annotators see none)" if now.names
           else "for every annotator")
    print(f"{args.dataset}: {now.when}: {TIMINGS[now.when]}, {who}")
    return 0
