"""Needle runs on a tiny real Llama classifier: frame, cache, progress, stop, too long, stored results."""

from __future__ import annotations

from needlework.needle import analysis, run
from tests.test_needle_model import one_thread, small_records, tiny_pipeline  # noqa: F401 (fixture)


def test_run_frame_columns_progress_and_cache(db):
    records = small_records()
    seen = []
    pipe = tiny_pipeline(db)
    first = run.run_needles(pipe, records, progress=lambda done, total: seen.append((done, total)))
    assert list(first.frame.columns[:10]) == analysis.RESULT_COLUMNS
    assert len(first.frame) == len(records) and not first.cancelled
    assert seen[-1] == (len(records), len(records)) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert (first.frame["correct"] == (first.frame["chosen_score"] > first.frame["rejected_score"])).all()
    assert set(first.frame["model"]) == {pipe.rm.facts.name}
    assert first.stats.scored == len(records) and first.stats.cached == 0
    again = run.run_needles(tiny_pipeline(db), records)
    assert again.stats.cached == len(records) and again.stats.scored == 0
    assert again.frame["chosen_score"].tolist() == first.frame["chosen_score"].tolist()
    # The plain path reads the cache the reuse path wrote (same keys).
    plain = run.run_needles(tiny_pipeline(db), records, reuse_prefix=False)
    assert plain.stats.cached == len(records)


def test_should_stop_returns_partial_results():
    records = small_records()
    calls = {"n": 0}

    def stop() -> bool:
        calls["n"] += 1
        return calls["n"] > 3

    result = run.run_needles(tiny_pipeline(), records, reuse_prefix="on", should_stop=stop)
    assert result.cancelled and len(result.frame) == 3
    plain = run.run_needles(tiny_pipeline(), records, reuse_prefix=False, should_stop=lambda: True)
    assert plain.cancelled and plain.frame.empty


def test_too_long_records_are_reported_not_cut():
    records = small_records(lengths=(300, 600), count=1, positions=2)
    result = run.run_needles(tiny_pipeline(max_length=500), records)
    too_long = {t["id"] for t in result.too_long}
    assert too_long == {r["id"] for r in records if r["length_tokens"] == 600}
    # skipped records keep their row: a missing score, counted wrong (Long-form RewardBench's rule)
    assert set(result.frame["id"]) == {r["id"] for r in records}
    skipped = result.frame[result.frame["length_tokens"] == 600]
    assert skipped["missing"].all() and not skipped["correct"].any()
    assert not result.frame[result.frame["length_tokens"] == 300]["missing"].any()
    assert all(t["action"] == "skipped" for t in result.too_long)


def test_results_stored_under_a_dataset_come_back(db):
    records = small_records(lengths=(300,), count=1, positions=3)
    pipe = tiny_pipeline(db)
    result = run.run_needles(pipe, records, dataset="needles")
    back = analysis.stored_results(db, "needles", records, pipe.fingerprint)
    assert sorted(back["id"]) == sorted(result.frame["id"])
    assert back.set_index("id")["chosen_score"].to_dict() == result.frame.set_index("id")["chosen_score"].to_dict()
