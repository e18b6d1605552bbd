"""Migrations m008 onwards: facts kept by SQL as rows are written (item facts and
progress, dataset counts, agreement sums, response lengths), so that a page or a key
press costs the same whatever a dataset's size. m008 to m015 live in
:mod:`store.migrations_facts_early`; ``STEPS`` below lists every one, in order.

Plain functions, registered in order by :mod:`store.migrations`. Never edit one that has
shipped: add a new one at the end of this file and of ``STEPS``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlite_utils import Database

from store.migrations_facts_early import (
    _UNIT_FIELD,
    _agreement_triggers,
    counted,
    m008_item_facts_and_progress,
    m009_dataset_counts_and_archive,
    m010_agreement_kept_by_sql,
    m011_response_lengths,
    m012_needle_reports,
    m013_sign_in_failures,
    m014_dataset_settings,
    m015_audit_events,
)


def _items_filter(dataset: str | None, keys: Sequence[str] | None,
                  alias: str = "") -> tuple[str, list[Any]]:
    """`` and dataset = ? and item_key in (...)`` for one dataset (or all) and some of its
    items (or all), with its parameters; ``alias``: the table's alias with its dot."""
    sql, params = "", []
    if dataset is not None:
        sql += f" and {alias}dataset = ?"
        params.append(dataset)
    if keys is not None:
        sql += f" and {alias}item_key in (select value from json_each(?))"
        params.append(json.dumps(list(keys)))
    return sql, params


def _counted_votes(dataset: str | None, keys: Sequence[str] | None) -> tuple[str, list[Any]]:
    """A CTE ``v(dataset, item_key, field, annotator, value)``: the votes that count, of
    one dataset (or all) and some of its items (or all)."""
    where, params = _items_filter(dataset, keys, "a.")
    return ("with v as (select a.dataset, a.item_key, a.field, a.annotator, a.value "
            f"from annotations a where {_UNIT_FIELD.format(f='a.field')} and "
            f"{counted('a.dataset', 'a.item_key', 'a.annotator')}{where}) ", params)


def add_agreement(db: Database, sign: int, dataset: str | None = None,
                  keys: Sequence[str] | None = None) -> None:
    """Add (``sign`` 1) or take away (-1) what the counted votes of some items give to
    ``agreement_pairs`` and ``agreement_confusion``: taken away before a change of who
    counts (an assignment) and added after it, the sums stay those of the triggers."""
    cte, params = _counted_votes(dataset, keys)
    db.execute(
        cte + "insert into agreement_pairs (dataset, scope, a, b, m, n) "
        "select va.dataset, case when va.field < 'label:' then va.field else 'label' end, "
        f"va.value, vb.value, u.m, {int(sign)} * sum(case when va.value = vb.value "
        "then va.n * (va.n - 1) else va.n * vb.n end) "
        "from (select dataset, item_key, field, value, count(*) as n from v "
        "group by dataset, item_key, field, value) va "
        "join (select dataset, item_key, field, value, count(*) as n from v "
        "group by dataset, item_key, field, value) vb on vb.dataset = va.dataset "
        "and vb.item_key = va.item_key and vb.field = va.field "
        "join (select dataset, item_key, field, count(*) as m from v "
        "group by dataset, item_key, field having count(*) >= 2) u on u.dataset = va.dataset "
        "and u.item_key = va.item_key and u.field = va.field "
        "where va.value <> vb.value or va.n > 1 group by 1, 2, 3, 4, 5 "
        "on conflict (dataset, scope, a, b, m) do update set n = n + excluded.n", params)
    db.execute(
        cte + "insert into agreement_confusion (dataset, x, y, vx, vy, n) "
        f"select a.dataset, a.annotator, b.annotator, a.value, b.value, {int(sign)} * count(*) "
        "from v a join v b on b.dataset = a.dataset "
        "and b.item_key = a.item_key and b.field = a.field and b.annotator > a.annotator "
        "where a.field >= 'label:' group by 1, 2, 3, 4, 5 "
        "on conflict (dataset, x, y, vx, vy) do update set n = n + excluded.n", params)


def recount_disputes(db: Database, dataset: str | None = None,
                     keys: Sequence[str] | None = None) -> None:
    """Rewrite ``unit_disputes`` (and through its triggers ``item_disputes``) of some items
    from the counted votes."""
    where, params = _items_filter(dataset, keys)
    db.execute(f"delete from unit_disputes where 1{where}", params)
    cte, params = _counted_votes(dataset, keys)
    db.execute(cte + "insert into unit_disputes (dataset, item_key, field) "
               "select dataset, item_key, field from v group by dataset, item_key, field "
               "having count(distinct value) > 1", params)


def m016_agreement_counts_the_assignment(db: Database) -> None:
    """Who counts in agreement is decided by the assignment (issue 26): on an item that is
    assigned, only its assignees' labels and dimensions are agreement votes (a reviewer's
    spot label is not a third annotator unless the lead assigns them the item); on an
    item nobody is assigned, everyone's are, as before. The triggers are rebuilt to count
    so, and the tables recounted from the stored annotations."""
    for name in ("agreement_insert", "agreement_delete", "agreement_update"):
        db.execute(f"drop trigger if exists {name}")
    for statement in _agreement_triggers(assigned=True):
        db.execute(statement)
    db.execute("delete from agreement_pairs")
    db.execute("delete from agreement_confusion")
    add_agreement(db, 1)
    recount_disputes(db)


def m017_deleted_history(db: Database) -> None:
    """The change history of deleted (or replaced) datasets (issue 26, point 3): moved
    here by the delete, with when it was deleted, so the audit trail of annotations
    outlives the dataset. ``about_dataset``, not ``dataset``: a later dataset of the same
    name neither inherits nor moves these rows; ``history_id`` is the row's id in
    ``history``."""
    db.execute(
        "create table deleted_history (id integer primary key, about_dataset text not null, "
        "deleted_at text not null, history_id integer not null, item_key text, "
        "annotator text, field text, old_value text, new_value text, at text, by text, "
        "action text, undoes integer)")
    db.execute("create index deleted_history_dataset on deleted_history(about_dataset, id)")


def m018_tab_positions(db: Database) -> None:
    """Where each browser tab is on the annotate and review pages (store/positions.py,
    needlework/actions/positions.py): the item, the comparison (``i``, ``j``) or the passage
    cursor, and ``seq``, which grows with every move of that tab. ``who`` is the
    signed-in user in team mode (``""`` locally). Kept in the database so that a
    restarted server still knows where each open tab is."""
    db.execute(
        "create table tab_positions (who text not null, tab text not null, page text not null, "
        "dataset text not null, item_key text not null, i integer not null default 0, "
        "j integer not null default 0, cursor integer not null default 0, "
        "seq integer not null, updated_at text not null, "
        "primary key (who, tab, page, dataset)) without rowid")


def m019_suggestions(db: Database) -> None:
    """Model suggestions (issue 30, store/suggestions.py): one proposed value per
    (dataset, item, field, source), with an optional score and what made it (``detail``:
    JSON, e.g. the judge connection's name and model, the prompt's version, the file). A
    suggestion is never an annotation: nothing here counts as anyone's work."""
    db.execute(
        "create table suggestions (dataset text not null, item_key text not null, "
        "field text not null, source text not null, value text not null, score real, "
        "detail text not null default '{}', created_by text not null default '', "
        "created_at text not null, primary key (dataset, item_key, field, source)) without rowid")
    db.execute("create index suggestions_source on suggestions(dataset, source)")


def m020_provenance(db: Database) -> None:
    """Where an annotation's value came from (issue 30, point 4): ``via`` on the annotation
    (its current value) and on each history row (the value it wrote), JSON or null. Null:
    typed with no suggestion on screen; ``{"how": "accepted", "source": ...}``: a
    suggestion accepted with the accept key; ``{"how": "changed", "source": ...,
    "suggested": ...}``: typed over a suggestion shown for that field."""
    db.execute("alter table annotations add column via text")
    db.execute("alter table history add column via text")
    if db["deleted_history"].exists():
        db.execute("alter table deleted_history add column via text")


def m021_judge_reasoning(db: Database) -> None:
    """A judge's reasoning kept apart from its answer (issue 31): ``reasoning`` on each
    cached call (a ``reasoning_content`` field or ``<think>`` blocks; null when none).
    ``raw`` stays the answer a parser reads."""
    db.execute("alter table judge_calls add column reasoning text")


def m023_view_prefs(db: Database) -> None:
    """How each person has the pages set up for themselves (store/view_prefs.py), e.g.
    whether H hides the file's labels and the model suggestions on Annotate: kept where
    the server can read it, since whether a value was saved with a suggestion on screen
    is decided when it is saved. ``who``: the signed-in name in team mode, the
    annotator's name locally; ``value``: JSON."""
    db.execute(
        "create table view_prefs (who text not null, name text not null, value text not null, "
        "updated_at text not null, primary key (who, name)) without rowid")


def m025_one_time_passwords(db: Database) -> None:
    """Accounts made from a CSV file get a one-time password (needlework/teams/accounts_csv.py):
    ``must_change_password`` is 1 until the person has chosen their own at their first
    sign-in (components/teams/first_password.py); only the argon2id hash of either is kept."""
    db.execute("alter table users add column must_change_password integer not null default 0")


def m026_audit_filters(db: Database) -> None:
    """The Audit page and ``audit --events`` filter the events by action, person and date
    (store/audit.py): an index for each, newest first (``about_dataset`` has one)."""
    db.execute("create index audit_events_action on audit_events(action, id)")
    db.execute("create index audit_events_by on audit_events(by, id)")
    db.execute("create index audit_events_at on audit_events(at)")


def m024_device_cookies(db: Database) -> None:
    """Lock-out by device cookie (OWASP "Slow Down Online Guessing Attacks with Device
    Cookies", store/users.py): ``device_cookies`` holds the SHA-256 of each browser's
    device token, bound to the account that signed in there, with that browser's own
    count of wrong passwords and pause. ``sign_in_failures`` is kept per name only (the
    SHA-256 of the name as typed) and pauses that name for browsers holding no device
    cookie of its account; the client address is no longer part of it (pauses of the old
    table are dropped: they last minutes)."""
    db.execute("drop table if exists sign_in_failures")
    db.execute(
        "create table sign_in_failures (login_key text primary key, "
        "failures integer not null default 0, locked_until text, updated_at text not null) "
        "without rowid")
    db.execute(
        "create table device_cookies (id integer primary key, token_hash text not null unique, "
        "user_id integer not null references users(id) on delete cascade, "
        "created_at text not null, last_used_at text not null, expires_at text not null, "
        "failures integer not null default 0, locked_until text)")
    db.execute("create index device_cookies_user on device_cookies(user_id)")


def m027_judge_failures(db: Database) -> None:
    """Request parameters an endpoint refused as unsupported (issue 48):
    ``judge_refusals`` holds one row per (endpoint, model, parameter) with the value
    refused (JSON) and the endpoint's sentence, so a later run leaves the parameter out
    from its first request (the provider's default) and its cache keys name what was
    sent; ``reasoning_tokens`` on each cached call: the reasoning tokens the server
    reported among its completion tokens (null when it did not), so an answer cut off
    at the length limit can say how much of it went to reasoning."""
    db.execute(
        "create table if not exists judge_refusals (endpoint text not null, model text not null, "
        "param text not null, refused text, message text, created_at text not null, "
        "primary key (endpoint, model, param)) without rowid")
    db.execute("alter table judge_calls add column reasoning_tokens integer")


def m028_rag_non_answers(db: Database) -> None:
    """What was found about a stored answer set's answers when they were made (issue 48):
    ``rag_answer_sets.marks``, JSON ``{"non_answers": [ids], "failed": {id: reason}}``
    (answers that make no claim; questions whose generation request failed), null when
    nothing was found."""
    db.execute("alter table rag_answer_sets add column marks text")


def m030_suggestion_confidence(db: Database) -> None:
    """How sure a suggestion's source is (issue 50): ``suggestions.confidence``, a
    probability in [0, 1] (the judge's own, a reward model's for its verdict, a file's
    score when it is one), null where the source gives none; ``history.grp``: the id of
    the first history row of a change made as one (an accept of every suggestion, the
    undo or redo of one), null for a change of one field, so that one undo reverts it
    whole."""
    db.execute("alter table suggestions add column confidence real")
    db.execute("alter table history add column grp integer")
    db.execute("create index if not exists history_grp on history(grp) where grp is not null")


def m031_shared_tickets_and_job_owners(db: Database) -> None:
    """What several server processes on one database share (issue 60): ``session_tickets``
    holds the one-time sign-in tickets (:mod:`needlework.teams.session_cookie`) by the
    SHA-256 of the ticket, with the session token (and the device token) sealed under a key
    only the ticket gives, never in clear, and the moment (Unix seconds) they stop being
    good; ``jobs.owner`` names the runner (process) that runs a queued or running job and
    ``jobs.heartbeat`` (Unix seconds) is when that runner last said it still does, so
    another process tells a live job from one whose process is gone."""
    db.execute(
        "create table if not exists session_tickets (ticket_hash text primary key, "
        "sealed text not null, max_age integer not null, device_max_age integer, "
        "expires_at real not null) without rowid")
    db.execute("create index if not exists session_tickets_expiry on session_tickets(expires_at)")
    db.execute("alter table jobs add column owner text")
    db.execute("alter table jobs add column heartbeat real")
    db.execute("create index if not exists jobs_live on jobs(kind, dataset) "
               "where status in ('queued', 'running')")


#: In the order they apply.
STEPS = (m008_item_facts_and_progress, m009_dataset_counts_and_archive, m010_agreement_kept_by_sql, m011_response_lengths,
         m012_needle_reports, m013_sign_in_failures, m014_dataset_settings,
         m015_audit_events, m016_agreement_counts_the_assignment, m017_deleted_history,
         m018_tab_positions, m019_suggestions, m020_provenance, m021_judge_reasoning, m023_view_prefs,
         m025_one_time_passwords, m026_audit_filters, m024_device_cookies, m027_judge_failures,
         m028_rag_non_answers, m030_suggestion_confidence, m031_shared_tickets_and_job_owners)
