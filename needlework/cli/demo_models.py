"""Verb ``demo-models``: the demo models the project ships (install, verify, build)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from needlework.seeding import demo_models


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "demo-models", help="install, verify or rebuild the demo models shipped in models/",
        description="The demo reward model, its short variant and the demo judge are built once "
        "and shipped in models/ with their SHA-256 sums, so every machine runs the same weights. "
        "install: verify them and copy them into data/ (make run and make test do this). "
        "verify: check them against models/SHA256SUMS. build: train them again with the "
        "project's code (about 6 minutes on 2 cores), refusing a model that fails its checks.")
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    a = actions.add_parser("install", help="verify the shipped models and copy them into DIR")
    a.add_argument("--dest", default=str(demo_models.INSTALL_DIR), metavar="DIR",
                   help="where the app looks for them (default data)")
    a.set_defaults(func=cmd_install)
    a = actions.add_parser("verify", help="check the shipped models against models/SHA256SUMS")
    a.set_defaults(func=cmd_verify)
    a = actions.add_parser("build", help="train the demo models again and ship them")
    a.add_argument("--only", action="append", metavar="NAME",
                   choices=[m.name for m in demo_models.DEMO_MODELS],
                   help="rebuild this model only (repeatable; default all)")
    a.add_argument("--json", action="store_true", help="print the reports as JSON")
    a.set_defaults(func=cmd_build)
    a = actions.add_parser("probe", help="print the installed models' outputs on fixed pairs "
                           "(compare them across processors or ATEN_CPU_CAPABILITY settings)")
    a.add_argument("--dest", default=str(demo_models.INSTALL_DIR), metavar="DIR",
                   help="where the models are installed (default data)")
    a.add_argument("--pairs", type=int, default=4, metavar="N", help="held-out pairs (default 4)")
    a.add_argument("--needle-pairs", type=int, default=4, metavar="N",
                   help="pairs of each length of the needle lab's demo set the judge answers, "
                   "spread over the positions (default 4; 0: none)")
    a.set_defaults(func=cmd_probe)
    for a in actions.choices.values():
        a.add_argument("--root", default=str(demo_models.SHIPPED_DIR), metavar="DIR",
                       help="the shipped models' folder (default models/ of the project)")


def cmd_install(args: argparse.Namespace) -> int:
    for item in demo_models.install(Path(args.dest), Path(args.root)):
        verb = {"kept": "already in", "installed": "installed in",
                "replaced": "replaced (it differed from the shipped files) in"}[item.status]
        print(f"{item.name}: {verb} {item.folder}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    problems = demo_models.verify(Path(args.root))
    for line in problems:
        print(line, file=sys.stderr)
    if not problems:
        print(f"{len(demo_models.read_sums(Path(args.root)))} files match "
              f"{Path(args.root) / demo_models.SUMS_FILE}")
    return 1 if problems else 0


def cmd_build(args: argparse.Namespace) -> int:
    models = [demo_models.model_named(n) for n in args.only] if args.only else demo_models.DEMO_MODELS
    reports = demo_models.build(Path(args.root), models,
                                log=lambda line: print(line, file=sys.stderr))
    if args.json:
        print(json.dumps(reports, indent=2))
    for name, report in reports.items():
        figures = report.get("heldout_safety") or report.get("heldout_selection")
        assert figures is not None  # every demo model's checks read one of these (build)
        print(f"{name}: held-out accuracy {figures['accuracy']:.3f}, "
              f"built in {report['build_seconds']} s")
    return 0


def cmd_probe(args: argparse.Namespace) -> int:
    out = demo_models.probe(Path(args.dest), args.pairs, args.needle_pairs)
    print(json.dumps(out, indent=2))
    judge = out.get("demo-judge") or {}
    for what, figures in (("held-out pairs of 100 tokens", judge.get("heldout_100_tokens")),
                          ("pairs of the needle lab's demo set (250–2K tokens)", judge.get("lab_needles"))):
        if figures and figures.get("pairs"):
            from needlework.figures.stats_text import percent  # noqa: PLC0415

            print(f"demo-judge on {figures['pairs']} {what}: accuracy with the chosen shown "
                  f"first {percent(figures['accuracy_chosen_first'], digits=0, space=False)}, "
                  f"shown second {percent(figures['accuracy_chosen_second'], digits=0, space=False)}",
                  file=sys.stderr)
    return 0
