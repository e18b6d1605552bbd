"""Token counts of a preference dataset, counted once by the ``lengths`` background job
(needlework.review.counting) into ``response_lengths`` (migration m011), and the length
filter that reads them (store.pairs)."""

from __future__ import annotations

import pytest

import store
from needlework.datasets.transfer import import_bytes
from needlework.jobs.kinds import Cancelled, Job, Progress
from needlework.jobs.runner import RUNNER
from needlework.review.counting import counter_for, describe, lengths_job, start_lengths_job
from needlework.tokens import estimate
from store import pairs as pairs_store
from store.annotations import set_annotation
from store.datasets import delete_dataset, rename_dataset
from tests.conftest import garage_records, jsonl


def words(text: str) -> int:
    return len(text.split())


RECORDS = [{"id": f"k{n}", "subset": "QA", "prompt": f"Prompt {n}?",
            "chosen": [" ".join(["yes"] * (n + 1))],
            "rejected": [" ".join(["no"] * (2 * n + 1)), "short"]} for n in range(450)]


@pytest.fixture
def path(tmp_path):
    path = tmp_path / "len.db"
    db = store.connect(path)
    import_bytes(db, jsonl(RECORDS), "lf.jsonl", dataset="lf")
    db.conn.close()
    return path


def _run(path, method="tokenizer:words", counter=words) -> dict:
    db = store.connect(path)
    try:
        job = RUNNER.submit(db, "lengths", "lf", options={"method": method, "name": "words"})
    finally:
        db.conn.close()
    return RUNNER.run(path, job, inputs={"counter": counter} if counter else None)


def test_every_response_is_counted_once_with_the_method_asked(path):
    done = _run(path)
    assert done["status"] == "done" and done["result"]["counted"] == len(RECORDS)
    db = store.connect(path)
    counts = pairs_store.lengths(db, "lf", "tokenizer:words")
    assert counts == {f"k{n}": ([n + 1], [2 * n + 1, 1]) for n in range(len(RECORDS))}
    assert pairs_store.counted(db, "lf", "tokenizer:words") == len(RECORDS)
    assert pairs_store.longest(db, "lf", "tokenizer:words") == 2 * 449 + 1
    assert pairs_store.counted(db, "lf", "estimate") == 0  # per method
    # run again: nothing left to count
    assert _run(path)["result"]["counted"] == 0
    # another method counts again, beside the first
    assert _run(path, "estimate", None)["result"]["counted"] == len(RECORDS)
    assert pairs_store.lengths(db, "lf", "estimate", ["k3"]) == {
        "k3": ([estimate("yes yes yes yes")], [estimate(" ".join(["no"] * 7)), estimate("short")])}


def test_an_interrupted_count_resumes_where_it_stopped(path):
    db = store.connect(path)
    pairs_store.store_lengths(db, "lf", "tokenizer:words", [("k0", [1], [1, 1]), ("k5", [6], [11, 1])])
    assert pairs_store.uncounted_keys(db, "lf", "tokenizer:words")[:3] == ["k1", "k2", "k3"]
    done = _run(path)
    assert done["result"]["counted"] == len(RECORDS) - 2
    assert pairs_store.counted(db, "lf", "tokenizer:words") == len(RECORDS)


def test_a_cancelled_count_keeps_its_finished_batches(path):
    db = store.connect(path)
    job = RUNNER.submit(db, "lengths", "lf", options={"method": "estimate"})
    row = RUNNER.get(db, job)
    calls = []

    def stop_after_one_batch() -> bool:
        calls.append(1)
        return len(calls) > 1

    with pytest.raises(Cancelled):
        lengths_job(Job(job, "lengths", "lf", "", row["options"], {}), db, Progress(db, job),
                    stop_after_one_batch)
    assert pairs_store.counted(db, "lf", "estimate") == 200  # one batch, stored
    assert _run(path, "estimate", None)["result"]["counted"] == len(RECORDS) - 200


def test_a_method_that_cannot_be_used_fails_in_one_line(path):
    done = _run(path, "tokenizer:gone", None)
    assert done["status"] == "failed" and "needs that tokenizer" in done["error"]
    with pytest.raises(ValueError, match="unknown counting method"):
        counter_for("words")


def test_the_length_filter_reads_the_counts(path):
    _run(path)
    db = store.connect(path)
    query = pairs_store.PairQuery("ana", min_tokens=101, max_tokens=201, method="tokenizer:words")
    kept = [key for _, key, _, _ in pairs_store.matching(db, "lf", query)]
    # longest response of item n: 2n + 1 tokens
    assert kept == [f"k{n}" for n in range(len(RECORDS)) if 101 <= 2 * n + 1 <= 201]
    assert pairs_store.matching(db, "lf", pairs_store.PairQuery(
        "ana", min_tokens=10, method="estimate")) == []  # not counted that way: nothing


def test_counts_follow_a_rename_and_go_with_the_dataset(path):
    _run(path)
    db = store.connect(path)
    rename_dataset(db, "lf", "long form")
    assert pairs_store.counted(db, "long form", "tokenizer:words") == len(RECORDS)
    assert pairs_store.counted(db, "lf", "tokenizer:words") == 0
    delete_dataset(db, "long form")
    assert db.execute("select count(*) from response_lengths").fetchone()[0] == 0


def test_the_page_starts_the_count_as_a_background_job(path):
    db = store.connect(path)
    job = start_lengths_job(db, path, "lf", "tokenizer:words", words, "words")
    RUNNER.join(job, 60)
    assert RUNNER.get(db, job)["status"] == "done"
    assert pairs_store.counted(db, "lf", "tokenizer:words") == len(RECORDS)


def test_m011_migrates_an_existing_database(path):
    """A database made before m011 (no response_lengths): opening it adds the table, and
    counting, deleting and re-importing work on it."""
    db = store.connect(path)
    db.execute("drop table response_lengths")
    db.execute("delete from _sqlite_migrations where name = 'm011_response_lengths'")
    db.conn.commit()
    db.conn.close()
    db = store.connect(path)
    assert db["response_lengths"].exists()
    assert db.execute("select 1 from _sqlite_migrations where name = 'm011_response_lengths'").fetchone()
    db.conn.close()
    assert _run(path)["result"]["counted"] == len(RECORDS)
    db = store.connect(path)
    import_bytes(db, jsonl(RECORDS[:3]), "lf.jsonl", dataset="lf", replace=True)
    assert pairs_store.counted(db, "lf", "tokenizer:words") == 0  # new items: counted anew


def test_deleting_a_dataset_leaves_none_of_its_kept_rows(tmp_path):
    """Facts, progress, token counts and the agreement tables all go with the dataset."""
    db = store.connect(tmp_path / "d.db")
    import_bytes(db, jsonl(garage_records(3)), "g.jsonl", dataset="g")
    for who, label in (("ana", "irrelevant"), ("bo", "RELATED-INFORMATION")):
        set_annotation(db, "g", "sample-1", who, "label:1", label)
    db.conn.commit()
    kept = ("grounding_items", "item_progress", "progress_totals", "agreement_pairs",
            "agreement_confusion", "unit_disputes", "item_disputes")
    assert all(db.execute(f"select count(*) from {t}").fetchone()[0] for t in kept)
    delete_dataset(db, "g")
    assert {t: db.execute(f"select count(*) from {t}").fetchone()[0] for t in kept} == dict.fromkeys(kept, 0)


def test_the_job_names_its_method_in_words(path):
    db = store.connect(path)
    job = start_lengths_job(db, path, "lf", "estimate")
    RUNNER.join(job, 60)
    assert RUNNER.get(db, job)["model"] == "an estimate (a token per word or mark)"
    assert describe("tokenizer:tiny-rm") == "the tokenizer of tiny-rm"
