"""Migrations m001–m007: datasets and items, annotations and their history, reward scores
and jobs, LLM-judge calls and runs, applied key actions, teams, RAG answer runs.

Plain functions, registered in order by :mod:`store.migrations`. Never edit one that has
shipped: add a new one (see that module)."""

from __future__ import annotations

from sqlite_utils import Database


def m001_datasets_items(db: Database) -> None:
    """Datasets and their items; ``record`` keeps the imported JSON object verbatim."""
    db["datasets"].create(
        {
            "name": str,
            "kind": str,  # grounding | preference | needle
            "format": str,  # garage | lfrb | rmbench | pairs | needle
            "source": str,  # file name it was imported from
            "created_at": str,
            "created_by": str,
            "meta": str,  # JSON object (e.g. editable category list)
        },
        pk="name",
    )
    db["items"].create(
        {
            "id": int,
            "dataset": str,
            "key": str,  # the record's own id (sample_id, id, ...) as text
            "position": int,  # order in the imported file
            "subset": str,  # subset / domain / category, for filters
            "title": str,  # question or prompt, for lists and search
            "record": str,  # the imported JSON object, verbatim
        },
        pk="id",
        foreign_keys=[("dataset", "datasets", "name")],
    )
    db["items"].create_index(["dataset", "key"], unique=True)
    db["items"].create_index(["dataset", "position"])


def m002_annotations_history(db: Database) -> None:
    """Current annotation values plus an append-only history of every change."""
    db["annotations"].create(
        {
            "id": int,
            "dataset": str,
            "item_key": str,
            "annotator": str,
            "field": str,  # e.g. label:cite_3, dim:question_type, answer, verdict:0:1
            "value": str,  # JSON
            "updated_at": str,
        },
        pk="id",
    )
    db["annotations"].create_index(
        ["dataset", "item_key", "annotator", "field"], unique=True
    )
    db["annotations"].create_index(["dataset", "annotator"])
    db["history"].create(
        {
            "id": int,
            "dataset": str,
            "item_key": str,
            "annotator": str,
            "field": str,
            "old_value": str,  # JSON or NULL (was unset)
            "new_value": str,  # JSON or NULL (cleared)
            "at": str,
            "by": str,  # who made the change (the annotator, or a reviewer undoing it)
            "action": str,  # set | undo
            "undoes": int,  # history id this entry reverted, for action=undo
        },
        pk="id",
    )
    db["history"].create_index(["dataset", "item_key"])


def m003_reward_scores_jobs(db: Database) -> None:
    """Reward-model score cache, per-item scores of a run, and background jobs."""
    db["score_cache"].create(
        {
            "fingerprint": str,  # model fingerprint (config + weights hashes)
            "template_id": str,  # chat:<hash> or fallback:...
            "variant": str,  # dtype and input view, e.g. fp32|full, bf16|keep-end:4096
            "text_hash": str,  # sha256 of the rendered text
            "score": float,
            "n_tokens": int,  # tokens scored
            "created_at": str,
        },
        pk=("fingerprint", "template_id", "variant", "text_hash"),
    )
    db["item_scores"].create(
        {
            "dataset": str,
            "item_key": str,
            "fingerprint": str,
            "variant": str,
            "model": str,  # name or path as given
            "subset": str,
            "chosen_scores": str,  # JSON list, null where skipped
            "rejected_scores": str,  # JSON list
            "updated_at": str,
        },
        pk=("dataset", "item_key", "fingerprint", "variant"),
    )
    db["item_scores"].create_index(["dataset", "fingerprint"])
    db["jobs"].create(
        {
            "id": int,
            "kind": str,  # score
            "dataset": str,
            "model": str,
            "status": str,  # queued | running | done | cancelled | failed
            "done": int,
            "total": int,
            "error": str,
            "options": str,  # JSON
            "result": str,  # JSON summary when finished
            "started_at": str,
            "updated_at": str,
            "cancel_requested": int,
        },
        pk="id",
        defaults={"done": 0, "total": 0, "cancel_requested": 0, "status": "queued"},
    )
    db["jobs"].create_index(["status"])


def m004_grounding_history_by_dataset(db: Database) -> None:
    """History by (dataset, id): the annotate page asks "what changed since id N"
    on every rerun (store.grounding.last_change / changed_items)."""
    db["history"].create_index(["dataset", "id"], if_not_exists=True)


def m005_judge_calls_runs(db: Database) -> None:
    """LLM-judge call cache, judge runs and their per-trial results (store.judges).

    ``judge_calls`` is keyed by a hash of (endpoint, model, generation parameters,
    prompt hash): a re-run with the same key makes no request. API keys are never
    part of any row.
    """
    db["judge_calls"].create(
        {
            "key": str,  # sha256 of endpoint, model, params and prompt hash
            "endpoint": str,  # base URL, without credentials or query
            "model": str,
            "params": str,  # JSON: temperature, max_tokens, ...
            "prompt_hash": str,  # sha256 of the messages JSON
            "raw": str,  # the judge's answer, verbatim
            "parsed": str,  # JSON: the parser's result when the call was made
            "valid": int,
            "prompt_tokens": int,
            "completion_tokens": int,
            "latency_s": float,
            "attempts": int,
            "finish_reason": str,
            "created_at": str,
        },
        pk="key",
    )
    db["judge_runs"].create(
        {
            "id": int,
            "run_key": str,  # sha256 of everything that changes the run's answers
            "dataset": str,
            "endpoint": str,
            "model": str,
            "mode": str,  # selection | scoring
            "options": str,  # JSON: seed, rotations, context policy, params, prompt version
            "status": str,  # running | done | cancelled | failed
            "done": int,
            "total": int,
            "summary": str,  # JSON when finished
            "created_at": str,
            "updated_at": str,
        },
        pk="id",
        defaults={"done": 0, "total": 0},
    )
    db["judge_runs"].create_index(["run_key"], unique=True)
    db["judge_runs"].create_index(["dataset"])
    db["judge_results"].create(
        {
            "run_key": str,
            "item_key": str,
            "trial": int,  # 0.. within the item (rotation, order or response)
            "subset": str,
            "call_key": str,  # judge_calls.key, NULL when skipped
            "entry": str,  # JSON: the trial's result
        },
        pk=("run_key", "item_key", "trial"),
    )


def m005_applied_actions(db: Database) -> None:
    """Key actions the browser sent, by their client-made id: written in the same
    transaction as the change they made, so an action resent after a reconnect, a
    restart or a reload is applied at most once (store.actions)."""
    db["applied_actions"].create(
        {
            "id": str,  # the client-made action id
            "dataset": str,
            "item_key": str,
            "annotator": str,
            "kind": str,  # set | deflect | verdict | reasons ...
            "outcome": str,  # applied | unchanged | rejected: <why>
            "history_id": int,  # the history row written, when one was
            "applied_at": str,
        },
        pk="id",
    )


def m006_teams(db: Database) -> None:
    """Annotation teams (needlework.teams): accounts, sign-in sessions, assignments with
    overlap, gold items, per-dataset guidelines.

    Passwords are stored as argon2id hashes only; a session is stored as the SHA-256 of
    its random token, never the token. Assignments and gold marks reference their item
    and go with it (``on delete cascade``): deleting or replacing a dataset's items
    drops them. Guidelines and the assignment plan are kept by dataset name (a replaced
    dataset keeps them).
    """
    # one statement at a time: executescript() would commit the migration's transaction
    for statement in (
        """
        create table users (
            id integer primary key,
            name text not null,
            name_key text not null unique,      -- casefolded name: names are unique up to case
            email text,
            email_key text unique,              -- casefolded e-mail (OIDC accounts match on it)
            role text not null check (role in ('annotator', 'reviewer', 'admin')),
            password_hash text,                 -- argon2id PHC string, NULL: sign-in by OIDC only
            disabled integer not null default 0,
            failed_logins integer not null default 0,  -- wrong passwords since the last success
            locked_until text,                  -- ISO time; sign-in refused until then
            created_at text not null,
            created_by text not null default '',
            updated_at text not null,
            last_sign_in_at text
        )
        """,
        """
        create table sessions (
            token_hash text primary key,        -- sha256 hex of the token the browser keeps
            user_id integer not null references users(id) on delete cascade,
            method text not null,               -- password | oidc
            created_at text not null,
            expires_at text not null,
            last_seen_at text not null
        )
        """,
        "create index sessions_user on sessions(user_id)",
        "create index sessions_expiry on sessions(expires_at)",
        """
        create table assignments (
            dataset text not null,
            item_key text not null,
            annotator text not null,
            queue_pos real not null,            -- order in the annotator's queue
            units integer not null,             -- passages or comparisons to finish
            gold integer not null default 0,    -- 1: a gold item (never shown as such)
            source text not null,               -- plan | gold | reassigned
            assigned_at text not null,
            assigned_by text not null default '',
            primary key (dataset, item_key, annotator),
            foreign key (dataset, item_key) references items(dataset, key) on delete cascade
        )
        """,
        "create index assignments_queue on assignments(dataset, annotator, queue_pos)",
        """
        create table assignment_plans (
            dataset text primary key,
            annotators text not null,           -- JSON list of names
            overlap integer not null,           -- annotators per item
            double_share real not null,         -- share of items given two annotators
            seed integer not null,
            created_at text not null,
            created_by text not null default ''
        )
        """,
        """
        create table gold_items (
            dataset text not null,
            item_key text not null,
            answers text not null,              -- JSON {field: known value}
            marked_by text not null,
            marked_at text not null,
            primary key (dataset, item_key),
            foreign key (dataset, item_key) references items(dataset, key) on delete cascade
        )
        """,
        """
        create table guidelines (
            dataset text primary key,
            text text not null,                 -- Markdown written by an admin (trusted)
            updated_at text not null,
            updated_by text not null default ''
        )
        """,
        "create index history_by_time on history(by, at, id)",
    ):
        db.execute(statement)


def m007_rag_answers_runs(db: Database) -> None:
    """RAG answer evaluation (store.rag): model answer sets per dataset, evaluation runs
    and one result row per (run, model, question). Judge calls stay in judge_calls."""
    db["rag_answer_sets"].create(
        {
            "id": int,
            "dataset": str,
            "model": str,
            "source": str,  # file name or "demo"
            "digest": str,  # sha256 of the model name and answers
            "answers": str,  # JSON {sample_id: answer}
            "created_at": str,
            "created_by": str,
        },
        pk="id",
    )
    db["rag_answer_sets"].create_index(["dataset", "model"], unique=True)
    db["rag_runs"].create(
        {
            "id": int,
            "run_key": str,  # sha256 of dataset, answer digests, judge, options, prompt version
            "dataset": str,
            "models": str,  # JSON list of model names
            "endpoint": str,  # judge base URL ("" when no judge)
            "judge_model": str,
            "options": str,  # JSON
            "status": str,  # running | done | cancelled | failed
            "done": int,
            "total": int,
            "summary": str,  # JSON when finished
            "created_at": str,
            "updated_at": str,
        },
        pk="id",
        defaults={"done": 0, "total": 0},
    )
    db["rag_runs"].create_index(["run_key"], unique=True)
    db["rag_runs"].create_index(["dataset"])
    db["rag_results"].create(
        {
            "run_key": str,
            "model": str,
            "item_key": str,
            "entry": str,  # JSON: answer, BERGEN scores, judge verdicts, sentences
        },
        pk=("run_key", "model", "item_key"),
    )


#: In the order they apply.
STEPS = (m001_datasets_items, m002_annotations_history, m003_reward_scores_jobs, m004_grounding_history_by_dataset, m005_judge_calls_runs, m005_applied_actions, m006_teams, m007_rag_answers_runs,)
