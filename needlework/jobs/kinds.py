"""Job kinds: what a kind of background work is, and the registry of them.

A *job kind* is a function ``(job, db, progress, should_stop) -> result`` registered by
name with :func:`register`: ``job`` is a :class:`Job` (its row's fields and the live
``inputs``), ``progress`` a :class:`Progress` that writes ``done`` of ``total`` to the
job's row, ``should_stop()`` says whether a cancel was asked. A function that stops on
request raises :class:`Cancelled`, optionally with the partial result. The runner that
queues, runs and records jobs of these kinds is :mod:`needlework.jobs.runner`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlite_utils import Database

from store.scores import update_job_progress


class Cancelled(Exception):
    """Raised by a job function that stopped because ``should_stop()`` said so.

    ``partial`` (JSON-ready) is stored as the job's result: what was done before the stop.
    """

    def __init__(self, message: str = "cancelled", partial: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.partial = partial


@dataclass(frozen=True)
class Job:
    """What a job function gets to know about its job."""

    id: int
    kind: str
    dataset: str
    model: str
    options: dict[str, Any]
    inputs: Mapping[str, Any] = field(default_factory=dict)  # live objects, never stored


class Progress:
    """``progress(done, total)`` for a job: written to its row at most every ``every``
    seconds (always the first and the last step)."""

    def __init__(self, db: Database, job_id: int, every: float = 0.5) -> None:
        self.db, self.job_id, self.every = db, job_id, every
        self.last: float | None = None

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or self.last is None or now - self.last >= self.every:
            update_job_progress(self.db, self.job_id, done, total)
            self.last = now

    def begin(self, total: int) -> None:
        """Write ``0 of total`` at once (before the first step)."""
        update_job_progress(self.db, self.job_id, 0, total)

    def scaled(self, factor: int) -> Callable[[int, int], None]:
        """A ``progress(done, total)`` counting in steps of ``factor`` units (a needle run
        counts pairs, its job shows texts: two per pair)."""
        return lambda done, total: self(factor * done, factor * total)


ShouldStop = Callable[[], bool]
JobFunction = Callable[[Job, Database, Progress, ShouldStop], "dict[str, Any] | None"]


@dataclass(frozen=True)
class Kind:
    """A registered job kind."""

    name: str
    function: JobFunction
    unit: str = "items"  # what progress counts, for display ("texts")
    errors: tuple[type[BaseException], ...] = ()  # failures shown by their message alone
    cancelled: tuple[type[BaseException], ...] = ()  # exceptions that mean "stopped on request"


KINDS: dict[str, Kind] = {}
_KINDS_LOCK = threading.Lock()


def register(name: str, function: JobFunction, *, unit: str = "items",
             errors: tuple[type[BaseException], ...] = (),
             cancelled: tuple[type[BaseException], ...] = ()) -> Kind:
    """Register (or replace) the job kind ``name``; returns it.

    ``errors``: exception types whose message is the whole story (a model that cannot
    load); any other exception is recorded as ``Type: message``. ``cancelled``:
    exception types the function raises when it stopped on ``should_stop()``, besides
    :class:`Cancelled`.
    """
    kind = Kind(name, function, unit, tuple(errors), tuple(cancelled))
    with _KINDS_LOCK:
        KINDS[name] = kind
    return kind


def kind_of(name: str) -> Kind:
    """The registered kind ``name`` (``LookupError`` when none is)."""
    with _KINDS_LOCK:
        found = KINDS.get(name)
    if found is None:
        raise LookupError(f"no job kind {name!r} is registered")
    return found


def unit_of(name: str) -> str:
    """What a kind's progress counts (``items`` for a kind not registered here)."""
    with _KINDS_LOCK:
        found = KINDS.get(name)
    return found.unit if found is not None else "items"
