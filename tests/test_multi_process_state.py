"""Several server processes on one SQLite file (issue 60): what one process does, another
sees. Real processes where one must really start at the same moment or really die; two
runner objects with different identities over one file stand for two processes
elsewhere."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import store
from store.migrations import migrations

ROOT = Path(__file__).resolve().parents[1]


def at_once(code: str, n: int, *args: str, delay: float = 2.0) -> list[subprocess.CompletedProcess]:
    """Run ``code`` in ``n`` Python processes that all start its work at the same moment
    (``sys.argv[1]`` is that moment, then ``args``)."""
    start = f"{time.time() + delay:.3f}"
    wait = ("import sys, time\nwhile time.time() < float(sys.argv[1]):\n"
            "    time.sleep(0.001)\n")
    procs = [subprocess.Popen([sys.executable, "-c", wait + code, start, *args], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(n)]
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return done


def test_processes_opening_a_new_file_at_once_migrate_it_once(tmp_path):
    """N server processes started together on a new database: before, each found every
    migration pending and all but one failed (``table datasets already exists``)."""
    path = tmp_path / "fresh.db"
    done = at_once("import store\nstore.connect(sys.argv[2])\nprint('ok')", 4, str(path))
    assert [(p.returncode, p.stdout.strip()) for p in done] == [(0, "ok")] * 4, \
        [p.stderr[-400:] for p in done]
    db = store.connect(path)
    names = [r[0] for r in db.execute("select name from _sqlite_migrations")]
    assert len(names) == len(set(names)) == len(migrations._migrations)
