"""``python -m needlework serve-team`` run by a test: the real command line, its workers and
HAProxy, on a database and needlework.toml of the test's own (tests/test_serve_team_run.py,
tests/browser/test_proxy.py)."""

from __future__ import annotations

import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from needlework.teams.haproxy import find_haproxy
from needlework.teams.team_plan import ServeTeamError
from tests.conftest import ROOT

TEAM_TOML = ('[server]\nmode = "team"\naddress = "127.0.0.1"\n'
             'trusted_proxies = ["127.0.0.1"]\n')


def haproxy_missing() -> str | None:
    """Why the proxy cannot run here (``make haproxy`` installs it), or ``None``."""
    try:
        find_haproxy()
    except ServeTeamError as e:
        return str(e)
    return None


def free_port() -> int:
    import socket  # noqa: PLC0415

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def insecure() -> ssl.SSLContext:
    """A TLS context that takes the test's self-signed certificate."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by its parent) counts as gone
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


class TeamRun:
    """``serve-team`` as a subprocess: :meth:`start` waits until the proxy and every worker
    answer; :meth:`stop` sends SIGTERM (or ``sig``) and returns the exit code."""

    def __init__(self, folder: Path, db_path: Path, *, workers: int = 2,
                 certificate: Path | None = None, extra_toml: str = "") -> None:
        self.folder = Path(folder)
        self.db_path = Path(db_path)
        self.workers = workers
        self.config = self.folder / "needlework.toml"
        self.config.write_text(TEAM_TOML + extra_toml, encoding="utf-8")
        self.port = free_port()
        self.certificate = certificate
        self.run_dir = self.folder / "serve-team"
        self.url = f"{'https' if certificate else 'http'}://127.0.0.1:{self.port}"
        self.out = self.folder / "serve-team.out"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 240) -> TeamRun:
        command = [sys.executable, "-m", "needlework", "serve-team", "--workers",
                   str(self.workers), "--port", str(self.port), "--worker-port", "0",
                   "--db", str(self.db_path), "--run-dir", str(self.run_dir)]
        if self.certificate:
            command += ["--certificate", str(self.certificate)]
        env = {**os.environ, "NEEDLEWORK_CONFIG": str(self.config), "PYTHONUNBUFFERED": "1",
               "NEEDLEWORK_WARM_UP": "0"}  # as tests/browser/harness.py's servers
        env.pop("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS", None)
        with open(self.out, "ab") as out:
            self.proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + timeout
        while not self.ready():
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                raise RuntimeError("serve-team did not start:\n" + self.log())
            time.sleep(0.2)
        return self

    def ready(self) -> bool:
        """The proxy answers and every worker in workers.json is up."""
        try:
            data = self.state()
        except (OSError, ValueError):
            return False
        if not data["proxy"]["pid"] or not all(w["pid"] for w in data["workers"]):
            return False
        return self.health() is not None

    def health(self, cookie: str | None = None) -> tuple[int, dict[str, str]] | None:
        """``(status, headers)`` of ``/_stcore/health`` through the proxy (with the affinity
        ``cookie`` naming a worker), or ``None`` when nothing answers."""
        request = urllib.request.Request(self.url + "/_stcore/health")
        if cookie:
            request.add_header("Cookie", f"needlework_worker={cookie}")
        try:
            with urllib.request.urlopen(request, timeout=3,
                                        context=insecure() if self.certificate else None) as r:
                return r.status, {k.lower(): v for k, v in r.headers.items()}
        except OSError:
            return None

    def state(self) -> dict:
        return json.loads((self.run_dir / "workers.json").read_text(encoding="utf-8"))

    def worker(self, name: str) -> dict:
        return next(w for w in self.state()["workers"] if w["name"] == name)

    def pids(self) -> list[int]:
        """The proxy's and every worker's process id now."""
        data = self.state()
        return [p for p in [data["proxy"]["pid"], *(w["pid"] for w in data["workers"])] if p]

    def kill_worker(self, name: str) -> int:
        """SIGKILL one worker, as a crash; its pid."""
        pid = self.worker(name)["pid"]
        os.kill(pid, signal.SIGKILL)
        return pid

    def wait_restarted(self, name: str, old_pid: int, timeout: float = 120) -> None:
        """Until the supervisor has started ``name`` again and it answers through the proxy."""
        deadline = time.time() + timeout
        while True:
            pid = self.worker(name)["pid"]
            answer = self.health(cookie=name)
            if (pid and pid != old_pid and answer
                    and answer[1].get("x-needlework-worker") == name):
                return
            if time.time() > deadline:
                raise AssertionError(f"{name} not back after {timeout} s:\n{self.log()}")
            time.sleep(0.2)

    def stop(self, sig: int = signal.SIGTERM) -> int | None:
        """Ask serve-team to stop; its exit code (SIGKILL to its group after 30 s)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        return self.proc.returncode

    def log(self) -> str:
        parts = [self.out.read_text(errors="replace") if self.out.exists() else ""]
        for path in sorted(self.run_dir.glob("*.log")) if self.run_dir.exists() else []:
            parts.append(f"--- {path.name}\n" + path.read_text(errors="replace")[-4000:])
        return "\n".join(parts)
