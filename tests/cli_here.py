"""The CLI run in the test's own process: ``needlework ARGS`` through :func:`needlework.cli.main`,
what ``python -m needlework`` runs, with its exit code and what it wrote to stdout and
stderr. A second or so faster than a subprocess each (the interpreter and imports are
already there); the tests of the entry point itself, of kills and of environment
variables keep real subprocesses."""

from __future__ import annotations

import contextlib
import io
import subprocess

from needlework.cli import main


def run(args: list[str]) -> subprocess.CompletedProcess:
    """``python -m needlework ARGS``, here: a ``CompletedProcess`` (returncode, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's own refusals and --help
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())
