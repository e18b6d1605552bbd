"""Running a dataset through a judge: :func:`run_judge`.

The flow of one run:

1. plan the trials (:mod:`.plan`), prompts fitted to the window (:mod:`.context`);
2. compute each trial's cache key (:mod:`.cache`) and look the keys up in the store:
   answered calls are not sent again (a re-run makes no request; a killed run resumes);
3. send the rest through a bounded pool of ``connection.concurrency`` threads, at most
   that many requests in flight; each answer is parsed and committed to the cache by
   the calling thread as soon as it arrives (the pool threads only talk HTTP);
4. assemble per-trial results (re-parsing cached answers, so a parser fix applies
   without a request), compute the figures (:mod:`.evaluate`), store the run and its
   results (``store.judges``) and return a :class:`JudgeRun`; its summary's ``cost`` is what
   the requests sent cost as the server reported it (:mod:`.cost`; answers from the cache
   are free).

``should_stop()`` is checked before each request is submitted and between retries: on
a stop no new request starts, the ones in flight finish (and are cached), the run is
marked cancelled and :class:`~.errors.JudgeCancelled` goes up. A failure that concerns
the whole endpoint (:data:`RUN_ERRORS`: server down, bad key, wrong model name, no such
path) stops the run the same way, as a :class:`~.errors.JudgeError`.

A request that fails on its own (refused with a 4xx that is not an answer, timed out, a
5xx or 429 after the retries) is a *failed* trial, not an answer: it is never cached (a
re-run asks again), it is kept out of every figure's numerator and denominator
(:mod:`.evaluate`), and the summary counts it with the endpoint's sentence
(``failed``, ``failures``). An *invalid* trial is a real answer the parser could not read.
A run in which no request got an answer (or whose first :data:`NO_ANSWER_LIMIT` requests
all failed) raises a one-line :class:`~.errors.JudgeError` and stores no run.

A parameter the endpoint refuses as unsupported (``temperature`` for OpenAI's reasoning
models) is dropped by the client (:class:`~.client.JudgeClient`), remembered per
endpoint and model (``store.judges.save_refusal``) and listed in the summary's
``provider_defaults``; each answer is cached under the key of the parameters it was
really asked with, and a later run leaves the refused ones out from its first request.

The function runs in the caller's thread and needs only a database and a
connection, so a job runner can call it as is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from needlework.formats.preference import Preference
from needlework.judges import cache, cost, evaluate
from needlework.judges.client import JudgeClient
from needlework.judges.connection import REASONING_MAX_TOKENS, Connection
from needlework.judges.context import POLICIES
from needlework.judges.errors import (  # noqa: F401 - the failure rules, named here too
    FAILURE_WORDS,
    ITEM_ERRORS,
    NO_ANSWER_LIMIT,
    RUN_ERRORS,
    JudgeCancelled,
    JudgeError,
    no_answer_error,
    one_line,
)
from needlework.judges.local import cache_endpoint, mode_refusal
from needlework.judges.parse import Parsed
from needlework.judges.plan import MODES, ORDERS, Trial, plan_trials
from needlework.judges.prompts import default_template
from needlework.judges.sending import Progress, ShouldStop, parse_answer, send_pending
from needlework.judges.templates import Template
from store import judges as store


@dataclass
class JudgeRun:
    """A finished run: its identity, the summary (JSON-ready) and per-trial results."""

    run_key: str
    summary: dict[str, Any]
    results: list[dict[str, Any]]

    def output_entries(self) -> list[dict[str, Any]]:
        """Lines of the Long-form RewardBench-shaped output file (see :func:`write_output`)."""
        return output_entries(self.summary, self.results)


def _result(trial: Trial, call_key: str | None, parsed: Parsed | None,
            error: JudgeError | None = None, call: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "item_key": trial.item_key, "subset": trial.subset, "trial": trial.trial,
        "group": trial.group, "rotation": trial.rotation,
        "members": [m.label for m in trial.members],
        "chosen_positions": list(trial.chosen_positions),
        "skipped": trial.skipped, "fit": trial.fit.as_dict(), "call_key": call_key,
        "valid": None, "picked": None, "score": None, "correct": None, "rule": None,
        "reason": None,
    }
    if trial.skipped:
        out["reason"] = (f"prompt of {trial.fit.prompt_tokens} tokens is over the window: skipped")
        return out
    if parsed is None:  # the request failed: no answer, counted apart
        kind = error.kind if error is not None else "server_error"
        out.update(failed=True, failure=kind,
                   reason=f"no answer ({FAILURE_WORDS.get(kind, kind.replace('_', ' '))}): "
                   + one_line(str(error) if error is not None else "the request failed"))
        return out
    out.update(valid=parsed.valid, rule=parsed.rule, reason=parsed.reason or None)
    if call is not None and call.get("finish_reason") == "length":
        out["cut_off"] = budget = (call.get("params") or {}).get("max_tokens") \
            or call.get("completion_tokens")
        if not parsed.valid:
            out["reason"] = cut_off_words(budget, call.get("reasoning_tokens")) + (
                f" ({parsed.reason})" if parsed.reason else "")
    if trial.mode == "selection":
        out["picked"] = parsed.value
        out["correct"] = bool(parsed.valid and parsed.value in trial.chosen_positions)
    else:
        out["score"] = parsed.value
    return out


def _identity(connection: Connection, dataset: str, mode: str, order: str, seed: int,
              policy: str, selection: dict[str, Any] | None = None,
              template: Template | None = None) -> dict[str, Any]:
    identity = {"dataset": dataset,
                "endpoint": cache_endpoint(connection.endpoint, connection.model),
                "model": connection.model,
                "params": connection.params(), "mode": mode, "order": order,
                "seed": seed if order == "shuffle" else None, "context_policy": policy,
                "context_window": connection.context_window,
                "template": (template or default_template(mode, connection.model)).identity()}
    if selection:  # a run on part of the dataset is a run of its own
        identity["selection"] = dict(selection)
    return identity


def run_judge(
    db: Any,
    connection: Connection,
    items: Sequence[tuple[str, Preference]],
    mode: str,
    *,
    dataset: str,
    format_name: str = "",
    order: str = "shuffle",
    seed: int = 0,
    context_policy: str = "skip",
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    client: JudgeClient | None = None,
    selection: dict[str, Any] | None = None,
    template: Template | None = None,
) -> JudgeRun:
    """Judge ``items`` (``(item key, Preference)``, e.g. from
    :func:`needlework.rewards.runs.load_preferences`) in ``mode`` (selection or scoring).

    ``order`` is ``shuffle`` (one seeded order per group) or ``rotations`` (every
    rotation; both orders of a pair). ``context_policy`` is skip, keep-start or keep-end
    (used when ``connection.context_window`` is set). ``progress(done, total)`` counts
    trials; ``should_stop()`` cancels. Pass ``client`` to share one (and its request
    counter); otherwise one is made and closed here. ``selection`` (JSON-ready, e.g.
    ``{"per_subset": 2}``) says that ``items`` are part of the dataset: it is recorded with
    the run and is part of its identity, so a run on a few items never replaces the run on
    all of them. ``template`` (:mod:`.templates`) renders the prompts, by default the
    paper's (:func:`~needlework.judges.prompts.default_template`); it is stored with the run
    and its digest is part of the run's identity, so an edited template is a run of its own.
    Raises :class:`JudgeError` (or :class:`JudgeCancelled`) after recording the run as
    failed (or cancelled).
    """
    template = _checked_template(connection, mode, order, context_policy, template)
    trials = plan_trials(items, mode, order=order, seed=seed, window=connection.context_window,
                         reserve=connection.max_tokens, policy=context_policy, template=template)
    identity = _identity(connection, dataset, mode, order, seed, context_policy, selection,
                         template)
    run_key = cache.run_key(**identity)
    head = {"run_key": run_key, "dataset": dataset, "format": format_name,
            "endpoint": connection.endpoint, "model": connection.model, "mode": mode,
            "order": order, "seed": seed if order == "shuffle" else None,
            "context_policy": context_policy, "context_window": connection.context_window,
            "prompt_version": template.label, "template": template.as_dict(),
            "params": connection.params(), "items": len(items), "selection": selection or None}
    options = {**identity, "connection": connection.describe(), "trials": len(trials),
               "template": template.as_dict()}
    sent = _send_trials(db, client, connection, trials, run_key, options, progress, should_stop)
    return _finish(db, connection, head, trials, sent)


def _checked_template(connection: Connection, mode: str, order: str, context_policy: str,
                      template: Template | None) -> Template:
    """The run's template (by default the paper's for ``mode``), once the mode, the order
    and the context policy are known to be ones :func:`run_judge` runs."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if (refusal := mode_refusal(connection.model, mode)) is not None:
        raise ValueError(refusal)
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
    if context_policy not in POLICIES:
        raise ValueError(f"context policy must be one of {', '.join(POLICIES)}, not {context_policy!r}")
    template = template or default_template(mode, connection.model)
    if template.mode.name != mode:
        raise ValueError(f"a {template.mode.name} template cannot run in {mode} mode")
    return template


class _Sent(NamedTuple):
    """What sending a run's trials left: each trial's cache key, every answer by key
    (cached or fresh), the fresh ones, the failed requests by key, and the sending's
    figures for the summary (requests, retries, cached, sent, errors, parameters)."""

    keys: list[str | None]
    found: dict[str, dict[str, Any]]
    fresh: dict[str, dict[str, Any]]
    errors: dict[str, JudgeError]
    figures: dict[str, Any]


def _send_trials(db: Any, client: JudgeClient | None, connection: Connection,
                 trials: Sequence[Trial], run_key: str, options: dict[str, Any],
                 progress: Progress | None, should_stop: ShouldStop | None) -> _Sent:
    """Start the run in the store and send the trials not in the cache (one per prompt);
    a cancel records the run cancelled, a failure of the endpoint abandons it."""
    own_client = client is None
    client = client or JudgeClient(connection)
    where = cache_endpoint(connection.endpoint, connection.model)
    client.assume_refused(store.refusals(db, where, connection.model))
    keys = trial_keys(connection, trials, client.effective_params())
    store.start_run(db, run_key, dataset=options["dataset"], endpoint=connection.endpoint,
                    model=connection.model, mode=options["mode"], options=options,
                    total=len(trials))
    found = store.cached_calls(db, [k for k in keys if k])
    pending: dict[str, Trial] = {}
    for trial, key in zip(trials, keys, strict=True):
        if key and key not in found and key not in pending:
            pending[key] = trial
    total = len(trials)
    done = total - sum(1 for k in keys if k in pending)
    if progress is not None:
        progress(done, total)
    errors: dict[str, JudgeError] = {}
    requests_before, retries_before = client.requests, client.retries
    try:
        fresh = send_pending(db, client, connection, pending, done, total, errors, progress,
                             should_stop, answered_before=len(found))
    except (JudgeCancelled, KeyboardInterrupt) as exc:
        store.update_run_progress(db, run_key, store_done(db, keys))
        store.finish_run(db, run_key, "cancelled", {"error": str(exc) or "interrupted"})
        raise
    except JudgeError as exc:
        _abandon(db, run_key, keys, str(exc))
        raise
    finally:
        requests = client.requests - requests_before
        retries = client.retries - retries_before
        _remember_refusals(db, client, where)
        if own_client:
            client.close()
    found.update(fresh)
    return _Sent(keys, found, fresh, errors, {
        "requests": requests, "retries": retries,
        "cached": sum(1 for k in keys if k and k not in pending), "sent": len(pending),
        "errors": len(errors), "provider_defaults": client.provider_defaults(),
        "sent_params": client.effective_params()})


def _finish(db: Any, connection: Connection, head: dict[str, Any], trials: Sequence[Trial],
            sent: _Sent) -> JudgeRun:
    """The trials' results and the run's summary (``head`` first), written to the store; a
    run in which no trial got an answer is abandoned instead (its :class:`JudgeError`
    raised)."""
    run_key, (keys, found, fresh, errors, figures) = head["run_key"], sent
    results = []
    for trial, key in zip(trials, keys, strict=True):
        row = found.get(key) if key else None
        parsed = parse_answer(trial, row["raw"]) if row is not None else None
        results.append(_result(trial, row.get("key", key) if row is not None else None, parsed,
                               errors.get(key) if key else None, row))
    if any(not t.skipped for t in trials) and not any(
            row is not None for row in (found.get(k) for k in keys if k)):
        error = no_answer_error(errors.values(), sum(1 for k in keys if k))
        _abandon(db, run_key, keys, str(error))
        raise error
    summary = {
        **head, **figures,
        "cut": sum(1 for t in trials if t.fit.cut and not t.skipped),
        "cut_off": sum(1 for r in results if r.get("cut_off")),
        "token_method": trials[0].fit.method if trials else None,
        "usage": _usage(found.values()),
        "cost": cost.actual(fresh.values(), cached=figures["cached"],
                            price=cost.price_of(connection)).as_dict(),
        **evaluate.summarize(results, head["mode"], head["format"]),
    }
    summary["too_long"] = [{"item_key": r["item_key"], "trial": r["trial"], **r["fit"]}
                           for r in results if r["skipped"] or r["fit"]["cut"]][:50]
    store.save_results(db, run_key, [{"item_key": r["item_key"], "trial": r["trial"],
                                      "subset": r["subset"], "call_key": r["call_key"], "entry": r}
                                     for r in results])
    store.update_run_progress(db, run_key, len(trials))
    store.finish_run(db, run_key, "done", summary)
    return JudgeRun(run_key, summary, results)


def cut_off_words(budget: int | None, reasoning_tokens: int | None = None) -> str:
    """``cut off at 512 tokens (448 of them reasoning): raise max tokens (a reasoning model
    needs room to think, e.g. 8192)``."""
    thinking = (f" ({reasoning_tokens} of them reasoning)" if reasoning_tokens else "")
    room = (f" (a reasoning model needs room to think, e.g. {REASONING_MAX_TOKENS})"
            if reasoning_tokens and (budget or 0) < REASONING_MAX_TOKENS else "")
    return f"cut off at {budget} tokens{thinking}: raise max tokens{room}"


def _abandon(db: Any, run_key: str, keys: Sequence[str | None], error: str) -> None:
    """A run that failed: stored as failed when some of its answers are cached (a re-run
    resumes), removed when it has none (no answer, no run)."""
    if any(k for k in keys) and not store.cached_calls(db, [k for k in keys if k]):
        store.delete_run(db, run_key)
        return
    store.update_run_progress(db, run_key, store_done(db, keys))
    store.finish_run(db, run_key, "failed", {"error": error})


def _remember_refusals(db: Any, client: JudgeClient, where: str) -> None:
    for entry in client.provider_defaults():
        store.save_refusal(db, where, client.connection.model, entry["param"], entry["refused"],
                           entry["message"])


def trial_keys(connection: Connection, trials: Sequence[Trial],
               params: dict[str, Any] | None = None) -> list[str | None]:
    """Each trial's call-cache key (``None`` for a trial skipped as too long); ``params``:
    the parameters the requests go with (default the connection's)."""
    return [None if t.skipped else cache.connection_key(connection, t.messages, params)
            for t in trials]


def store_done(db: Any, keys: Sequence[str | None]) -> int:
    """Trials with an answer in the cache (or nothing to send)."""
    found = store.cached_calls(db, [k for k in keys if k])
    return sum(1 for k in keys if not k or k in found)


def _usage(rows: Any) -> dict[str, Any]:
    rows = list(rows)
    prompt = [r["prompt_tokens"] for r in rows if r.get("prompt_tokens") is not None]
    completion = [r["completion_tokens"] for r in rows if r.get("completion_tokens") is not None]
    latency = [r["latency_s"] for r in rows if r.get("latency_s") is not None]
    thinking = [r["reasoning_tokens"] for r in rows if r.get("reasoning_tokens") is not None]
    return {"prompt_tokens": sum(prompt), "completion_tokens": sum(completion),
            "reasoning_tokens": sum(thinking) if thinking else None,
            "mean_latency_s": round(sum(latency) / len(latency), 4) if latency else None}


# -- the output file ---------------------------------------------------------------------


def output_entries(summary: dict[str, Any], results: Sequence[evaluate.Result]) -> list[dict[str, Any]]:
    """Long-form RewardBench-shaped lines: ``id, subset, chosen_scores, rejected_scores``.

    Selection: one line per trial (the one-hot scores of :func:`evaluate.selection_entry`,
    plus the official selection fields ``selected_idx`` and ``chosen_idx``, the order
    shown and the rotation), so ``python -m needlework metrics --kind bon`` on the file
    gives the run's accuracy. Scoring: one line per item with the judge's scores
    (``null`` for an invalid or skipped answer, as in the official output). A failed
    request has no answer and no line (an item with a failed rating neither), so
    ``metrics`` on the file gives the run's figures over its answered trials; the run's
    summary (``--json``) counts the failures.
    """
    model = summary.get("model")
    lines: list[dict[str, Any]] = []
    results = list(results)
    kept = ({e["id"] for e in evaluate.scoring_entries(results)}  # items fully rated
            if summary["mode"] != "selection" else set())
    results = evaluate.answered(results)
    if summary["mode"] == "selection":
        for r in results:
            entry = evaluate.selection_entry(r)
            chosen = r["chosen_positions"]
            lines.append({
                **entry, "item_key": r["item_key"], "trial": r["trial"], "rotation": r["rotation"],
                "order": r["members"], "selected_idx": r["picked"] if r["valid"] else None,
                "chosen_idx": chosen[0] if len(chosen) == 1 else chosen,
                "valid": r["valid"], "skipped": r["skipped"], "reason": r["reason"],
                "model": model})
        return lines
    items: dict[str, dict[str, Any]] = {}
    for r in results:
        if r["item_key"] not in kept:
            continue
        line = items.setdefault(r["item_key"], {"id": r["item_key"], "subset": r["subset"],
                                                "chosen": {}, "rejected": {}, "invalid": 0,
                                                "skipped": 0})
        side, _, rest = r["members"][0].partition("[")
        line[side][int(rest.rstrip("]"))] = r["score"] if r["valid"] else None
        line["invalid"] += int(not r["skipped"] and not r["valid"])
        line["skipped"] += int(bool(r["skipped"]))
    for line in items.values():
        lines.append({"id": line["id"], "subset": line["subset"],
                      "chosen_scores": [line["chosen"][k] for k in sorted(line["chosen"])],
                      "rejected_scores": [line["rejected"][k] for k in sorted(line["rejected"])],
                      "invalid": line["invalid"], "skipped": line["skipped"], "model": model})
    return lines


def write_output(path: str | Path, run: JudgeRun) -> None:
    """Write the run's output lines to ``path`` as JSONL, atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for line in run.output_entries():
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
