"""Verb ``rag-generate``: a model's answers to a grounding dataset, stored as an answer set
for ``rag-eval --stored`` (docs/rag.md, "Generating answers")."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import socket
import sys
from typing import Any

from needlework.cli import add_db_argument
from needlework.cli.judges import add_retries_argument

# The judge modules import openai: imported in the handler.
from needlework.judges.connection import MAX_TOKENS_CAP  # the page's cap, one place

DEMO_MAX_TOKENS = 64  # an answer, not a verdict: longer than the judge's 16 (and poor anyway)
ENDPOINT_MAX_TOKENS = 1024
DEMO_CONCURRENCY = 2  # the demo judge's server runs on two threads
#: Where the demo judge listens for this verb when the port is free
#: (``$NEEDLEWORK_DEMO_JUDGE_PORT`` overrides it). Its answers are cached whatever its port
#: (needlework.judges.local.cache_endpoint).
DEMO_PORT = 8566
DEMO_NOTE = ("note: the demo judge is a tiny model trained only on the judge's selection "
             "prompt; its answers are poor (expect few citations and no real content). It shows "
             "the workflow offline: point --base-url at a real model for real answers.")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "rag-generate", help="a model's answers to a grounding dataset, stored for rag-eval",
        description="Answer every question of grounding dataset NAME with a model behind any "
        "OpenAI-compatible endpoint, in GaRAGe's generation setting: the question with its "
        "date, its passages with their dates under [cite_N] markers, answers citing them, and "
        "the dataset's deflection sentence when the passages do not answer. The answers are "
        "stored as an answer set named after the model (--name to choose): evaluate them with "
        "'rag-eval --dataset NAME --stored'. Every answer is cached in the database as it "
        "arrives: a re-run sends no request, a killed run resumes.")
    p.add_argument("--dataset", required=True, metavar="NAME")
    p.add_argument("--base-url", metavar="URL",
                   help="API root of an OpenAI-compatible endpoint (e.g. http://127.0.0.1:8000/v1)")
    p.add_argument("--model", metavar="M", help="the model's name at that endpoint")
    p.add_argument("--demo-judge", action="store_true",
                   help="generate with the local demo judge (data/demo-judge, served on "
                   "127.0.0.1 for this run), offline; its answers are poor: a demo")
    p.add_argument("--name", default="", metavar="SET",
                   help="the answer set's name (default: the model's name; a set of that name "
                   "is replaced)")
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="only the first N questions (dataset order)")
    p.add_argument("--key-env", default="OPENAI_API_KEY", metavar="VAR",
                   help="environment variable holding the API key (never written anywhere)")
    p.add_argument("--concurrency", type=int, default=None, metavar="N",
                   help="requests in flight at once (default 4; 2 for the demo judge)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="S",
                   help="seconds to wait for one answer (default 120)")
    p.add_argument("--max-tokens", type=int, default=None, metavar="N",
                   help=f"longest answer in tokens (default {ENDPOINT_MAX_TOKENS}; "
                   f"{DEMO_MAX_TOKENS} for the demo judge; at most {MAX_TOKENS_CAP})")
    p.add_argument("--temperature", type=float, default=0.0, help="default 0 (greedy, as GaRAGe)")
    add_retries_argument(p)
    p.add_argument("--token-param", default="auto",
                   choices=("auto", "max_tokens", "max_completion_tokens"),
                   help="how the answer's length limit is named (OpenAI's reasoning models take "
                   "max_completion_tokens; auto: max_tokens, the other once refused)")
    p.add_argument("--context-window", type=int, default=None, metavar="N",
                   help="the model's window in tokens: longer prompts are not sent and are "
                   "reported (default: unknown, not checked; the demo judge's is known)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    add_db_argument(p)
    p.set_defaults(func=cmd_rag_generate)


def _fail(message: str, code: int = 1) -> int:
    print(message, file=sys.stderr)
    return code


def demo_port() -> int | None:
    """:data:`DEMO_PORT` (or ``$NEEDLEWORK_DEMO_JUDGE_PORT``) when nothing listens there,
    else ``None`` (a free port is taken)."""
    port = int(os.environ.get("NEEDLEWORK_DEMO_JUDGE_PORT") or DEMO_PORT)
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return None
    return port


def _check_args(args: argparse.Namespace) -> str | None:
    """Why the arguments cannot run, or ``None``."""
    if args.demo_judge and (args.base_url or args.model):
        return "rag-generate: give --demo-judge or --base-url and --model, not both"
    if not args.demo_judge and not (args.base_url and args.model):
        return ("rag-generate: give --base-url URL and --model M (an OpenAI-compatible endpoint), "
                "or --demo-judge (offline, a demo)")
    if args.max_tokens is not None and not 1 <= args.max_tokens <= MAX_TOKENS_CAP:
        return f"rag-generate: --max-tokens must be between 1 and {MAX_TOKENS_CAP}"
    if args.limit is not None and args.limit < 1:
        return "rag-generate: --limit must be at least 1"
    if args.concurrency is not None and args.concurrency < 1:
        return "rag-generate: --concurrency must be at least 1"
    return None


def cmd_rag_generate(args: argparse.Namespace) -> int:
    problem = _check_args(args)
    if problem:
        return _fail(problem, 2)
    from store import connect  # noqa: PLC0415
    from store.datasets import get_dataset  # noqa: PLC0415

    db = connect(args.db)
    row = get_dataset(db, args.dataset)
    if row is None:  # before any server starts
        return _fail(f"rag-generate: no dataset {args.dataset!r}")
    if row["kind"] != "grounding":
        return _fail(f"rag-generate: {args.dataset!r} is a {row['kind']} dataset, not a grounding one")
    if not args.demo_judge:
        return _generate(db, args, args.base_url, args.model, key_env=args.key_env or None,
                         window=args.context_window)
    from needlework.judges.local import context_window_of, demo_folder  # noqa: PLC0415
    from needlework.judges.serve import ServerError, start_server  # noqa: PLC0415

    folder = demo_folder()
    if not (folder / "config.json").is_file():
        return _fail(f"rag-generate: the demo judge is not installed in {folder}: "
                     "python -m needlework demo-models install")
    try:
        server = start_server(folder, port=demo_port(), threads=2)
    except ServerError as exc:
        return _fail(f"rag-generate: the demo judge did not start: {str(exc).splitlines()[0]}")
    with server:
        print(DEMO_NOTE, file=sys.stderr)
        return _generate(db, args, server.base_url, server.model, key_env=None,
                         window=args.context_window or context_window_of(server.model))


def _generate(db: Any, args: argparse.Namespace, base_url: str, model: str, *,
              key_env: str | None, window: int | None) -> int:
    from tqdm import tqdm  # noqa: PLC0415

    from needlework.judges.connection import Connection  # noqa: PLC0415
    from needlework.judges.errors import JudgeCancelled, JudgeError  # noqa: PLC0415
    from needlework.rag.generate import GenerateError, GenerateSpec, generate  # noqa: PLC0415
    from needlework.rag.questions import DatasetError  # noqa: PLC0415

    max_tokens = args.max_tokens or (DEMO_MAX_TOKENS if args.demo_judge else ENDPOINT_MAX_TOKENS)
    concurrency = args.concurrency or (DEMO_CONCURRENCY if args.demo_judge else 4)
    try:
        connection = Connection(base_url, model, key_env=key_env, timeout=args.timeout,
                                max_tokens=max_tokens, temperature=args.temperature,
                                concurrency=concurrency, context_window=window,
                                token_param=args.token_param, max_retries=args.max_retries)
    except (ValueError, TypeError) as exc:
        return _fail(f"rag-generate: {exc}", 2)
    bar = None if args.no_progress else tqdm(total=0, unit="answer", desc="generating answers",
                                             file=sys.stderr, dynamic_ncols=True)

    def progress(done: int, total: int) -> None:
        if bar is not None:
            bar.total = total
            bar.n = done
            bar.refresh()

    spec = GenerateSpec(args.dataset, connection, args.name, args.limit)
    try:
        report = generate(db, spec, progress=progress)
    except (DatasetError, GenerateError) as exc:
        return _fail(f"rag-generate: {exc}")
    except JudgeCancelled as exc:
        return _fail(f"error: {exc}", 130)
    except JudgeError as exc:
        return _fail(f"error: {exc} (answers received so far are cached: run again to resume)", 2)
    finally:
        if bar is not None:
            bar.close()
    summary = report.summary
    for item in summary["not_answered"]:
        print(f"no answer: {item['item_key']}: {item['reason']}", file=sys.stderr)
    flagged = summary.get("non_answers") or {}
    if flagged.get("line"):
        print(f"{summary['model']}: non-answer ids: {', '.join(flagged['ids'])}", file=sys.stderr)
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
        return 0
    print("\n".join(describe(summary)))
    return 0


def describe(summary: dict[str, Any]) -> list[str]:
    """The text report of a generation: what was asked of whom, what came back, the
    answers' form, the calls, and the command that evaluates the set."""
    gen, form, calls = summary["generator"], summary["form"], summary["calls"]
    asked = summary["questions"]["asked"]
    failed = summary.get("failed") or {}
    flagged = summary.get("non_answers") or {}
    defaults = "; ".join(str(d.get("words")) for d in calls.get("provider_defaults") or [])
    extra = [line for line in (summary.get("failures"), flagged.get("line"),
                               defaults and "parameters refused, the provider's default used: "
                               + defaults) if line]
    return [
        f"{summary['dataset']}: {asked} of {summary['questions']['total']} questions asked of "
        f"{gen['model']} at {gen['endpoint']} (prompt {summary['prompt_version']}); stored as "
        f"answer set {summary['model']!r}" + (" (replacing the set of that name)"
                                              if summary["replaced"] else ""),
        f"answers: {summary['answered']} of {asked}; {len(summary['not_answered'])} without one "
        f"(listed on stderr), {len(form['blank'])} blank, {len(form['deflections'])} deflections, "
        f"{len(form['uncited'])} citing no passage, {len(form['bad_citations'])} citing a passage "
        f"the question does not have, {flagged.get('count', 0)} not answers (no claim, blank included)",
        *extra,
        f"calls: {calls['sent']} sent, {calls['cached']} from the cache, "
        f"{failed.get('refused', 0)} refused, {failed.get('timed_out', 0)} timed out, "
        f"{failed.get('failed', 0)} failed (no answer, not cached), {calls['too_long']} too long",
        f"evaluate: python -m needlework rag-eval --dataset {shlex.quote(summary['dataset'])} "
        "--stored "
        "[--rules-judge | --judge-base-url URL --judge-model M]",
    ]
