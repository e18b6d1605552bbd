"""Verbs for annotation teams: ``users``, ``assign``, ``reassign``, ``progress``, ``audit``,
``mode`` and ``oidc-config``.

The command line is how the first admin account is made; in team mode the verbs that
change anything then act as a person (``--as NAME``, :mod:`needlework.cli.acting`), so
that the audit trail names them as it names the app's users. Passwords and the
identity provider's client secret are read from a prompt, or from stdin with
``--password-stdin`` / ``--client-secret-stdin``, never from the command line, and are
never printed; the one-time passwords of ``users import`` are printed (or written to a
file only its owner can read) once, and never stored.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from needlework.cli import add_db_argument
from needlework.cli.acting import acting_user, add_as_argument
from needlework.cli.team_users import Stop, add_user_verbs, open_db, read_secret, run_verb
from needlework.words import plural


def register(subparsers: argparse._SubParsersAction) -> None:
    add_user_verbs(subparsers)

    p = subparsers.add_parser(
        "assign", help="distribute a dataset's items among annotators, with overlap",
        description="Give each item of dataset NAME to --per-item annotators (or to one, and "
        "a --double-share of the items to two), evenly; gold items go to every annotator.")
    p.add_argument("--dataset", required=True, metavar="NAME")
    p.add_argument("--annotators", required=True, metavar="A,B,...",
                   help="account names, comma-separated")
    p.add_argument("--per-item", type=int, default=1, metavar="K",
                   help="annotators per item (default 1)")
    p.add_argument("--double-share", type=float, default=0.0, metavar="S",
                   help="with --per-item 1: share of items (0-1) given to two annotators")
    p.add_argument("--seed", type=int, default=0, help="picks the double-annotated items")
    p.add_argument("--replace", action="store_true",
                   help="distribute again a dataset already assigned (annotations stay)")
    add_as_argument(p)
    add_db_argument(p)
    p.set_defaults(func=cmd_assign)

    p = subparsers.add_parser(
        "reassign", help="give someone's unfinished items to the other annotators",
        description="Move every item ANNOTATOR has not finished in dataset NAME to the other "
        "annotators of its plan (or --to), least loaded first.")
    p.add_argument("--dataset", required=True, metavar="NAME")
    p.add_argument("--from", dest="leaver", required=True, metavar="ANNOTATOR")
    p.add_argument("--to", metavar="A,B,...", help="account names (default: the plan's others)")
    p.add_argument("--drop-kept", action="store_true",
                   help="then take the items kept (everyone else already has them) out of "
                   "ANNOTATOR's queue; their annotations stay")
    add_as_argument(p)
    add_db_argument(p)
    p.set_defaults(func=cmd_reassign)

    p = subparsers.add_parser("progress", help="assignment progress per dataset and annotator",
                              description="Assigned and done items per dataset and annotator, "
                              "and the figures of its model suggestions (docs/teams.md, Figures).")
    p.add_argument("--dataset", metavar="NAME", help="one dataset (default: every assigned one)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_db_argument(p)
    p.set_defaults(func=cmd_progress)

    p = subparsers.add_parser(
        "audit", help="export a dataset's change history, or the audit events (CSV or JSONL)",
        description="Write every change of dataset NAME (who, when, old and new value) to "
        "FILE, oldest first; with --events, the audit events instead (accounts, sign-ins, "
        "assignments, settings: who, when, what, before and after), all or those about NAME. "
        "The format follows the extension (.csv, .jsonl) unless given.")
    p.add_argument("--dataset", metavar="NAME", help="the dataset (required without --events)")
    p.add_argument("--events", action="store_true",
                   help="the audit events rather than the annotations' history")
    p.add_argument("--deleted", action="store_true",
                   help="the history that deleted (or replaced) datasets named NAME left")
    p.add_argument("--out", required=True, metavar="FILE")
    p.add_argument("--format", choices=("csv", "jsonl"))
    events = p.add_argument_group("filters of --events (combined: an event must pass each)")
    events.add_argument("--action", action="append", default=[], metavar="A",
                        help="only this action (e.g. account.created); repeat for several")
    events.add_argument("--not-action", action="append", default=[], metavar="A",
                        help="leave out this action (e.g. sign_in); repeat for several")
    events.add_argument("--by", metavar="NAME", help="only events made by this person")
    events.add_argument("--since", metavar="DATE",
                        help="from this day (YYYY-MM-DD, UTC) or moment (YYYY-MM-DDTHH:MM)")
    events.add_argument("--until", metavar="DATE", help="up to this day (included) or moment")
    add_db_argument(p)
    p.set_defaults(func=cmd_audit)

    p = subparsers.add_parser(
        "mode", help="print the serving mode and address (needlework.toml)",
        description="Print 'local 127.0.0.1' or 'team ADDRESS' from needlework.toml (or "
        "$NEEDLEWORK_CONFIG); exits 1 naming the key when the file is wrong.")
    p.add_argument("--address", action="store_true",
                   help="print only the address to serve on (make run uses it)")
    p.add_argument("--config", metavar="FILE", help="config file (default: needlework.toml)")
    p.set_defaults(func=cmd_mode)

    p = subparsers.add_parser(
        "oidc-config", help="write Streamlit's [auth] settings for sign-in through an identity provider",
        description="Write the [auth] table of .streamlit/secrets.toml that st.login reads "
        "(other tables are kept; the file is made readable by its owner only). The client "
        "secret is read from a prompt, or from stdin with --client-secret-stdin.")
    p.add_argument("--metadata-url", required=True, metavar="URL",
                   help="the provider's .well-known/openid-configuration URL")
    p.add_argument("--client-id", required=True)
    p.add_argument("--redirect-uri", required=True, metavar="URL",
                   help="this app's address + /oauth2callback, e.g. "
                   "https://needlework.example.org/oauth2callback")
    p.add_argument("--client-secret-stdin", action="store_true")
    p.add_argument("--scope", default="openid email profile")
    p.add_argument("--secrets", default=".streamlit/secrets.toml", metavar="FILE")
    p.set_defaults(func=cmd_oidc_config)


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def cmd_assign(args: argparse.Namespace) -> int:
    from needlework.teams.assignment import assign_dataset  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        db = open_db(args)
        summary = assign_dataset(db, args.dataset, _names(args.annotators),
                                 per_item=args.per_item, double_share=args.double_share,
                                 seed=args.seed, replace=args.replace,
                                 actor=acting_user(args, db, "assign"))
        loads = ", ".join(f"{a} {n}" for a, n in sorted(summary.per_annotator.items()))
        print(f"assigned {summary.items} items of {summary.dataset!r} ({summary.assignments} "
              f"assignments, {summary.gold_items} gold items): {loads}")
        return 0

    return run_verb("assign", go, args)


def cmd_reassign(args: argparse.Namespace) -> int:
    from needlework.teams.assignment import drop_unfinished, reassign_unfinished  # noqa: PLC0415
    from needlework.teams.item_names import item_names  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        to = _names(args.to) if args.to else None
        db = open_db(args)
        actor = acting_user(args, db, "reassign")
        done = reassign_unfinished(db, args.dataset, args.leaver, to=to, actor=actor)
        print(done.sentence(args.leaver))
        names = item_names(db, args.dataset, done.kept)
        for key in done.kept:
            print(f"  kept: {key} ({names[key]})")
        if args.drop_kept and done.kept:
            gone = drop_unfinished(db, args.dataset, args.leaver, done.kept, actor=actor)
            print(f"{plural(len(gone), 'kept item')} taken out of {args.leaver}'s queue; their "
                  "annotations stay")
        return 0

    return run_verb("reassign", go, args)


def _suggestion_line(report: dict[str, Any]) -> str:
    """One line of a dataset's suggestion figures: how many, and each source's accuracy."""
    from needlework.figures.stats_text import percent  # noqa: PLC0415

    parts = []
    for a in report["accuracy"]:
        right = a["accuracy"]
        parts.append(f"{a['source']} " + ("no reference" if right["value"] is None else
                                          f"{percent(right['value'])} right of {right['n']}"))
    return (f"  suggestions: {report['suggestions']} from {len(report['sources'])} source(s)"
            + (f"; {'; '.join(parts)}" if parts else ""))


def cmd_progress(args: argparse.Namespace) -> int:
    from needlework.suggest.figures import suggestion_report  # noqa: PLC0415
    from needlework.teams.assignment import annotator_progress, dataset_progress  # noqa: PLC0415

    db = open_db(args)
    out: list[dict[str, Any]] = []
    for d in dataset_progress(db, args.dataset):
        people = annotator_progress(db, d.dataset)
        out.append({"dataset": d.dataset, "items": d.items, "assigned_items": d.assigned_items,
                    "assignments": d.assignments, "done": d.done,
                    "complete_items": d.complete_items,
                    "annotators": [{"annotator": p.annotator, "assigned": p.assigned,
                                    "done": p.done, "started": p.started,
                                    "remaining": p.remaining} for p in people],
                    "suggestions": suggestion_report(db, d.dataset)})
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    if not out:
        print("no assigned dataset")
    for row in out:
        print(f"{row['dataset']}: {row['done']}/{row['assignments']} assignments done, "
              f"{row['complete_items']}/{row['assigned_items']} items complete")
        for p in row["annotators"]:
            print(f"  {p['annotator']}: {p['done']}/{p['assigned']} done, {p['started']} started")
        if row["suggestions"]["suggestions"]:
            print(_suggestion_line(row["suggestions"]))
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from needlework.teams.audit import (  # noqa: PLC0415
        AuditError,
        event_filter,
        export_events,
        export_history,
    )

    def go(args: argparse.Namespace) -> int:
        filtered = [f"--{k.replace('_', '-')}" for k in ("action", "not_action", "by", "since",
                                                         "until") if getattr(args, k)]
        if args.events:
            filters = event_filter(actions=args.action, skip=args.not_action, by=args.by,
                                   dataset=args.dataset, since=args.since, until=args.until)
            count = export_events(open_db(args), args.out, filters=filters, format=args.format)
            about = f" about {args.dataset!r}" if args.dataset else ""
            print(f"wrote {count} audit events{about} to {args.out}"
                  + (f" (filtered by {', '.join(filtered)})" if filtered else ""))
            return 0
        if filtered:
            raise AuditError(f"{filtered[0]} filters the audit events: add --events")
        if not args.dataset:
            raise AuditError("name the dataset (--dataset NAME), or export the audit events "
                             "(--events)")
        count = export_history(open_db(args), args.dataset, args.out, format=args.format,
                               deleted=args.deleted)
        what = "deleted history entries" if args.deleted else "history entries"
        print(f"wrote {count} {what} of {args.dataset!r} to {args.out}")
        return 0

    return run_verb("audit", go, args)


def cmd_mode(args: argparse.Namespace) -> int:
    from needlework.teams.config import ConfigError, load_config  # noqa: PLC0415

    try:
        config = load_config(args.config)
    except ConfigError as e:
        print(f"mode: {e}", file=sys.stderr)
        return 1
    print(config.address if args.address else f"{config.mode} {config.address}")
    return 0


def cmd_oidc_config(args: argparse.Namespace) -> int:
    from needlework.teams.oidc import OIDCConfigError, write_auth_secrets  # noqa: PLC0415

    try:
        secret = read_secret(args.client_secret_stdin, "client secret", confirm=False)
        path = write_auth_secrets(args.secrets, server_metadata_url=args.metadata_url,
                                  client_id=args.client_id, client_secret=secret,
                                  redirect_uri=args.redirect_uri, scope=args.scope)
    except (Stop, OIDCConfigError) as e:
        print(f"oidc-config: {e}", file=sys.stderr)
        return 1
    print(f"wrote [auth] to {path} (owner-only); st.login will use {args.metadata_url}")
    return 0
