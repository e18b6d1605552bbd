"""Verb ``attribution``: citation P/R/F1 of model answers against the human answers."""

from __future__ import annotations

import argparse
import json
import sys

from needlework.cli import add_db_argument


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "attribution",
        help="citation precision/recall/F1 of model answers (GaRAGe)",
        description="Score model answers (JSONL lines {\"sample_id\", \"answer\"}) against the "
        "human answers of a grounding dataset: gold = passages the human answer cites, "
        "predicted = passages the model answer cites; questions with empty gold are skipped, "
        "an empty prediction scores 0; means are over questions (macro).",
    )
    p.add_argument("--dataset", required=True, metavar="NAME")
    p.add_argument("--answers", required=True, metavar="FILE")
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    add_db_argument(p)
    p.set_defaults(func=cmd_attribution)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def cmd_attribution(args: argparse.Namespace) -> int:
    from pathlib import Path  # noqa: PLC0415

    from needlework.grounding.attribution import AnswersError, attribution, read_answers  # noqa: PLC0415
    from needlework.grounding.export import human_answers  # noqa: PLC0415
    from store import connect  # noqa: PLC0415
    from store.datasets import get_dataset  # noqa: PLC0415

    db = connect(args.db)
    row = get_dataset(db, args.dataset)
    if row is None or row["kind"] != "grounding":
        what = "no dataset" if row is None else f"{row['kind']} dataset, not a grounding one:"
        print(f"attribution: {what} {args.dataset!r}", file=sys.stderr)
        return 1
    path = Path(args.answers)
    try:
        data = path.read_bytes()
    except OSError as e:
        print(f"{path.name}: cannot read the file: {e.strerror}", file=sys.stderr)
        return 1
    try:
        answers = read_answers(data, path.name)
    except AnswersError as e:
        print(e, file=sys.stderr)
        return 1
    report = attribution(human_answers(db, args.dataset), answers)
    if args.json:
        print(json.dumps({"dataset": args.dataset, "answers": path.name, **report.to_json()},
                         ensure_ascii=False))
        return 0
    for r in report.rows:
        print(f"{r['sample_id']}\tP={_fmt(r['precision'])}\tR={_fmt(r['recall'])}\t"
              f"F1={_fmt(r['f1'])}\t{r['status']}")
    print(f"mean over {report.scored} question(s): P={_fmt(report.precision)} "
          f"R={_fmt(report.recall)} F1={_fmt(report.f1)}; skipped (empty gold): "
          f"{report.skipped_empty_gold}; no model answer: {report.missing_answers}")
    if report.unknown_ids:
        print(f"ignored {len(report.unknown_ids)} answer(s) for unknown sample_id(s): "
              + ", ".join(report.unknown_ids[:5]), file=sys.stderr)
    return 0
