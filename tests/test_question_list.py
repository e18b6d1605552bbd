"""The annotate page's question list at size: progress kept by SQL triggers, filters in
SQL, the list's navigation and its window, each checked against a plain Python reading
of every annotation on a dataset of several thousand questions (issue 20)."""

from __future__ import annotations

import json
import random

import pytest

import store
from needlework.datasets.transfer import import_bytes
from needlework.formats.garage import CITE_RE, DEFLECTION
from needlework.grounding import progress as gp
from needlework.grounding.answer import is_deflection
from needlework.grounding.item import time_sensitivity
from store import grounding as sg
from store.annotations import set_annotation, undo
from tests.conftest import GARAGE_RECORD, jsonl

LABELS = ["irrelevant", "ANSWER-THE-QUESTION", "RELATED-INFORMATION", "OUTDATED", "UNKNOWN"]
DIMS = {"question_complexity": ["Simple", "Set", "Comparison"],
        "question_sensitive": ["YES", "NO"], "question_type": ["SLOW-CHANGING", "FAST-CHANGING", ""],
        "question_valid": ["YES", "NO"]}
N_ITEMS = 3000
WHO = ("ana", "bo", "cy")


def _records(n: int, seed: int = 3) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        r = json.loads(json.dumps(GARAGE_RECORD))
        r["sample_id"] = f"q{i:05d}"
        k = rng.randint(1, 5)
        r["grounding"] = [{f"cite_{m}": f"passage {m}", "age": "", "date": "", "provider": "web"}
                          for m in range(1, k + 1)]
        r["evidence_correct"] = [rng.choice(["ANSWER-THE-QUESTION", "", "OUTDATED"]) for _ in range(k)]
        r["evidence_relevant"] = ["YES" if e else "NO" for e in r["evidence_correct"]]
        r["evidence_cited"] = ["NO"] * k
        r["question"] = f"{rng.choice(['Museum', 'Tide', 'Ferry', 'Über'])} question {i} {rng.random():.3f}"
        for name, values in DIMS.items():
            r[name] = rng.choice(values)
        if r["question_sensitive"] == "NO":
            r["question_type"] = ""
        r["answer_generate"] = DEFLECTION if rng.random() < 0.2 else "Yes [cite_1]."
        out.append(r)
    return out


@pytest.fixture(scope="module")
def big():
    """A dataset of several thousand questions, three annotators' random work on a fifth of
    them (labels, answers with good and bad markers, deflections, dimensions; clears and
    undos), through the same write function as the pages."""
    db = store.connect(":memory:")
    records = _records(N_ITEMS)
    import_bytes(db, jsonl(records), "big.jsonl")
    rng = random.Random(11)
    history = []
    for _ in range(2500):
        who = rng.choice(WHO)
        r = records[rng.randrange(N_ITEMS // 5)]
        key, n = r["sample_id"], len(r["grounding"])
        roll = rng.random()
        if roll < 0.55:
            field, value = f"label:{rng.randint(1, n)}", rng.choice(LABELS + [None])
        elif roll < 0.7:
            field = "answer"
            value = rng.choice([f"Yes [cite_{rng.randint(1, n)}].", f"No [cite_{n + 1}]", "  ",
                                DEFLECTION, None, f"[cite_0] and [cite_{n}]"])
        elif roll < 0.75:
            field, value = "deflected", rng.choice([True, None])
        elif roll < 0.9:
            name = rng.choice(list(DIMS))
            field, value = f"dim:{name}", rng.choice(DIMS[name] + [None])
        else:
            field, value = f"final:label:{rng.randint(1, n)}", rng.choice(LABELS)
        hid = set_annotation(db, "big", key, who, field, value)
        if hid is not None:
            history.append(hid)
        if history and rng.random() < 0.05:
            undo(db, rng.choice(history), "rev")
    # every passage of some items, so that "done" is common
    for r in records[:60]:
        for m in range(1, len(r["grounding"]) + 1):
            set_annotation(db, "big", r["sample_id"], "ana", f"label:{m}", "UNKNOWN")
        set_annotation(db, "big", r["sample_id"], "ana", "answer", "All [cite_1].")
    return db, records


def _own(db, who: str) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for key, field, value in db.execute(
            "select item_key, field, value from annotations where dataset = 'big' and annotator = ?",
            [who]):
        out.setdefault(key, {})[field] = json.loads(value)
    return out


def _state(fields: dict[str, object], n: int) -> str:
    """The rule of needlework.grounding.progress, read from every field of one annotator."""
    mine = {f: v for f, v in fields.items() if not f.startswith("final:")}
    labels = sum(1 for f in mine if f.startswith("label:"))
    answer = mine.get("answer")
    bad = isinstance(answer, str) and any(not 1 <= int(m) <= n for m in CITE_RE.findall(answer))
    if labels >= n and isinstance(answer, str) and answer.strip() and not bad:
        return gp.DONE
    return gp.IN_PROGRESS if mine else gp.UNLABELED


def _disputed(db) -> set[str]:
    votes: dict[tuple[str, str], set[str]] = {}
    for key, field, value in db.execute("select item_key, field, value from annotations "
                                        "where dataset = 'big'"):
        if field.startswith(("label:", "dim:")):
            votes.setdefault((key, field), set()).add(value)
    return {key for (key, _), values in votes.items() if len(values) > 1}


def _expected(db, records, who: str, flt: gp.ItemFilter) -> list[str]:
    """The keys ``flt`` keeps, computed in Python from the records and every annotation."""
    own, disputed = _own(db, who), _disputed(db)
    text = flt.text.strip().casefold()
    number = text.removeprefix("#").strip()
    out = []
    for position, r in enumerate(records):
        key, n = r["sample_id"], len(r["grounding"])
        mine = own.get(key, {})
        if text and text not in r["question"].casefold() and text not in key.casefold() and not (
                number.isdigit() and int(number) - 1 == position):
            continue
        states = {_state(mine, n)} | ({gp.DISAGREE} if key in disputed else set())
        if flt.states and not states & flt.states:
            continue

        def dim(name: str, mine=mine, r=r) -> str:
            if name == gp.TIME:
                return time_sensitivity(dim("question_sensitive"), dim("question_type")) or ""
            value = mine.get(f"dim:{name}", r.get(name))
            return value if isinstance(value, str) else ""

        if any(values and dim(name) not in values for name, values in flt.dims.items()):
            continue
        answer = mine.get("answer")
        answered = isinstance(answer, str) and bool(answer.strip())
        deflected = mine.get("deflected") is True or (not answered and is_deflection(r["answer_generate"]))
        labels = {int(f[6:]): v for f, v in mine.items() if f.startswith("label:")}
        needs = not any(labels.get(m, r["evidence_correct"][m - 1]) == "ANSWER-THE-QUESTION"
                        for m in range(1, n + 1))
        if not {"any": True, "deflected": deflected, "answered (not deflected)": answered and not deflected,
                "no answer yet": not answered,
                "needs deflection (no ANSWER passage)": needs}[flt.deflection]:
            continue
        out.append(key)
    return out


@pytest.mark.slow
def test_progress_kept_by_triggers_matches_every_annotation(big):
    db, records = big
    n_of = {r["sample_id"]: len(r["grounding"]) for r in records}
    finished = {}
    for who in WHO + ("rev",):
        own = _own(db, who)
        states = {key: _state(fields, n_of[key]) for key, fields in own.items()}
        done = sum(s == gp.DONE for s in states.values())
        started = sum(s != gp.UNLABELED for s in states.values())
        assert sg.progress_total(db, "big", who) == (started, done)
        assert gp.progress(db, "big", who) == (done, started, N_ITEMS)
        rows = {r["key"]: gp.item_state(r["fields"], bool(r["done"]))
                for r in sg.list_rows(db, "big", who, start=0, stop=N_ITEMS)}
        assert rows == {key: states.get(key, gp.UNLABELED) for key in n_of}
        finished[who] = done
    assert finished["ana"] > 50 and finished["bo"] > 0  # the fixture's full items count


FILTERS = [
    gp.ItemFilter(),
    gp.ItemFilter(text="tide"),
    gp.ItemFilter(text="ÜBER"),
    gp.ItemFilter(text="#42"),
    gp.ItemFilter(text="q0004"),
    gp.ItemFilter(states={gp.DONE}),
    gp.ItemFilter(states={gp.IN_PROGRESS, gp.DISAGREE}),
    gp.ItemFilter(states={gp.UNLABELED}),
    gp.ItemFilter(dims={"question_complexity": {"Set"}}),
    gp.ItemFilter(dims={gp.TIME: {"fast-changing", "static"}}),
    gp.ItemFilter(dims={"question_valid": {""}}),
    gp.ItemFilter(deflection="deflected"),
    gp.ItemFilter(deflection="answered (not deflected)"),
    gp.ItemFilter(deflection="no answer yet"),
    gp.ItemFilter(deflection="needs deflection (no ANSWER passage)"),
    gp.ItemFilter(states={gp.IN_PROGRESS}, dims={"question_complexity": {"Simple"}}, text="museum"),
]


@pytest.mark.parametrize("flt", FILTERS, ids=lambda f: repr(f.signature()))
@pytest.mark.parametrize("who", ["ana", "cy"])
@pytest.mark.slow
def test_filters_in_sql_keep_what_a_reading_of_every_record_keeps(big, flt, who):
    db, records = big
    made = gp.make_list(db, "big", who, flt, sg.last_change(db, "big"))
    keys = made.keys if made.keys is not None else [r["sample_id"] for r in records]
    assert keys == _expected(db, records, who, flt)
    assert made.shown() == len(keys)


@pytest.mark.slow
def test_navigation_window_and_next_unfinished(big):
    db, records = big
    order = [r["sample_id"] for r in records]
    for flt in (gp.ItemFilter(), gp.ItemFilter(states={gp.IN_PROGRESS, gp.DONE})):
        items = gp.make_list(db, "big", "ana", flt, 0)
        keys = items.keys if items.keys is not None else order
        done = {r["key"] for r in sg.list_rows(db, "big", "ana", start=0, stop=N_ITEMS) if r["done"]}
        for key in (keys[0], keys[len(keys) // 2], keys[-1], "q02999", "q00001"):
            position = order.index(key)
            inside = key in keys
            k = keys.index(key) if inside else None
            after = [x for x in keys if order.index(x) > position]
            before = [x for x in keys if order.index(x) < position]
            assert items.step(db, key, position, 1) == (keys[k + 1] if inside and k + 1 < len(keys)
                                                        else None if inside else (after or [None])[0])
            assert items.step(db, key, position, -1) == (keys[k - 1] if inside and k > 0 else None
                                                         if inside else (before or [None])[-1])
            window = [r["key"] for r in items.window(db, key, position, 50)]
            assert len(window) == min(50, len(keys))
            if inside:
                assert key in window
            assert window == [x for x in keys if x in set(window)]  # list order, no gap
            assert window == keys[keys.index(window[0]):keys.index(window[0]) + len(window)]
            ring = after + before if not inside else keys[k + 1:] + keys[:k]
            expect = next((x for x in ring if x not in done and x != key), None)
            assert items.next_unfinished(db, key, position) == expect


def test_a_filtered_list_brought_up_to_date_equals_one_made_again(big):
    db, records = big
    flt = gp.ItemFilter(states={gp.UNLABELED, gp.DONE})
    items = gp.make_list(db, "big", "bo", flt, sg.last_change(db, "big"))
    rng = random.Random(5)
    for step in range(40):
        r = rng.choice(records[:300])
        for m in range(1, len(r["grounding"]) + 1):
            set_annotation(db, "big", r["sample_id"], "bo", f"label:{m}", rng.choice(LABELS))
        set_annotation(db, "big", r["sample_id"], "bo", "answer",
                       rng.choice(["ok [cite_1]", None, "[cite_99]"]))
        if step % 7 == 0:
            set_annotation(db, "big", r["sample_id"], "bo", "label:1", None)
        head = sg.last_change(db, "big")
        assert items.refresh(db, flt, sg.changed_items(db, "big", items.as_of), head)
        fresh = gp.make_list(db, "big", "bo", flt, head)
        assert (items.keys, items.positions) == (fresh.keys, fresh.positions)


def test_facts_and_progress_go_with_a_deleted_or_replaced_dataset(big):
    db = store.connect(":memory:")
    import_bytes(db, jsonl(_records(20)), "small.jsonl")
    set_annotation(db, "small", "q00001", "ana", "label:1", "UNKNOWN")
    assert sg.item_count(db, "small") == 20 and sg.progress_total(db, "small", "ana") == (1, 0)
    import_bytes(db, jsonl(_records(7, seed=9)), "small.jsonl", replace=True, drop_annotations=True)
    assert sg.item_count(db, "small") == 7 and sg.progress_total(db, "small", "ana") == (0, 0)
    assert db.execute("select count(*) from item_progress").fetchone()[0] == 0
    store.datasets.delete_dataset(db, "small")
    for table in ("grounding_items", "item_progress", "progress_totals"):
        assert db.execute(f"select count(*) from {table}").fetchone()[0] == 0


def test_the_migration_backfills_facts_and_progress_of_existing_data(tmp_path):
    """A database written before the facts existed gets them, and the same progress."""
    path = tmp_path / "old.db"
    db = store.connect(path)
    import_bytes(db, jsonl(_records(30)), "old.jsonl")
    for m in range(1, 6):
        set_annotation(db, "old", "q00002", "ana", f"label:{m}", "UNKNOWN")
    set_annotation(db, "old", "q00002", "ana", "answer", "[cite_1]")
    before = db.execute("select * from grounding_items order by position").fetchall()
    progress = db.execute("select * from item_progress").fetchall()
    for statement in ("drop trigger annotations_progress_insert",
                      "drop trigger annotations_progress_delete",
                      "drop trigger annotations_progress_update",
                      "drop table grounding_items", "drop table preference_items",
                      "drop table item_progress", "drop table progress_totals",
                      "delete from _sqlite_migrations where name = 'm008_item_facts_and_progress'"):
        db.execute(statement)
    db.conn.commit()
    db.conn.close()
    db = store.connect(path)
    assert db.execute("select * from grounding_items order by position").fetchall() == before
    assert db.execute("select * from item_progress").fetchall() == progress
    assert sg.progress_total(db, "old", "ana") == (1, int(progress[0][-1]))
