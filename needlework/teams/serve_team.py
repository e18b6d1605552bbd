"""Team mode on several processes of one machine: N ``streamlit run serve.py`` behind HAProxy.

``python -m needlework serve-team --workers N`` (``make serve-team WORKERS=N``) checks
everything first (team mode, the number of processes, every port free, the certificate,
HAProxy's own check of the configuration written here), runs the migrations once, starts
the N app processes (*workers*), each on its own 127.0.0.1 port, waits until each answers
``/_stcore/health``, then starts HAProxy on ``[server] address`` and the given port in
front of them. It stays in the foreground and supervises: a worker that exits is started
again on its port (after a pause that doubles while it keeps failing), HAProxy exiting
stops everything. SIGINT (Ctrl-C) or SIGTERM stops HAProxy first, then every worker
(SIGTERM to its process group, SIGKILL after 10 s); each child also gets SIGTERM from
the kernel when this process dies without stopping them (``PR_SET_PDEATHSIG``).

The proxy's configuration comes from a typed description
(:class:`needlework.teams.team_plan.TeamPlan`) through a pure function
(:func:`needlework.teams.haproxy.haproxy_config`): session affinity by a cookie HAProxy inserts
(``AFFINITY_COOKIE``, naming the worker), Streamlit's WebSocket (``/_stcore/stream``)
kept open by a long tunnel timeout, health checks on ``/_stcore/health``, ``option
redispatch`` so that a request whose cookie names a dead worker goes to a live one,
``X-Forwarded-For`` added (the app believes it when ``[server] trusted_proxies`` lists
127.0.0.1, :mod:`needlework.teams.proxies`) and ``X-Forwarded-Proto`` set, and TLS on
the proxy's port when a certificate is given. docs/scaling.md says why HAProxy and what
the processes share.

What the run needs is in a folder of its own (:func:`default_run_dir`: ``serve-team/``
beside the database): ``haproxy.cfg``, ``haproxy.log``, one log per worker and
``workers.json`` (the proxy's and each worker's process id and port, rewritten when a
worker is started again).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from needlework.teams.config import CONFIG_FILE, Config
from needlework.teams.haproxy import check_haproxy_config, find_haproxy, haproxy_config
from needlework.teams.team_plan import (
    HEALTH,
    ServeTeamError,
    TeamPlan,
    Worker,
    check_ports,
)

ROOT = Path(__file__).resolve().parents[2]  # where serve.py is
START_TIMEOUT = 180.0  # seconds a worker may take to answer its health check
STOP_TIMEOUT = 10.0  # seconds between SIGTERM and SIGKILL


def worker_command(python: str, worker: Worker) -> list[str]:
    """The command line of one app process."""
    return [python, "-m", "streamlit", "run", str(ROOT / "serve.py"),
            "--server.address", worker.address, "--server.port", str(worker.port),
            "--server.headless", "true", "--browser.gatherUsageStats", "false",
            "--server.fileWatcherType", "none"]


def worker_env(base: Mapping[str, str], *, config_file: Path, db_path: Path) -> dict[str, str]:
    """Each worker's environment: the same needlework.toml and database (absolute paths,
    whatever the worker's folder), and one cookie secret for all (Streamlit signs its
    sign-in-provider cookies with it: a cookie one worker set is read by the others)."""
    env = dict(base)
    env["NEEDLEWORK_CONFIG"] = str(config_file.resolve())
    env["NEEDLEWORK_DB"] = str(db_path.resolve())
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("STREAMLIT_SERVER_COOKIE_SECRET", secrets.token_hex(32))
    return env


def default_run_dir(db_path: Path) -> Path:
    """Where a run keeps its files: ``serve-team/`` beside the database."""
    return db_path.resolve().parent / "serve-team"


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    """Ask the kernel to send this child SIGTERM when the supervisor dies (Linux)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def healthy(url: str, timeout: float = 2.0) -> bool:
    """Whether ``url`` + :data:`HEALTH` answers 200."""
    try:
        with urllib.request.urlopen(url + HEALTH, timeout=timeout) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@dataclass
class _Child:
    name: str
    command: list[str]
    log: Path
    proc: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    failures: int = 0
    due: float = 0.0  # when a worker that exited is started again


@dataclass
class Team:
    """The running processes of a :class:`TeamPlan`; :meth:`start`, :meth:`supervise`,
    :meth:`stop`. ``say`` prints a line for the person who started it."""

    plan: TeamPlan
    run_dir: Path
    haproxy: str
    python: str
    env: dict[str, str]
    say: Callable[[str], None] = print
    start_timeout: float = START_TIMEOUT
    workers: dict[str, _Child] = field(default_factory=dict)
    proxy: _Child | None = None
    stopping: threading.Event = field(default_factory=threading.Event)

    @property
    def config_file(self) -> Path:
        return self.run_dir / "haproxy.cfg"

    @property
    def state_file(self) -> Path:
        return self.run_dir / "workers.json"

    def write_config(self) -> Path:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(haproxy_config(self.plan), encoding="utf-8")
        return self.config_file

    def _spawn(self, child: _Child) -> None:
        with open(child.log, "ab") as log:
            child.proc = subprocess.Popen(
                child.command, cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True,  # Ctrl-C reaches us only
                preexec_fn=_die_with_parent)
        child.started = time.monotonic()

    def _write_state(self) -> None:
        def pid(child: _Child | None) -> int | None:
            return child.proc.pid if child and child.proc and child.proc.poll() is None else None

        state = {"url": self.plan.url, "cookie": self.plan.cookie,
                 "proxy": {"pid": pid(self.proxy), "port": self.plan.port,
                           "config": str(self.config_file)},
                 "workers": [{"name": w.name, "port": w.port, "pid": pid(self.workers.get(w.name)),
                              "log": str(self.run_dir / f"{w.name}.log")}
                             for w in self.plan.workers]}
        temporary = self.state_file.with_suffix(".json.tmp")
        temporary.write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
        temporary.replace(self.state_file)

    def start(self) -> None:
        """Start every worker, wait for each to answer, then start the proxy."""
        self.write_config()
        check_haproxy_config(self.haproxy, self.config_file)
        for w in self.plan.workers:
            child = _Child(w.name, worker_command(self.python, w), self.run_dir / f"{w.name}.log")
            self.workers[w.name] = child
            self._spawn(child)
        self._write_state()
        deadline = time.monotonic() + self.start_timeout
        waiting = list(self.plan.workers)
        while waiting:
            if self.stopping.is_set():
                return
            for w in list(waiting):
                proc = self.workers[w.name].proc
                if proc is not None and proc.poll() is not None:
                    raise ServeTeamError(f"serve-team: worker {w.name} exited with {proc.returncode} "
                                         f"while starting: see {self.workers[w.name].log}")
                if healthy(w.url, timeout=1.0):
                    waiting.remove(w)
            if waiting and time.monotonic() > deadline:
                raise ServeTeamError(f"serve-team: worker {waiting[0].name} did not answer "
                                     f"{HEALTH} within {self.start_timeout:.0f} s: see "
                                     f"{self.workers[waiting[0].name].log}")
            if waiting:
                self.stopping.wait(0.2)
        self.proxy = _Child("haproxy", [self.haproxy, "-db", "-f", str(self.config_file)],
                            self.run_dir / "haproxy.log")
        self._spawn(self.proxy)
        self._write_state()

    def supervise(self, poll: float = 0.5) -> int:
        """Until :attr:`stopping` is set: start again a worker that exited; stop when the
        proxy exits. The exit code: 0 when asked to stop, 1 when the proxy died."""
        while not self.stopping.wait(poll):
            now = time.monotonic()
            if self.proxy and self.proxy.proc and self.proxy.proc.poll() is not None:
                self.say(f"serve-team: haproxy exited with {self.proxy.proc.returncode} "
                         f"(see {self.proxy.log}): stopping the workers")
                return 1
            changed = False
            for child in self.workers.values():
                proc = child.proc
                if proc is None or proc.poll() is None:
                    if proc is not None and child.failures and now - child.started > 60:
                        child.failures = 0  # up a minute: the next exit starts the count again
                    continue
                if not child.due:
                    child.failures += 1
                    pause = min(30.0, 0.5 * 2 ** (child.failures - 1))
                    child.due = now + pause
                    self.say(f"serve-team: worker {child.name} exited with {proc.returncode}; "
                             f"starting it again in {pause:g} s (log: {child.log})")
                    changed = True
                if now >= child.due:
                    child.due = 0.0
                    self._spawn(child)
                    changed = True
            if changed:
                self._write_state()
        return 0

    def stop(self) -> None:
        """The proxy first (no new requests), then every worker and what it started:
        SIGTERM to each process group, SIGKILL to what is left after
        :data:`STOP_TIMEOUT` s."""
        self.stopping.set()
        for group in ([self.proxy] if self.proxy else [], list(self.workers.values())):
            live = [c.proc for c in group if c.proc is not None]
            for proc in live:
                _signal_group(proc, signal.SIGTERM)
            deadline = time.monotonic() + STOP_TIMEOUT
            for proc in live:
                try:
                    proc.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    _signal_group(proc, signal.SIGKILL)
                    proc.wait(STOP_TIMEOUT)
                _signal_group(proc, signal.SIGKILL)  # what it started and left behind
        if self.run_dir.exists():
            self._write_state()


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)  # start_new_session: the group's id is the child's pid


def serve(plan: TeamPlan, *, config: Config, db_path: Path, run_dir: Path | None = None,
          python: str | None = None, say: Callable[[str], None] = print,
          migrate: Callable[[Path], None] | None = None,
          signals: Sequence[int] = (signal.SIGINT, signal.SIGTERM)) -> int:
    """Check, start and supervise ``plan`` until SIGINT or SIGTERM; the exit code.
    ``migrate(db_path)`` brings the database up to date once, before any worker starts
    (default: :func:`store.connect`)."""
    check_ports(plan)
    haproxy = find_haproxy()
    if migrate is None:
        import store  # noqa: PLC0415 - only where processes are started

        def migrate(path: Path) -> None:
            store.connect(path).conn.close()

    migrate(db_path)
    config_file = Path(config.source) if config.source else Path(CONFIG_FILE)
    team = Team(plan, run_dir or default_run_dir(db_path), haproxy, python or sys.executable,
                worker_env(os.environ, config_file=config_file, db_path=db_path), say=say)
    previous = {sig: signal.signal(sig, lambda *_: team.stopping.set()) for sig in signals}
    try:
        team.start()
        if team.stopping.is_set():
            return 0
        names = ", ".join(f"{w.name} on {w.address}:{w.port}" for w in plan.workers)
        say(f"needlework: team mode, {len(plan.workers)} processes ({names}) behind HAProxy, "
            f"serving on {plan.url} (Ctrl-C stops them all; files in {team.run_dir})")
        return team.supervise()
    finally:
        team.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def state(run_dir: Path) -> dict[str, Any]:
    """What ``workers.json`` in ``run_dir`` says (the proxy's and workers' pids and ports)."""
    data = json.loads((run_dir / "workers.json").read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}
