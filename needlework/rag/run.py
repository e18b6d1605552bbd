"""Evaluating model answers on a grounding dataset: :func:`evaluate` and the job-runner
entry point :func:`run_rag_eval`.

The flow of one evaluation:

1. the dataset's questions, adjudicated values first (:mod:`.questions`); questions
   that are not annotated (no human answer or no labelled passage) are listed, not
   evaluated;
2. per model, which answers name no question and which questions got no answer
   (:func:`.answers.coverage`): reported by id;
3. with a judge, every answer's five judge requests (:mod:`.verdicts`) go through the
   judge cache and a bounded pool (:mod:`.calls`); ``progress(done, total)`` counts
   them, ``should_stop()`` cancels (answers received are cached: a re-run resumes);
4. each answer's row (BERGEN and attribution scores, verdicts, sentences), the figures
   per model overall and by dimension (:mod:`.metrics`), all stored by ``store.rag``
   under the run's key (dataset, answer digests, judge, prompt version, options).

Like :func:`needlework.judges.engine.run_judge`, it runs in the caller's thread, starts
no thread beyond the request pool, and raises
:class:`~needlework.judges.errors.JudgeCancelled` / :class:`~needlework.judges.errors.JudgeError`
after recording the run as cancelled / failed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from needlework.figures import stats as intervals
from needlework.judges.cache import run_key as make_run_key
from needlework.judges.client import JudgeClient
from needlework.judges.connection import Connection
from needlework.judges.errors import JudgeCancelled, JudgeError, one_line
from needlework.judges.templates import Template, from_dict
from needlework.rag import bergen, metrics
from needlework.rag.answers import AnswerSet, coverage, stored_set
from needlework.rag.calls import CallStats, failure_words, request_key, run_requests
from needlework.rag.non_answers import is_non_answer
from needlework.rag.prompts import MODES as PROMPT_MODES
from needlework.rag.prompts import template_set
from needlework.rag.questions import RagQuestion, load_questions, strip_markers
from needlework.rag.verdicts import AnswerCase, answer_row, requests_for
from store import rag as store

Progress = Callable[[int, int], None]
ShouldStop = Callable[[], bool]


@dataclass(frozen=True)
class RagEvalSpec:
    """What to evaluate: a dataset, answer sets, optionally a judge, whether
    ``answer_related_info`` is a second reference for BERGEN's metrics, and the judge
    prompts' templates other than the defaults (one per mode at most,
    :mod:`needlework.rag.prompts`)."""

    dataset: str
    answer_sets: tuple[AnswerSet, ...]
    connection: Connection | None = None
    with_related: bool = False
    templates: tuple[Template, ...] = ()

    def prompt_templates(self) -> dict[str, Template]:
        """The template of every RAG judge prompt: this spec's, else the default."""
        return template_set({t.mode.name: t for t in self.templates})

    def judge_prompts(self, db: Any) -> list[list[dict[str, str]]]:
        """The messages of every judge request this evaluation sends, the questions it
        skips left out: what :func:`needlework.judges.cost.rag_requests` counts."""
        evaluated = [q for q in load_questions(db, self.dataset) if q.skip_reason is None]
        templates = self.prompt_templates()
        return [r.messages for s in self.answer_sets for q in evaluated
                for r in requests_for(AnswerCase(s.model, q, s.answers.get(q.key)), templates)]


@dataclass
class RagReport:
    """A finished evaluation: its key, the summary (JSON-ready) and the per-answer rows."""

    run_key: str
    summary: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self, with_rows: bool = True) -> dict[str, Any]:
        out = dict(self.summary)
        if with_rows:
            out["answers"] = self.rows
        return out


def _identity(spec: RagEvalSpec) -> dict[str, Any]:
    conn = spec.connection
    return {"dataset": spec.dataset,
            "answers": sorted((s.model, s.digest()) for s in spec.answer_sets),
            "judge": None if conn is None else {"endpoint": conn.endpoint, "model": conn.model,
                                                "params": conn.params(),
                                                "context_window": conn.context_window},
            "templates": None if conn is None else {
                mode: t.identity() for mode, t in spec.prompt_templates().items()},
            "with_related": spec.with_related}


def _templates(spec: RagEvalSpec) -> dict[str, dict[str, str]] | None:
    """The judge prompts' templates as stored with the run (``None`` without a judge)."""
    if spec.connection is None:
        return None
    return {mode: t.as_dict() for mode, t in spec.prompt_templates().items()}


def _cases(spec: RagEvalSpec, evaluated: Sequence[RagQuestion]) -> list[AnswerCase]:
    """One case per model and evaluated question, except the questions whose generation
    request failed for that model (no answer of its: not in its figures, counted)."""
    return [AnswerCase(s.model, q, s.answers.get(q.key))
            for s in spec.answer_sets for q in evaluated
            if q.key in s.answers or q.key not in s.failed]


def evaluate(db: Any, spec: RagEvalSpec, *, progress: Progress | None = None,
             should_stop: ShouldStop | None = None,
             client: JudgeClient | None = None) -> RagReport:
    """Evaluate ``spec`` (see the module docstring); stores and returns the report."""
    if not spec.answer_sets:
        raise ValueError("no answer sets to evaluate")
    questions = load_questions(db, spec.dataset)
    evaluated = [q for q in questions if q.skip_reason is None]
    cases = _cases(spec, evaluated)
    conn = spec.connection
    chosen = spec.prompt_templates()
    requests = ([r for case in cases for r in requests_for(case, chosen)]
                if conn is not None else [])
    identity = _identity(spec)
    run_key = make_run_key(**identity)
    models = [s.model for s in spec.answer_sets]
    store.start_run(db, run_key, dataset=spec.dataset, models=models,
                    endpoint=conn.endpoint if conn else "", judge_model=conn.model if conn else "",
                    options={**identity, "judge_connection": conn.describe() if conn else None,
                             "templates": _templates(spec)},
                    total=len(requests))
    outcomes = None
    stats = CallStats()
    if conn is not None:

        def report(done: int, total: int) -> None:
            store.update_progress(db, run_key, done)
            if progress is not None:
                progress(done, total)

        try:
            outcomes, stats = run_requests(db, conn, requests, progress=report,
                                           should_stop=should_stop, client=client)
        except (JudgeCancelled, KeyboardInterrupt) as exc:
            store.finish_run(db, run_key, "cancelled", {"error": str(exc) or "interrupted"})
            raise
        except JudgeError as exc:
            _abandon(db, run_key, str(exc), any_cached(db, conn, requests))
            raise
    elif progress is not None:
        progress(0, 0)
    rows = [answer_row(case, outcomes, with_related=spec.with_related) for case in cases]
    if requests and not any(r.get("judged") and not metrics.judge_failed(r)
                            and r.get("answered") and not r.get("non_answer") for r in rows):
        error = JudgeError("server_error", one_line(
            "no answers scored: every answer had a judge request that failed ("
            + (failure_words(stats.as_dict()) or "no answer") + "); nothing stored", 400))
        _abandon(db, run_key, str(error), False)
        raise error
    summary = summarize(spec, run_key, questions, evaluated, rows, stats)
    store.save_results(db, run_key, rows)
    store.update_progress(db, run_key, len(requests))
    store.finish_run(db, run_key, "done", summary)
    return RagReport(run_key, summary, rows)


def any_cached(db: Any, connection: Connection, requests: Sequence[Any]) -> bool:
    """Whether any of ``requests`` has an answer in the call cache (under the connection's
    parameters)."""
    from store import judges as calls_store  # noqa: PLC0415

    keys = [request_key(connection, r.messages) for r in requests]
    return bool(keys) and bool(calls_store.cached_calls(db, keys))


def _abandon(db: Any, run_key: str, error: str, resumable: bool) -> None:
    """A run that failed: kept as failed when some of its answers are cached (a re-run
    resumes), removed when it has none (no answer, no run)."""
    if resumable:
        store.finish_run(db, run_key, "failed", {"error": error})
    else:
        store.delete_run(db, run_key)


def summarize(spec: RagEvalSpec, run_key: str, questions: Sequence[RagQuestion],
              evaluated: Sequence[RagQuestion], rows: Sequence[Mapping[str, Any]],
              stats: CallStats) -> dict[str, Any]:
    """The JSON-ready summary of an evaluation (figures overall and by dimension)."""
    by_model: dict[str, list[Mapping[str, Any]]] = {s.model: [] for s in spec.answer_sets}
    for row in rows:
        by_model[row["model"]].append(row)
    conn = spec.connection
    return {
        "run_key": run_key, "dataset": spec.dataset, "models": list(by_model),
        "judge": conn.describe() if conn is not None else None,
        "templates": _templates(spec), "with_related": spec.with_related,
        "questions": {"total": len(questions), "evaluated": len(evaluated),
                      "not_evaluated": [{"item_key": q.key, "reason": q.skip_reason}
                                        for q in questions if q.skip_reason is not None]},
        "coverage": {s.model: answer_coverage(s, questions) for s in spec.answer_sets},
        "overall": {m: metrics.summarize(r) for m, r in by_model.items()},
        "breakdowns": {m: metrics.breakdown(r) for m, r in by_model.items()},
        "calls": stats.as_dict(),
        "failures": failure_words(stats.as_dict()),
        "non_answers": {m: sum(1 for r in rs if r.get("non_answer"))
                        for m, rs in by_model.items()},
        "judge_note": (f"Judge figures {metrics.RULES_CAVEAT}"
                       if metrics.is_rules_judge(conn.describe() if conn is not None else None)
                       else None),
    }


def answer_notes(summary: dict[str, Any]) -> list[str]:
    """One line per model with non-answers or answers left unscored by a failed judge
    request: ``demo-judge: non-answers: 13 of 13, counted not factual and not eligible``,
    ``m: not scored: 2 (a judge request failed: 2 failed), left out of the judge figures'
    numerators and denominators``; and per model, questions whose generation failed; then
    the failed judge requests with the endpoint's sentence. What ``rag-eval`` prints under
    its table and the RAG answers page shows above it."""
    out = []
    for model, figures in summary["overall"].items():
        n = figures.get("n", 0)
        if figures.get("non_answers"):
            out.append(f"{model}: non-answers: {figures['non_answers']} of {n}, counted not "
                       "factual and not eligible (no claim: empty, a lone letter, only "
                       "citations)")
        if figures.get("not_scored"):
            kinds = ", ".join(f"{c} {k.replace('_', ' ')}"
                              for k, c in sorted((figures.get("judge_failures") or {}).items()))
            out.append(f"{model}: not scored: {figures['not_scored']} of {n} (a judge request "
                       f"failed: {kinds}), left out of the judge figures' numerators and "
                       "denominators")
        failed = (summary.get("coverage") or {}).get(model, {}).get("failed_ids") or []
        if failed:
            out.append(f"{model}: {len(failed)} question(s) whose answer request failed when "
                       "it was generated, left out of its figures")
    if summary.get("failures"):
        out.append(f"failed judge requests: {summary['failures']}")
    defaults = (summary.get("calls") or {}).get("provider_defaults") or []
    if defaults:
        out.append("judge parameters refused, the provider's default used: "
                   + "; ".join(str(d.get("words")) for d in defaults))
    return out


def answer_coverage(answer_set: AnswerSet, questions: Sequence[RagQuestion]) -> dict[str, Any]:
    """:func:`.answers.coverage` over the evaluated questions, plus the answers given to
    questions that are not evaluated (``not_evaluated_ids``)."""
    evaluated = [q.key for q in questions if q.skip_reason is None]
    out = coverage(answer_set, evaluated).as_dict()
    known = {q.key for q in questions}
    out["unknown_ids"] = [k for k in answer_set.answers if k not in known]
    done = set(evaluated)
    out["not_evaluated_ids"] = [k for k in answer_set.answers if k in known and k not in done]
    return out


# -- the job runner's entry point --------------------------------------------------------


def spec_from_params(db: Any, params: Mapping[str, Any]) -> RagEvalSpec:
    """A :class:`RagEvalSpec` from JSON-ready job parameters::

        {"dataset": NAME, "models": [NAME, ...] | null (every stored answer set),
         "answer_sets": [{"model": NAME, "answers": {id: text}}, ...] (instead of stored),
         "judge": {"base_url", "model", "key_env", "temperature", "max_tokens", "timeout",
                   "concurrency", "context_window"} | null,
         "with_related": false,
         "templates": [Template.as_dict(), ...] (optional: the defaults otherwise)}

    Stored answer sets are those of ``store.rag.answer_sets`` (the demo's are seeded).
    The judge's key is read from its environment variable when a request is made.
    """
    dataset = params["dataset"]
    if params.get("answer_sets"):
        sets = [AnswerSet(s["model"], dict(s["answers"]), s.get("source", "")) for s in params["answer_sets"]]
    else:
        wanted = params.get("models")
        sets = [stored_set(r) for r in store.answer_sets(db, dataset)
                if wanted is None or r["model"] in wanted]
    judge = params.get("judge")
    connection = None
    if judge:
        options = {k: judge[k] for k in ("key_env", "temperature", "max_tokens", "timeout",
                                         "concurrency", "context_window") if k in judge}
        connection = Connection(judge["base_url"], judge["model"], **options)
    templates = tuple(from_dict(PROMPT_MODES, t) for t in params.get("templates") or ())
    return RagEvalSpec(dataset, tuple(sets), connection, bool(params.get("with_related")),
                       templates)


def spec_of(job: Any, db: Any) -> RagEvalSpec:
    """The :class:`RagEvalSpec` a job names: the job itself, ``job.inputs["spec"]`` (the
    job runner's live inputs: a connection with an in-memory key, uploaded answers), or
    JSON parameters (:func:`spec_from_params`): the job itself as a mapping, its
    ``params`` or the runner's ``options``."""
    if isinstance(job, RagEvalSpec):
        return job
    inputs = getattr(job, "inputs", None)
    if isinstance(inputs, Mapping) and isinstance(inputs.get("spec"), RagEvalSpec):
        return inputs["spec"]
    params = job if isinstance(job, Mapping) else getattr(job, "params", None)
    if params is None and isinstance(getattr(job, "options", None), Mapping) \
            and "dataset" in job.options:
        params = job.options
    if isinstance(params, str):
        params = json.loads(params)
    if not isinstance(params, Mapping):
        raise TypeError("run_rag_eval needs a RagEvalSpec or job parameters")
    return spec_from_params(db, params)


def run_rag_eval(job: Any, db: Any, progress: Progress, should_stop: ShouldStop) -> dict[str, Any]:
    """Job-runner entry point (the ``rag`` job kind, :mod:`.job`): ``job`` is a
    :class:`RagEvalSpec`, a parameter mapping (:func:`spec_from_params`), an object with
    such a mapping as ``params``, or a runner job (:func:`spec_of`). Returns the summary
    (the rows are in ``store.rag.run_results`` under ``summary["run_key"]``)."""
    spec = spec_of(job, db)
    return evaluate(db, spec, progress=progress, should_stop=should_stop).summary


# -- BERGEN's metrics alone (no judge, nothing stored) ------------------------------------


def _scored_text(answer: str) -> str:
    """What BERGEN's metrics score of an answer: a non-answer as the empty answer, markers
    removed from the rest."""
    return "" if is_non_answer(answer) else strip_markers(answer)


def answer_metrics(db: Any, dataset: str, answer_sets: Sequence[AnswerSet], *,
                   with_related: bool = False) -> dict[str, Any]:
    """BERGEN's metrics of each model's answers against the dataset's human answers
    (adjudicated first), per question and averaged, over the questions that have a
    human answer; a missing answer and a non-answer (:mod:`.non_answers`) are scored as
    the empty answer. JSON-ready; nothing
    is stored (:func:`evaluate` stores a full evaluation)."""
    questions = load_questions(db, dataset)
    scored = [q for q in questions if q.reference.strip()]
    models: dict[str, Any] = {}
    for s in answer_sets:
        rows: list[dict[str, Any]] = [
            {"item_key": q.key, "answered": q.key in s.answers,
             "non_answer": q.key in s.answers and is_non_answer(s.answers[q.key]),
             **bergen.answer_scores(_scored_text(s.answers.get(q.key, "")),
                                    q.references(with_related)).as_dict()}
            for q in scored]
        cov = coverage(s, [q.key for q in scored]).as_dict()
        known = {q.key for q in questions}
        cov["unknown_ids"] = [k for k in s.answers if k not in known]
        models[s.model] = {"mean": bergen.mean_scores(rows),
                           "intervals": {name: intervals.bootstrap_mean(
                               [float(r[name]) for r in rows], unit="question").as_dict()
                               for name in bergen.METRICS},
                           "coverage": cov,
                           "per_question": rows}
    return {"dataset": dataset, "with_related": with_related, "questions": len(questions),
            "scored": len(scored),
            "not_scored": [{"item_key": q.key, "reason": "no human answer"}
                           for q in questions if not q.reference.strip()],
            "models": models}
