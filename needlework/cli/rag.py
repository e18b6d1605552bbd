"""Verbs ``answer-metrics`` and ``rag-eval``: RAG answer evaluation from the command line
(docs/rag.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from needlework.cli import add_db_argument
from needlework.cli.judges import (
    add_estimate_argument,
    add_price_arguments,
    add_retries_argument,
    report_estimate,
    settings,
)
from needlework.judges.connection import DEFAULT_CONCURRENCY, DEFAULT_MAX_TOKENS, MAX_TOKENS_CAP

# The judge modules import openai: imported in the handlers.

SHOWN = (("eligibility", "Elig"), ("unadjusted_factuality", "UnadjFact"), ("factuality", "Fact"),
         ("uraf", "uRAF"), ("raf", "RAF"), ("deflection_tpr", "DeflTPR"),
         ("deflection_fpr", "DeflFPR"), ("llmeval", "LLMeval"), ("F1", "F1"),
         ("Rouge-L", "ROUGE-L"), ("attribution_f1", "AttrF1"))


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "answer-metrics", help="BERGEN's answer metrics (match, EM, F1, ROUGE, ...) of a file",
        description="Score generated answers with BERGEN's metrics (M, EM, token P/R/F1, "
        "character-3-gram recall, ROUGE-1/2/L from the rouge package, best over the "
        "references). FILE is either BERGEN's own generation output (a JSON array of "
        "{q_id, question, response, label: [gold answers]}) or a model answers file (JSONL "
        "{sample_id, answer[, model]}) scored against the human answers of --dataset.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--dataset", metavar="NAME",
                   help="grounding dataset whose human answers are the references (answers files)")
    p.add_argument("--with-related", action="store_true",
                   help="also use answer_related_info as a reference (answers files)")
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    add_db_argument(p)
    p.set_defaults(func=cmd_answer_metrics)

    p = subparsers.add_parser(
        "rag-eval", help="GaRAGe judge metrics and BERGEN metrics of model answers",
        description="Evaluate model answers on grounding dataset NAME: BERGEN's answer metrics "
        "and attribution always; with a judge (--judge-base-url, --judge-model) also "
        "eligibility, unadjusted factuality, factuality, uRAF, RAF, deflection TPR/FPR and "
        "LLMeval, overall and by question dimension, models side by side. Every judge answer "
        "is cached in the database as it arrives: a re-run sends no request, a killed run "
        "resumes.")
    p.add_argument("--dataset", required=True, metavar="NAME")
    p.add_argument("--answers", action="append", default=[], metavar="FILE",
                   help="a model answers file (JSONL {sample_id, answer[, model]}); repeat for "
                   "several models")
    p.add_argument("--stored", action="store_true",
                   help="also evaluate the answer sets stored for the dataset (the demo's)")
    p.add_argument("--judge-base-url", metavar="URL",
                   help="API root of an OpenAI-compatible judge (e.g. http://127.0.0.1:8000/v1)")
    p.add_argument("--judge-model", metavar="M", help="the judge's model name")
    p.add_argument("--rules-judge", action="store_true",
                   help="judge with the rules judge (fixed word-overlap rules, not an LLM; "
                   "served on 127.0.0.1 for this run) instead of --judge-base-url")
    p.add_argument("--judge-key-env", default="OPENAI_API_KEY", metavar="VAR",
                   help="environment variable holding the judge's API key (never written anywhere)")
    p.add_argument("--concurrency", type=int, default=None, metavar="N",
                   help=f"judge requests in flight at once (default {DEFAULT_CONCURRENCY}; for "
                   "the local demo judge what the page starts it with)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="S",
                   help="seconds to wait for one answer (default 120)")
    p.add_argument("--max-tokens", type=int, default=None, metavar="N",
                   help=f"longest judge answer in tokens, at most {MAX_TOKENS_CAP:,} (default "
                   f"{DEFAULT_MAX_TOKENS}; for the local demo and rules judges what the page "
                   "starts them with)")
    p.add_argument("--temperature", type=float, default=0.0, help="default 0")
    add_retries_argument(p)
    add_price_arguments(p)
    p.add_argument("--token-param", default="auto",
                   choices=("auto", "max_tokens", "max_completion_tokens"),
                   help="how the answer's length limit is named (OpenAI's reasoning models take "
                   "max_completion_tokens; auto: max_tokens, the other once refused)")
    p.add_argument("--structured", action="store_true",
                   help="send each prompt's answer schema as response_format (JSON schema)")
    p.add_argument("--context-window", type=int, default=None, metavar="N",
                   help="the judge's window in tokens: longer prompts are not sent and are "
                   "reported (default: unknown, not checked)")
    p.add_argument("--with-related", action="store_true",
                   help="also use answer_related_info as a reference for BERGEN's metrics")
    p.add_argument("--template", action="append", default=[], metavar="MODE=FILE",
                   help="a judge prompt's template instead of the paper's, for one of "
                   "eligibility, factuality, deflection, llmeval (repeat for several); see "
                   "docs/rag.md")
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    add_estimate_argument(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    add_db_argument(p)
    p.set_defaults(func=cmd_rag_eval)


def _fail(message: str, code: int = 1) -> int:
    print(message, file=sys.stderr)
    return code


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _read_file(path: Path) -> bytes:
    from needlework.formats.reader import open_input  # noqa: PLC0415

    stream, _ = open_input(path)
    with stream:
        return stream.read()


def cmd_answer_metrics(args: argparse.Namespace) -> int:
    from needlework.formats.errors import FormatError  # noqa: PLC0415
    from needlework.formats.json_array import is_json_array  # noqa: PLC0415
    from needlework.formats.reader import decode  # noqa: PLC0415
    from needlework.rag.answers import parse_answers  # noqa: PLC0415
    from needlework.rag.bergen import METRICS  # noqa: PLC0415
    from needlework.rag.bergen_file import parse_bergen_output, score_rows  # noqa: PLC0415

    path = Path(args.file)
    try:
        text = decode(_read_file(path), path.name)
        if is_json_array(text):
            report = {"file": path.name, "format": "bergen",
                      **score_rows(parse_bergen_output(text, path.name))}
            means = {"(file)": report["mean"]}
        else:
            if not args.dataset:
                return _fail(f"{path.name}: a model answers file is scored against a grounding "
                             "dataset's human answers: give --dataset NAME")
            sets = parse_answers(text, path.name)
            from needlework.rag.questions import DatasetError  # noqa: PLC0415
            from needlework.rag.run import answer_metrics  # noqa: PLC0415
            from store import connect  # noqa: PLC0415

            try:
                report = {"file": path.name, "format": "answers",
                          **answer_metrics(connect(args.db), args.dataset, sets,
                                           with_related=args.with_related)}
            except DatasetError as exc:
                return _fail(f"answer-metrics: {exc}")
            means = {model: part["mean"] for model, part in report["models"].items()}
    except FormatError as exc:
        return _fail(str(exc))
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
        return 0
    print("model\t" + "\t".join(METRICS))
    for model, mean in means.items():
        print(model + "\t" + "\t".join(_fmt(mean[m]) for m in METRICS))
    for model, part in report.get("models", {}).items():
        print(coverage_note(model, part["coverage"], report["scored"]))
    for item in report.get("not_scored", []):
        key = item.get("q_id") or item.get("item_key")
        print(f"not scored: {key}: {item['reason']}", file=sys.stderr)
    return 0


def _ids(ids: list[str], shown: int = 10) -> str:
    return ", ".join(ids[:shown]) + (f", … {len(ids) - shown} more" if len(ids) > shown else "")


def coverage_note(model: str, coverage: dict[str, Any], scored: int) -> str:
    """One line under ``answer-metrics``' table for an answers file: over how many
    questions ``model``'s means are taken, and how its missing and blank answers count
    (as the empty answer: 0 on every metric, inside the means)."""
    missing, blank = coverage["missing_ids"], coverage["empty_ids"]
    line = f"{model}: means over the {scored} questions with a human answer"
    if missing or blank:
        gaps = [f"{len(missing)} without an answer ({_ids(missing)})" if missing else "",
                f"{len(blank)} blank ({_ids(blank)})" if blank else ""]
        line += (f"; {' and '.join(g for g in gaps if g)}: each scored as the empty answer "
                 "(0 on every metric) and counted in the means")
    else:
        line += "; every one answered"
    flagged = [k for k in coverage.get("non_answer_ids") or [] if k not in blank]
    if flagged:
        line += (f"; {len(flagged)} non-answer(s) (no claim: {_ids(flagged)}): scored as the "
                 "empty answer")
    if coverage["unknown_ids"]:
        line += f"; {len(coverage['unknown_ids'])} answer(s) for unknown ids ignored"
    return line


def _connection(args: argparse.Namespace):  # noqa: ANN202
    from needlework.judges.connection import Connection  # noqa: PLC0415
    from needlework.judges.local import context_window_of  # noqa: PLC0415

    return Connection(args.judge_base_url, args.judge_model, key_env=args.judge_key_env or None,
                      timeout=args.timeout, temperature=args.temperature,
                      context_window=args.context_window or context_window_of(args.judge_model),
                      token_param=args.token_param, structured=args.structured,
                      input_price=args.input_price, output_price=args.output_price,
                      max_retries=args.max_retries, **settings(args, args.judge_model))


def cmd_rag_eval(args: argparse.Namespace) -> int:
    if bool(args.judge_base_url) != bool(args.judge_model):
        return _fail("rag-eval: give both --judge-base-url and --judge-model (or neither)", 2)
    if args.rules_judge and args.judge_base_url:
        return _fail("rag-eval: give --rules-judge or --judge-base-url, not both", 2)
    if not args.rules_judge:
        return _rag_eval(args)
    from needlework.rag.rules_server import start_rules_server  # noqa: PLC0415

    with start_rules_server() as rules:
        args.judge_base_url, args.judge_model, args.judge_key_env = \
            rules.base_url, rules.model, None
        return _rag_eval(args)


def prompt_templates(given: list[str]) -> tuple[Any, ...]:
    """The templates of ``--template MODE=FILE`` options (checked; one per mode)."""
    from needlework.judges.templates import TemplateError, from_file  # noqa: PLC0415
    from needlework.rag.prompts import template  # noqa: PLC0415

    chosen: dict[str, Any] = {}
    for option in given:
        mode, sep, path = option.partition("=")
        if not sep or not path:
            raise TemplateError(f"--template takes MODE=FILE, not {option!r}")
        if mode in chosen:
            raise TemplateError(f"--template {mode}= is given twice")
        chosen[mode] = from_file(template(mode.strip()), path)
    return tuple(chosen.values())


def _rag_eval(args: argparse.Namespace) -> int:
    made = _rag_spec(args)
    if isinstance(made, int):
        return made
    db, spec = made
    ran = _rag_run(args, db, spec)
    if isinstance(ran, int):
        return ran
    report, estimate = ran
    return _rag_report(args, spec.connection, report, estimate)


def _rag_spec(args: argparse.Namespace) -> tuple[Any, Any] | int:
    """``(db, spec)``: the judge's connection, the answer sets and the templates as a
    ``RagEvalSpec``; an exit code when one is wrong (said on stderr)."""
    from needlework.formats.errors import FormatError  # noqa: PLC0415
    from needlework.rag.answers import merge, read_answers_file, stored_set  # noqa: PLC0415
    from needlework.rag.run import RagEvalSpec  # noqa: PLC0415
    from store import connect  # noqa: PLC0415
    from store.datasets import get_dataset  # noqa: PLC0415
    from store.rag import answer_sets  # noqa: PLC0415

    connection = None
    if args.judge_base_url:
        try:
            connection = _connection(args)
        except (ValueError, TypeError) as exc:
            return _fail(f"rag-eval: {exc}", 2)
    db = connect(args.db)
    if get_dataset(db, args.dataset) is None:
        return _fail(f"rag-eval: no dataset {args.dataset!r}")
    try:
        sets = [s for path in args.answers for s in read_answers_file(path)]
        if args.stored:
            sets += [stored_set(r, "stored") for r in answer_sets(db, args.dataset)]
        sets = merge(sets)
    except FormatError as exc:
        return _fail(str(exc))
    if not sets:
        return _fail("rag-eval: no answers: give --answers FILE (or --stored for the answer "
                     "sets stored with the dataset)")
    try:
        templates = prompt_templates(args.template)
    except (OSError, ValueError) as exc:
        return _fail(f"rag-eval: {exc}", 2)
    return db, RagEvalSpec(args.dataset, tuple(sets), connection, args.with_related, templates)


def _rag_run(args: argparse.Namespace, db: Any, spec: Any) -> tuple[Any, Any] | int:
    """``(report, estimate)``: the cost estimate (``None`` without a judge), then the run
    under a progress bar; an exit code when the estimate was all that was asked, or the
    run failed."""
    from tqdm import tqdm  # noqa: PLC0415

    from needlework.judges import cost  # noqa: PLC0415
    from needlework.judges.errors import JudgeCancelled, JudgeError  # noqa: PLC0415
    from needlework.rag.questions import DatasetError  # noqa: PLC0415
    from needlework.rag.run import evaluate  # noqa: PLC0415

    connection = spec.connection
    estimate = None
    if connection is not None:
        try:
            estimate = cost.estimate(db, connection, cost.rag_requests(db, spec))
        except DatasetError as exc:
            return _fail(f"rag-eval: {exc}")
        if report_estimate(estimate, args):
            return 0
    elif args.estimate:
        print("no judge: BERGEN metrics and attribution only, nothing to send, no cost")
        return 0
    bar = None
    if connection is not None and not args.no_progress:
        bar = tqdm(total=0, unit="call", desc="judging answers", file=sys.stderr,
                   dynamic_ncols=True)

    def progress(done: int, total: int) -> None:
        if bar is not None:
            bar.total = total
            bar.n = done
            bar.refresh()

    try:
        return evaluate(db, spec, progress=progress), estimate
    except DatasetError as exc:
        return _fail(f"rag-eval: {exc}")
    except JudgeCancelled as exc:
        return _fail(f"error: {exc}", 130)
    except JudgeError as exc:
        return _fail(f"error: {exc} (answers received so far are cached: run again to resume)", 2)
    finally:
        if bar is not None:
            bar.close()


def _rag_report(args: argparse.Namespace, connection: Any, report: Any, estimate: Any) -> int:
    """The run's figures as JSON or a table, with what it cost and the prompts it used."""
    from needlework.judges import cost  # noqa: PLC0415

    summary = report.summary
    _warn_coverage(summary)
    spent = None
    if connection is not None:
        spent = cost.actual_of_calls(summary["calls"], cost.price_of(connection))
    if args.json:
        print(json.dumps({**report.to_json(), "cost": None if estimate is None else {
            "estimate": estimate.as_dict(), "actual": None if spent is None else spent.as_dict()}}, ensure_ascii=False))
        return 0
    _print_table(summary)
    if spent is not None:
        print(f"cost: {spent.words()}")
    for mode, t in (summary.get("templates") or {}).items():
        print(f"prompt {mode}: {t['name']} ({t['digest'][:8]}), {t['source']}")
    return 0


def _warn_coverage(summary: dict[str, Any]) -> None:
    for item in summary["questions"]["not_evaluated"]:
        print(f"not evaluated: {item['item_key']}: {item['reason']}", file=sys.stderr)
    for model, cov in summary["coverage"].items():
        cov = {"non_answer_ids": [], "failed_ids": [], **cov}
        for name, what in (("unknown_ids", "answers for unknown sample_id(s), ignored"),
                           ("missing_ids", "question(s) without an answer, counted as failures"),
                           ("empty_ids", "blank answer(s), counted as failures"),
                           ("non_answer_ids", "non-answer(s) (no claim), counted not factual "
                            "and not eligible"),
                           ("failed_ids", "question(s) whose generation request failed, "
                            "left out"),
                           ("not_evaluated_ids", "answers to questions not evaluated")):
            if cov[name]:
                print(f"{model}: {len(cov[name])} {what}: {', '.join(cov[name])}", file=sys.stderr)


def _print_intervals(summary: dict[str, Any]) -> None:
    """Each shown figure with its denominator and 95 % interval, one line per model and
    figure (``n/a: why`` where it has none), then the rules judge's caveat if it graded."""
    from needlework.figures.stats_text import how  # noqa: PLC0415
    from needlework.rag.metrics import JUDGE_FIGURES, cell_text  # noqa: PLC0415

    print(f"with denominators and 95 % intervals ({how()}, questions resampled):")
    for model, figures in summary["overall"].items():
        for name, title in SHOWN:
            if summary.get("judge") or name not in JUDGE_FIGURES:
                print(f"  {model}\t{title}\t{cell_text(figures, name)}")
    if summary.get("judge_note"):
        print(f"note: {summary['judge_note']}")


def _print_table(summary: dict[str, Any]) -> None:
    from needlework.rag.metrics import flat  # noqa: PLC0415

    print(f"{summary['dataset']}: {summary['questions']['evaluated']} of "
          f"{summary['questions']['total']} questions evaluated"
          + (f"; judge {summary['judge']['model']} at {summary['judge']['endpoint']}"
             if summary["judge"] else "; no judge (BERGEN and attribution only)"))
    print("model\tn\t" + "\t".join(title for _, title in SHOWN))
    for model, figures in summary["overall"].items():
        row = flat(figures)
        print(f"{model}\t{row['n']}\t" + "\t".join(_fmt(row[name]) for name, _ in SHOWN))
    _print_intervals(summary)
    from needlework.rag.run import answer_notes  # noqa: PLC0415

    for line in answer_notes(summary):
        print(line)
    calls = summary["calls"]
    if summary["judge"]:
        print(f"judge calls: {calls['sent']} sent, {calls['cached']} from cache, "
              f"{calls.get('refused', 0)} refused, {calls.get('timed_out', 0)} timed out, "
              f"{calls.get('failed', 0)} failed (no answer, not cached), "
              f"{calls['too_long']} too long")
