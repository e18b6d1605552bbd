"""Serving a local model folder with ``transformers serve`` on 127.0.0.1.

``transformers serve`` (transformers 5.23) is transformers' own OpenAI-compatible
server (FastAPI + uvicorn; it needs ``fastapi``, ``uvicorn`` and ``accelerate``).
Its command line, as used here::

    python -m transformers.cli.transformers serve MODEL_DIR --host 127.0.0.1 --port N \\
        --device cpu --dtype float32

A positional ``FORCE_MODEL`` preloads the model and pins the server to it: the
model *name* in every request must then be exactly that string (here the folder's
absolute path), or the server answers HTTP 400 "Server is pinned to ...". Its
``GET /v1/models`` lists the Hugging Face cache, not the pinned folder (and answers
500 when there is no cache), so readiness is checked with a real chat completion.

:func:`start_server` picks a free port, starts the server as a child process (its
output goes to a log file), waits until a chat completion answers and returns a
:class:`LocalServer`; :meth:`LocalServer.stop` ends that child (and only it). The child
is tethered (:mod:`needlework.judges.tethered`): it ends by itself within seconds when
the process that started it is gone, even killed with SIGKILL.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai

from needlework.judges import tethered
from needlework.judges.connection import LocalEndpoint

READY_TIMEOUT_S = 240.0


class ServerError(RuntimeError):
    """The local server could not be started (the message has the end of its log)."""


def port_taken(port: int, host: str = "127.0.0.1") -> bool:
    """True when something already listens on ``host:port`` (so a server started there
    would exit at once)."""
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that nothing listens on right now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


#: The module that is ``transformers serve``'s command line.
SERVE_MODULE = "transformers.cli.transformers"


def serve_args(model_dir: str | Path, port: int, host: str = "127.0.0.1",
               device: str = "cpu", dtype: str = "float32") -> list[str]:
    """The arguments of ``python -m transformers.cli.transformers`` for a local folder."""
    return ["serve", str(Path(model_dir).resolve()), "--host", host, "--port", str(port),
            "--device", device, "--dtype", dtype, "--log-level", "warning"]


def serve_command(model_dir: str | Path, port: int, host: str = "127.0.0.1",
                  device: str = "cpu", dtype: str = "float32") -> list[str]:
    """The ``transformers serve`` command line for a local folder (see the module docstring)."""
    return [sys.executable, "-m", SERVE_MODULE, *serve_args(model_dir, port, host, device, dtype)]


def tethered_command(model_dir: str | Path, port: int, host: str = "127.0.0.1",
                     device: str = "cpu", dtype: str = "float32") -> list[str]:
    """:func:`serve_command` run through :mod:`needlework.judges.tethered`: the server ends
    when this process is gone, even killed (no orphan holding its memory)."""
    return tethered.command(SERVE_MODULE, *serve_args(model_dir, port, host, device, dtype))


@dataclass
class LocalServer(LocalEndpoint):
    """A running ``transformers serve`` child process."""

    process: subprocess.Popen[Any]
    host: str
    port: int
    model: str  # the name requests must use: the folder's absolute path
    log_path: Path

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server (SIGTERM, then SIGKILL after ``timeout``); idempotent."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def wait_ready(server: LocalServer, timeout: float = READY_TIMEOUT_S) -> float:
    """Block until a chat completion answers; returns the seconds waited."""
    started = time.monotonic()
    client = openai.OpenAI(api_key="no-key", base_url=server.base_url, timeout=30, max_retries=0)
    try:
        while True:
            if not server.alive():
                tail = server.log_tail()
                why = next((line.strip() for line in reversed(tail.splitlines()) if line.strip()),
                           "it wrote nothing to its log")
                raise ServerError(f"transformers serve exited with code "
                                  f"{server.process.returncode}: {why}" + (f"\n{tail}" if tail else ""))
            try:
                client.chat.completions.create(
                    model=server.model, max_tokens=1,
                    messages=[{"role": "user", "content": "ready?"}])
                return time.monotonic() - started
            except (openai.APIConnectionError, openai.APIStatusError):
                pass
            if time.monotonic() - started > timeout:
                raise ServerError(f"transformers serve did not answer a chat completion within "
                                  f"{timeout:g} s:\n{server.log_tail()}")
            time.sleep(0.5)
    finally:
        client.close()


def start_server(model_dir: str | Path, *, host: str = "127.0.0.1", port: int | None = None,
                 threads: int | None = None, log_path: str | Path | None = None,
                 ready_timeout: float = READY_TIMEOUT_S) -> LocalServer:
    """Start ``transformers serve`` for ``model_dir`` and wait until it answers.

    ``threads`` caps the server's torch threads (``OMP_NUM_THREADS``). The child
    runs offline (``HF_HUB_OFFLINE=1``, no update check). Raises :class:`ServerError`
    when ``port`` is taken (before starting anything), or when the server exits (its first
    line ends with the last line of the server's log: why) or does not answer in time,
    with the end of the log.
    """
    folder = Path(model_dir).resolve()
    if not (folder / "config.json").is_file():
        raise ServerError(f"{folder} is not a model folder (no config.json)")
    if port and port_taken(port, host):
        raise ServerError(f"port {port} on {host} is taken: another program listens there. "
                          "Choose another port, or leave the port out to use a free one")
    port = port or free_port(host)
    if log_path is None:
        handle, name = tempfile.mkstemp(prefix="needlework-serve-", suffix=".log")
        os.close(handle)
        log_path = name
    log_path = Path(log_path)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_UPDATE_CHECK": "1",
           "HF_HUB_DISABLE_TELEMETRY": "1", "TOKENIZERS_PARALLELISM": "false"}
    for name in ("OPENAI_API_KEY",):  # the server needs no key: do not hand it one
        env.pop(name, None)
    # the tether is our module: importable whatever the working directory
    env["PYTHONPATH"] = os.pathsep.join(p for p in (tethered.PROJECT_ROOT, env.get("PYTHONPATH")) if p)
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    with open(log_path, "ab") as log:
        process = subprocess.Popen(tethered_command(folder, port, host), stdout=log,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    server = LocalServer(process, host, port, str(folder), log_path)
    try:
        wait_ready(server, ready_timeout)
    except BaseException:
        server.stop()
        raise
    return server
