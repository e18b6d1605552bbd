"""Verbs ``judge`` and ``judge-check``: LLM judges from the command line, and the connection
options every verb that sends requests shares. The local judges are served by
:mod:`needlework.cli.judges_serve`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TypedDict

from tqdm import tqdm

from needlework.cli import add_db_argument
from needlework.judges.connection import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_TOKENS,
    MAX_TOKENS_CAP,
    REASONING_EFFORTS,
    REASONING_MAX_TOKENS,
)

# The judge modules import openai: imported in the handlers.

CONNECTION_HELP = ("the API root of any OpenAI-compatible server, e.g. https://api.openai.com/v1, "
                   "http://127.0.0.1:8000/v1 (vLLM), http://127.0.0.1:11434/v1 (Ollama)")


def _add_connection_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--base-url", required=True, metavar="URL", help=CONNECTION_HELP)
    p.add_argument("--model", required=True, metavar="M", help="model name as the server knows it")
    p.add_argument("--key-env", default="OPENAI_API_KEY", metavar="VAR",
                   help="environment variable holding the API key (default OPENAI_API_KEY; "
                   "the key is never written anywhere)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="S",
                   help="seconds to wait for one answer (default 120)")
    p.add_argument("--max-tokens", type=int, default=None, metavar="N",
                   help=f"longest answer in tokens, at most {MAX_TOKENS_CAP:,} (default "
                   f"{DEFAULT_MAX_TOKENS}, {REASONING_MAX_TOKENS} with --reasoning-effort: a "
                   "reasoning model's thinking counts against it; for the local demo and rules "
                   "judges what the page starts them with)")
    p.add_argument("--temperature", type=float, default=0.0,
                   help="default 0; an endpoint that refuses it (OpenAI's reasoning models) "
                   "gets its own default, and the run says so")
    p.add_argument("--reasoning-effort", default=None, choices=REASONING_EFFORTS,
                   help="how hard a reasoning model thinks (sent as reasoning_effort only when "
                   "given; left out if the endpoint refuses it)")
    add_retries_argument(p)
    add_price_arguments(p)


def add_retries_argument(p: argparse.ArgumentParser) -> None:
    """``--max-retries``: how often a request is sent again after a timeout, 429 or 5xx (the
    same option on every verb that sends requests: judge, rag-eval, rag-generate,
    suggestions ask)."""
    p.add_argument("--max-retries", type=int, default=4, metavar="N",
                   help="retries of a request after a timeout, HTTP 429 or 5xx (default 4); a "
                   "request still failing is counted as failed, not as an answer")


def add_price_arguments(p: argparse.ArgumentParser) -> None:
    """``--input-price`` and ``--output-price``: the connection's price, for its cost."""
    p.add_argument("--input-price", type=float, default=None, metavar="P",
                   help="what a million prompt tokens cost (e.g. 0.15): the run's cost is "
                   "estimated before it and reported after it")
    p.add_argument("--output-price", type=float, default=None, metavar="P",
                   help="what a million completion tokens cost (e.g. 0.60)")


def add_estimate_argument(p: argparse.ArgumentParser) -> None:
    """``--estimate``: say what a run would send and cost, send nothing."""
    p.add_argument("--estimate", action="store_true",
                   help="print the requests the run would send, their tokens and (with a price) "
                   "their cost, and stop: nothing is sent")


class Settings(TypedDict):
    """What a judge sends with and how many requests at once (:func:`settings`)."""

    max_tokens: int
    concurrency: int


def settings(args: argparse.Namespace, model: str) -> Settings:
    """``max_tokens`` and ``concurrency`` as asked, else what the judge ``model`` starts with
    (:func:`needlework.judges.local.settings_for`: the same as the page's)."""
    from needlework.judges.local import settings_for  # noqa: PLC0415

    start = settings_for(model)
    budget = start["max_tokens"]
    if getattr(args, "reasoning_effort", None) and budget == DEFAULT_MAX_TOKENS:
        budget = REASONING_MAX_TOKENS  # room for the reasoning before the answer
    return {"max_tokens": budget if args.max_tokens is None else args.max_tokens,
            "concurrency": (start["concurrency"] if getattr(args, "concurrency", None) is None
                            else args.concurrency)}


def report_estimate(estimate, args: argparse.Namespace) -> bool:  # noqa: ANN001 - cost.Estimate
    """Say what a run will send and cost: on stderr before it runs, above its progress bar
    (not with ``--no-progress``, which leaves stderr to warnings and errors), or, with
    ``--estimate``, on stdout (``{"estimate": ...}`` with ``--json``). True when the run
    should stop here."""
    if not getattr(args, "estimate", False):
        if not getattr(args, "no_progress", False):
            print(f"estimate: {estimate.words()}", file=sys.stderr)
        return False
    if args.json:
        print(json.dumps({"estimate": estimate.as_dict()}, indent=2))
    else:
        print(estimate.words())
    return True


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "judge", help="evaluate a preference dataset with an LLM judge (selection or scoring)",
        description="Send every item of dataset NAME to a judge behind an OpenAI-compatible "
        "endpoint. selection: the judge sees the prompt and all responses (shuffled with a "
        "recorded seed, or in every rotation with --rotations) and names the best; scoring: "
        "it rates each response alone (ties and invalid answers count wrong). Every answer is "
        "cached in the database as it arrives: a re-run sends no request, a killed run resumes.")
    p.add_argument("--dataset", required=True, metavar="NAME")
    _add_connection_arguments(p)
    p.add_argument("--mode", required=True, choices=("selection", "scoring"))
    p.add_argument("--rotations", action="store_true",
                   help="selection: show every rotation of the responses (both orders of a "
                   "pair) and report position bias; always on for needle datasets")
    p.add_argument("--seed", type=int, default=0, help="seed of the shuffled order (default 0)")
    p.add_argument("--subset", action="append", default=[], metavar="NAME",
                   help="judge only this subset's items (repeat for several; default all)")
    p.add_argument("--per-subset", type=int, default=None, metavar="N",
                   help="judge at most N items of each subset, to try a judge on a few items "
                   "first: the first N in import order; of a needle dataset N pairs of each "
                   "length, a seeded sample spread over the needle positions, not the first "
                   "ones (a run on part of the set is kept apart from a full run)")
    p.add_argument("--concurrency", type=int, default=None, metavar="N",
                   help=f"requests in flight at once (default {DEFAULT_CONCURRENCY}; for the "
                   "local demo judge what the page starts it with)")
    p.add_argument("--token-param", default="auto",
                   choices=("auto", "max_tokens", "max_completion_tokens"),
                   help="how the answer's length limit is named (OpenAI's reasoning models take "
                   "max_completion_tokens; auto: max_tokens, the other once refused)")
    p.add_argument("--structured", action="store_true",
                   help="send each prompt's answer schema as response_format (JSON schema)")
    p.add_argument("--context-window", type=int, default=None, metavar="N",
                   help="the judge's window in tokens; longer prompts follow --truncation "
                   "(default: unknown, not checked)")
    p.add_argument("--truncation", default="skip", choices=("skip", "keep-start", "keep-end"),
                   help="prompts over the window: skip them (default), or cut every response "
                   "to its share keeping its start or its end; always reported")
    p.add_argument("--template", metavar="FILE",
                   help="the prompt's template instead of the paper's: text with placeholders "
                   "such as {question} and {responses} (or JSON {\"user\": ..., \"system\": ...}); "
                   "see docs/judges.md, Prompt templates")
    p.add_argument("--out", metavar="FILE",
                   help="write the results as Long-form RewardBench-shaped JSONL (metrics reads it)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_estimate_argument(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    add_db_argument(p)
    p.set_defaults(func=cmd_judge)

    p = subparsers.add_parser(
        "judge-check", help="test a judge connection and say in one line what is wrong",
        description="Send one tiny chat completion; print 'ok: ...' or what is wrong "
        "(server down, timeout, bad key, wrong model name, ...). Exit 0 when it answers.")
    _add_connection_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_judge_check)


def _fail(message: str, code: int = 2) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def _connection(args: argparse.Namespace):  # noqa: ANN202
    """The connection the arguments describe, checked against the limits the page holds
    (``ValueError`` at once, before any request); a local demo judge's context window is
    read from its folder when none is given, as the page does."""
    from needlework.judges.connection import Connection  # noqa: PLC0415
    from needlework.judges.local import context_window_of  # noqa: PLC0415

    window = getattr(args, "context_window", None)
    return Connection(args.base_url, args.model, key_env=args.key_env or None,
                      timeout=args.timeout, temperature=args.temperature,
                      token_param=getattr(args, "token_param", "auto"),
                      structured=getattr(args, "structured", False),
                      context_window=window or context_window_of(args.model),
                      input_price=args.input_price, output_price=args.output_price,
                      reasoning_effort=getattr(args, "reasoning_effort", None),
                      max_retries=getattr(args, "max_retries", 4),
                      **settings(args, args.model))


def select_subsets(args: argparse.Namespace, items: list[Any]
                   ) -> tuple[dict[str, Any], list[Any], str | None]:
    """What ``--subset`` and ``--per-subset`` choose of ``items`` ((key, preference)
    pairs): the selection as the run records it, the items kept, and why none can be
    (a subset the dataset does not have), else ``None``."""
    from needlework.judges.plan import select_items  # noqa: PLC0415

    selection: dict[str, Any] = {
        k: v for k, v in (("subsets", sorted(set(args.subset))), ("per_subset", args.per_subset))
        if v}
    if not selection:
        return selection, items, None
    known = {p.subset for _, p in items}
    unknown = [name for name in selection.get("subsets", []) if name not in known]
    if unknown:
        return selection, items, (f"{args.dataset} has no subset {unknown[0]!r} (it has: "
                                  f"{', '.join(sorted(known)) or 'none'})")
    return selection, select_items(items, subsets=selection.get("subsets"),
                                   per_subset=selection.get("per_subset")), None


def cmd_judge(args: argparse.Namespace) -> int:
    from needlework.judges import cost  # noqa: PLC0415
    from needlework.judges.engine import write_output  # noqa: PLC0415
    from needlework.judges.plan import DatasetNotFound, load_items  # noqa: PLC0415
    from store import connect  # noqa: PLC0415

    if args.per_subset is not None and args.per_subset < 1:
        return _fail(f"--per-subset must be at least 1, got {args.per_subset}")
    try:
        connection = _connection(args)
    except (ValueError, TypeError) as exc:
        return _fail(str(exc))
    from needlework.judges.local import mode_refusal  # noqa: PLC0415

    if (refusal := mode_refusal(connection.model, args.mode)) is not None:
        return _fail(f"{refusal} (--mode selection)")
    try:
        template = prompt_template(args.mode, connection.model, args.template)
    except (OSError, ValueError) as exc:
        return _fail(str(exc))
    db = connect(args.db)
    try:
        row, items = load_items(db, args.dataset)
    except DatasetNotFound as exc:
        return _fail(str(exc).strip("'\""), 1)
    connection = reasoning_budget(db, connection, args)
    # the same selection as the page's job (needlework.judges.job): the same run
    selection, items, unknown = select_subsets(args, items)
    if unknown:
        return _fail(unknown, 1)
    order = "rotations" if args.rotations or row["kind"] == "needle" else "shuffle"
    estimate = cost.estimate(db, connection, cost.judge_requests(
        connection, items, args.mode, order=order, seed=args.seed, context_policy=args.truncation,
        template=template))
    if report_estimate(estimate, args):
        return 0
    run = _run_with_progress(args, db, connection, items, format_name=row["format"],
                             order=order, selection=selection, template=template)
    if isinstance(run, int):
        return run
    if args.out:
        write_output(args.out, run)
    summary = run.summary
    for t in summary["too_long"]:
        action = "skipped" if t["skipped"] else f"cut ({args.truncation})"
        print(f"warning: item {t['item_key']} trial {t['trial']}: prompt of {t['prompt_tokens']} "
              f"tokens over the window of {connection.context_window}: {action}", file=sys.stderr)
    if args.json:
        print(json.dumps({**summary, "estimate": estimate.as_dict()}, indent=2))
        return 0
    _print_summary(args, summary, connection, template)
    return 0


def _run_with_progress(args: argparse.Namespace, db, connection,  # noqa: ANN001, ANN202
                       items: list[Any], *, format_name: str, order: str,
                       selection: dict[str, Any], template):  # noqa: ANN001 - a Template
    """Run the judge over ``items`` as the arguments say, with a progress bar on stderr
    (none with ``--no-progress``): the :class:`~needlework.judges.engine.JudgeRun`, or the
    exit code of a run that was cancelled or failed (said on stderr)."""
    from needlework.judges.engine import run_judge  # noqa: PLC0415
    from needlework.judges.errors import JudgeCancelled, JudgeError  # noqa: PLC0415

    bar = None
    if not args.no_progress:
        bar = tqdm(total=0, unit="call", desc=f"judging ({args.mode})", file=sys.stderr,
                   dynamic_ncols=True)

    def progress(done: int, total: int) -> None:
        if bar is not None:
            bar.total = total
            bar.n = done
            bar.refresh()

    try:
        return run_judge(db, connection, items, args.mode, dataset=args.dataset,
                         format_name=format_name, order=order, seed=args.seed,
                         context_policy=args.truncation, progress=progress,
                         selection=selection or None, template=template)
    except JudgeCancelled as exc:
        return _fail(str(exc), 130)
    except JudgeError as exc:
        if str(exc).startswith("no answers"):
            return _fail(str(exc))
        return _fail(f"{exc} (answers received so far are cached: run again to resume)")
    finally:
        if bar is not None:
            bar.close()


def _print_summary(args: argparse.Namespace, summary: dict[str, Any],
                   connection, template) -> None:  # noqa: ANN001 - a Connection, a Template
    """A judge run's summary in words on stdout: the headline, failures, the provider's
    defaults, answers cut off, the prompt, the cost, each subset and the position bias."""
    from needlework.figures.lines import judge_lines  # noqa: PLC0415
    from needlework.figures.stats_text import number_range, percent  # noqa: PLC0415
    from needlework.judges import cost  # noqa: PLC0415
    from needlework.judges.evaluate import failure_words  # noqa: PLC0415
    from needlework.judges.results import provider_defaults  # noqa: PLC0415

    acc = summary["accuracy"]
    rate = summary["invalid_rate"]
    print(f"{args.dataset}: {summary['mode']} by {summary['model']}: accuracy "
          f"{'n/a' if acc is None else f'{acc:.4f}'}, invalid {summary['invalid']} of "
          f"{summary['answered']} ({'n/a' if rate is None else percent(rate, space=False)}), "
          f"{summary['skipped']} skipped; {summary['requests']} requests, "
          f"{summary['cached']} from cache")
    if (failed := failure_words(summary)) is not None:
        print(f"  {failed}")
    for words in provider_defaults(summary):
        print(f"  {words}")
    if summary.get("cut_off"):
        print(f"  {summary['cut_off']} answers cut off at the length limit "
              f"({connection.max_tokens} tokens): raise --max-tokens")
    print(f"  prompt: {template.label}, {template.source}")
    print(f"  cost: {cost.Actual.from_dict(summary['cost']).words()}")
    figures = judge_lines(summary)  # counts and intervals: the headline, then each subset
    print(f"  {figures[0]}")
    for part, line in zip(summary["subsets"].values(), figures[1:], strict=False):
        r = part.get("invalid_rate")
        lost = f", failed {part['failed']}" if part.get("failed") else ""
        print(f"{line}; invalid {'n/a' if r is None else percent(r, space=False)}{lost}")
    for line in figures[1 + len(summary["subsets"]):]:
        print(f"  {line.strip()}")
    for n, bias in (summary.get("position_bias") or {}).items():
        acc_pos = ", ".join(
            "n/a" if a is None else f"{a:.2f} ({number_range(ci, 2)}, n={seen})"
            for a, ci, seen in zip(bias["accuracy_by_position"], bias["interval_by_position"],
                                   bias["trials_by_position"], strict=True))
        print(f"  position bias ({n} responses): accuracy by position of the chosen [{acc_pos}], "
              f"spread {_two(bias['spread'])}, consistency {_two(bias['consistency'])} "
              f"(over {bias.get('groups')} fully answered groups)")


def reasoning_budget(db, connection, args: argparse.Namespace):  # noqa: ANN001, ANN201
    """``connection`` with the reasoning default length limit (:data:`REASONING_MAX_TOKENS`)
    when no ``--max-tokens`` was given, the limit is the plain default and an answer of
    this model at this endpoint reported reasoning tokens and was cut off at the limit
    (said on stderr); else as is, so a run that was not cut off is the same run again."""
    from store.judges import cut_while_reasoning  # noqa: PLC0415

    if args.max_tokens is not None or connection.max_tokens != DEFAULT_MAX_TOKENS or \
            not cut_while_reasoning(db, connection.endpoint, connection.model):
        return connection
    if connection.context_window is not None and connection.context_window <= REASONING_MAX_TOKENS:
        return connection
    print(f"note: {connection.model} was cut off while reasoning before: max tokens "
          f"{REASONING_MAX_TOKENS} (room to think; --max-tokens sets another)", file=sys.stderr)
    return connection.with_options(max_tokens=REASONING_MAX_TOKENS)


def _two(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def prompt_template(mode: str, model: str, path: str | None):  # noqa: ANN201 - a Template
    """The run's template: the file at ``path`` (checked against ``mode``), else the mode's
    default for ``model`` (the paper's; the demo judge's own wording for the demo judge)."""
    from needlework.judges.prompts import default_template  # noqa: PLC0415
    from needlework.judges.templates import from_file  # noqa: PLC0415

    base = default_template(mode, model)
    return base if path is None else from_file(base, path)


def cmd_judge_check(args: argparse.Namespace) -> int:
    from needlework.judges.client import check_connection  # noqa: PLC0415

    try:
        connection = _connection(args)
    except (ValueError, TypeError) as exc:
        return _fail(str(exc))
    check = check_connection(connection)
    if args.json:
        print(json.dumps(check.as_dict()))
    else:
        print(check.message)
    return 0 if check.ok else 2
