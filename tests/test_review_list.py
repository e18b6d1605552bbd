"""The review list at any size (issue 20): store.pairs' SQL and needlework.review.queue's
PairList against the whole-list functions they replace (build_queue, step,
next_unreviewed, index_of over every comparison), on a dataset of several thousand
items of mixed shapes with one reviewer's verdicts written through the triggers."""

from __future__ import annotations

import random

import pytest

import store
from needlework.datasets.transfer import import_bytes
from needlework.review.queue import (
    Comparison,
    PairList,
    build_queue,
    index_of,
    item_comparisons,
    make_pairs,
    next_unreviewed,
    step,
)
from needlework.verdicts import make_value
from store import pairs as pairs_store
from store.annotations import set_annotation
from store.grounding import changed_items, last_change
from tests.conftest import jsonl

SHAPES = [(1, 3), (1, 1), (3, 3), (2, 2), (1, 2), (2, 3)]
WORDS = ["apple pie", "Äpfel STRASSE", "banana", "Straße", "cherry"]
N = 3000


def _records(n: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for k in range(n):
        nc, nr = rng.choice(SHAPES)
        out.append({"id": f"it{k:05d}", "subset": rng.choice(["QA", "RAG", "Chat"]),
                    "prompt": f"prompt {k}: {rng.choice(WORDS)}",
                    "chosen": [f"c{k}.{i}" for i in range(nc)],
                    "rejected": [f"r{k}.{j}" for j in range(nr)]})
    return out


RECORDS = _records(N)


def _verdicts(db, who: str, seed: int, share: float = 0.4) -> dict[tuple[str, int, int], str]:
    """Random verdicts of ``who`` on about ``share`` of the items (some fully reviewed)."""
    rng = random.Random(seed)
    mine = {}
    for r in RECORDS:
        if rng.random() > share:
            continue
        pairs = item_comparisons(len(r["chosen"]), len(r["rejected"]))
        picked = pairs if rng.random() < 0.5 else rng.sample(pairs, rng.randint(1, len(pairs)))
        for i, j in picked:
            v = rng.choice(["agree", "agree", "flip", "tie"])
            set_annotation(db, "big", r["id"], who, f"verdict:{i}:{j}", make_value(v))
            mine[(r["id"], i, j)] = v
    db.conn.commit()
    return mine


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "big.db"
    db = store.connect(path)
    import_bytes(db, jsonl(RECORDS), "big.jsonl", dataset="big")
    mine = _verdicts(db, "ana", 11)
    _verdicts(db, "bo", 12)  # someone else's verdicts never count as ana's
    yield db, mine
    db.conn.close()


def _rows(query: pairs_store.PairQuery, mine) -> list[tuple[int, str, int, int]]:
    """What the query keeps, computed in Python from the records."""
    out = []
    for k, r in enumerate(RECORDS):
        nc, nr = len(r["chosen"]), len(r["rejected"])
        if query.subsets and r["subset"] not in query.subsets:
            continue
        if query.text and query.text not in f"{r['prompt']}\x1f{r['id']}".casefold():
            continue
        pairs = item_comparisons(nc, nr, query.scope)
        got = [mine.get((r["id"], i, j)) for i, j in pairs]
        done = sum(v is not None for v in got)
        if query.state == "unreviewed" and done >= len(pairs):
            continue
        if query.state == "reviewed" and done < len(pairs):
            continue
        if query.state == "flipped" and "flip" not in got:
            continue
        out.append((k, r["id"], nc, nr))
    return out


QUERIES = [
    pairs_store.PairQuery("ana"),
    pairs_store.PairQuery("ana", scope="same-style"),
    pairs_store.PairQuery("ana", state="unreviewed"),
    pairs_store.PairQuery("ana", scope="same-style", state="reviewed"),
    pairs_store.PairQuery("ana", state="flipped", subsets=frozenset({"QA", "Chat"})),
    pairs_store.PairQuery("ana", text="Straße".casefold()),  # matches STRASSE and Straße
    pairs_store.PairQuery("ana", text="it0042"),  # ids: it00420..it00429 and it0042
]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: f"{q.scope}-{q.state}-{q.text}")
@pytest.mark.slow
def test_matching_keeps_what_the_filters_say(big, query):
    db, mine = big
    assert pairs_store.matching(db, "big", query) == _rows(query, mine)
    some = [r["id"] for r in RECORDS[::7]]
    assert pairs_store.matching(db, "big", query, some) == [r for r in _rows(query, mine) if r[1] in set(some)]


@pytest.mark.slow
def test_search_casefolds_beyond_ascii_both_spellings(big):
    db, _ = big
    found = {RECORDS[p]["prompt"].split(": ")[1] for p, *_ in
             pairs_store.matching(db, "big", pairs_store.PairQuery("ana", text="Straße".casefold()))}
    assert found == {"Äpfel STRASSE", "Straße"}


def _reference(rows, scope) -> list[Comparison]:
    return [Comparison(p, k, i, j) for p, k, nc, nr in rows for i, j in item_comparisons(nc, nr, scope)]


def _shape(db, c: Comparison) -> tuple[int, int]:
    row = pairs_store.item(db, "big", c.item)
    return row[2], row[3]


CASES = [(q, True) for q in QUERIES] + [(q, False) for q in QUERIES[:2]]  # inactive: no filter


@pytest.mark.parametrize(("query", "active"), CASES,
                         ids=lambda v: f"{v.scope}-{v.state}-{v.text}" if not isinstance(v, bool) else str(v))
@pytest.mark.slow
def test_the_list_moves_as_the_whole_queue_did(big, query, active):
    """Every place, step, next unreviewed and count of a PairList (SQL, unfiltered or
    filtered) equals the old functions over the whole queue."""
    db, mine = big
    rows = _rows(query, mine)
    queue = build_queue(rows, query.scope)
    assert queue == _reference(rows, query.scope)
    items = make_pairs(db, "big", "ana", query, last_change(db, "big"), active=active)
    assert items.filtered == active
    assert items.total() == len(queue)
    assert items.unreviewed(db) == sum(c.ident not in mine for c in queue)
    expected_first = next_unreviewed(queue, None, mine)
    assert items.next_unreviewed(db, None) == expected_first
    assert items.first(db) == (queue[0] if queue else None)
    rng = random.Random(3)
    for c in rng.sample(queue, min(300, len(queue))) + queue[:3] + queue[-3:]:
        nc, nr = _shape(db, c)
        k = index_of(queue, c)
        assert items.index_of(c, nc, nr) == k
        assert items.step(db, c, 1, nc, nr) == (queue[k + 1] if k + 1 < len(queue) else None)
        assert items.step(db, c, -1, nc, nr) == (queue[k - 1] if k > 0 else None)
        assert items.next_unreviewed(db, c, nc, nr) == next_unreviewed(queue, c, mine)
        # J or K pressed again and again before the page draws: the same comparisons
        assert items.walk(db, c, 1, nc, nr, 12) == queue[k + 1:k + 13]
        assert items.walk(db, c, -1, nc, nr, 12) == queue[max(0, k - 12):k][::-1]
    # a comparison of an item the filters leave out: its neighbours in the list
    outside = [Comparison(p, r["id"], 0, 0) for p, r in enumerate(RECORDS)
               if not items.contains(r["id"])]
    for c in outside[:100]:
        nc, nr = _shape(db, c)
        assert items.index_of(c, nc, nr) is None
        after, before = step(queue, c, 1), step(queue, c, -1)
        assert items.step(db, c, 1, nc, nr) == (after if after > c else None)
        assert items.step(db, c, -1, nc, nr) == (before if before < c else None)
        assert items.next_unreviewed(db, c, nc, nr) == next_unreviewed(queue, c, mine)


@pytest.mark.slow
def test_a_list_sorted_by_margin_moves_in_its_own_order(big):
    db, mine = big
    query = pairs_store.PairQuery("ana")
    rng = random.Random(5)
    rows = _rows(query, mine)
    picked = rng.sample(rows, 200)  # the keep function reorders and filters

    items = make_pairs(db, "big", "ana", query, 0, active=True, keep=lambda _: list(picked),
                       ordered=True)
    queue = _reference(picked, "all")  # not sorted by position
    assert items.total() == len(queue)
    for k, c in enumerate(queue):
        nc, nr = _shape(db, c)
        assert items.index_of(c, nc, nr) == k
        assert items.step(db, c, 1, nc, nr) == (queue[k + 1] if k + 1 < len(queue) else None)
        assert items.step(db, c, -1, nc, nr) == (queue[k - 1] if k > 0 else None)
        later = [d for d in queue[k + 1:] + queue[:k + 1] if d.ident not in mine]
        assert items.next_unreviewed(db, c, nc, nr) == (later[0] if later else None)
        assert items.walk(db, c, 1, nc, nr, 5) == queue[k + 1:k + 6]
        assert items.walk(db, c, -1, nc, nr, 5) == queue[max(0, k - 5):k][::-1]
    assert items.unreviewed(db) == sum(c.ident not in mine for c in queue)


def test_a_filtered_list_follows_new_verdicts_from_the_items_that_changed(tmp_path):
    db = store.connect(tmp_path / "r.db")
    import_bytes(db, jsonl(RECORDS[:400]), "big.jsonl", dataset="big")
    query = pairs_store.PairQuery("ana", state="unreviewed")
    items = make_pairs(db, "big", "ana", query, last_change(db, "big"), active=True)
    assert items.total() == sum(len(r["chosen"]) * len(r["rejected"]) for r in RECORDS[:400])
    # ana judges every comparison of item 5 and one of item 9; bo judges item 7
    r5, r9 = RECORDS[5], RECORDS[9]
    for i, j in item_comparisons(len(r5["chosen"]), len(r5["rejected"])):
        set_annotation(db, "big", r5["id"], "ana", f"verdict:{i}:{j}", make_value("agree"))
    set_annotation(db, "big", r9["id"], "ana", "verdict:0:0", make_value("flip"))
    set_annotation(db, "big", RECORDS[7]["id"], "bo", "verdict:0:0", make_value("flip"))
    head = last_change(db, "big")
    assert items.refresh(db, query, changed_items(db, "big", items.as_of), head)
    fresh = make_pairs(db, "big", "ana", query, head, active=True)
    assert items.rows == fresh.rows and items.prefix == fresh.prefix
    assert items.reviewed == fresh.reviewed == {r9["id"]: 1}
    assert items.unreviewed(db) == fresh.unreviewed(db)
    assert not items.contains(r5["id"]) and items.contains(r9["id"])
    # undoing brings the item back, in its place
    for i, j in item_comparisons(len(r5["chosen"]), len(r5["rejected"])):
        db.execute("delete from annotations where dataset = 'big' and item_key = ? and field = ?",
                   [r5["id"], f"verdict:{i}:{j}"])
    set_annotation(db, "big", r5["id"], "bo", "verdict:0:0", make_value("tie"))  # a history row
    assert items.refresh(db, query, [r5["id"]], last_change(db, "big"))
    assert items.rows == make_pairs(db, "big", "ana", query, 0, active=True).rows


def test_refresh_asks_for_a_new_list_when_too_much_changed(tmp_path):
    db = store.connect(tmp_path / "r.db")
    import_bytes(db, jsonl(RECORDS[:50]), "big.jsonl", dataset="big")
    items = make_pairs(db, "big", "ana", pairs_store.PairQuery("ana", state="unreviewed"), 0,
                       active=True)
    assert not items.refresh(db, pairs_store.PairQuery("ana", state="unreviewed"),
                             [f"k{n}" for n in range(1000)], 5)


@pytest.mark.slow
def test_counts_read_the_reviewers_own_progress(big):
    db, mine = big
    for scope in ("all", "same-style"):
        queue = build_queue(_rows(pairs_store.PairQuery("ana", scope=scope), mine), scope)
        judged = sum(c.ident in mine for c in queue)
        assert pairs_store.reviewed_total(db, "big", "ana", scope) == judged
        keys = [r["id"] for r in RECORDS[:500]]
        assert pairs_store.reviewed_total(db, "big", "ana", scope, keys) == sum(
            c.ident in mine for c in queue if c.item in set(keys))
        by_item = pairs_store.reviewed_by_item(db, "big", "ana", scope, keys)
        assert sum(by_item.values()) == pairs_store.reviewed_total(db, "big", "ana", scope, keys)
        assert pairs_store.comparisons_by_position(db, "big", scope) == [
            len(item_comparisons(len(r["chosen"]), len(r["rejected"]), scope)) for r in RECORDS]
    r = next(r for r in RECORDS if (r["id"], 0, 0) in mine)
    assert pairs_store.my_verdicts_on(db, "big", r["id"], "ana")[(0, 0)] == mine[(r["id"], 0, 0)]
    assert pairs_store.square(db, "big")
    assert pairs_store.subsets(db, "big") == (["Chat", "QA", "RAG"], ["Chat", "QA", "RAG"])


def test_item_near_and_the_empty_list(tmp_path):
    db = store.connect(tmp_path / "r.db")
    import_bytes(db, jsonl(RECORDS[:3]), "s.jsonl", dataset="s")
    assert pairs_store.item_near(db, "s", -1, 1)[1] == "it00000"
    assert pairs_store.item_near(db, "s", 2, 1) is None
    assert pairs_store.item_near(db, "s", 2, -1)[1] == "it00001"
    empty = PairList("s", "ana", rows=[])
    assert empty.total() == 0 and empty.first(db) is None and empty.next_unreviewed(db, None) is None


def test_the_whole_list_keeps_its_count_of_what_is_left_from_the_items_that_changed(tmp_path):
    db = store.connect(tmp_path / "r.db")
    import_bytes(db, jsonl(RECORDS[:300]), "big.jsonl", dataset="big")
    query = pairs_store.PairQuery("ana")
    set_annotation(db, "big", RECORDS[1]["id"], "ana", "verdict:0:0", make_value("tie"))
    items = make_pairs(db, "big", "ana", query, last_change(db, "big"))
    total = items.total()
    assert items.unreviewed(db) == total - 1
    r4 = RECORDS[4]
    for i, j in item_comparisons(len(r4["chosen"]), len(r4["rejected"])):
        set_annotation(db, "big", r4["id"], "ana", f"verdict:{i}:{j}", make_value("agree"))
    db.execute("delete from annotations where dataset = 'big' and item_key = ?", [RECORDS[1]["id"]])
    set_annotation(db, "big", RECORDS[1]["id"], "bo", "verdict:0:0", make_value("flip"))
    assert items.refresh(db, query, changed_items(db, "big", items.as_of), last_change(db, "big"))
    left = total - len(item_comparisons(len(r4["chosen"]), len(r4["rejected"])))
    assert items.unreviewed(db) == left
    assert make_pairs(db, "big", "ana", query, 0).unreviewed(db) == left
