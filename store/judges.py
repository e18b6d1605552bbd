"""LLM-judge storage: the call cache, judge runs and their per-trial results.

``judge_calls`` holds one row per answered request, keyed by a hash of
(endpoint, model, generation parameters, prompt hash) that the caller computes
(:func:`needlework.judges.cache.call_key`). A row is committed as soon as its
answer arrives, so a killed run keeps every answer it received and a re-run asks
only for the rest. Nothing here ever sees an API key.

A request that failed (refused, timed out, a server error after the retries) is never a
row of ``judge_calls``: a re-run asks again. ``judge_refusals`` remembers, per endpoint
and model, the request parameters the endpoint refused as unsupported (``temperature``
for OpenAI's reasoning models), so the next run leaves them out from its first request
and finds its cached answers under the keys of what was really sent.

``judge_runs`` records one run configuration per ``run_key`` (dataset, endpoint,
model, mode and every option that changes the answers); ``judge_results`` holds
the run's per-trial results (one selection prompt, one rotation, one scored
response) as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from sqlite_utils import Database

from store.annotations import now

_CHUNK = 500
RUN_STATUSES = ("running", "done", "cancelled", "failed")


def cached_calls(db: Database, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
    """``{key: row}`` for the keys already answered (``params`` and ``parsed`` parsed)."""
    wanted = list(dict.fromkeys(keys))
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        for row in db.execute_returning_dicts(
            f"select * from judge_calls where key in ({marks})", chunk
        ):
            row["params"] = json.loads(row["params"] or "{}")
            row["parsed"] = json.loads(row["parsed"]) if row["parsed"] else None
            found[row["key"]] = row
    return found


def save_call(
    db: Database,
    key: str,
    *,
    endpoint: str,
    model: str,
    params: dict[str, Any],
    prompt_hash: str,
    raw: str,
    parsed: dict[str, Any] | None,
    valid: bool,
    prompt_tokens: int | None,
    completion_tokens: int | None,
    latency_s: float,
    attempts: int,
    finish_reason: str | None,
    reasoning: str | None = None,
    reasoning_tokens: int | None = None,
) -> None:
    """Store one answered call and commit at once (a killed run keeps it); ``raw`` is the
    answer, ``reasoning`` what the judge reasoned before it (kept apart, never parsed),
    ``reasoning_tokens`` how many of the completion tokens the server said were reasoning.
    Only answers come here: a failed request is never stored."""
    with db.atomic():
        db.table("judge_calls").upsert(
            {"key": key, "endpoint": endpoint, "model": model,
             "params": json.dumps(params, sort_keys=True), "prompt_hash": prompt_hash,
             "raw": raw, "parsed": json.dumps(parsed) if parsed is not None else None,
             "valid": int(bool(valid)), "prompt_tokens": prompt_tokens,
             "completion_tokens": completion_tokens, "latency_s": float(latency_s),
             "attempts": int(attempts), "finish_reason": finish_reason, "reasoning": reasoning,
             "reasoning_tokens": reasoning_tokens, "created_at": now()},
            pk="key",
        )


def cut_while_reasoning(db: Database, endpoint: str, model: str) -> bool:
    """Whether a cached answer of ``model`` at ``endpoint`` reported reasoning tokens and
    was cut off at the length limit (a reasoning model that needs more room to think)."""
    return db.execute("select exists(select 1 from judge_calls where endpoint = ? and model = ? "
                      "and reasoning_tokens > 0 and finish_reason = 'length')",
                      [endpoint, model]).fetchone()[0] == 1


def count_calls(db: Database, endpoint: str | None = None, model: str | None = None) -> int:
    """Cached calls, all or of one endpoint and/or model."""
    sql, params = "select count(*) from judge_calls where 1 = 1", []
    if endpoint is not None:
        sql += " and endpoint = ?"
        params.append(endpoint)
    if model is not None:
        sql += " and model = ?"
        params.append(model)
    return db.execute(sql, params).fetchone()[0]


def completion_usage(db: Database, model: str) -> list[dict[str, Any]]:
    """How long ``model``'s cached answers are, per endpoint: ``{endpoint, answers,
    completion_tokens}`` over the calls whose server reported usage (cost estimates)."""
    return db.execute_returning_dicts(
        "select endpoint, count(completion_tokens) as answers, "
        "sum(completion_tokens) as completion_tokens from judge_calls "
        "where model = ? and completion_tokens is not null group by endpoint", [model])


def clear_calls(db: Database, endpoint: str | None = None, model: str | None = None) -> int:
    """Delete cached calls (all, or of one endpoint and/or model); returns how many."""
    sql, params = "delete from judge_calls where 1 = 1", []
    if endpoint is not None:
        sql += " and endpoint = ?"
        params.append(endpoint)
    if model is not None:
        sql += " and model = ?"
        params.append(model)
    with db.atomic():
        cursor = db.execute(sql, params)
    return cursor.rowcount


def start_run(
    db: Database, run_key: str, *, dataset: str, endpoint: str, model: str, mode: str,
    options: dict[str, Any], total: int,
) -> int:
    """Create (or restart) the run of ``run_key``, status ``running``; returns its id."""
    stamp = now()
    with db.atomic():
        row = db.execute("select id from judge_runs where run_key = ?", [run_key]).fetchone()
        if row:
            db.execute(
                "update judge_runs set status = 'running', total = ?, options = ?, updated_at = ? "
                "where id = ?", [total, json.dumps(options, sort_keys=True), stamp, row[0]])
            return int(row[0])
        table = db.table("judge_runs").insert(
            {"run_key": run_key, "dataset": dataset, "endpoint": endpoint, "model": model,
             "mode": mode, "options": json.dumps(options, sort_keys=True), "status": "running",
             "done": 0, "total": total, "summary": None, "created_at": stamp, "updated_at": stamp})
        assert table.last_pk is not None  # an insert sets it
        return int(table.last_pk)


def update_run_progress(db: Database, run_key: str, done: int) -> None:
    """Record how many trials of a run have an answer (or were skipped)."""
    with db.atomic():
        db.execute("update judge_runs set done = ?, updated_at = ? where run_key = ?",
                   [done, now(), run_key])


def finish_run(db: Database, run_key: str, status: str, summary: dict[str, Any] | None = None) -> None:
    """Mark a run done, cancelled or failed, with its summary."""
    if status not in RUN_STATUSES[1:]:
        raise ValueError(f"a finished judge run is done, cancelled or failed, not {status!r}")
    with db.atomic():
        db.execute(
            "update judge_runs set status = ?, summary = ?, updated_at = ? where run_key = ?",
            [status, json.dumps(summary) if summary is not None else None, now(), run_key])


def delete_run(db: Database, run_key: str) -> None:
    """Remove a run and its results (a run that got no answer stores nothing)."""
    with db.atomic():
        db.execute("delete from judge_results where run_key = ?", [run_key])
        db.execute("delete from judge_runs where run_key = ?", [run_key])


def save_refusal(db: Database, endpoint: str, model: str, param: str, refused: Any,
                 message: str | None) -> None:
    """Record that ``endpoint`` refuses ``param`` for ``model`` (``refused``: the value it
    refused, JSON-ready; ``message``: its one-line sentence, key removed); commits."""
    with db.atomic():
        db.table("judge_refusals").upsert(
            {"endpoint": endpoint, "model": model, "param": param,
             "refused": json.dumps(refused), "message": message, "created_at": now()},
            pk=("endpoint", "model", "param"))


def refusals(db: Database, endpoint: str, model: str) -> dict[str, Any]:
    """``{param: refused value}`` the endpoint is known to refuse for ``model``."""
    return {r["param"]: json.loads(r["refused"]) for r in db.execute_returning_dicts(
        "select param, refused from judge_refusals where endpoint = ? and model = ?",
        [endpoint, model])}


def _run(row: dict[str, Any]) -> dict[str, Any]:
    row["options"] = json.loads(row["options"] or "{}")
    row["summary"] = json.loads(row["summary"]) if row.get("summary") else None
    return row


def get_run(db: Database, run_key: str) -> dict[str, Any] | None:
    """One run (options and summary parsed), or ``None``."""
    rows = db.execute_returning_dicts("select * from judge_runs where run_key = ?", [run_key])
    return _run(rows[0]) if rows else None


def list_runs(db: Database, dataset: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
    """Judge runs, newest first, optionally of one dataset."""
    sql, params = "select * from judge_runs", []
    if dataset is not None:
        sql += " where dataset = ?"
        params.append(dataset)
    rows = db.execute_returning_dicts(sql + " order by updated_at desc, id desc limit ?",
                                      [*params, limit])
    return [_run(r) for r in rows]


def save_results(db: Database, run_key: str, rows: Iterable[dict[str, Any]]) -> int:
    """Replace a run's per-trial results with ``rows`` (``item_key, trial, subset,
    call_key, entry``); commits; returns how many."""
    records = [
        {"run_key": run_key, "item_key": r["item_key"], "trial": int(r["trial"]),
         "subset": r.get("subset", ""), "call_key": r.get("call_key"),
         "entry": json.dumps(r["entry"], ensure_ascii=False)}
        for r in rows
    ]
    with db.atomic():
        db.execute("delete from judge_results where run_key = ?", [run_key])
        db.table("judge_results").insert_all(records, batch_size=500)
    return len(records)


def run_results(db: Database, run_key: str, item_key: str | None = None) -> list[dict[str, Any]]:
    """A run's per-trial results (``entry`` parsed), in item then trial order, with the
    judge's raw answer (``raw``) and its reasoning (``reasoning``) joined from the call
    cache."""
    sql = ("select r.item_key, r.trial, r.subset, r.call_key, r.entry, c.raw, c.reasoning "
           "from judge_results r left join judge_calls c on c.key = r.call_key where r.run_key = ?")
    params: list[Any] = [run_key]
    if item_key is not None:
        sql += " and r.item_key = ?"
        params.append(item_key)
    rows = db.execute_returning_dicts(sql + " order by r.rowid", params)
    for row in rows:
        row["entry"] = json.loads(row["entry"])
    return rows


JUDGE_PREFIX = "judge:"  # how a judge run is named among scoring runs (store.review)


def finished_runs(db: Database, dataset: str) -> list[dict[str, Any]]:
    """The runs of ``dataset`` that have results (done, or cancelled with a summary),
    newest first, with how many items they judged (``judged_items``)."""
    rows = db.execute_returning_dicts(
        "select r.*, (select count(distinct item_key) from judge_results x "
        "where x.run_key = r.run_key) as judged_items from judge_runs r "
        "where r.dataset = ? and r.status = 'done' order by r.updated_at desc, r.id desc",
        [dataset])
    return [_run(r) for r in rows]


def _side(label: str) -> tuple[str, int]:
    side, _, rest = label.partition("[")
    return side, int(rest.rstrip("]"))


def review_scores(db: Database, run_key: str) -> dict[str, dict[str, Any]]:
    """A judge run in the shape of ``store.review.item_scores_map``, plus ``disagree``:
    ``{item_key: {"chosen_scores", "rejected_scores", "disagree": [[i, j], ...]}}``.

    Selection: each response's score is the share of the item's answered-or-invalid
    trials that named it (skipped trials left out; ``None`` when every trial was
    skipped); ``disagree`` lists the comparisons (chosen i, rejected j) the judge got
    wrong in some trial: it named rejected j over chosen i, or its answer was invalid
    (counted wrong, as in the run's accuracy). Scoring: the judge's ratings (``None``
    where invalid or skipped); a comparison disagrees when rejected j rated at or above
    chosen i, or either rating is invalid.
    """
    rows = db.execute("select item_key, entry from judge_results where run_key = ? order by rowid",
                      [run_key]).fetchall()
    return {item_key: _item_scores(it) for item_key, it in _gathered(rows).items()}


def _gathered(rows: list[tuple[str, str]]) -> dict[str, dict[str, Any]]:
    """Each item's trials (selection: how often each response was named, the trials
    answered, the comparisons got wrong) or ratings (scoring), and the responses seen."""
    items: dict[str, dict[str, Any]] = {}
    for item_key, raw in rows:
        e = json.loads(raw)
        it = items.setdefault(item_key, {"named": {}, "trials": 0, "ratings": {}, "invalid": set(),
                                         "disagree": set(), "members": set()})
        members = [_side(m) for m in e["members"]]
        it["members"].update(members)
        if e.get("skipped") or e.get("failed"):  # no answer: neither right nor wrong
            continue
        if len(members) == 1:  # scoring: one response rated
            if e.get("valid") and e.get("score") is not None:
                it["ratings"][members[0]] = float(e["score"])
            else:
                it["invalid"].add(members[0])
            continue
        it["trials"] += 1
        picked = members[e["picked"]] if e.get("valid") and e.get("picked") is not None else None
        if picked is not None:
            it["named"][picked] = it["named"].get(picked, 0) + 1
        chosen = [m for m in members if m[0] == "chosen"]
        rejected = [m for m in members if m[0] == "rejected"]
        losers = rejected if picked is None else [picked] if picked[0] == "rejected" else []
        it["disagree"].update((c[1], r[1]) for c in chosen for r in losers)
    return items


def _item_scores(it: dict[str, Any]) -> dict[str, Any]:
    """One item's scores and disagreements from what :func:`_gathered` kept for it."""
    scores_c: list[float | None]
    scores_r: list[float | None]
    n_chosen = 1 + max((k for s, k in it["members"] if s == "chosen"), default=-1)
    n_rejected = 1 + max((k for s, k in it["members"] if s == "rejected"), default=-1)
    if it["ratings"] or it["invalid"]:
        def rating(m: tuple[str, int]) -> float | None:
            return it["ratings"].get(m)
        scores_c = [rating(("chosen", i)) for i in range(n_chosen)]
        scores_r = [rating(("rejected", j)) for j in range(n_rejected)]
        disagree = sorted(
            (i, j) for i in range(n_chosen) for j in range(n_rejected)
            if ("chosen", i) in it["invalid"] or ("rejected", j) in it["invalid"]
            or ((c := scores_c[i]) is not None and (r := scores_r[j]) is not None and r >= c))
    else:
        trials = it["trials"]

        def share(m: tuple[str, int]) -> float | None:
            return it["named"].get(m, 0) / trials if trials else None
        scores_c = [share(("chosen", i)) for i in range(n_chosen)]
        scores_r = [share(("rejected", j)) for j in range(n_rejected)]
        disagree = sorted(it["disagree"])
    return {"chosen_scores": scores_c, "rejected_scores": scores_r,
            "disagree": [list(p) for p in disagree]}
