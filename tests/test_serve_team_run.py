"""``python -m needlework serve-team`` for real: HAProxy over TLS (a self-signed certificate
made here) in front of a worker, the affinity cookie Secure and HttpOnly, a killed worker
started again by the supervisor, and SIGINT (Ctrl-C) or SIGTERM stopping every process.
The browser through the proxy: tests/browser/test_proxy.py."""

from __future__ import annotations

import signal
import time

import pytest

import store
from tests.serve_team_fixtures import TeamRun, alive, haproxy_missing
from tests.test_serve_team import self_signed

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _haproxy():
    missing = haproxy_missing()
    if missing:
        pytest.fail(missing)


def wait_gone(pids: list[int], timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while any(alive(p) for p in pids):
        if time.time() > deadline:
            raise AssertionError(f"still running: {[p for p in pids if alive(p)]}")
        time.sleep(0.1)


def test_tls_proxy_a_killed_worker_comes_back_and_ctrl_c_stops_everything(tmp_path):
    db_path = tmp_path / "nw.db"
    store.connect(db_path).conn.close()
    run = TeamRun(tmp_path, db_path, workers=1, certificate=self_signed(tmp_path)).start()
    try:
        status, headers = run.health()
        assert status == 200 and headers["x-needlework-worker"] == "w1"
        cookie = headers["set-cookie"]
        assert cookie.startswith("needlework_worker=w1;")
        assert {"httponly", "secure", "samesite=lax"} <= {p.strip().lower()
                                                         for p in cookie.split(";")}
        assert "serving on https://127.0.0.1:" in run.log()

        old = run.kill_worker("w1")
        run.wait_restarted("w1", old)
        assert "serve-team: worker w1 exited with -9; starting it again" in run.log()

        pids = run.pids()
        assert len(pids) == 2 and all(alive(p) for p in pids)
        assert run.stop(signal.SIGINT) == 0  # Ctrl-C in the terminal
        wait_gone(pids)
        assert run.state()["proxy"]["pid"] is None
    finally:
        run.stop()


def test_sigterm_stops_two_workers_and_the_proxy(tmp_path):
    db_path = tmp_path / "nw.db"
    store.connect(db_path).conn.close()
    run = TeamRun(tmp_path, db_path, workers=2).start()
    try:
        seen = {run.health(cookie=name)[1]["x-needlework-worker"] for name in ("w1", "w2")}
        assert seen == {"w1", "w2"}  # the cookie picks the worker
        pids = run.pids()
        assert len(pids) == 3
        assert run.stop(signal.SIGTERM) == 0
        wait_gone(pids)
    finally:
        run.stop()
