"""The local demo judge, served on demand for this server process.

The RAG answers page offers "start the local demo judge": the demo judge folder
(``data/demo-judge``, built by ``python -m needlework demo-judge``) served by
``transformers serve`` on 127.0.0.1 (:mod:`needlework.judges.serve`). Loading takes
seconds to a minute, so starting does not wait: :meth:`LocalJudges.start` launches the
server as a child process and returns at once, :meth:`LocalJudges.state` says where it
stands (``starting``, ``ready``, ``failed``) with one quick probe, and
:meth:`LocalJudges.wait_ready` (called by the evaluation job, never by a page) waits
for it with a stop check. One server per folder and process, shared by every session;
it is stopped when the process exits normally (a server killed with SIGKILL leaves it
running: it listens on 127.0.0.1 only).

The demo judge's context window and answer length come from its report
(``needlework_judge.json``), read as JSON: this module imports no torch.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai

from needlework.judges.connection import Connection
from needlework.judges.errors import JudgeCancelled, JudgeError
from needlework.judges.serve import LocalServer, free_port, serve_command

DEMO_JUDGE_DIR = "data/demo-judge"
REPORT_FILE = "needlework_judge.json"  # written next to the weights by needlework.judges.demo
DEFAULT_MAX_TOKENS = 256
READY_TIMEOUT_S = 300.0
PROBE_TIMEOUT_S = 2.0
PROBE_EVERY_S = 1.0

ShouldStop = Callable[[], bool]


def read_report(folder: str | Path) -> dict[str, Any] | None:
    """The demo judge's report (``None`` when the folder has none or it is unreadable)."""
    path = Path(folder) / REPORT_FILE
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return report if isinstance(report, dict) else None


def is_built(folder: str | Path) -> bool:
    """True when ``folder`` holds a built demo judge (config and report)."""
    return (Path(folder) / "config.json").is_file() and read_report(folder) is not None


def demo_settings(folder: str | Path) -> dict[str, Any]:
    """Connection settings for the demo judge: its context window (from the report) and
    the answer length (the report's ``max_tokens`` when it names one)."""
    report = read_report(folder) or {}
    window = report.get("context_window")
    max_tokens = report.get("max_tokens") or DEFAULT_MAX_TOKENS
    return {"context_window": int(window) if isinstance(window, int) and window > max_tokens
            else None, "max_tokens": int(max_tokens)}


@dataclass(frozen=True)
class JudgeState:
    """Where a local judge stands: ``stopped``, ``starting``, ``ready`` or ``failed``."""

    status: str
    base_url: str = ""
    model: str = ""
    message: str = ""
    seconds: float = 0.0

    @property
    def ready(self) -> bool:
        return self.status == "ready"


@dataclass
class _Entry:
    server: LocalServer
    started: float
    ready: bool = False
    last_probe: float = 0.0


class LocalJudges:
    """The local judge servers of this process, one per model folder."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._servers: dict[str, _Entry] = {}

    def _entry(self, folder: str | Path) -> tuple[str, _Entry | None]:
        key = str(Path(folder).resolve())
        with self._lock:
            return key, self._servers.get(key)

    def start(self, folder: str | Path, *, threads: int | None = 1) -> JudgeState:
        """Launch ``transformers serve`` for ``folder`` unless it already runs; returns
        at once. A server that exited is started again."""
        key, entry = self._entry(folder)
        if entry is not None and entry.server.alive():
            return self.state(folder)
        if not (Path(key) / "config.json").is_file():
            return JudgeState("failed", message=f"{folder} is not a model folder: build it with "
                              "python -m needlework demo-judge --out data/demo-judge")
        port = free_port()
        handle, log_name = tempfile.mkstemp(prefix="needlework-judge-", suffix=".log")
        os.close(handle)
        env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
        env.update({"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_UPDATE_CHECK": "1",
                    "HF_HUB_DISABLE_TELEMETRY": "1", "TOKENIZERS_PARALLELISM": "false"})
        if threads:
            env["OMP_NUM_THREADS"] = str(threads)
        with open(log_name, "ab") as log:
            process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
                serve_command(key, port), stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, env=env)
        server = LocalServer(process, "127.0.0.1", port, key, Path(log_name))
        with self._lock:
            self._servers[key] = _Entry(server, time.monotonic())
        return self.state(folder)

    def state(self, folder: str | Path) -> JudgeState:
        """Where the server of ``folder`` stands; probes a starting server at most once a
        second (one tiny chat completion, :data:`PROBE_TIMEOUT_S` at most)."""
        _, entry = self._entry(folder)
        if entry is None:
            return JudgeState("stopped")
        server = entry.server
        waited = time.monotonic() - entry.started
        if not server.alive():
            return JudgeState("failed", server.base_url, server.model,
                              f"transformers serve exited with code {server.process.returncode}: "
                              f"{server.log_tail(3)}", waited)
        if not entry.ready and time.monotonic() - entry.last_probe >= PROBE_EVERY_S:
            entry.last_probe = time.monotonic()
            entry.ready = _answers(server)
        status = "ready" if entry.ready else "starting"
        return JudgeState(status, server.base_url, server.model, "", waited)

    def connection(self, folder: str | Path, **options: Any) -> Connection:
        """A connection to the server of ``folder`` (started or not: its address is fixed
        at start), with the demo judge's settings unless ``options`` say otherwise."""
        _, entry = self._entry(folder)
        if entry is None:
            raise LookupError(f"no local judge started for {folder}")
        return Connection(entry.server.base_url, entry.server.model, key_env=None,
                          **{**demo_settings(folder), **options})

    def wait_ready(self, folder: str | Path, should_stop: ShouldStop | None = None,
                   timeout: float = READY_TIMEOUT_S) -> JudgeState:
        """Block until the server of ``folder`` answers. Raises :class:`JudgeCancelled` on
        a stop and :class:`JudgeError` when it exited or did not answer in time."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.state(folder)
            if state.ready:
                return state
            if state.status in ("failed", "stopped"):
                raise JudgeError("server_down", f"the local demo judge is not running: "
                                 f"{state.message or 'start it first'}")
            if should_stop is not None and should_stop():
                raise JudgeCancelled("cancelled while the local demo judge was starting")
            if time.monotonic() > deadline:
                raise JudgeError("timeout", f"the local demo judge did not answer within "
                                 f"{timeout:g} s: {self._tail(folder)}")
            time.sleep(0.25)

    def _tail(self, folder: str | Path) -> str:
        _, entry = self._entry(folder)
        return entry.server.log_tail(3) if entry is not None else ""

    def stop(self, folder: str | Path) -> bool:
        """Stop the server of ``folder``; False when none was started."""
        key, entry = self._entry(folder)
        if entry is None:
            return False
        entry.server.stop()
        with self._lock:
            self._servers.pop(key, None)
        return True

    def stop_all(self) -> None:
        for key in list(self._servers):
            self.stop(key)


def _answers(server: LocalServer) -> bool:
    client = openai.OpenAI(api_key="no-key", base_url=server.base_url, timeout=PROBE_TIMEOUT_S,
                           max_retries=0)
    try:
        client.chat.completions.create(model=server.model, max_tokens=1,
                                       messages=[{"role": "user", "content": "ready?"}])
        return True
    except (openai.APIConnectionError, openai.APIStatusError, openai.APITimeoutError):
        return False
    finally:
        client.close()


#: The local judges of this process: every page and session share them.
LOCAL_JUDGES = LocalJudges()
atexit.register(LOCAL_JUDGES.stop_all)
