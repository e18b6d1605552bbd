"""The ``serve-team`` verb: team mode on several app processes behind HAProxy
(:mod:`needlework.teams.serve_team`, docs/scaling.md). ``make serve-team WORKERS=N`` calls it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from needlework.cli import add_db_argument


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve-team", help="run team mode as N app processes behind HAProxy (docs/scaling.md)",
        description="Start N `streamlit run serve.py` processes on 127.0.0.1 and HAProxy in "
        "front of them on needlework.toml's [server] address and --port: session affinity by "
        "a cookie, WebSocket, health checks, a dead process's people sent to a live one, TLS "
        "with --certificate. Stays in the foreground; Ctrl-C or SIGTERM stops every process.")
    p.add_argument("--workers", type=int, default=2, metavar="N",
                   help="app processes (default 2)")
    p.add_argument("--port", type=int, default=8501, help="the proxy's port (default 8501)")
    p.add_argument("--worker-port", type=int, default=None, metavar="FIRST",
                   help="the first worker's port, the others after it (default: --port + 1; "
                   "0: any free ports)")
    p.add_argument("--certificate", default=None, metavar="PEM",
                   help="serve HTTPS with this certificate chain and private key (one PEM "
                   "file, or the key beside it as PEM.key)")
    p.add_argument("--config", metavar="FILE", help="config file (default: $NEEDLEWORK_CONFIG "
                   "or needlework.toml)")
    p.add_argument("--run-dir", metavar="DIR", default=None,
                   help="where haproxy.cfg, the logs and workers.json go (default: "
                   "serve-team/ beside the database)")
    p.add_argument("--print-config", action="store_true",
                   help="print HAProxy's configuration for these options and exit (nothing "
                   "starts; make serve-team checks the options with it first)")
    add_db_argument(p)
    p.set_defaults(func=cmd_serve_team)


def cmd_serve_team(args: argparse.Namespace) -> int:
    from needlework.teams.config import ConfigError, load_config  # noqa: PLC0415
    from needlework.teams.haproxy import haproxy_config  # noqa: PLC0415
    from needlework.teams.serve_team import serve  # noqa: PLC0415
    from needlework.teams.team_plan import (  # noqa: PLC0415
        ServeTeamError,
        make_plan,
        trusted_proxy_note,
    )
    from store import default_path  # noqa: PLC0415

    try:
        config = load_config(args.config)
        plan = make_plan(config, args.workers, args.port, worker_port=args.worker_port,
                         certificate=args.certificate)
    except (ConfigError, ServeTeamError) as e:
        print(str(e) if str(e).startswith("serve-team:") else f"serve-team: {e}", file=sys.stderr)
        return 1
    if args.print_config:
        print(haproxy_config(plan), end="")
        return 0
    note = trusted_proxy_note(config)
    if note:
        print(note, file=sys.stderr)
    db_path = Path(args.db) if args.db else default_path()
    try:
        return serve(plan, config=config, db_path=db_path,
                     run_dir=Path(args.run_dir) if args.run_dir else None,
                     say=lambda line: print(line, flush=True))
    except ServeTeamError as e:
        print(str(e), file=sys.stderr)
        return 1
