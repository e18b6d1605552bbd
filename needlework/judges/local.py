"""The local demo judge of this server process, started on demand.

The Reward model page and the Needle lab offer to start the offline demo judge
(``data/demo-judge``, built by ``python -m needlework demo-judge``) with
``transformers serve`` on 127.0.0.1 (:mod:`.serve`). :data:`LOCAL` keeps that one
child process for the whole server, shared by every session: :meth:`LocalJudges.start`
starts it once (concurrent callers wait for the first), :meth:`LocalJudges.running`
says whether it answers, :meth:`LocalJudges.stop` ends it, and the process stops it
when it exits. From the command line the same server is::

    python -m needlework serve-judge            # prints the base URL and model name

The demo judge is a demo: a tiny model trained for a few minutes on synthetic safety
needles; it does not know the RAG prompts (the RAG answers page offers the rules judge,
:mod:`needlework.rag.rules_server`, for those). Point the page at a real endpoint
(OpenAI, vLLM, Ollama) for real judgements.

The judges this project serves on this machine (the demo judge, the rules judge) are
known here by their model name wherever they listen: :func:`settings_for` gives the
settings they start with (one definition for the page and the command line) and
:func:`cache_endpoint` the endpoint their answers are cached under, without the port
they happen to get. Nothing here imports PyTorch.
"""

from __future__ import annotations

import atexit
import json
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from needlework.judges.connection import DEFAULT_CONCURRENCY, DEFAULT_MAX_TOKENS, Connection
from needlework.judges.prompts import DEMO_REPORT
from needlework.judges.serve import LocalServer, ServerError, start_server

#: how the shipped demo models (the demo judge, the demo reward models:
#: :mod:`needlework.seeding.demo_models`) are installed into ``data/``
INSTALL_COMMAND = "python -m needlework demo-models install"
DEMO_JUDGE_DIR = Path("data/demo-judge")
#: the rules judge's model name (:mod:`needlework.rag.rules_judge`), wherever it listens
RULES_MODEL = "needlework-rules"
DEMO_BUILD = INSTALL_COMMAND
DEMO_THREADS = 2
#: the settings each kind of judge starts with, on the page and the command line alike
#: (the same settings make the same cache keys): the demo judge answers in a few tokens
#: and serves one request at a time; the rules judge answers at once
DEMO_SETTINGS = {"max_tokens": 16, "concurrency": 2}
RULES_SETTINGS = {"max_tokens": 1024, "concurrency": 4}
DEFAULT_SETTINGS = {"max_tokens": DEFAULT_MAX_TOKENS, "concurrency": DEFAULT_CONCURRENCY}
#: the endpoint the answers of a judge this project serves are cached under
LOCAL_ENDPOINT = "needlework-local"
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def read_report(folder: str | Path) -> dict[str, Any] | None:
    """The report saved next to a demo judge (:data:`~.prompts.DEMO_REPORT`), or ``None``."""
    path = Path(folder) / DEMO_REPORT
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def is_demo_judge(model: str) -> bool:
    """True when ``model`` names a demo judge's folder by its absolute path (the name the
    local server is pinned to): the folder holds a demo judge's report."""
    folder = Path(model)
    return folder.is_absolute() and (folder / DEMO_REPORT).is_file()


def mode_refusal(model: str, mode: str) -> str | None:
    """Why a judge named ``model`` cannot run in ``mode``, in one sentence, or ``None``: the
    demo judge was trained on the selection prompt only and answers ``[[A]]`` or ``[[B]]``,
    so in scoring mode every answer would be invalid (its run would read "invalid 36 of 36"
    and 0 %): it is refused before any request, not run."""
    if mode == "scoring" and is_demo_judge(model):
        return ("the demo judge cannot rate a response: it was trained on the selection "
                "prompt only and answers [[A]] or [[B]], so every scoring answer would be "
                "invalid. Judge in selection mode, or rate with another judge")
    return None


def settings_for(model: str) -> dict[str, int]:
    """``{"max_tokens", "concurrency"}`` a judge named ``model`` starts with: the demo
    judge's (:data:`DEMO_SETTINGS`), the rules judge's (:data:`RULES_SETTINGS`), else
    any endpoint's (:data:`DEFAULT_SETTINGS`)."""
    if model == RULES_MODEL:
        return dict(RULES_SETTINGS)
    if is_demo_judge(model):
        return dict(DEMO_SETTINGS)
    return dict(DEFAULT_SETTINGS)


def with_start_settings(connection: Connection) -> Connection:
    """``connection`` with its model's starting length limit where it holds the generic
    default: ``judge`` on the command line gives a judge the settings of
    :func:`settings_for` unless told otherwise (the demo judge 16 tokens), while a form
    filled by hand starts every endpoint at
    :data:`~needlework.judges.connection.DEFAULT_MAX_TOKENS`. The length limit is part of
    the cache key, so a page run at that default would miss every answer the command line
    cached for the same judge; with this, the same connection makes the same keys."""
    start = settings_for(connection.model)["max_tokens"]
    if connection.max_tokens == DEFAULT_MAX_TOKENS and start != DEFAULT_MAX_TOKENS:
        return connection.with_options(max_tokens=start)
    return connection


def cache_endpoint(endpoint: str, model: str) -> str:
    """The endpoint a call is cached under: ``endpoint`` itself, except for the judges
    this project serves on this machine (the rules judge, a demo judge's folder, on a
    loopback address at ``/v1``), whose port changes from one start to the next and whose
    answers do not: those are all :data:`LOCAL_ENDPOINT`, so a judge started again on
    another port finds its answers."""
    parts = urlsplit(endpoint)
    local = parts.hostname in _LOOPBACK and parts.path.rstrip("/") == "/v1"
    if local and (model == RULES_MODEL or is_demo_judge(model)):
        return LOCAL_ENDPOINT
    return endpoint


def demo_folder() -> Path:
    """The demo judge's folder, absolute (``data/demo-judge`` below the working directory)."""
    return DEMO_JUDGE_DIR.resolve()


def context_window_of(model: str) -> int | None:
    """The context window recorded by a demo judge folder named ``model`` (the name the
    local server is pinned to), else ``None`` (unknown)."""
    try:
        folder = Path(model)
        if not folder.is_absolute() or not folder.is_dir():
            return None
        report = read_report(folder)
    except (OSError, ValueError):
        return None
    window = (report or {}).get("context_window")
    return int(window) if isinstance(window, int) and window > 0 else None


class LocalJudges:
    """One local judge server per process (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._server: LocalServer | None = None

    def start(self, folder: str | Path | None = None, *, threads: int = DEMO_THREADS,
              ready_timeout: float | None = None) -> LocalServer:
        """Serve ``folder`` (default: the demo judge) and wait until it answers; returns the
        server. A server already running for that folder is returned as is. Raises
        :class:`~.serve.ServerError` with what went wrong (the folder is not built, the
        server exited, it did not answer in time)."""
        folder = Path(folder).resolve() if folder is not None else demo_folder()
        if not (folder / "config.json").is_file():
            raise ServerError(f"no judge model in {folder}: install the demo judge first "
                              f"({DEMO_BUILD})")
        with self._lock:
            server = self._server
            if server is not None and server.alive() and Path(server.model) == folder:
                return server
            if server is not None:
                server.stop()
                self._server = None
            options: dict[str, Any] = {"threads": threads}
            if ready_timeout is not None:
                options["ready_timeout"] = ready_timeout
            self._server = start_server(folder, **options)
            return self._server

    def running(self) -> LocalServer | None:
        """The server while its process lives, else ``None``."""
        with self._lock:
            server = self._server
        return server if server is not None and server.alive() else None

    def connection(self, **options: Any) -> Connection | None:
        """A connection to the running server (its model's context window filled in), or ``None``."""
        server = self.running()
        if server is None:
            return None
        options.setdefault("context_window", context_window_of(server.model))
        return server.connection(**options)

    def stop(self) -> None:
        """Stop the server (idempotent)."""
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.stop()


#: The local judge server of this process.
LOCAL = LocalJudges()
atexit.register(LOCAL.stop)
