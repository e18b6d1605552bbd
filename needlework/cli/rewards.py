"""Verbs ``score``, ``score-text``, ``model-info`` and ``demo-model``."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from needlework.cli import add_db_argument
from needlework.rewards.errors import RewardModelError
from store import connect

# The reward-model modules import torch and transformers (seconds): they are imported
# inside the handlers so that other verbs start fast.

TRUNCATION_HELP = ("what to do with inputs longer than the window: skip them (default), keep "
                   "the end (cut the start) or keep the start; every such input is reported")


def _add_model_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, metavar="PATH_OR_ID",
                   help="local model folder or Hugging Face hub id")
    p.add_argument("--dtype", default="auto", choices=("auto", "bf16", "fp16", "fp32"))
    p.add_argument("--device", default="auto", help="auto (cuda, then mps, then cpu), cuda, mps, cpu")
    p.add_argument("--attn-implementation", default=None, help="e.g. sdpa, eager, flash_attention_2")
    p.add_argument("--trust-remote-code", action="store_true",
                   help="run Python code shipped with the model (off by default)")


def _add_window_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-length", type=int, default=None, metavar="N",
                   help="window in tokens (default and upper bound: the model's context length)")
    p.add_argument("--truncation", default="skip", choices=("skip", "keep-end", "keep-start"),
                   help=TRUNCATION_HELP)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "score", help="score a stored preference dataset with a reward model",
        description="Score every chosen and rejected response of dataset NAME. Scores are "
        "cached in the database as batches finish, so a killed run resumes where it stopped.")
    _add_model_arguments(p)
    p.add_argument("--dataset", required=True, metavar="NAME")
    p.add_argument("--batch-tokens", type=int, default=16384, metavar="N",
                   help="token budget per batch: rows x longest row (default 16384)")
    _add_window_arguments(p)
    p.add_argument("--out", metavar="FILE", help="write Long-form RewardBench output JSONL here")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    add_db_argument(p)
    p.set_defaults(func=cmd_score)

    p = subparsers.add_parser(
        "score-text", help="score one prompt and response (optionally per token)",
        description="Score the response in --response-file to the prompt in --prompt-file.")
    _add_model_arguments(p)
    p.add_argument("--prompt-file", required=True, metavar="P")
    p.add_argument("--response-file", required=True, metavar="R")
    p.add_argument("--per-token", action="store_true",
                   help="also print every response token and its reward: the score of the text cut "
                        "after that token (one pass for a checked causal model, else one pass per "
                        "prefix; the output names the method)")
    p.add_argument("--method", default="auto", choices=("auto", "head", "prefix"),
                   help="per-token method: auto (head where the model allows it), head, prefix")
    p.add_argument("--stride", type=int, default=1, metavar="K",
                   help="prefix method: score every K-th prefix only (default 1)")
    p.add_argument("--max-passes", type=int, default=None, metavar="N",
                   help="prefix method: refuse runs over N forward passes (default 1024)")
    _add_window_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_score_text)

    p = subparsers.add_parser("model-info", help="load a reward model and print its facts",
                              description="Check that a reward model loads and print its facts.")
    _add_model_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_model_info)

    p = subparsers.add_parser(
        "demo-model", help="build and train the small demo reward model (CPU, a few minutes)",
        description="Build a tiny Llama reward model with a BPE tokenizer trained on the "
        "project's text, train it briefly on synthetic safety needles and save it to DIR.")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--if-missing", action="store_true",
                   help="do nothing when DIR already holds a demo model")
    p.add_argument("--variant", choices=("short",), default=None,
                   help="a demo variant with a real, stated limitation: 'short' is trained only on "
                   "responses of 24-96 tokens (the needle lab's seeded demo result, docs/needle.md)")
    p.add_argument("--steps", type=int, default=None, metavar="N", help="training steps at most")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_demo_model)


def _load(args: argparse.Namespace) -> Any:
    from needlework.rewards.loading import load_reward_model  # noqa: PLC0415

    return load_reward_model(args.model, dtype=args.dtype, device=args.device,
                             attn_implementation=args.attn_implementation,
                             trust_remote_code=args.trust_remote_code)


def _fail(message: str, code: int = 2) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def cmd_score(args: argparse.Namespace) -> int:
    from store.datasets import get_dataset  # noqa: PLC0415

    db = connect(args.db)
    if get_dataset(db, args.dataset) is None:  # before the engine and the model (seconds)
        return _fail(f"no dataset named {args.dataset!r} in the store: import it first "
                     "(python -m needlework import FILE --dataset NAME), or check --db", 1)
    from needlework.rewards.runs import DatasetNotFound, score_dataset  # noqa: PLC0415

    bar = None
    try:
        rm = _load(args)
        if not args.no_progress:
            bar = tqdm(total=0, unit="text", desc="scoring", file=sys.stderr, dynamic_ncols=True)

        def progress(done: int, total: int) -> None:
            if bar is not None:
                bar.total = total
                bar.n = done
                bar.refresh()

        summary = score_dataset(db, rm, args.dataset, batch_tokens=args.batch_tokens,
                                max_length=args.max_length, truncation=args.truncation,
                                out=args.out, progress=progress)
    except DatasetNotFound as exc:
        return _fail(str(exc).strip("'\""), 1)
    except RewardModelError as exc:
        return _fail(str(exc))
    finally:
        if bar is not None:
            bar.close()
    for t in summary["too_long_items"]:
        print(f"warning: item {t['id']} {t['response']} has {t['n_tokens']} tokens, over the "
              f"window of {summary['max_length']}: {t['action']}", file=sys.stderr)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{summary['dataset']}: {summary['items']} items, {summary['unique_texts']} texts, "
              f"{summary['cache_hits']} from cache, {summary['scored']} scored, "
              f"{summary['too_long']} too long ({args.truncation})")
        from needlework.cli.metrics import describe  # noqa: PLC0415

        if summary.get("non_finite"):
            print(f"  {summary['non_finite']} score(s) were NaN or infinite: counted as missing")
        for name, m in summary["metrics"].items():
            if "error" in m:
                print(f"  {name}: {m['error']}")
                continue
            for line in describe(name, m):
                print(f"  {line}")
    return 0


def _per_token(args: argparse.Namespace, rm: Any, prompt: str, response: str) -> dict[str, Any]:
    """Per-token rewards; for prefix passes the plan goes to stderr first, then a progress bar."""
    from needlework.rewards.per_token import (  # noqa: PLC0415
        DEFAULT_MAX_PASSES,
        per_token_rewards,
        prefix_plan,
    )

    cap = args.max_passes or DEFAULT_MAX_PASSES
    bar = None
    prefix = args.method == "prefix" or (args.method == "auto" and rm.pooling.per_token == "prefix")
    if prefix:
        plan = prefix_plan(rm, prompt, response, stride=args.stride, max_length=args.max_length,
                           truncation=args.truncation)
        print(f"per-token by prefix passes ({rm.pooling.reason}): {plan.describe()}"
              + (f"; over the cap of {cap}" if plan.passes > cap else ""), file=sys.stderr)
        if plan.passes <= cap:
            bar = tqdm(total=plan.passes, unit="pass", desc="prefixes", file=sys.stderr,
                       dynamic_ncols=True)

    def progress(done: int, total: int) -> None:
        if bar is not None:
            bar.total = total
            bar.n = done
            bar.refresh()

    try:
        result = per_token_rewards(rm, prompt, response, max_length=args.max_length,
                                   truncation=args.truncation, method=args.method, stride=args.stride,
                                   max_passes=cap, progress=progress)
    finally:
        if bar is not None:
            bar.close()
    return result.as_dict()


def cmd_score_text(args: argparse.Namespace) -> int:
    from needlework.rewards.pipeline import RewardPipeline  # noqa: PLC0415

    prompt = Path(args.prompt_file).read_text(encoding="utf-8")
    response = Path(args.response_file).read_text(encoding="utf-8")
    if args.stride < 1 or (args.max_passes is not None and args.max_passes < 1):
        return _fail("--stride and --max-passes must be at least 1")
    try:
        rm = _load(args)
        if args.per_token:
            out: dict[str, Any] = _per_token(args, rm, prompt, response)
        else:
            scored = RewardPipeline(rm, max_length=args.max_length,
                                    truncation=args.truncation).score(prompt, response)
            if scored.skipped:
                return _fail(f"the text has {scored.n_tokens} tokens, over the window; "
                             "use --truncation keep-end or keep-start")
            out = {"score": scored.score, "n_tokens": scored.n_tokens, "truncated": scored.truncated}
    except RewardModelError as exc:
        return _fail(str(exc))
    out["template_id"] = rm.facts.template_id
    out["template_fallback"] = rm.facts.template_fallback
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(f"score {out['score']:.6f}")
        if args.per_token:
            print(f"method: {out['method_label']}; the value at token {out['pooled_token']} (marked *) "
                  f"is the model's score (difference {out['check']:.1e})")
        for k, (token, value) in enumerate(zip(out.get("tokens", []), out.get("per_token", []), strict=True)):
            print(f"{value:+.4f}{'*' if k == out.get('pooled_token') else ' '}\t{token!r}")
    return 0


def cmd_model_info(args: argparse.Namespace) -> int:
    try:
        facts = _load(args).facts.as_dict()
    except RewardModelError as exc:
        return _fail(str(exc))
    if args.json:
        print(json.dumps(facts, indent=2))
    else:
        for key, value in facts.items():
            print(f"{key}: {value}")
    return 0


def cmd_demo_model(args: argparse.Namespace) -> int:
    out = Path(args.out)
    report_file = out / "needlework_demo.json"
    if args.if_missing and (out / "config.json").is_file() and report_file.is_file():
        report = json.loads(report_file.read_text(encoding="utf-8"))
        if args.json:
            print(json.dumps(report, indent=2))
        else:
            print(f"demo model already in {out}")
        return 0
    from needlework.rewards.demo_model import build_demo_model, variant_settings  # noqa: PLC0415

    settings = variant_settings(args.variant or "")
    if args.steps is not None:
        settings = replace(settings, max_steps=args.steps)
    report = build_demo_model(out, settings, log=lambda line: print(line, file=sys.stderr))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        acc = report["heldout_safety"]
        print(f"demo model saved to {out}: held-out safety accuracy {acc['accuracy']:.3f} "
              f"({acc['pairs']} pairs, ~{acc['mean_tokens']} tokens), "
              f"trained {report['training']['seconds']} s")
    return 0
