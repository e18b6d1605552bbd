"""Counting the tokens of every response of a preference dataset, once, in the background:
the ``lengths`` kind of :mod:`needlework.jobs.runner`.

The review page's length filter and the overview's length charts need every response's
token count; counting 100,000 pairs takes minutes, so it is never done on a page's
rerun. This job counts the items not counted yet with the method in use
(:func:`needlework.review.lengths.method`: ``o200k_base``, the loaded model's tokenizer,
or the estimate) and stores them (``response_lengths``): a cancelled or interrupted run
resumes where it stopped, and a new method (``o200k_base`` became available) counts again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from needlework import tokens
from needlework.formats import preference_view
from needlework.jobs.kinds import Cancelled, Job, Progress, ShouldStop, register
from needlework.jobs.runner import RUNNER
from needlework.teams.permissions import User
from store import pairs as pairs_store
from store.datasets import get_dataset, get_item

KIND = "lengths"
BATCH = 200


def lengths_job(job: Job, db: Database, progress: Progress, should_stop: ShouldStop) -> dict[str, Any]:
    """Count the responses of the job's dataset not counted with ``options["method"]`` yet
    (the counter, when the method is a tokenizer, travels as ``inputs["counter"]``)."""
    method = job.options["method"]
    counter: Callable[[str], int] | None = job.inputs.get("counter")
    row = get_dataset(db, job.dataset)
    if row is None:
        raise LookupError(f"no dataset {job.dataset!r}")
    measure = counter_for(method, counter)
    keys = pairs_store.uncounted_keys(db, job.dataset, method)
    progress.begin(len(keys))
    done = 0
    for start in range(0, len(keys), BATCH):
        if should_stop():
            raise Cancelled("cancelled", partial={"counted": done, "method": method})
        rows = []
        for key in keys[start:start + BATCH]:
            item = get_item(db, job.dataset, key)
            if item is None:
                continue
            view = preference_view(row["format"], item["record"])
            rows.append((key, [measure(t) for t in view.chosen], [measure(t) for t in view.rejected]))
        pairs_store.store_lengths(db, job.dataset, method, rows)
        done += len(rows)
        progress(done, len(keys))
    return {"counted": done, "method": method}


def describe(method: str) -> str:
    """A counting method in words (``Counting tokens of X with …``)."""
    if method.startswith("tokenizer:"):
        return f"the tokenizer of {method.split(':', 1)[1]}"
    return "an estimate (a token per word or mark)" if method == "estimate" else method


def counter_for(method: str, counter: Callable[[str], int] | None = None) -> Callable[[str], int]:
    """Count with exactly ``method`` (a run never mixes methods): ``o200k_base``,
    ``tokenizer:NAME`` (``counter`` is that tokenizer) or ``estimate``. Raises
    ``ValueError`` when the method cannot be used here."""
    if method == tokens.ENCODING:
        enc = tokens.encoding()
        if enc is None:
            raise ValueError(f"{tokens.ENCODING} is not available: {tokens.unavailable_reason()}")
        return lambda text: len(enc.encode(text, disallowed_special=()))
    if method.startswith("tokenizer:"):
        if counter is None:
            raise ValueError(f"counting with {method} needs that tokenizer (load the model again)")
        return counter
    if method == "estimate":
        return tokens.estimate
    raise ValueError(f"unknown counting method {method!r}")


register(KIND, lengths_job, unit="items", errors=(ValueError, LookupError))


def start_lengths_job(db: Database, db_path: str | Path, dataset: str, method: str,
                      counter: Callable[[str], int] | None = None, name: str = "model", *,
                      by: User | str | None = None) -> int:
    """Queue and start counting ``dataset``'s responses with ``method``; returns the job id."""
    job_id = RUNNER.submit(db, KIND, dataset, model=describe(method),
                           options={"method": method, "name": name}, by=by)
    RUNNER.start(db_path, job_id, inputs={"counter": counter} if counter is not None else None)
    return job_id


def latest_lengths_job(db: Database, dataset: str) -> dict[str, Any] | None:
    """The newest counting job of ``dataset`` (``display_status`` added), or ``None``."""
    return RUNNER.latest(db, KIND, dataset)
