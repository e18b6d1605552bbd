"""Verb ``needle``: build a needle-in-a-haystack set, score it, report on it.

- ``needle build``: haystacks (``demo``, a file or a dataset) → needle JSONL (and a dataset).
- ``needle run``: score a needle file or dataset with a reward model → results CSV.
- ``needle report``: results CSV(s) or a scores file → heatmap/lines PNG+SVG, CSV, findings.
- ``needle write``: haystacks → needles written and verified by an LLM → needle JSONL
  (and a dataset); every record carries the prompts used in its ``writer`` field
  (:mod:`needlework.cli.needle_write`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from needlework import files
from needlework.cli import add_db_argument
from needlework.cli.acting import Stop, acting_user, add_as_argument
from needlework.cli.needle_write import add_write, lengths_type, print_problems
from needlework.formats import FormatError


def _add_build(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("build", help="build a needle test set from haystacks",
                       description="Cut haystacks to each target length at sentence/paragraph "
                       "boundaries, insert a needle at each site, write needle JSONL.")
    p.add_argument("--haystacks", required=True, metavar="FILE_OR_DATASET_OR_demo",
                   help="'demo' (demo paragraphs composed into long responses), a JSONL of "
                   "{prompt, response}, a preference file, or a dataset name")
    p.add_argument("--kind", choices=("safety", "factuality"), default="safety")
    p.add_argument("--facts", metavar="FILE", help='your factuality needles: JSONL {"true": ..., "false": ...}')
    p.add_argument("--lengths", type=lengths_type, default=None, metavar="N,N,...",
                   help="target lengths in tokens (default 1000,2000,...,8000)")
    sites = p.add_mutually_exclusive_group()
    sites.add_argument("--positions", type=int, default=10, metavar="K",
                       help="a grid of K evenly spaced sites (default 10)")
    sites.add_argument("--paper-sites", action="store_true",
                       help="the paper's n = length/1000 sites, one per stratum, at random")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--all-pairs", action="store_true",
                   help="use every built-in phrase pair (default: the held-out split only)")
    p.add_argument("--demo-count", type=int, default=10, metavar="N", help="demo haystacks (default 10)")
    p.add_argument("--tolerance", type=float, default=0.05,
                   help="skip a haystack when its cut is further than this from the target (default 0.05)")
    p.add_argument("--out", required=True, metavar="FILE")
    p.add_argument("--dataset", metavar="NAME", help="also import the records as needle dataset NAME")
    add_as_argument(p)
    p.add_argument("--replace", action="store_true", help="replace an existing dataset NAME")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_db_argument(p)
    p.set_defaults(func=cmd_build)


def _add_run(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="score a needle set with a reward model",
                       description="Score chosen and rejected of every needle record (cached, "
                       "shared prefix computed once) and write one result row per record.")
    p.add_argument("--model", required=True, metavar="PATH_OR_ID")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--needles", metavar="FILE", help="needle JSONL")
    src.add_argument("--dataset", metavar="NAME", help="a needle dataset in the database")
    p.add_argument("--out", required=True, metavar="CSV")
    p.add_argument("--reuse", choices=("auto", "on", "off"), default="auto",
                   help="shared-prefix reuse: auto (default: when supported, equal and not slower on "
                   "a check record), on, or off (score every text in full)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the score cache")
    p.add_argument("--dtype", default="auto", choices=("auto", "bf16", "fp16", "fp32"))
    p.add_argument("--device", default="auto")
    p.add_argument("--batch-tokens", type=int, default=16384, metavar="N")
    p.add_argument("--truncation", default="skip", choices=("skip", "keep-end", "keep-start"),
                   help="texts over the model's window: skip (default) or truncate; always reported")
    add_db_argument(p)
    p.set_defaults(func=cmd_run)


def _add_report(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="charts, CSV and findings from needle results",
                       description="Write heatmap and lines charts (PNG, SVG) and results.csv, "
                       "and print the findings, from results CSV(s), a scores file, or every "
                       "run stored for a needle dataset (--dataset: the reward models that "
                       "scored it and the judges that judged it, as the needle lab shows them).")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--results", nargs="+", metavar="CSV", help="results CSV(s) from 'needle run'")
    src.add_argument("--scores", metavar="FILE",
                     help="scores JSONL {id, chosen_scores, rejected_scores, tagged_position, length_tokens}")
    src.add_argument("--dataset", metavar="NAME",
                     help="a needle dataset in the database (--db): every stored run of it")
    p.add_argument("--needles", metavar="FILE", help="needle JSONL to fill positions/lengths by id")
    p.add_argument("--model-name", default=None, help="model name for a scores file without one")
    p.add_argument("--out-dir", required=True, metavar="DIR")
    p.add_argument("--json", action="store_true",
                   help="print the files written, the findings and every heatmap cell (n, "
                   "pairs, correct, accuracy and its 95%% interval: Wilson's for a reward "
                   "model's pairs, the bootstrap over pairs for a judge's shares, each cell's "
                   "method named) as JSON")
    add_db_argument(p)
    p.set_defaults(func=cmd_report)


def _add_seed_demo(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("seed-demo", help="seed the needle lab's demo result",
                       description="Build the demo needle set (demo-needles) when missing and score "
                       "it with a demo model variant through the needle run, so the needle lab opens "
                       "with a finished heatmap. Does nothing when it is already scored.")
    p.add_argument("--model", required=True, metavar="DIR",
                   help="a demo model folder, e.g. data/demo-model-short "
                   "(python -m needlework demo-model --variant short)")
    p.add_argument("--json", action="store_true", help="print what was done as JSON")
    add_db_argument(p)
    p.set_defaults(func=cmd_seed_demo)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("needle", help="long-form needle-in-a-haystack test: build, run, report",
                              description="The long-form needle-in-a-haystack test (docs/needle.md).")
    sub = p.add_subparsers(dest="needle_verb", metavar="STEP")
    sub.required = True
    _add_build(sub)
    _add_run(sub)
    _add_report(sub)
    _add_seed_demo(sub)
    add_write(sub)


def cmd_build(args: argparse.Namespace) -> int:
    from needlework.datasets.transfer import import_bytes  # noqa: PLC0415
    from needlework.needle.builder import DEFAULT_LENGTHS, BuildOptions, build_from_source  # noqa: PLC0415
    from needlework.teams.permissions import PermissionDenied  # noqa: PLC0415
    from store import connect  # noqa: PLC0415
    from store.datasets import DatasetExists  # noqa: PLC0415

    options = BuildOptions(kind=args.kind, lengths=args.lengths or DEFAULT_LENGTHS, positions=args.positions,
                           paper_sites=args.paper_sites, seed=args.seed, tolerance=args.tolerance,
                           pair_split="all" if args.all_pairs else "heldout")
    needs_db = args.dataset or (args.haystacks != "demo" and not Path(args.haystacks).is_file())
    db = connect(args.db) if needs_db else None
    try:  # who imports the dataset (team mode: --as), asked before any work
        actor = acting_user(args, db, "needle build --dataset") if args.dataset else None
    except Stop as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        result = build_from_source(args.haystacks, options, facts=args.facts, db=db, demo_count=args.demo_count)
    except FormatError as e:
        return print_problems(e)
    except (ValueError, ImportError, AttributeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    data = result.jsonl().encode("utf-8")
    files.write_bytes(args.out, data)  # whole or not at all
    if args.json:
        print(json.dumps(result.summary.as_dict(), indent=2))
    else:
        print("\n".join(result.summary.lines()))
        print(f"wrote {args.out}")
    if args.dataset:
        assert db is not None  # a dataset to write needs the database (needs_db)
        try:
            summary = import_bytes(db, data, Path(args.out).name, format="needle", dataset=args.dataset,
                                   replace=args.replace, created_by="cli", actor=actor)
        except FormatError as e:
            return print_problems(e)
        except (DatasetExists, PermissionDenied) as e:
            print(f"error: {e}" + (" (use --replace)" if isinstance(e, DatasetExists) else ""),
                  file=sys.stderr)
            return 1
        print(summary)
    return 0


def _needle_records(args: argparse.Namespace, db: Any) -> list[dict[str, Any]]:
    from needlework import formats  # noqa: PLC0415
    from store import datasets as store_datasets  # noqa: PLC0415

    if args.needles:
        return [r.record for r in formats.parse_file(args.needles, "needle").records]
    row = store_datasets.get_dataset(db, args.dataset)
    if row is None or row["kind"] != "needle":
        raise ValueError(f"no needle dataset named {args.dataset!r}")
    return [item["record"] for item in store_datasets.iter_items(db, args.dataset)]


def cmd_run(args: argparse.Namespace) -> int:
    from needlework.needle.analysis import results_csv  # noqa: PLC0415
    from needlework.needle.run import run_needles  # noqa: PLC0415
    from needlework.rewards.errors import RewardModelError  # noqa: PLC0415
    from needlework.rewards.loading import load_reward_model  # noqa: PLC0415
    from needlework.rewards.pipeline import RewardPipeline  # noqa: PLC0415
    from store import connect  # noqa: PLC0415

    db = connect(args.db)
    try:
        records = _needle_records(args, db)
        rm = load_reward_model(args.model, dtype=args.dtype, device=args.device)
        pipe = RewardPipeline(rm, db=db, batch_tokens=args.batch_tokens, truncation=args.truncation,
                              use_cache=not args.no_cache)
        shown = {"step": -1}

        def progress(done: int, total: int) -> None:
            step = done * 10 // max(1, total)
            if step != shown["step"]:
                shown["step"] = step
                print(f"  {done}/{total} records", file=sys.stderr)

        result = run_needles(pipe, records, reuse_prefix=args.reuse, progress=progress,
                             dataset=args.dataset)
    except FormatError as e:
        return print_problems(e)
    except (RewardModelError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for item in result.too_long:
        print(f"warning: {item['id']}: {item['n_tokens']} tokens, over the window: {item['action']}",
              file=sys.stderr)
    files.write_text(args.out, results_csv(result.frame))  # whole or not at all
    print("\n".join(result.stats.lines()))
    print(f"wrote {args.out}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from needlework import formats  # noqa: PLC0415
    from needlework.needle.analysis import combine, read_results_csv, read_scores  # noqa: PLC0415
    from needlework.needle.charts import export_all  # noqa: PLC0415
    from needlework.needle.findings import findings, position_trend  # noqa: PLC0415

    try:
        if args.results:
            results = combine([read_results_csv(path) for path in args.results])
        elif args.dataset:
            from needlework.needle.stored import dataset_results  # noqa: PLC0415
            from store import connect  # noqa: PLC0415

            results = dataset_results(connect(args.db), args.dataset)
            if results.empty:
                print(f"error: {args.dataset} has no stored results: score it (needle run "
                      "--dataset) or judge it first", file=sys.stderr)
                return 1
        else:
            records = ([r.record for r in formats.parse_file(args.needles, "needle").records]
                       if args.needles else None)
            results = read_scores(args.scores, model=args.model_name, records=records)
    except FormatError as e:
        return print_problems(e)
    except (OSError, ValueError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except LookupError as e:  # --dataset names no dataset
        print(f"error: {e.args[0]}: import it first, or check --db", file=sys.stderr)
        return 1
    if results.empty:
        print("error: no results to report", file=sys.stderr)
        return 1
    written = export_all(results, args.out_dir)
    if args.json:
        print(json.dumps(report_json(results, written), indent=2, ensure_ascii=False))
        return 0
    for path in written:
        print(f"wrote {path}")
    for line in findings(results):
        print(line)
    for model in sorted(results["model"].unique()):
        print(f"{model or 'results'}: {position_trend(results, model)}")
    return 0


def report_json(results: Any, written: list[Path]) -> dict[str, Any]:
    """``needle report --json``: the files written, the findings, and each heatmap cell
    with its count and 95 % interval, its method named (the unit the pair: Wilson's for a
    reward model's 0/1 pairs, the percentile bootstrap, 1,000 resamples, seed 0, for a
    judge's shares)."""
    from needlework.figures.stats import RESAMPLES, SEED  # noqa: PLC0415
    from needlework.figures.stats_text import how  # noqa: PLC0415
    from needlework.needle.analysis import THIN_CELL, counted, heatmap_frame  # noqa: PLC0415
    from needlework.needle.findings import bias_sentence, findings  # noqa: PLC0415
    from needlework.needle.order_bias import position_bias  # noqa: PLC0415

    cells = heatmap_frame(results, intervals=True)
    biases = {}
    for model in dict.fromkeys(results["model"]):
        bias = position_bias(results[results["model"] == model])
        if bias is not None:
            biases[model] = bias.as_dict() | {"sentence": bias_sentence(bias)}
    return {"written": [str(p) for p in written], "findings": findings(results),
            "counted": counted(results), "thin_rule": f"fewer than {THIN_CELL} pairs",
            "position_bias": biases,
            "interval": {"level": 0.95, "method": how(), "unit": "pair",
                         "resamples": RESAMPLES, "seed": SEED},
            "cells": [{"model": r.model, "length_tokens": int(r.length_tokens),
                       "bucket": int(r.bucket), "position": r.position, "n": int(r.n),
                       "pairs": int(r.pairs), "correct": int(r.n_correct),
                       "missing": int(r.n_missing), "accuracy": float(r.accuracy),
                       "low": r.low, "high": r.high, "method": r.method, "thin": bool(r.thin)}
                      for r in cells.itertuples()]}


def cmd_seed_demo(args: argparse.Namespace) -> int:
    from needlework.needle.seed import seed_demo_needles  # noqa: PLC0415
    from store import connect  # noqa: PLC0415

    try:
        outcome = seed_demo_needles(connect(args.db), args.model,
                                    log=lambda line: print(line, file=sys.stderr))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(outcome.as_dict(), indent=2) if args.json else outcome.line())
    return 0
