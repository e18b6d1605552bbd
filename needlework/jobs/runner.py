"""Background jobs: one runner for every kind of long work (scoring, needle runs, ...).

A *job kind* is a function ``(job, db, progress, should_stop) -> result`` registered by
name (:mod:`needlework.jobs.kinds`: the kind's side). The runner does everything else, the
same way for every kind:

- the **row**: a job is a row of the store's ``jobs`` table (``store.scores``), written
  ``queued`` by :meth:`JobRunner.submit`, ``running`` when its function starts, then
  ``done`` (with the function's result), ``cancelled``, ``failed`` (with one line saying
  why) or ``interrupted``;
- the **thread**: :meth:`JobRunner.start` runs the job in a daemon thread of this
  process with **its own database connection**; :meth:`JobRunner.run` runs it in the
  calling thread (a CLI, a test). No other module keeps or touches job threads;
- **progress** in the kind's unit: ``progress(done, total)`` is written to the row at
  most every half second (and always the last step); ``Progress.begin`` sets the total
  at once, ``Progress.scaled`` converts the kind's steps into its unit;
- **cancel**: :meth:`JobRunner.cancel` sets the row's flag, ``should_stop()`` reads it
  (from any thread: :func:`stop_check`);
  the function stops at its next check and raises ``Cancelled``, optionally with
  the partial result, which is kept on the row (or an exception the kind declared as
  meaning cancelled);
- **several processes, one database** (server processes behind a proxy, a CLI): each
  runner has an :attr:`JobRunner.identity` (host, process id and a random part); the row
  of a queued or running job names its ``owner`` and carries a ``heartbeat`` (Unix
  seconds) that a thread of the owner writes every :data:`HEARTBEAT_SECONDS` while it runs
  the job. Another process shows it as running, with its progress, and its Cancel sets the
  row's flag, which the owner reads;
- **a server that died**: a ``queued`` or ``running`` row is shown as ``interrupted``
  (:meth:`JobRunner.status`) when its owner's heartbeat is older than
  :data:`STALE_SECONDS`, or when it runs as this runner's (or no runner's) and no thread
  of this process runs it; submitting a new job of the same kind and dataset records it
  so on its row (and sets its cancel flag: an owner that was only stalled stops). Kinds
  keep their work in caches as they go (the score cache), so the new job resumes where
  the old one stopped;
- **once**: :meth:`JobRunner.submit` checks for a live job of the same kind and dataset
  and inserts the new one in one ``BEGIN IMMEDIATE`` transaction, and returns the live
  job's id instead when there is one, in whichever process it runs (a queued one is live
  while its submitter's heartbeat is fresh: the time to start it); a runner starts a job
  only by claiming its ``queued`` row in one statement, and only a row it queued itself
  (or one no runner did), so however many processes (or sessions) start it, one runs it.

A toy kind, complete::

    from needlework.jobs.kinds import Cancelled, register
    from needlework.jobs.runner import RUNNER

    def count(job, db, progress, should_stop):
        total = job.options["n"]
        for done in range(total):
            if should_stop():
                raise Cancelled("stopped", partial={"counted": done})
            progress(done + 1, total)
        return {"counted": total}

    register("count", count, unit="steps")
    job_id = RUNNER.submit(db, "count", "some-dataset", options={"n": 10})
    RUNNER.start(db_path, job_id)

Objects that cannot go into the database (a loaded model, a connection carrying an API
key) travel as ``inputs`` of :meth:`JobRunner.start` / :meth:`JobRunner.run` and reach
the function as ``job.inputs``; they are never written anywhere.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import sqlite3
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from needlework.jobs.kinds import KINDS, Cancelled, Job, Progress, kind_of, unit_of
from needlework.teams.events import record
from needlework.teams.permissions import User
from store.db import connect, thread_connection
from store.scores import (
    active_jobs,
    beat_job,
    cancel_requested,
    claim_job,
    create_job,
    finish_job,
    get_job,
    interrupt_job,
    list_jobs,
    request_cancel,
)

log = logging.getLogger(__name__)

ACTIVE = ("queued", "running")
INTERRUPTED = "interrupted"
INTERRUPTED_ERROR = "interrupted: the server stopped while it ran"
RECENT = 200  # rows looked at for the latest job of a dataset
HEARTBEAT_SECONDS = 5.0  # how often the owner of a running job says it still runs it
STALE_SECONDS = 15.0  # an older heartbeat: the owner's process is gone
LIVE_ELSEWHERE = "job {id} is already {status}, by {owner}"


def stop_check(db: Database, db_path: str | Path, job_id: int) -> Callable[[], bool]:
    """The job's ``should_stop()``: it reads the cancel flag, and may be called from any
    thread. A kind hands it to its helper threads (a judge's request pool checks it during
    retries); those read through a connection of their own (:func:`store.db.thread_connection`),
    never through ``db`` while the job's thread uses it (one connection used by two threads
    at once fails: ``database table is locked``)."""
    owner = threading.get_ident()

    def should_stop() -> bool:
        if threading.get_ident() == owner:
            return cancel_requested(db, job_id)
        return cancel_requested(thread_connection(db_path), job_id)

    return should_stop


def new_identity() -> str:
    """A runner's identity: host, process id and a random part (a process id is reused)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class JobRunner:
    """Runs jobs of registered kinds and knows which of them this process runs.

    ``identity`` names this runner on the rows it owns (default :func:`new_identity`);
    ``heartbeat`` and ``stale`` are :data:`HEARTBEAT_SECONDS` and :data:`STALE_SECONDS`
    unless given (a test's two runners on one file stand for two processes)."""

    def __init__(self, identity: str | None = None, *, heartbeat: float = HEARTBEAT_SECONDS,
                 stale: float = STALE_SECONDS) -> None:
        self.identity = identity or new_identity()
        self.heartbeat, self.stale = heartbeat, stale
        self._lock = threading.Lock()
        self._threads: dict[int, threading.Thread] = {}
        self._running: dict[int, int] = {}  # job id -> how many run() calls execute it here

    # -- queue, start, run ------------------------------------------------------------

    def submit(self, db: Database, kind: str, dataset: str, model: str = "",
               options: dict[str, Any] | None = None, *, by: User | str | None = None) -> int:
        """Queue a job (``options`` JSON-ready); returns its id, or the id of the job of the
        same kind and dataset that is live (queued or running, in this process or in
        another one): then nothing is queued, and starting that id does not run it twice.
        Jobs of the same kind and dataset that a stopped server left behind are recorded as
        interrupted first. The check and the insert are one transaction. The start is an
        audit event (``job.started``) of ``by`` (the signed-in user; ``None`` in local
        mode)."""
        kind_of(kind)
        moment = time.time()  # before waiting for the lock: a wait is no owner's silence
        with db.atomic():
            live = None
            for job in active_jobs(db, kind, dataset):
                if self.status(job, now=moment) != INTERRUPTED:
                    live = live or int(job["id"])
                else:
                    interrupt_job(db, int(job["id"]), INTERRUPTED_ERROR)
            if live is None:
                job_id = create_job(db, kind, dataset, model, options, owner=self.identity,
                                    heartbeat=time.time())
        if live is not None:
            log.info("%s job on %s: job %s is live, none queued", kind, dataset, live)
            return live
        record(db, by, "job.started", f"{kind} job {job_id}", dataset=dataset,
               after={"job": job_id, "kind": kind, "model": model})
        return job_id

    def start(self, db_path: str | Path, job_id: int,
              inputs: Mapping[str, Any] | None = None) -> JobHandle:
        """Run job ``job_id`` in a daemon thread with its own connection to ``db_path``
        (nothing new when a thread of this process already runs it; a thread that finds
        it claimed by another runner ends at once)."""
        with self._lock:
            running = self._threads.get(job_id)
            if running is not None and running.is_alive():
                return JobHandle(self, job_id)
            thread = threading.Thread(target=self.run, args=(db_path, job_id, inputs),
                                      daemon=True, name=f"needlework-job-{job_id}")
            self._threads[job_id] = thread
        thread.start()
        return JobHandle(self, job_id)

    def run(self, db_path: str | Path, job_id: int,
            inputs: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Run job ``job_id`` to its end in the calling thread, with its own connection to
        ``db_path``; returns the finished row. Never raises for the job's own errors. A job
        that is not queued any more (a runner, here or in another process, claimed it) or
        that another runner queued (it starts it) is not run here: its row comes back as it
        is, with ``error`` saying so while it is live."""
        db = connect(db_path)
        try:
            row = get_job(db, job_id)
            if row is None:
                raise LookupError(f"no job {job_id}")
            if not claim_job(db, job_id, self.identity, time.time()):
                row = get_job(db, job_id) or row
                if row["status"] == "queued" and row["cancel_requested"]:
                    finish_job(db, job_id, "cancelled", error="cancelled before it started")
                    return get_job(db, job_id) or {}
                if row["status"] in ACTIVE and not row.get("error"):
                    row["error"] = LIVE_ELSEWHERE.format(id=job_id, status=row["status"],
                                                         owner=row.get("owner"))
                return row
            job = Job(job_id, row["kind"], row["dataset"], row["model"], row["options"],
                      dict(inputs or {}))
            with self._executing(db_path, job_id):
                self._execute(db, job, db_path)
            return get_job(db, job_id) or {}
        finally:
            db.conn.close()

    def _executing(self, db_path: str | Path, job_id: int) -> _Beating:
        return _Beating(self, db_path, job_id)

    def _beat(self, db_path: str | Path, job_id: int, stop: threading.Event) -> None:
        """The heartbeat of one job this runner runs: written every ``heartbeat`` seconds
        through a connection of its own until ``stop`` is set or the row is not ours."""
        db: Database | None = None
        try:
            while not stop.wait(self.heartbeat):
                try:
                    db = db or connect(db_path, migrate=False)
                    if not beat_job(db, job_id, self.identity, time.time()):
                        return
                except sqlite3.Error as exc:  # a busy file: the next beat tries again
                    log.warning("job %s: heartbeat not written (%s)", job_id, exc)
        finally:
            if db is not None:
                db.conn.close()

    def _execute(self, db: Database, job: Job, db_path: str | Path) -> None:
        """Call the kind's function and record how it ended (unless another process
        recorded the job interrupted meanwhile: its row is then left as it says)."""
        finish = partial(finish_job, owner=self.identity)
        try:
            kind = kind_of(job.kind)
            result = kind.function(job, db, Progress(db, job.id),
                                   stop_check(db, db_path, job.id))
        except Cancelled as exc:
            finish(db, job.id, "cancelled", error=str(exc), result=exc.partial)
        except Exception as exc:  # a job records its failure, it never raises
            known = KINDS.get(job.kind)
            if known is not None and isinstance(exc, known.cancelled):
                finish(db, job.id, "cancelled", error=str(exc))
            elif known is not None and isinstance(exc, known.errors):
                finish(db, job.id, "failed", error=str(exc))
            else:  # unexpected: the row says what, the server's log where
                log.exception("job %s (%s) failed", job.id, job.kind)
                finish(db, job.id, "failed",
                       error=traceback.format_exception_only(type(exc), exc)[-1].strip())
        else:
            finish(db, job.id, "done", result=result)

    # -- what the pages poll ------------------------------------------------------------

    def alive(self, job_id: int) -> bool:
        """True while a thread of this process runs the job (started by :meth:`start`, or
        :meth:`run` in the calling thread)."""
        with self._lock:
            thread = self._threads.get(job_id)
            return self._running.get(job_id, 0) > 0 or (thread is not None and thread.is_alive())

    def join(self, job_id: int, timeout: float | None = None) -> None:
        """Wait for the job's thread, if this process started one."""
        with self._lock:
            thread = self._threads.get(job_id)
        if thread is not None:
            thread.join(timeout)

    def status(self, job: dict[str, Any], *, now: float | None = None) -> str:
        """The job's status, or ``interrupted`` for a queued or running row whose process
        is gone: a running one of this runner (or of no runner) that no thread of this
        process runs, or one whose owner's heartbeat is older than ``stale`` seconds at
        ``now`` (a queued job of this runner too: it was submitted and never started)."""
        if job["status"] not in ACTIVE or self.alive(int(job["id"])):
            return str(job["status"])
        owner, beat = job.get("owner"), job.get("heartbeat")
        moment = time.time() if now is None else now
        fresh = beat is not None and moment - float(beat) <= self.stale
        if owner and fresh and (owner != self.identity or job["status"] == "queued"):
            return str(job["status"])
        return INTERRUPTED

    def latest(self, db: Database, kind: str, dataset: str) -> dict[str, Any] | None:
        """The newest job of ``kind`` on ``dataset`` with ``display_status`` (see
        :meth:`status`) and ``unit`` added, or ``None``."""
        for job in list_jobs(db, limit=RECENT):
            if job["dataset"] == dataset and job["kind"] == kind:
                job["display_status"] = self.status(job)
                job["unit"] = unit_of(kind)
                return job
        return None

    def get(self, db: Database, job_id: int) -> dict[str, Any] | None:
        """One job with ``display_status`` and ``unit`` added, or ``None``."""
        job = get_job(db, job_id)
        if job is not None:
            job["display_status"] = self.status(job)
            job["unit"] = unit_of(job["kind"])
        return job

    def cancel(self, db: Database, job_id: int) -> bool:
        """Ask a job to stop at its next check; False when it has already finished."""
        return request_cancel(db, job_id)

    def close_interrupted(self, db: Database, kind: str, dataset: str) -> list[int]:
        """Record the interrupted jobs of ``kind`` on ``dataset`` as such; their ids."""
        closed = []
        with db.atomic():
            for job in active_jobs(db, kind, dataset):
                if self.status(job) == INTERRUPTED and interrupt_job(db, int(job["id"]),
                                                                     INTERRUPTED_ERROR):
                    closed.append(int(job["id"]))
        return closed




class _Beating:
    """While a :meth:`JobRunner.run` executes a job: the job counts as run here
    (:meth:`JobRunner.alive`) and a thread writes its heartbeat."""

    def __init__(self, runner: JobRunner, db_path: str | Path, job_id: int) -> None:
        self.runner, self.db_path, self.job_id = runner, db_path, job_id
        self.stop = threading.Event()
        self.thread = threading.Thread(target=runner._beat, args=(db_path, job_id, self.stop),
                                       daemon=True, name=f"needlework-job-{job_id}-heartbeat")

    def __enter__(self) -> _Beating:
        with self.runner._lock:
            self.runner._running[self.job_id] = self.runner._running.get(self.job_id, 0) + 1
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        with self.runner._lock:
            left = self.runner._running.get(self.job_id, 1) - 1
            if left > 0:
                self.runner._running[self.job_id] = left
            else:
                self.runner._running.pop(self.job_id, None)


@dataclass(frozen=True)
class JobHandle:
    """A started job: wait for it or ask whether it still runs."""

    runner: JobRunner
    job_id: int

    def join(self, timeout: float | None = None) -> None:
        self.runner.join(self.job_id, timeout)

    def is_alive(self) -> bool:
        return self.runner.alive(self.job_id)


#: The runner of this process: every page and every session share it.
RUNNER = JobRunner()
