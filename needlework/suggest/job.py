"""The ``suggest`` job kind: a judge's suggested passage labels and dimensions for a
grounding dataset, run by the job runner (:mod:`needlework.jobs.runner`).

For every question, one prompt per passage (:func:`needlework.suggest.prompts.label_messages`)
and, when asked, one for its dimensions. The dataset is read a page of :data:`PAGE`
questions at a time and each page's suggestions are committed before the next is read,
so memory stays bounded at any size and a killed job loses at most a page:

- **resume**: a question whose fields this source has all suggested already is skipped
  (``replace`` asks again); calls go through the judge call cache
  (:func:`needlework.rag.calls.run_requests`), so a question asked before and not stored
  costs no request either;
- **progress** counts questions; **cancel** stops before the next request is sent and
  keeps what was stored;
- an answer the parser cannot read stores nothing for its field and is counted in the
  result (``invalid``), with one example reason; a judge that fails as a whole fails
  the job in one line (:class:`~needlework.judges.errors.JudgeError`);
- a request that fails on its own (refused, timed out, a server error after the retries)
  is not an answer: it stores nothing, is never cached (a new run asks again), and is
  counted apart from the invalid answers (``refused``, ``timed_out``, ``failed``) with
  the endpoint's sentence (``failures``, one line); a page in which no request gets an
  answer fails the job in one line (nothing of that page is stored, nor of any page
  when it is the first).

A passage label keeps the confidence the judge stated with it
(:func:`~needlework.suggest.prompts.stated_confidence`; none where it gave none, as the
rules judge, whose labels follow rules, not a probability).

The source of every suggestion is ``judge:MODEL`` (or the ``source`` option); its detail
names the endpoint, the model, the prompt version and the job. The connection travels as
the job's ``inputs`` (it may hold a key in memory); the options stored on the ``jobs`` row
describe it without the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from needlework.grounding import item as gitem
from needlework.jobs.kinds import Cancelled, Job, Progress, ShouldStop, register
from needlework.jobs.runner import RUNNER
from needlework.judges.connection import Connection
from needlework.judges.errors import JudgeCancelled, JudgeError
from needlework.rag.calls import FAILURE_KINDS, Request, failure_words, run_requests
from needlework.suggest.data import MAX_SOURCE
from needlework.suggest.prompts import (
    DIMS_SCHEMA,
    LABEL_SCHEMA,
    PROMPT_VERSION,
    dimension_messages,
    label_messages,
    parse_dimensions,
    parse_label,
    stated_confidence,
)
from needlework.teams.permissions import User, check
from store.datasets import get_dataset, items_page
from store.grounding import item_count
from store.suggestions import put_suggestions, sourced_fields

KIND = "suggest"
PAGE = 64  # questions read, asked and committed together
LABELS, DIMS = "labels", "dims"


class SuggestError(ValueError):
    """A suggestion job that cannot start: one sentence for the screen."""


@dataclass(frozen=True)
class SuggestSpec:
    """What to ask for: ``fields`` from ``labels`` and ``dims``."""

    dataset: str
    connection: Connection
    fields: tuple[str, ...] = (LABELS,)
    source: str = ""
    replace: bool = False

    def source_name(self) -> str:
        return (self.source.strip() or f"judge:{self.connection.model}")[:MAX_SOURCE]

    def judge_prompts(self, db: Any) -> list[list[dict[str, str]]]:
        """The messages of every judge request this job would send, the questions it would
        skip left out: what :func:`needlework.judges.cost.suggest_requests` counts."""
        source, prompts, after = self.source_name(), [], -1
        while page := items_page(db, self.dataset, after, PAGE):
            after = page[-1]["position"]
            have = {} if self.replace else sourced_fields(db, self.dataset, source,
                                                          [it["key"] for it in page])
            prompts += [r.messages for it in page
                        for r in question_requests(it, self.fields, have.get(it["key"], set()))]
        return prompts


def job_options(spec: SuggestSpec) -> dict[str, Any]:
    """The JSON-ready description stored on the job row: no key."""
    return {"dataset": spec.dataset, "fields": list(spec.fields), "source": spec.source_name(),
            "replace": spec.replace, "judge": spec.connection.describe(),
            "prompt": PROMPT_VERSION}


def _complete(record: dict[str, Any], fields: tuple[str, ...], have: set[str]) -> bool:
    """Whether the source has suggested everything asked for a question: each passage's
    label, and a dimension (a judge may leave some dimensions out)."""
    labels = {f"label:{p}" for p in range(1, len(record.get("grounding") or []) + 1)}
    return ((LABELS not in fields or labels <= have)
            and (DIMS not in fields or any(f.startswith("dim:") for f in have)))


def _requests(item: dict[str, Any], fields: tuple[str, ...]) -> list[Request]:
    record = item["record"]
    question = str(record.get("question") or "")
    asked = record.get("question_date") if isinstance(record.get("question_date"), str) else ""
    out = []
    if LABELS in fields:
        out += [Request(f"{item['key']}\x00label:{p.number}",
                        label_messages(question, asked, p), parse_label, LABEL_SCHEMA)
                for p in gitem.passages(record)]
    if DIMS in fields:
        out.append(Request(f"{item['key']}\x00dims", dimension_messages(question, asked),
                           parse_dimensions, DIMS_SCHEMA))
    return out


def question_requests(item: dict[str, Any], fields: tuple[str, ...], have: set[str]
                      ) -> list[Request]:
    """The requests a job asks for one question (none when the source has suggested
    everything asked: ``have``, its fields): what a cost estimate counts."""
    return [] if _complete(item["record"], fields, have) else _requests(item, fields)


def run_suggest(job: Job, db: Database, progress: Progress, should_stop: ShouldStop
                ) -> dict[str, Any]:
    """The kind's function (see the module docstring)."""
    spec: SuggestSpec = job.inputs["spec"]
    fields, source = tuple(job.options["fields"]), job.options["source"]
    detail = {"endpoint": spec.connection.endpoint, "model": spec.connection.model,
              "prompt": PROMPT_VERSION, "job": job.id}
    total = item_count(db, spec.dataset)
    progress.begin(total)
    counts = {"questions": 0, "skipped": 0, "suggestions": 0, "invalid": 0, "sent": 0,
              "cached": 0, "prompt_tokens": 0, "completion_tokens": 0, "unreported": 0,
              "refused": 0, "timed_out": 0, "failed": 0}
    messages: dict[str, str] = {}
    example: str | None = None
    after, done = -1, 0
    while page := items_page(db, spec.dataset, after, PAGE):
        after = page[-1]["position"]
        have = {} if job.options.get("replace") else sourced_fields(
            db, spec.dataset, source, [it["key"] for it in page])
        todo = [it for it in page if not _complete(it["record"], fields, have.get(it["key"], set()))]
        counts["skipped"] += len(page) - len(todo)
        requests = [r for it in todo for r in _requests(it, fields)]
        if requests:
            if should_stop():
                raise Cancelled("stopped", partial=counts)
            try:
                outcomes, stats = run_requests(db, spec.connection, requests,
                                               should_stop=should_stop)
            except JudgeCancelled as stop:
                raise Cancelled("stopped", partial=counts) from stop
            for name in ("sent", "cached", "prompt_tokens", "completion_tokens", "unreported",
                         *FAILURE_KINDS):
                counts[name] += getattr(stats, name)
            for kind, message in stats.failure_messages.items():
                messages.setdefault(kind, message)
            rows = []
            for outcome in outcomes.values():
                key, name = outcome.id.split("\x00", 1)
                if outcome.failed:  # no answer: counted apart, nothing stored
                    continue
                if not outcome.parsed.valid:
                    counts["invalid"] += 1
                    example = example or f"{key} {name}: {outcome.parsed.reason}"
                    continue
                values = (outcome.parsed.value.items() if name == "dims"
                          else [(name[len("label:"):], outcome.parsed.value)])
                confidence = None if name == "dims" else stated_confidence(outcome.raw)
                for part, value in values:
                    rows.append({"dataset": spec.dataset, "item_key": key, "source": source,
                                 "field": f"dim:{part}" if name == "dims" else f"label:{part}",
                                 "value": value, "score": None, "confidence": confidence,
                                 "detail": {**detail, "call": outcome.key[:16]}})
            counts["suggestions"] += put_suggestions(db, rows, f"job:{job.id}")
            counts["questions"] += len(todo)
        done += len(page)
        progress(done, total)
    return {**counts, "source": source, "example_invalid": example,
            "failure_messages": messages,
            "failures": failure_words({**counts, "failure_messages": messages})}


register(KIND, run_suggest, unit="questions", errors=(JudgeError, SuggestError),
         cancelled=(JudgeCancelled,))


def start_suggest_job(db: Database, db_path: str | Path, spec: SuggestSpec, *,
                      by: User | None = None) -> int:
    """Check and queue the job of ``spec``, start it in the runner's thread (its own
    connection to ``db_path``); returns the job id. Only a lead (admin) starts one in
    team mode; the dataset must be a grounding dataset."""
    check(db, by, "suggest", spec.dataset)
    row = get_dataset(db, spec.dataset)
    if row is None:
        raise SuggestError(f"no dataset named {spec.dataset!r}")
    if row["kind"] != "grounding":
        raise SuggestError(f"{spec.dataset} is a {row['kind']} dataset: a judge suggests passage "
                           "labels and dimensions of grounding datasets")
    if not spec.fields or set(spec.fields) - {LABELS, DIMS}:
        raise SuggestError("ask for labels, dimensions or both")
    job_id = RUNNER.submit(db, KIND, spec.dataset, spec.connection.model, job_options(spec), by=by)
    RUNNER.start(db_path, job_id, inputs={"spec": spec})
    return job_id


def run_suggest_here(db: Database, db_path: str | Path, spec: SuggestSpec, *,
                     by: User | None = None) -> dict[str, Any]:
    """Run the job of ``spec`` in the calling thread (the CLI, the demo seed); returns the
    finished job row."""
    check(db, by, "suggest", spec.dataset)
    row = get_dataset(db, spec.dataset)
    if row is None or row["kind"] != "grounding":
        raise SuggestError(f"no grounding dataset named {spec.dataset!r}")
    job_id = RUNNER.submit(db, KIND, spec.dataset, spec.connection.model, job_options(spec), by=by)
    return RUNNER.run(db_path, job_id, inputs={"spec": spec})


def latest_suggest_job(db: Database, dataset: str) -> dict[str, Any] | None:
    """The newest ``suggest`` job of ``dataset`` (``display_status`` and ``unit`` added)."""
    return RUNNER.latest(db, KIND, dataset)
