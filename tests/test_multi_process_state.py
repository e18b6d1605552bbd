"""Several server processes on one SQLite file (issue 60): what one process does, another
sees. Real processes where one must really start at the same moment or really die; two
runner objects with different identities over one file stand for two processes
elsewhere."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

import store
from needlework.jobs.runner import INTERRUPTED, INTERRUPTED_ERROR, JobRunner
from needlework.teams import session_cookie
from store.datasets import NewItem, create_dataset, dataset_version
from store.migrations import migrations
from store.scores import create_job, get_job, list_jobs
from tests.multi_process_fixtures import CALLS

ROOT = Path(__file__).resolve().parents[1]


def at_once(code: str, n: int, *args: str) -> list[subprocess.CompletedProcess]:
    """Run ``code`` in ``n`` Python processes that start its work together: each imports
    what ``code`` imports, says it is ready, and waits for the word (``sys.argv[1]``, a
    folder; then ``args``)."""
    with tempfile.TemporaryDirectory() as folder:
        imports = "".join(line + "\n" for line in code.splitlines()
                          if line.startswith(("import ", "from ")))
        wait = ("import os, sys, time\n" + imports +
                "open(os.path.join(sys.argv[1], str(os.getpid())), 'w').close()\n"
                "while not os.path.exists(os.path.join(sys.argv[1], 'go')):\n"
                "    time.sleep(0.002)\n")
        procs = [subprocess.Popen([sys.executable, "-c", wait + code, folder, *args], cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(n)]
        end = time.monotonic() + 120
        while len(os.listdir(folder)) < n and time.monotonic() < end \
                and all(p.poll() is None for p in procs):
            time.sleep(0.01)
        Path(folder, "go").touch()
        done = []
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return done


@pytest.mark.slow
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


# -- sign-in tickets: offered in one process, redeemed in another, once -------------------


def test_a_ticket_is_kept_by_its_hash_with_no_token_in_clear(tmp_path):
    path = tmp_path / "t.db"
    page = store.connect(path)  # the process that ran the sign-in
    token, device = "nw_" + "s" * 43, "nwd_" + "d" * 43
    ticket = session_cookie.offer(token, 3600, device=(device, 7776000), db=page)
    dump = "\n".join(page.iterdump())
    assert token not in dump and device not in dump and ticket not in dump
    assert "s" * 20 not in dump and "d" * 20 not in dump
    kept = page.execute("select ticket_hash from session_tickets").fetchall()
    assert kept == [(hashlib.sha256(ticket.encode()).hexdigest(),)]
    route = store.connect(path, migrate=False)  # the process the cookie route answers in
    other = ("A" if ticket[0] != "A" else "B") + ticket[1:]
    assert session_cookie.redeem(other, db=route) is None  # not that ticket
    assert session_cookie.redeem(ticket, db=route) == (token, 3600, (device, 7776000))
    assert session_cookie.redeem(ticket, db=route) is None
    assert page.execute("select count(*) from session_tickets").fetchone()[0] == 0


def test_expired_tickets_are_dropped_when_the_next_is_offered(tmp_path):
    db = store.connect(tmp_path / "t.db")
    session_cookie.offer("nw_old", 60, now=1000.0, db=db)
    session_cookie.offer("nw_new", 60, now=1000.0 + session_cookie.TICKET_SECONDS + 1, db=db)
    assert db.execute("select count(*) from session_tickets").fetchone()[0] == 1


def test_a_ticket_redeemed_from_several_connections_at_once_is_redeemed_once(tmp_path):
    path = tmp_path / "t.db"
    store.connect(path).conn.close()
    for round_ in range(8):
        token = f"nw_{round_}"
        ticket = session_cookie.offer(token, 60, db=store.connect(path, migrate=False))
        dbs = [store.connect(path, migrate=False) for _ in range(6)]
        barrier = threading.Barrier(len(dbs))
        got: list = []

        def take(db, ticket=ticket, barrier=barrier, got=got):
            barrier.wait()
            got.append(session_cookie.redeem(ticket, db=db))

        threads = [threading.Thread(target=take, args=(db,)) for db in dbs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert len(got) == len(dbs)
        assert [g for g in got if g is not None] == [(token, 60, None)], got
        for db in dbs:
            db.conn.close()


@pytest.mark.slow
def test_a_ticket_redeemed_by_several_processes_at_once_is_redeemed_once(tmp_path):
    path = tmp_path / "t.db"
    ticket = session_cookie.offer("nw_once", 60, db=store.connect(path))
    code = ("import store\nfrom needlework.teams import session_cookie\n"
            "db = store.connect(sys.argv[2], migrate=False)\n"
            "print(session_cookie.redeem(sys.argv[3], db=db))\n")
    done = at_once(code, 4, str(path), ticket)
    assert all(p.returncode == 0 for p in done), [p.stderr[-400:] for p in done]
    assert sorted(p.stdout.strip() for p in done) == ["('nw_once', 60, None)"] + ["None"] * 3


# -- the job runner: a job runs once, is seen live everywhere, interrupted when gone ------

KIND_CODE = "from needlework.jobs.runner import JobRunner\nimport tests.multi_process_fixtures\n"


def wait_for(predicate, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def path(tmp_path):
    path = tmp_path / "jobs.db"
    store.connect(path).conn.close()
    return path


def test_a_job_of_one_process_is_live_in_another_which_can_cancel_it(path):
    a, b = JobRunner("a", heartbeat=0.05), JobRunner("b", heartbeat=0.05, stale=1.0)
    db = store.connect(path)
    job_id = a.submit(db, "mp-count", "toy", "", {"n": 10_000, "pause": 0.01})
    assert b.get(db, job_id)["display_status"] == "queued"  # A's, fresh: not interrupted
    a.start(path, job_id)
    assert wait_for(lambda: (get_job(db, job_id)["done"] or 0) >= 3)
    seen = b.latest(db, "mp-count", "toy")
    assert seen["id"] == job_id and seen["display_status"] == "running"
    assert seen["owner"] == "a" and seen["done"] >= 3 and seen["unit"] == "steps"
    beat = get_job(db, job_id)["heartbeat"]
    assert wait_for(lambda: get_job(db, job_id)["heartbeat"] > beat)  # A says it still runs
    assert b.cancel(db, job_id)  # B's Cancel reaches A's thread through the row
    a.join(job_id, timeout=20)
    job = b.get(db, job_id)
    assert job["status"] == job["display_status"] == "cancelled"
    assert job["error"].startswith("stopped after")


def test_a_submit_in_another_process_returns_the_live_job_and_it_runs_once(path):
    a, b = JobRunner("a", heartbeat=0.05), JobRunner("b", heartbeat=0.05)
    db = store.connect(path)
    CALLS.clear()
    job_id = a.submit(db, "mp-count", "toy", "", {"n": 80, "pause": 0.01})
    a.start(path, job_id)
    assert wait_for(lambda: get_job(db, job_id)["status"] == "running")
    again = b.submit(db, "mp-count", "toy", "", {"n": 5})
    assert again == job_id  # B's page shows A's job, nothing queued
    row = b.run(path, again)  # and starting it there does not run it twice
    assert row["status"] == "running" and row["error"] == f"job {job_id} is already running, by a"
    b.start(path, again).join(10)
    assert a.submit(db, "mp-count", "toy") == job_id  # A's own page too
    a.start(path, job_id)  # a second start in A: the same thread
    a.join(job_id, timeout=20)
    assert get_job(db, job_id)["status"] == "done" and CALLS == [job_id]
    assert [j["id"] for j in list_jobs(db)] == [job_id]
    assert b.submit(db, "mp-count", "toy") != job_id  # finished: a new one is queued


def test_a_queued_job_is_claimed_by_one_runner_only(path):
    db = store.connect(path)
    CALLS.clear()
    runners = [JobRunner(f"r{k}", heartbeat=0.05) for k in range(4)]
    job_id = create_job(db, "mp-count", "toy", "", {"n": 3})  # queued by no runner: anyone's
    barrier = threading.Barrier(len(runners))
    rows: list = []

    def run(runner):
        barrier.wait()
        rows.append(runner.run(path, job_id))

    threads = [threading.Thread(target=run, args=(r,)) for r in runners]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert CALLS == [job_id]
    assert get_job(db, job_id)["status"] == "done"


def test_submits_of_several_runners_at_once_queue_one_job(path):
    runners = [JobRunner(f"r{k}") for k in range(6)]
    barrier = threading.Barrier(len(runners))
    ids: list = []

    def submit(runner):
        db = store.connect(path, migrate=False)
        barrier.wait()
        ids.append(runner.submit(db, "mp-count", "toy", "", {"n": 3}))

    threads = [threading.Thread(target=submit, args=(r,)) for r in runners]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(ids) == len(runners) and len(set(ids)) == 1
    assert [j["id"] for j in list_jobs(store.connect(path))] == ids[:1]


@pytest.mark.slow
def test_submits_of_several_processes_at_once_queue_one_job(path):
    code = KIND_CODE + ("import store\n"
                        "db = store.connect(sys.argv[2], migrate=False)\n"
                        "print(JobRunner().submit(db, 'mp-count', 'toy', '', {'n': 3}))\n")
    done = at_once(code, 4, str(path))
    assert all(p.returncode == 0 for p in done), [p.stderr[-400:] for p in done]
    ids = {p.stdout.strip() for p in done}
    assert len(ids) == 1
    assert [str(j["id"]) for j in list_jobs(store.connect(path))] == list(ids)


def test_a_queued_job_is_started_by_the_runner_that_queued_it(path):
    """A queued row is its submitter's to start: another process that sees it (its submit
    returned that id) does not run it with its own inputs."""
    a, b = JobRunner("a", heartbeat=0.05), JobRunner("b", heartbeat=0.05)
    db = store.connect(path)
    CALLS.clear()
    job_id = a.submit(db, "mp-count", "toy", "", {"n": 3})
    assert b.submit(db, "mp-count", "toy", "", {"n": 3}) == job_id
    row = b.run(path, job_id)
    assert row["status"] == "queued" and row["error"] == f"job {job_id} is already queued, by a"
    assert CALLS == [] and a.run(path, job_id)["status"] == "done" and CALLS == [job_id]


def test_rows_without_a_thread_here_or_a_fresh_heartbeat_are_interrupted(path):
    a, b = JobRunner("a", stale=15.0), JobRunner("b", stale=15.0)
    db = store.connect(path)
    queued = get_job(db, create_job(db, "mp-count", "toy", "", owner="a", heartbeat=time.time()))
    assert a.status(queued) == b.status(queued) == "queued"  # submitted: A starts it soon
    later = time.time() + 16  # nobody said anything for 16 s
    assert a.status(queued, now=later) == b.status(queued, now=later) == INTERRUPTED
    running = dict(queued, status="running")
    assert a.status(running) == INTERRUPTED  # A's, and no thread of A runs it
    assert b.status(running) == "running"  # A's heartbeat is fresh: A runs it
    assert b.status(running, now=later) == INTERRUPTED
    gone = create_job(db, "mp-count", "other", "", owner="gone", heartbeat=time.time() - 60)
    assert b.status(get_job(db, gone)) == INTERRUPTED
    assert b.status(get_job(db, create_job(db, "mp-count", "x", ""))) == INTERRUPTED  # no owner


def test_a_stalled_owner_whose_job_was_closed_leaves_the_row_interrupted(path):
    """A process that only seemed gone (stopped longer than the stale limit): the job it
    runs stops at its next check and its end does not overwrite what the other recorded."""
    a = JobRunner("a", heartbeat=60)  # A writes no heartbeat in this test
    impatient = JobRunner("b", stale=-1.0)  # every heartbeat looks old to B
    db = store.connect(path)
    job_id = a.submit(db, "mp-count", "toy", "", {"n": 10_000, "pause": 0.01})
    a.start(path, job_id)
    assert wait_for(lambda: (get_job(db, job_id)["done"] or 0) >= 2)
    new = impatient.submit(db, "mp-count", "toy", "", {"n": 3})
    assert new != job_id
    a.join(job_id, timeout=20)
    assert not a.alive(job_id)
    old = get_job(db, job_id)
    assert old["status"] == INTERRUPTED and old["error"] == INTERRUPTED_ERROR


@pytest.mark.slow
def test_a_job_whose_process_is_killed_shows_interrupted_once_its_heartbeat_is_stale(path):
    """A real process runs a job and dies (SIGKILL): until then another process sees it
    running, kept alive by its heartbeat well past the stale limit; then interrupted, and
    a new submit there records it so and queues a new job."""
    code = KIND_CODE + ("runner = JobRunner('killed', heartbeat=0.1)\n"
                        "import store\n"
                        "db = store.connect(sys.argv[2], migrate=False)\n"
                        "job = runner.submit(db, 'mp-count', 'toy', '', "
                        "{'n': 100000, 'pause': 0.01})\n"
                        "runner.run(sys.argv[2], job)\n")
    proc = subprocess.Popen([sys.executable, "-c", "import sys\n" + code, "0", str(path)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        db = store.connect(path)
        watcher = JobRunner("watcher", stale=1.0)
        assert wait_for(lambda: list_jobs(db) and (list_jobs(db)[0]["done"] or 0) >= 2, 60), \
            proc.stderr.read1() if proc.poll() is not None else "no progress"
        job_id = int(list_jobs(db)[0]["id"])
        time.sleep(2.0)  # twice the stale limit: the heartbeat keeps it live
        seen = watcher.get(db, job_id)
        assert seen["display_status"] == "running" and seen["owner"] == "killed"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    assert wait_for(lambda: watcher.get(db, job_id)["display_status"] == INTERRUPTED, 10)
    assert get_job(db, job_id)["status"] == "running"  # the row, until someone records it
    new = watcher.submit(db, "mp-count", "toy", "", {"n": 3})
    assert new != job_id and get_job(db, job_id)["status"] == INTERRUPTED
    assert watcher.run(path, new)["status"] == "done"


# -- caches: keyed on what the database says, so another process's write is seen ---------


def test_the_dataset_version_changes_when_another_process_imports_it_again(path):
    page, other = store.connect(path), store.connect(path, migrate=False)
    assert dataset_version(page, "d") == ""
    create_dataset(other, "d", "preference", "pairs", [NewItem("k1", {"x": 1})])
    first = dataset_version(page, "d")
    assert first.endswith("|1")
    time.sleep(0.002)  # the import time has milliseconds
    create_dataset(other, "d", "preference", "pairs", [NewItem("k1", {"x": 2})], replace=True)
    second = dataset_version(page, "d")
    assert second != first and second.endswith("|1")
