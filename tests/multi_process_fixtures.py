"""A toy job kind for tests/test_multi_process_state.py, importable by the processes it
starts as well (``import tests.multi_process_fixtures`` registers it)."""

from __future__ import annotations

import time

from needlework.jobs.kinds import Cancelled, register

KIND = "mp-count"
CALLS: list[int] = []  # the ids of the jobs this process's runners ran


def count(job, db, progress, should_stop):
    """Count to ``n``, one step every ``pause`` seconds."""
    CALLS.append(job.id)
    total = job.options["n"]
    progress.begin(total)
    for done in range(total):
        if should_stop():
            raise Cancelled(f"stopped after {done}", partial={"counted": done})
        time.sleep(job.options.get("pause", 0))
        progress(done + 1, total)
    return {"counted": total}


register(KIND, count, unit="steps")
