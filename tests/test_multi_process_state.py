"""Several server processes on one SQLite file (issue 60): what one process does, another
sees. Real processes where one must really start at the same moment or really die; two
runner objects with different identities over one file stand for two processes
elsewhere."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import threading
import time
from pathlib import Path

import store
from needlework.teams import session_cookie
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
    assert session_cookie.redeem("x" + ticket[1:], db=route) is None  # not that ticket
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
    for round_ in range(15):
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


def test_a_ticket_redeemed_by_several_processes_at_once_is_redeemed_once(tmp_path):
    path = tmp_path / "t.db"
    ticket = session_cookie.offer("nw_once", 60, db=store.connect(path))
    code = ("import store\nfrom needlework.teams import session_cookie\n"
            "db = store.connect(sys.argv[2], migrate=False)\n"
            "print(session_cookie.redeem(sys.argv[3], db=db))\n")
    done = at_once(code, 4, str(path), ticket)
    assert all(p.returncode == 0 for p in done), [p.stderr[-400:] for p in done]
    assert sorted(p.stdout.strip() for p in done) == ["('nw_once', 60, None)"] + ["None"] * 3
