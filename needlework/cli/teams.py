"""Verbs for annotation teams: ``users``, ``assign``, ``reassign``, ``progress``, ``audit``,
``mode`` and ``oidc-config``.

The command line acts as the server's operator (whoever can run it can read the
database file anyway): it is how the first admin account is made. Passwords and the
identity provider's client secret are read from a prompt, or from stdin with
``--password-stdin`` / ``--client-secret-stdin``, never from the command line, and are
never printed; the one-time passwords of ``users import`` are printed (or written to a
file only its owner can read) once, and never stored.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from typing import Any

from needlework.cli import add_db_argument

ROLES = ("annotator", "reviewer", "admin")


def register(subparsers: argparse._SubParsersAction) -> None:
    _register_users(subparsers)

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


def _register_users(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "users", help="manage team accounts (add, import, list, disable, enable, reset, role, "
        "unlock)",
        description="Accounts for team mode. Passwords are read from a prompt (twice) or, with "
        "--password-stdin, from the first line of stdin; never from the command line.")
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True

    q = sub.add_parser("add", help="create an account")
    q.add_argument("name", metavar="NAME")
    q.add_argument("--role", choices=ROLES, required=True)
    q.add_argument("--email", help="for sign-in through the identity provider (OIDC)")
    how = q.add_mutually_exclusive_group()
    how.add_argument("--password-stdin", action="store_true",
                     help="read the password from the first line of stdin")
    how.add_argument("--no-password", action="store_true",
                     help="no password: signs in only through the identity provider (needs --email)")
    add_db_argument(q)
    q.set_defaults(func=cmd_users_add)

    q = sub.add_parser("list", help="list accounts")
    q.add_argument("--json", action="store_true", help="print a JSON list")
    add_db_argument(q)
    q.set_defaults(func=cmd_users_list)

    for action, text in (("disable", "disable an account and end its sessions"),
                         ("enable", "enable a disabled account"),
                         ("unlock", "lift every sign-in pause of the account (its name, e-mail, "
                                    "each browser)")):
        q = sub.add_parser(action, help=text)
        q.add_argument("name", metavar="NAME")
        add_db_argument(q)
        q.set_defaults(func=cmd_users_simple, action=action)

    q = sub.add_parser("reset", help="set a new password (ends the account's sessions)")
    q.add_argument("name", metavar="NAME")
    q.add_argument("--password-stdin", action="store_true",
                   help="read the password from the first line of stdin")
    add_db_argument(q)
    q.set_defaults(func=cmd_users_reset)

    q = sub.add_parser(
        "import", help="create accounts from a CSV file, each with a one-time password",
        description="Create one account per row of FILE (UTF-8 CSV with a header row naming "
        "the columns name, e-mail, role), all or none: on any problem nothing is created and "
        "the problems are named with their line and field. Each account gets a random "
        "one-time password, printed once as CSV (name,e-mail,password) to stdout or written "
        "to --out (readable by its owner only); the person chooses their own at their first "
        "sign-in. Only the passwords' hashes are stored.")
    q.add_argument("file", metavar="FILE")
    q.add_argument("--out", metavar="FILE",
                   help="write name,e-mail,password here (a new file, mode 0600) instead of "
                   "stdout")
    add_db_argument(q)
    q.set_defaults(func=cmd_users_import)

    q = sub.add_parser("role", help="change an account's role")
    q.add_argument("name", metavar="NAME")
    q.add_argument("role", choices=ROLES)
    add_db_argument(q)
    q.set_defaults(func=cmd_users_role)

    q = sub.add_parser("email", help="set (or with no EMAIL remove) an account's e-mail")
    q.add_argument("name", metavar="NAME")
    q.add_argument("email", nargs="?", metavar="EMAIL")
    add_db_argument(q)
    q.set_defaults(func=cmd_users_email)


class _Stop(Exception):
    """A one-line failure for stderr."""


def _secret(from_stdin: bool, what: str, *, confirm: bool) -> str:
    if from_stdin:
        value = sys.stdin.readline().rstrip("\r\n")
        if not value:
            raise _Stop(f"no {what} on stdin")
        return value
    if not sys.stdin.isatty():
        raise _Stop(f"stdin is not a terminal: give the {what} on stdin with "
                    f"--{'password' if what == 'password' else 'client-secret'}-stdin")
    value = getpass.getpass(f"{what.capitalize()}: ")
    if confirm and getpass.getpass(f"{what.capitalize()} again: ") != value:
        raise _Stop(f"the two {what}s differ")
    return value


def _run(verb: str, fn: Any, args: argparse.Namespace) -> int:
    from needlework.teams.accounts import AccountError  # noqa: PLC0415
    from needlework.teams.accounts_csv import CsvImportError  # noqa: PLC0415
    from needlework.teams.assignment import AssignmentError  # noqa: PLC0415
    from needlework.teams.audit import AuditError  # noqa: PLC0415
    from needlework.teams.passwords import PasswordRejected  # noqa: PLC0415

    try:
        return fn(args)
    except (_Stop, AccountError, AssignmentError, AuditError, CsvImportError,
            PasswordRejected) as e:
        print(f"{verb}: {e}", file=sys.stderr)
        return 1


def _db(args: argparse.Namespace) -> Any:
    from store import connect  # noqa: PLC0415

    return connect(args.db)


def cmd_users_add(args: argparse.Namespace) -> int:
    from needlework.teams import accounts  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        if args.no_password and not args.email:
            raise _Stop("--no-password needs --email (the account signs in through the "
                        "identity provider)")
        password = None if args.no_password else _secret(args.password_stdin, "password",
                                                            confirm=True)
        user = accounts.add_user(_db(args), args.name, args.role, password=password,
                                 email=args.email)
        print(f"added {user.role} {user.name!r}" + (f" <{user.email}>" if user.email else ""))
        return 0

    return _run("users add", go, args)


def _private_file(path: str) -> Any:
    """A new file at ``path`` that only its owner can read (it will hold passwords)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise _Stop(f"{path} exists: name a new file for the passwords") from None
    except OSError as e:
        raise _Stop(f"{path}: {e.strerror}") from None
    os.fchmod(fd, 0o600)  # whatever the umask
    return os.fdopen(fd, "w", encoding="utf-8", newline="")


def cmd_users_import(args: argparse.Namespace) -> int:
    from needlework.teams import accounts_csv  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        db = _db(args)
        path = args.file
        if not os.path.isfile(path):
            raise _Stop(f"{path}: not a file")
        with open(path, "rb") as f:
            data = f.read(accounts_csv.MAX_BYTES + 1)
        accounts_csv.read_accounts(data, path, db)  # every problem before the --out file
        out = _private_file(args.out) if args.out else None
        try:
            made = accounts_csv.import_accounts(db, data, path)
        except BaseException:
            if out is not None:
                out.close()
                os.unlink(args.out)
            raise
        text = accounts_csv.credentials_csv(made)
        if out is None:
            sys.stdout.write(text)
            print(f"created {len(made)} accounts; the passwords above are shown once and "
                  "must be changed at the first sign-in", file=sys.stderr)
        else:
            with out:
                out.write(text)
            print(f"created {len(made)} accounts; their one-time passwords are in {args.out} "
                  "(readable by you only)")
        return 0

    return _run("users import", go, args)


def _user_json(user: Any) -> dict[str, Any]:
    return {"name": user.name, "email": user.email, "role": user.role, "disabled": user.disabled,
            "password": user.has_password, "locked_until": user.locked_until,
            "last_sign_in_at": user.last_sign_in_at}


def cmd_users_list(args: argparse.Namespace) -> int:
    from needlework.teams import accounts  # noqa: PLC0415

    users = accounts.list_users(_db(args))
    if args.json:
        print(json.dumps([_user_json(u) for u in users], ensure_ascii=False))
        return 0
    if not users:
        print("no accounts")
    for u in users:
        flags = [f for f, on in (("disabled", u.disabled), ("no password", not u.has_password),
                                 (f"locked until {u.locked_until}", bool(u.locked_until)))
                 if on]
        print(f"{u.name}\t{u.role}\t{u.email or '-'}" + (f"\t({', '.join(flags)})" if flags else ""))
    return 0


def cmd_users_simple(args: argparse.Namespace) -> int:
    from needlework.teams import accounts  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        db = _db(args)
        if args.action == "unlock":
            user = accounts.unlock(db, args.name)
        else:
            user = accounts.set_disabled(db, args.name, args.action == "disable")
        print(f"{user.name}: " + ("unlocked" if args.action == "unlock" else f"{args.action}d"))
        return 0

    return _run(f"users {args.action}", go, args)


def cmd_users_reset(args: argparse.Namespace) -> int:
    from needlework.teams import accounts  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        db = _db(args)
        if accounts.get_user(db, args.name) is None:
            raise _Stop(f"no account named {args.name!r}")
        user = accounts.reset_password(db, args.name,
                                       _secret(args.password_stdin, "password", confirm=True))
        print(f"{user.name}: new password set, sessions ended")
        return 0

    return _run("users reset", go, args)


def cmd_users_role(args: argparse.Namespace) -> int:
    from needlework.teams import accounts  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        user = accounts.set_role(_db(args), args.name, args.role)
        print(f"{user.name}: {user.role}")
        return 0

    return _run("users role", go, args)


def cmd_users_email(args: argparse.Namespace) -> int:
    from needlework.teams import accounts  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        user = accounts.set_email(_db(args), args.name, args.email)
        print(f"{user.name}: {user.email or 'no e-mail'}")
        return 0

    return _run("users email", go, args)


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def cmd_assign(args: argparse.Namespace) -> int:
    from needlework.teams.assignment import assign_dataset  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        summary = assign_dataset(_db(args), args.dataset, _names(args.annotators),
                                 per_item=args.per_item, double_share=args.double_share,
                                 seed=args.seed, replace=args.replace)
        loads = ", ".join(f"{a} {n}" for a, n in sorted(summary.per_annotator.items()))
        print(f"assigned {summary.items} items of {summary.dataset!r} ({summary.assignments} "
              f"assignments, {summary.gold_items} gold items): {loads}")
        return 0

    return _run("assign", go, args)


def cmd_reassign(args: argparse.Namespace) -> int:
    from needlework.teams.assignment import drop_unfinished, reassign_unfinished  # noqa: PLC0415

    def go(args: argparse.Namespace) -> int:
        to = _names(args.to) if args.to else None
        db = _db(args)
        done = reassign_unfinished(db, args.dataset, args.leaver, to=to)
        print(done.sentence(args.leaver))
        for key in done.kept:
            print(f"  kept: {key}")
        if args.drop_kept and done.kept:
            gone = drop_unfinished(db, args.dataset, args.leaver, done.kept)
            print(f"{len(gone)} kept item(s) taken out of {args.leaver}'s queue; their "
                  "annotations stay")
        return 0

    return _run("reassign", go, args)


def _suggestion_line(report: dict[str, Any]) -> str:
    """One line of a dataset's suggestion figures: how many, and each source's accuracy."""
    from needlework.stats_text import percent  # noqa: PLC0415

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

    db = _db(args)
    out = []
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
    for d in out:
        print(f"{d['dataset']}: {d['done']}/{d['assignments']} assignments done, "
              f"{d['complete_items']}/{d['assigned_items']} items complete")
        for p in d["annotators"]:
            print(f"  {p['annotator']}: {p['done']}/{p['assigned']} done, {p['started']} started")
        if d["suggestions"]["suggestions"]:
            print(_suggestion_line(d["suggestions"]))
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
            count = export_events(_db(args), args.out, filters=filters, format=args.format)
            about = f" about {args.dataset!r}" if args.dataset else ""
            print(f"wrote {count} audit events{about} to {args.out}"
                  + (f" (filtered by {', '.join(filtered)})" if filtered else ""))
            return 0
        if filtered:
            raise AuditError(f"{filtered[0]} filters the audit events: add --events")
        if not args.dataset:
            raise AuditError("name the dataset (--dataset NAME), or export the audit events "
                             "(--events)")
        count = export_history(_db(args), args.dataset, args.out, format=args.format,
                               deleted=args.deleted)
        what = "deleted history entries" if args.deleted else "history entries"
        print(f"wrote {count} {what} of {args.dataset!r} to {args.out}")
        return 0

    return _run("audit", go, args)


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
        secret = _secret(args.client_secret_stdin, "client secret", confirm=False)
        path = write_auth_secrets(args.secrets, server_metadata_url=args.metadata_url,
                                  client_id=args.client_id, client_secret=secret,
                                  redirect_uri=args.redirect_uri, scope=args.scope)
    except (_Stop, OIDCConfigError) as e:
        print(f"oidc-config: {e}", file=sys.stderr)
        return 1
    print(f"wrote [auth] to {path} (owner-only); st.login will use {args.metadata_url}")
    return 0
