"""Migrations m008 to m015, moved here verbatim from :mod:`store.migrations_facts` (which
lists them in its ``STEPS``, in order): facts kept by SQL as rows are written (item facts
and progress, dataset counts, agreement sums, response lengths), so that a page or a key
press costs the same whatever a dataset's size, and the agreement triggers' SQL
(:func:`counted`: who counts on an item).

Shipped: never edit one. A new migration goes at the end of :mod:`store.migrations_facts`."""

from __future__ import annotations

from sqlite_utils import Database

from store.facts import backfill_item_facts


def _progress_deltas(row: str) -> dict[str, str]:
    """What one annotation row ``row`` (``new``, ``old`` or a table alias) adds to its
    item_progress row, column by column (each 0 or 1)."""
    f, v = f"{row}.field", f"{row}.value"
    label = f"({f} >= 'label:' and {f} < 'label;')"
    verdict = f"({f} >= 'verdict:' and {f} < 'verdict;')"
    same = (f"(substr({f}, 9, instr(substr({f}, 9), ':') - 1) "
            f"= substr({f}, 9 + instr(substr({f}, 9), ':')))")
    flip = f"(json_type({v}) = 'object' and json_extract({v}, '$.verdict') = 'flip')"
    text = f"json_extract({v}, '$')"
    # a [cite_N] marker whose N is no passage of the item (N < 1 or N > its passages):
    # the answer is split on '[cite_' (inside its JSON quoting) and each piece after the
    # first is a marker when it starts with digits and a ']'
    piece = "substr(e.value, 1, instr(e.value, ']') - 1)"
    bad_cite = (
        "exists (select 1 from json_each('[' || replace(json_quote(" + text + "), '[cite_', "
        "'\",\"') || ']') e where e.key > 0 and instr(e.value, ']') > 1 "
        f"and {piece} not glob '*[^0-9]*' and cast({piece} as integer) not between 1 and "
        f"coalesce((select g.n_passages from grounding_items g where g.dataset = {row}.dataset "
        f"and g.key = {row}.item_key), 0))"
    )
    deltas = {
        "labels": label,
        "answer_labels": f"({label} and {v} = '\"ANSWER-THE-QUESTION\"')",
        "dims": f"({f} >= 'dim:' and {f} < 'dim;')",
        "answered": (f"(case when {f} = 'answer' and json_type({v}) = 'text' then "
                     f"trim({text}, char(32, 9, 10, 11, 12, 13)) <> '' else 0 end)"),
        "answer_error": (f"(case when {f} = 'answer' and json_type({v}) = 'text' then "
                         f"{bad_cite} else 0 end)"),
        "deflected": f"({f} = 'deflected' and {v} = 'true')",
        "verdicts": verdict,
        "same_style": f"(case when {verdict} then {same} else 0 end)",
        "flips": f"(case when {verdict} then {flip} else 0 end)",
        "same_style_flips": f"(case when {verdict} then {same} and {flip} else 0 end)",
        "fields": f"({f} < 'final:' or {f} >= 'final;')",
    }
    return {name: f"coalesce({expr}, 0)" for name, expr in deltas.items()}


#: item_progress.done for the row being updated (kind by the item's facts).
_PROGRESS_DONE = (
    "coalesce((select item_progress.labels >= g.n_passages and item_progress.answered > 0 "
    "and item_progress.answer_error = 0 from grounding_items g "
    "where g.dataset = item_progress.dataset and g.key = item_progress.item_key), "
    "(select item_progress.verdicts >= r.n_chosen * r.n_rejected from preference_items r "
    "where r.dataset = item_progress.dataset and r.key = item_progress.item_key), 0)"
)


def m008_item_facts_and_progress(db: Database) -> None:
    """Item facts and per-annotator progress kept by SQL, so that pages read what one
    screen needs instead of every record and every annotation (issue 20).

    - ``grounding_items`` / ``preference_items``: a slim row per item (store.facts),
      written with the items and backfilled here;
    - ``item_progress``: per (dataset, item, annotator), counts of what the annotator
      set (passage labels, ANSWER-THE-QUESTION labels, dimensions, an answer, whether
      the answer cites a passage that does not exist, the deflection, verdicts, verdicts
      on same-style comparisons, flips, fields other than adjudications) and ``done``
      (grounding: every passage labelled and an answer without a marker pointing to no
      passage; preference: a verdict on every comparison). Triggers on ``annotations``
      keep it up to date in the write's own transaction, whoever writes;
    - ``progress_totals``: per (dataset, annotator), items started and done, kept by
      triggers on ``item_progress``.

    Writes that delete a row to replace it (``insert or replace``) fire no delete
    trigger: annotations are written with an upsert (store.annotations).
    """
    dims = "".join(f"{c} text not null default '', " for c in (
        "question_valid", "question_false_premise", "question_seeking", "question_sensitive",
        "question_type", "question_complexity", "question_popularity", "question_category"))
    counts = list(_progress_deltas("new"))
    statements = [
        "create table grounding_items (dataset text not null, key text not null, "
        "position integer not null, title text not null default '', "
        "fold text not null default '', n_passages integer not null default 0, " + dims +
        "evidence text not null default '[]', answer_head text not null default '', "
        "primary key (dataset, key)) without rowid",
        "create index grounding_items_position on grounding_items(dataset, position)",
        "create table preference_items (dataset text not null, key text not null, "
        "position integer not null, fold text not null default '', "
        "subset text not null default '', source_subset text not null default '', "
        "n_chosen integer not null default 1, n_rejected integer not null default 1, "
        "primary key (dataset, key)) without rowid",
        "create index preference_items_position on preference_items(dataset, position)",
        "create table item_progress (dataset text not null, item_key text not null, "
        "annotator text not null, "
        + "".join(f"{c} integer not null default 0, " for c in counts) +
        "done integer not null default 0, primary key (dataset, item_key, annotator)) "
        "without rowid",
        "create index item_progress_annotator on item_progress(dataset, annotator, done)",
        "create table progress_totals (dataset text not null, annotator text not null, "
        "started integer not null default 0, done integer not null default 0, "
        "primary key (dataset, annotator)) without rowid",
    ]

    def upsert(row: str) -> str:
        deltas = _progress_deltas(row)
        return (f"insert into item_progress (dataset, item_key, annotator, {', '.join(counts)}) "
                f"values ({row}.dataset, {row}.item_key, {row}.annotator, "
                f"{', '.join(deltas.values())}) on conflict (dataset, item_key, annotator) do "
                "update set " + ", ".join(f"{c} = {c} + excluded.{c}" for c in counts) + ";")

    def subtract(row: str) -> str:
        deltas = _progress_deltas(row)
        return ("update item_progress set " + ", ".join(f"{c} = {c} - {deltas[c]}" for c in counts)
                + f" where dataset = {row}.dataset and item_key = {row}.item_key "
                f"and annotator = {row}.annotator;")

    def settle(row: str) -> str:
        return (f"update item_progress set done = {_PROGRESS_DONE} where dataset = {row}.dataset "
                f"and item_key = {row}.item_key and annotator = {row}.annotator;")

    statements += [
        "create trigger annotations_progress_insert after insert on annotations begin "
        f"{upsert('new')} {settle('new')} end",
        "create trigger annotations_progress_delete after delete on annotations begin "
        f"{subtract('old')} {settle('old')} end",
        "create trigger annotations_progress_update after update on annotations begin "
        f"{subtract('old')} {upsert('new')} {settle('old')} {settle('new')} end",
        "create trigger item_progress_totals_insert after insert on item_progress begin "
        "insert into progress_totals (dataset, annotator, started, done) values (new.dataset, "
        "new.annotator, new.fields > 0, new.done) on conflict (dataset, annotator) do update "
        "set started = started + excluded.started, done = done + excluded.done; end",
        "create trigger item_progress_totals_update after update on item_progress "
        "when old.done <> new.done or (old.fields > 0) <> (new.fields > 0) "
        "or old.dataset <> new.dataset or old.annotator <> new.annotator begin "
        "update progress_totals set started = started - (old.fields > 0), done = done - old.done "
        "where dataset = old.dataset and annotator = old.annotator; "
        "insert into progress_totals (dataset, annotator, started, done) values (new.dataset, "
        "new.annotator, new.fields > 0, new.done) on conflict (dataset, annotator) do update "
        "set started = started + excluded.started, done = done + excluded.done; end",
        "create trigger item_progress_totals_delete after delete on item_progress begin "
        "update progress_totals set started = started - (old.fields > 0), done = done - old.done "
        "where dataset = old.dataset and annotator = old.annotator; end",
    ]
    for statement in statements:
        db.execute(statement)
    backfill_item_facts(db)
    deltas = _progress_deltas("a")
    db.execute(f"insert into item_progress (dataset, item_key, annotator, {', '.join(counts)}) "
               f"select a.dataset, a.item_key, a.annotator, "
               f"{', '.join(f'sum({d})' for d in deltas.values())} from annotations a "
               "group by a.dataset, a.item_key, a.annotator")
    db.execute(f"update item_progress set done = {_PROGRESS_DONE}")


def m009_dataset_counts_and_archive(db: Database) -> None:
    """``datasets.item_count``: the items of a dataset, written when it is imported, so
    that lists of datasets (the sidebar, every rerun) count nothing; ``archived_at``: set
    when a dataset is archived (hidden from the pickers, kept whole)."""
    db.execute("alter table datasets add column item_count integer")
    db.execute("alter table datasets add column archived_at text")
    db.execute("update datasets set item_count = (select count(*) from items i "
               "where i.dataset = datasets.name)")


#: A field that is an agreement unit: a passage label (``label:N``) or a dimension.
_UNIT_FIELD = ("(({f} >= 'label:' and {f} < 'label;' and length({f}) > 6 "
               "and substr({f}, 7) not glob '*[^0-9]*') or ({f} >= 'dim:' and {f} < 'dim;'))")


def counted(dataset: str, item: str, annotator: str) -> str:
    """SQL: whether ``annotator``'s annotation of an item counts in agreement: the item's
    assignment names them, or nobody is assigned the item (local mode, a dataset or an
    item without an assignment). A reviewer's spot label on an assigned item does not
    count unless the lead assigns them the item."""
    where = f"s.dataset = {dataset} and s.item_key = {item}"
    return (f"(exists (select 1 from assignments s where {where} and s.annotator = {annotator}) "
            f"or not exists (select 1 from assignments s where {where}))")


def _unit_votes(row: str, *, minus: str = "", plus: str = "", when_plus: str = "1",
                when_minus: str = "1", assigned: bool = False) -> str:
    """``(annotator, value)`` of the unit of trigger row ``row`` (``new`` or ``old``) as
    stored now, without ``minus``'s annotator and with ``plus``'s vote (each when its
    condition holds): the unit as it was before the change. ``assigned``: only the
    votes that count (:func:`counted`)."""
    sql = (f"select annotator, value from annotations where dataset = {row}.dataset "
           f"and item_key = {row}.item_key and field = {row}.field")
    if assigned:
        sql += f" and {counted(f'{row}.dataset', f'{row}.item_key', 'annotations.annotator')}"
    if minus:
        sql += f" and not ({when_minus} and annotator = {minus}.annotator)"
    if plus:
        if assigned:
            when_plus = (f"({when_plus}) and "
                         f"{counted(f'{plus}.dataset', f'{plus}.item_key', f'{plus}.annotator')}")
        sql += f" union all select {plus}.annotator, {plus}.value where {when_plus}"
    return f"({sql})"


def _unit_sql(row: str, sign: int, votes: str, when: str = "1") -> str:
    """Statements adding (``sign`` 1) or taking away (-1) what the unit of trigger row
    ``row`` gives to the agreement tables when its votes are ``votes`` (a subquery of
    ``annotator, value``); nothing when the row's field is not a unit or ``when`` fails."""
    scope = f"(case when {row}.field < 'label:' then {row}.field else 'label' end)"
    counts = f"(select value, count(*) as n from {votes} group by value)"
    guard = f"{_UNIT_FIELD.format(f=f'{row}.field')} and {when}"
    return (
        # coincidences: value pair (a, b) of a unit with m coders adds n_a * n_b (n_a * (n_a - 1)
        # when a = b); Krippendorff's o_ab is the sum over m of that divided by m - 1
        "insert into agreement_pairs (dataset, scope, a, b, m, n) "
        f"select {row}.dataset, {scope}, va.value, vb.value, mm.m, "
        f"{sign} * (case when va.value = vb.value then va.n * (va.n - 1) else va.n * vb.n end) "
        f"from {counts} va, {counts} vb, (select count(*) as m from {votes}) mm "
        f"where {guard} and mm.m >= 2 and (va.value <> vb.value or va.n > 1) "
        "on conflict (dataset, scope, a, b, m) do update set n = n + excluded.n; "
        # Cohen's kappa: the unit's pairs of annotators (x < y) and their two labels
        "insert into agreement_confusion (dataset, x, y, vx, vy, n) "
        f"select {row}.dataset, a.annotator, b.annotator, a.value, b.value, {sign} "
        f"from {votes} a, {votes} b where {guard} and {row}.field >= 'label:' "
        "and b.annotator > a.annotator "
        "on conflict (dataset, x, y, vx, vy) do update set n = n + excluded.n;"
    )


def _change_sql(row: str, before: str, when: str = "1", assigned: bool = False) -> str:
    """The unit of ``row`` (when ``when``): take away what it gave with the votes
    ``before``, add what it gives with its votes now."""
    now = _unit_votes(row, assigned=assigned)
    return f"{_unit_sql(row, -1, before, when)} {_unit_sql(row, 1, now, when)}"


def _dispute_sql(row: str, assigned: bool = False) -> str:
    """Statements that record whether the unit of ``row`` is in dispute now."""
    unit = f"dataset = {row}.dataset and item_key = {row}.item_key and field = {row}.field"
    if assigned:
        unit += f" and {counted(f'{row}.dataset', f'{row}.item_key', 'annotations.annotator')}"
    return (f"delete from unit_disputes where dataset = {row}.dataset and item_key = "
            f"{row}.item_key and field = {row}.field; "
            f"insert into unit_disputes (dataset, item_key, field) select {row}.dataset, "
            f"{row}.item_key, {row}.field where {_UNIT_FIELD.format(f=f'{row}.field')} and "
            f"(select count(distinct value) from annotations where {unit}) > 1;")


def m010_agreement_kept_by_sql(db: Database) -> None:
    """Agreement figures kept up to date as annotations are written (issue 20): pages
    read a few rows instead of every annotation.

    A *unit* is one passage of one item (``label:N``) or one dimension of one item
    (``dim:FIELD``); ``scope`` is ``label`` or the dimension's field.

    - ``agreement_pairs(dataset, scope, a, b, m, n)``: over units with ``m`` >= 2
      coders, the sum of n_a * n_b for each pair of values (n_a * (n_a - 1) for a = b):
      Krippendorff's coincidence o_ab = sum over m of n / (m - 1); pairable units with m
      coders = (sum of n over a, b) / (m * (m - 1)). Integers, so adding and taking away
      never drifts.
    - ``agreement_confusion(dataset, x, y, vx, vy, n)``: passage-label units both
      annotators x < y labelled, by their two labels (Cohen's kappa per pair).
    - ``unit_disputes(dataset, item_key, field)``: units whose annotators gave different
      values; ``item_disputes(dataset, item_key, units)``: how many per item.

    Triggers after a change take away what the changed unit gave before it (its votes
    rebuilt from the row's old and new values) and add what it gives now.
    """
    statements = [
        "create table agreement_pairs (dataset text not null, scope text not null, "
        "a text not null, b text not null, m integer not null, n integer not null default 0, "
        "primary key (dataset, scope, a, b, m)) without rowid",
        "create table agreement_confusion (dataset text not null, x text not null, "
        "y text not null, vx text not null, vy text not null, n integer not null default 0, "
        "primary key (dataset, x, y, vx, vy)) without rowid",
        "create table unit_disputes (dataset text not null, item_key text not null, "
        "field text not null, primary key (dataset, item_key, field)) without rowid",
        "create table item_disputes (dataset text not null, item_key text not null, "
        "units integer not null default 0, primary key (dataset, item_key)) without rowid",
        "create trigger unit_disputes_insert after insert on unit_disputes begin "
        "insert into item_disputes (dataset, item_key, units) values (new.dataset, "
        "new.item_key, 1) on conflict (dataset, item_key) do update set units = units + 1; end",
        "create trigger unit_disputes_delete after delete on unit_disputes begin "
        "update item_disputes set units = units - 1 where dataset = old.dataset "
        "and item_key = old.item_key; delete from item_disputes where dataset = old.dataset "
        "and item_key = old.item_key and units <= 0; end",
    ]
    # after triggers only: an upsert fires BEFORE INSERT triggers and then its UPDATE's,
    # so the state before a change is rebuilt from the row's own old and new values
    statements += _agreement_triggers(assigned=False)
    for statement in statements:
        db.execute(statement)
    # what the annotations already stored give (one pass, the same sums)
    unit = _UNIT_FIELD.format(f="field")
    db.execute(
        "insert into agreement_pairs (dataset, scope, a, b, m, n) "
        "select va.dataset, case when va.field < 'label:' then va.field else 'label' end, "
        "va.value, vb.value, u.m, sum(case when va.value = vb.value then va.n * (va.n - 1) "
        "else va.n * vb.n end) "
        f"from (select dataset, item_key, field, value, count(*) as n from annotations where {unit} "
        "group by dataset, item_key, field, value) va "
        f"join (select dataset, item_key, field, value, count(*) as n from annotations where {unit} "
        "group by dataset, item_key, field, value) vb on vb.dataset = va.dataset "
        "and vb.item_key = va.item_key and vb.field = va.field "
        f"join (select dataset, item_key, field, count(*) as m from annotations where {unit} "
        "group by dataset, item_key, field having count(*) >= 2) u on u.dataset = va.dataset "
        "and u.item_key = va.item_key and u.field = va.field "
        "where va.value <> vb.value or va.n > 1 group by 1, 2, 3, 4, 5")
    db.execute(
        "insert into agreement_confusion (dataset, x, y, vx, vy, n) "
        "select a.dataset, a.annotator, b.annotator, a.value, b.value, count(*) "
        "from annotations a join annotations b on b.dataset = a.dataset "
        "and b.item_key = a.item_key and b.field = a.field and b.annotator > a.annotator "
        f"where {_UNIT_FIELD.format(f='a.field')} and a.field >= 'label:' group by 1, 2, 3, 4, 5")
    db.execute(
        "insert into unit_disputes (dataset, item_key, field) select dataset, item_key, field "
        f"from annotations where {unit} group by dataset, item_key, field "
        "having count(distinct value) > 1")


def m011_response_lengths(db: Database) -> None:
    """Token counts of a preference dataset's responses, counted once by a background job
    (needlework/review/counting.py, kind ``lengths``) per counting method, so the review
    page's length filter and charts never count a whole dataset on a rerun."""
    db.execute(
        "create table response_lengths (dataset text not null, item_key text not null, "
        "method text not null, chosen text not null, rejected text not null, "
        "longest integer not null, primary key (dataset, method, item_key)) without rowid")
    db.execute("create index response_lengths_longest on response_lengths(dataset, method, longest)")


def m012_needle_reports(db: Database) -> None:
    """Saved needle-lab reports (store/needle_reports.py): a named view of one needle
    dataset (its result sets and slide title, ``spec`` as JSON, needlework/needle/reports.py)
    with who saved it and when. A report outlives the scores it names: the page says
    which result set is gone."""
    db.execute(
        "create table needle_reports (id integer primary key, dataset text not null, "
        "name text not null, spec text not null, created_by text not null, "
        "created_at text not null, updated_by text not null, updated_at text not null)")
    db.execute("create unique index needle_reports_name on needle_reports(dataset, name collate nocase)")


def m013_sign_in_failures(db: Database) -> None:
    """Wrong passwords counted per sign-in name and client (store/users.py): a stranger
    who types an admin's name with wrong passwords pauses that name for their own client
    only. ``login_key`` is the SHA-256 of the name as typed (casefolded), known account
    or not, so the table never tells a real name from an unknown one, nor keeps a
    password typed into the name box."""
    db.execute(
        "create table sign_in_failures (login_key text not null, client text not null, "
        "failures integer not null default 0, locked_until text, updated_at text not null, "
        "primary key (login_key, client)) without rowid")


def m014_dataset_settings(db: Database) -> None:
    """Per-dataset settings a lead chooses (store/dataset_settings.py), e.g. whether
    annotators see the file's labels: ``value`` as JSON, with who set it and when. The
    ``dataset`` column makes it follow a rename and go with a delete."""
    db.execute(
        "create table dataset_settings (dataset text not null, name text not null, "
        "value text not null, updated_by text not null, updated_at text not null, "
        "primary key (dataset, name)) without rowid")


def m015_audit_events(db: Database) -> None:
    """The audit trail of everything that is not an annotation (store/audit.py): account
    changes, sign-ins and refusals, assignments, settings, dataset actions. The dataset it
    concerns is ``about_dataset``, not ``dataset``: a rename or a delete moves or removes
    every table with a ``dataset`` column, and the audit trail outlives both."""
    db.execute(
        "create table audit_events (id integer primary key, at text not null, by text not null, "
        "action text not null, target text not null, about_dataset text, before text, "
        "after text)")
    db.execute("create index audit_events_dataset on audit_events(about_dataset, id)")


def _agreement_triggers(assigned: bool) -> list[str]:
    """The three triggers that keep the agreement tables as annotations change
    (``assigned``: counting only the votes :func:`counted` admits)."""
    new_unit, old_unit = _UNIT_FIELD.format(f="new.field"), _UNIT_FIELD.format(f="old.field")
    same = "(new.dataset, new.item_key, new.field) is (old.dataset, old.item_key, old.field)"
    a = assigned
    return [
        f"create trigger agreement_insert after insert on annotations when {new_unit} begin "
        f"{_change_sql('new', _unit_votes('new', minus='new', assigned=a), assigned=a)} "
        f"{_dispute_sql('new', a)} end",
        f"create trigger agreement_delete after delete on annotations when {old_unit} begin "
        f"{_change_sql('old', _unit_votes('old', plus='old', assigned=a), assigned=a)} "
        f"{_dispute_sql('old', a)} end",
        f"create trigger agreement_update after update on annotations "
        f"when {old_unit} or {new_unit} begin "
        f"{_change_sql('new', _unit_votes('new', minus='new', plus='old', when_plus=same, assigned=a), assigned=a)} "  # noqa: E501
        f"{_dispute_sql('new', a)} "
        f"{_change_sql('old', _unit_votes('old', plus='old', assigned=a), when=f'not {same}', assigned=a)} "  # noqa: E501
        f"{_dispute_sql('old', a)} end",
    ]
