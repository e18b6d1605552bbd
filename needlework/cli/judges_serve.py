"""Verbs ``demo-judge``, ``serve-judge`` and ``serve-rules-judge``: the local judges. The
demo judge is built and trained here, then served (or any causal LM folder) on 127.0.0.1,
like the rules judge; a served judge is used with ``judge --base-url --model``
(:mod:`needlework.cli.judges`) or from the pages."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from needlework.cli.judges import _fail

# The demo judge imports torch: the judge modules are imported in the handlers.


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "demo-judge", help="build and train the small offline demo judge (CPU, under 3 minutes)",
        description="Build a tiny Llama causal LM with the project's tokenizer, train it to "
        "answer the selection prompt on synthetic safety-needle pairs, report its held-out "
        "accuracy and save it to DIR (servable with transformers serve).")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--if-missing", action="store_true",
                   help="do nothing when DIR already holds a demo judge")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_demo_judge)

    p = subparsers.add_parser(
        "serve-judge", help="serve the demo judge (or any causal LM folder) on 127.0.0.1",
        description="Start transformers serve for DIR on 127.0.0.1, print the base URL and "
        "model name to use (on the Reward model page, or with judge --base-url --model), and "
        "serve until Ctrl+C. The Reward model page can also start the demo judge itself.")
    p.add_argument("--folder", default="data/demo-judge", metavar="DIR",
                   help="the model folder (default data/demo-judge)")
    p.add_argument("--port", type=int, default=None, help="default: a free port")
    p.add_argument("--threads", type=int, default=2, help="torch threads of the server (default 2)")
    p.set_defaults(func=cmd_serve_judge)

    p = subparsers.add_parser(
        "serve-rules-judge", help="serve the rules judge (RAG prompts, not an LLM) on 127.0.0.1",
        description="Serve the rules judge (needlework.rag.rules_judge: GaRAGe's eligibility, "
        "factuality and deflection prompts and LLMeval answered by fixed word-overlap rules, "
        "not an LLM) as an OpenAI-compatible endpoint; print the base URL and model name, and "
        "serve until Ctrl+C. The RAG answers page can also start it itself.")
    p.add_argument("--port", type=int, default=None,
                   help="default: 8565 when free (answers stay cached across starts), else a free port")
    p.set_defaults(func=cmd_serve_rules_judge)


def cmd_demo_judge(args: argparse.Namespace) -> int:
    from needlework.judges import demo  # noqa: PLC0415
    from needlework.judges.local import read_report  # noqa: PLC0415

    out = Path(args.out)
    if args.if_missing and demo.is_built(out):
        report = read_report(out)
        if args.json:
            print(json.dumps(report, indent=2))
        else:
            print(f"demo judge already in {out}")
        return 0
    report = demo.build_demo_judge(out, log=lambda line: print(line, file=sys.stderr))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        acc = report["heldout_selection"]
        from needlework.figures.stats_text import percent  # noqa: PLC0415
        print(f"demo judge saved to {out}: held-out selection accuracy {acc['accuracy']:.3f} "
              f"({acc['pairs']} pairs in both orders, invalid "
              f"{percent(acc['invalid_rate'], space=False)}), "
              f"built in {report['build_seconds']} s")
    return 0


def cmd_serve_judge(args: argparse.Namespace) -> int:

    from needlework.judges.local import context_window_of  # noqa: PLC0415
    from needlework.judges.serve import ServerError, start_server  # noqa: PLC0415

    folder = Path(args.folder)
    if not (folder / "config.json").is_file():
        return _fail(f"{folder} holds no model (no config.json): install the demo judge with "
                     "python -m needlework demo-models install", 1)
    try:
        server = start_server(folder, port=args.port, threads=args.threads)
    except ServerError as exc:
        return _fail(str(exc).splitlines()[0], 1)
    window = context_window_of(server.model)
    print(f"serving {server.model}\nbase URL: {server.base_url}\nmodel: {server.model}"
          + (f"\ncontext window: {window}" if window else "") + "\nCtrl+C stops it.", flush=True)
    return _serve_until_interrupted(server)


def _serve_until_interrupted(server) -> int:  # noqa: ANN001 - a LocalServer or a RulesServer
    """Wait while ``server`` runs; Ctrl+C stops it."""
    import time  # noqa: PLC0415

    try:
        while server.alive():
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def cmd_serve_rules_judge(args: argparse.Namespace) -> int:
    from needlework.rag.rules_server import start_rules_server  # noqa: PLC0415

    try:
        server = start_rules_server(port=args.port)
    except OSError as exc:
        where = "a free port" if args.port is None else f"port {args.port}"
        return _fail(f"serve-rules-judge: {where}: {exc.strerror or exc}", 1)
    print(f"serving the rules judge (not an LLM)\nbase URL: {server.base_url}\n"
          f"model: {server.model}\nCtrl+C stops it.", flush=True)
    return _serve_until_interrupted(server)
