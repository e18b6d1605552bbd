"""Run a Python module as a child that ends when the process that started it is gone.

    python -m needlework.judges.tethered PARENT_PID MODULE [ARG ...]

runs ``python -m MODULE ARG ...`` in this process, with a watcher thread that checks
every second whether ``PARENT_PID`` is still this process's parent. When it is not
(the parent died, even by SIGKILL, and the child was handed to init), the child sends
itself SIGTERM, so a server shuts down as it would on Ctrl+C, and exits at once if it
is still running :data:`GRACE_S` seconds later.

Why not ``prctl(PR_SET_PDEATHSIG)``: Linux sends that signal when the *thread* that
started the child ends, and the app starts its demo judge from a script-run thread
that ends a moment later. :func:`needlework.judges.serve.start_server` uses this
module so that the ``transformers serve`` child of a crashed or killed app does not
keep its memory (about 0.5 GB) after it.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
import threading
import time
from pathlib import Path

#: The folder that holds the ``needlework`` package (a child's ``PYTHONPATH`` needs it).
PROJECT_ROOT = str(Path(__file__).resolve().parents[2])
#: Seconds between two checks of the parent.
POLL_S = 1.0
#: Seconds a server is given to end after SIGTERM before the process exits regardless.
GRACE_S = 10.0


def orphaned(parent: int) -> bool:
    """True when ``parent`` is no longer this process's parent."""
    return os.getppid() != parent


def watch(parent: int, poll: float = POLL_S, grace: float = GRACE_S) -> threading.Thread:
    """Start the daemon thread that ends this process once ``parent`` is gone."""

    def run() -> None:
        while not orphaned(parent):
            time.sleep(poll)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(grace)
        os._exit(1)  # the server did not end on SIGTERM

    thread = threading.Thread(target=run, name="needlework-tether", daemon=True)
    thread.start()
    return thread


def command(module: str, *args: str, parent: int | None = None) -> list[str]:
    """The command line that runs ``python -m module args`` tethered to ``parent``
    (this process by default)."""
    return [sys.executable, "-m", __name__, str(os.getpid() if parent is None else parent),
            module, *args]


def main(argv: list[str]) -> None:
    if len(argv) < 2 or not argv[0].isdigit():
        sys.exit("usage: python -m needlework.judges.tethered PARENT_PID MODULE [ARG ...]")
    parent, module, args = int(argv[0]), argv[1], argv[2:]
    if orphaned(parent):
        sys.exit(f"process {parent} is not this process's parent (already gone?)")
    watch(parent)
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
