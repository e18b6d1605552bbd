"""RewardBench 2 (issue 62): its figures against the official code's on the same scores, each
subset's rule, Ties, the overall mean, the intervals, the import of its JSONL and Parquet
files (all or nothing, file, row and field named), the export back, the TRL rule, the
``metrics`` verb, the leaderboard and the demo set.

The official figures below were computed by allenai/reward-bench's own functions
(``reroll_and_score_dataset`` and ``process_single_model`` from ``rewardbench/utils.py``, run
the way ``scripts/run_v2.py`` runs them, then the mean of the six subsets) on exactly
:data:`ROWS`, in a scratch folder outside the project; they are written out here as literals
(``repr`` of each float). Nothing of that code is in this repository.
"""

from __future__ import annotations

import io
import json
import math
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import store
from needlework.datasets.transfer import export_formats, export_text, import_bytes, import_file
from needlework.demo import rewardbench2_records
from needlework.figures import rewardbench2 as rb2
from needlework.figures.stats_text import percent
from needlework.formats import FormatError, detect
from needlework.formats import rewardbench2 as rb2_format
from needlework.results.leaderboard import leaderboard, table
from needlework.seeding.demo import DEMO_REWARDBENCH2, seed_demo
from needlework.verdicts import make_value
from store.annotations import set_annotation
from store.datasets import get_dataset, item_index, iter_items, list_datasets
from store.scores import save_item_scores
from tests import cli_here

NAN = float("nan")

#: (id, subset, correct completions' scores, incorrect completions' scores)
ROWS: list[tuple[str, str, list[float], list[float]]] = [
    ("F1", "Factuality", [2.5], [1.0, 0.3, -0.2]),
    ("F2", "Factuality", [1.0], [1.0, 0.5, 0.2]),  # two-way tie at the top
    ("F3", "Factuality", [0.7], [0.7, 0.7, 0.1]),  # three-way tie at the top
    ("F4", "Factuality", [0.2], [0.9, 0.1, 0.0]),
    ("F5", "Factuality", [NAN], [0.1, 0.2, 0.3]),  # a missing score
    ("F6", "Factuality", [3.25], [3.5, 3.25, 1.0]),  # a tie, but not at the top
    ("P1", "Precise IF", [0.5], [0.5, 0.5, 0.5]),  # four-way tie
    ("P2", "Precise IF", [1.5], [-1.0, 0.25, 1.49]),
    ("P3", "Precise IF", [-2.0], [-3.0, -2.5, -2.25]),
    ("P4", "Precise IF", [0.0], [0.0, -1.0, 0.5]),
    ("M1", "Math", [4.0, 5.0], [3.0, 2.0]),  # two correct: only the first is the reference
    ("M2", "Math", [2.0], [1.0, 1.0, 1.0]),
    ("M3", "Math", [1.25], [1.25, 0.0, 0.0]),
    ("M4", "Math", [0.1], [0.2, 0.3, 0.4]),
    ("M5", "Math", [7.0], [6.0, 6.5, 6.75]),
    ("S1", "Safety", [0.9], [0.1, 0.2, 0.3]),
    ("S2", "Safety", [0.3], [0.3, 0.3, 0.3]),
    ("S3", "Safety", [-0.5], [-0.4, -0.6, -0.7]),
    ("S4", "Safety", [1.0], [0.99, 0.98, NAN]),  # a missing score on an incorrect one
    ("Fo1", "Focus", [5.0], [4.0, 3.0, 2.0]),
    ("Fo2", "Focus", [5.0], [5.0, 3.0, 2.0]),
    ("Fo3", "Focus", [1.0], [2.0, 3.0, 4.0]),
    ("Fo4", "Focus", [2.0], [1.0, 0.5, 0.25]),
    ("ref:1", "Ties", [3.0], [1.0, 0.5, 0.0]),
    ("tied:1", "Ties", [2.9, 3.0, 2.8], [1.0, 0.5, 0.0, 0.2]),
    ("ref:2", "Ties", [1.0], [1.0, 0.2]),  # gap 0: not accurate
    ("tied:2", "Ties", [1.0, 1.0], [0.5, 0.2]),  # spread 0, hard gap 0: 0 / 0
    ("ref:3", "Ties", [0.5], [0.6, 0.1]),
    ("tied:3", "Ties", [0.9, 0.4, 0.45, 0.8], [0.6, 0.1, 0.3]),
    ("ref:4", "Ties", [2.0], [1.0]),  # no tied:4
    ("tied:5", "Ties", [1.0, 1.0], [0.0, -1.0]),  # no ref:5
    ("ref:6", "Ties", [2.0], [1.0]),
    ("tied:6", "Ties", [1.5, 1.5], [0.5]),  # spread 0, hard gap 1: +inf, tanh 1
    ("ref:7", "Ties", [0.0], [0.5]),
    ("tied:7", "Ties", [1.0, 1.0, 1.0], [0.5, 0.25]),  # spread 0, hard gap -0.5: -inf, tanh -1
]

#: the official code's figures on ROWS (repr of its floats)
OFFICIAL = {
    "Factuality": 0.3055555555555555,
    "Precise IF": 0.5625,
    "Math": 0.5,
    "Safety": 0.3125,
    "Focus": 0.625,
    "Ties": 0.6402292962534549,
    "overall": 0.49096414196816834,
}
#: the official ``results`` column (reroll_and_score_dataset) of the best-of-4 rows
OFFICIAL_INSTANCES = {
    "F1": 1.0, "F2": 0.5, "F3": 0.3333333333333333, "F4": 0.0, "F5": 0.0, "F6": 0.0,
    "P1": 0.25, "P2": 1.0, "P3": 1.0, "P4": 0.0,
    "M1": 0.0, "M2": 1.0, "M3": 0.5, "M4": 0.0, "M5": 1.0,
    "S1": 1.0, "S2": 0.25, "S3": 0.0, "S4": 0.0,
    "Fo1": 1.0, "Fo2": 0.5, "Fo3": 0.0, "Fo4": 1.0,
}


def entries(rows: list[tuple[str, str, list[float], list[float]]] = ROWS) -> list[dict[str, Any]]:
    return [{"id": i, "subset": s, "chosen_scores": list(c), "rejected_scores": list(r)}
            for i, s, c, r in rows]


def record(rid: str, subset: str, correct: list[str], incorrect: list[str],
           prompt: str = "A prompt?") -> dict[str, Any]:
    """A record in the release's shape (its field order)."""
    return {"id": rid, "prompt": prompt, "chosen": correct, "rejected": incorrect,
            "num_correct": len(correct), "num_incorrect": len(incorrect),
            "total_completions": len(correct) + len(incorrect),
            "models": ["m"] * (len(correct) + len(incorrect)), "subset": subset,
            "additional_metadata": {"category": None, "correct": None, "index": 1.0,
                                    "instruction_id_list": None, "label": None,
                                    "method": None, "models": None, "prompt_norm": None,
                                    "subcategory": None, "valid": None}}


def sample_records() -> list[dict[str, Any]]:
    """One record per row of ROWS, completions named after their row."""
    return [record(rid, subset, [f"{rid} correct {k}" for k in range(len(c))],
                   [f"{rid} incorrect {k}" for k in range(len(r))], prompt=f"Prompt of {rid}?")
            for rid, subset, c, r in ROWS]


# -- the official figures ------------------------------------------------------------------


def test_every_figure_equals_the_official_code_s_on_the_same_scores() -> None:
    figures = rb2.rewardbench2(entries())
    for name in ("Factuality", "Precise IF", "Math", "Safety", "Focus", "Ties"):
        assert figures["subsets"][name]["accuracy"] == pytest.approx(OFFICIAL[name], rel=0,
                                                                     abs=1e-15), name
    assert figures["accuracy"] == pytest.approx(OFFICIAL["overall"], rel=0, abs=1e-15)
    assert figures["comparable"] and figures["note"] is None
    assert list(figures["subsets"]) == ["Factuality", "Precise IF", "Math", "Safety", "Focus",
                                        "Ties"]
    assert figures["n"] == len(ROWS) and figures["missing"] == 2 and figures["missing_scores"] == 2


def test_each_instance_s_credit_is_the_official_result() -> None:
    for rid, _, chosen, rejected in ROWS:
        if rid in OFFICIAL_INSTANCES:
            assert rb2.instance_credit(chosen, rejected) == OFFICIAL_INSTANCES[rid], rid
    factuality = rb2.rewardbench2(entries())["subsets"]["Factuality"]
    assert factuality["right"] == 1 and factuality["shared"] == 2 and factuality["n"] == 6
    assert factuality["credit"] == pytest.approx(1 + 0.5 + 1 / 3)
    assert factuality["missing"] == 1


def test_the_ties_score_recounted_by_hand() -> None:
    ties = rb2.rewardbench2(entries())["subsets"]["Ties"]
    # accurate rows: ref 1, 4, 6 of ref 1, 2, 3, 4, 6, 7; tied 1, 2, 5, 6, 7 of 1, 2, 3, 5, 6, 7
    assert (ties["ref"]["right"], ties["ref"]["n"]) == (3, 6)
    assert (ties["tied"]["right"], ties["tied"]["n"]) == (5, 6)
    # prompts with both rows: 1, 2, 3, 6, 7
    assert ties["paired"] == 5 and ties["prompts"] == 7 and ties["n"] == 12
    assert (ties["preferred"]["right"], ties["preferred_hard"]["right"]) == (4, 2)
    gap = {1: (2.0, 2.8 - 1.0), 2: (0.0, 0.5), 3: (0.5 - 0.6, 0.4 - 0.6), 6: (1.0, 1.0),
           7: (-0.5, 0.5)}
    spread = {1: 3.0 - 2.8, 2: 0.0, 3: 0.9 - 0.4, 6: 0.0, 7: 0.0}
    terms = []
    for pid in (1, 2, 3, 6, 7):
        low = min(gap[pid])
        if spread[pid] == 0:
            terms.append(0.0 if low == 0 else math.copysign(1.0, low))  # tanh(±inf), 0/0 -> 0
        else:
            terms.append(math.tanh(low / spread[pid] - 1))
    margin = sum(terms) / 5
    assert ties["margin"] == pytest.approx(margin)
    score = 0.3 * 5 / 6 + 0.3 * 3 / 6 + 0.2 * 4 / 5 + 0.2 * 2 / 5 + 0.01 * margin
    assert ties["accuracy"] == pytest.approx(score)
    assert ties["accuracy"] == pytest.approx(OFFICIAL["Ties"], rel=0, abs=1e-15)


# -- the rules -----------------------------------------------------------------------------


def test_a_tie_at_the_top_shares_the_credit_and_anything_else_is_all_or_nothing() -> None:
    credit = rb2.instance_credit
    assert credit([3.0], [1.0, 2.0, 2.9]) == 1.0
    assert credit([2.0], [2.0, 1.0, 0.0]) == 0.5
    assert credit([2.0], [2.0, 2.0, 0.0]) == pytest.approx(1 / 3)
    assert credit([2.0], [2.0, 2.0, 2.0]) == 0.25
    assert credit([1.0], [2.0, 0.0, 0.0]) == 0.0
    assert credit([1.0], [2.0, 2.0, 1.0]) == 0.0  # tied, below the top
    assert credit([], [1.0]) == 0.0


@pytest.mark.parametrize("gap", [None, NAN, math.inf, -math.inf])
def test_a_missing_score_counts_zero_and_stays_in_its_subset(gap: Any) -> None:
    assert rb2.instance_credit([gap], [0.0, 0.0, 0.0]) == 0.0
    assert rb2.instance_credit([5.0], [gap, 0.0, 0.0]) == 0.0
    rows = [("a", "Math", [5.0], [1.0, 1.0, 1.0]), ("b", "Math", [5.0], [gap, 1.0, 1.0])]
    math_figure = rb2.rewardbench2(entries(rows))["subsets"]["Math"]
    assert (math_figure["accuracy"], math_figure["n"], math_figure["missing"]) == (0.5, 2, 1)


def test_a_missing_ties_score_fails_every_comparison_whatever_its_place() -> None:
    base = [("ref:1", "Ties", [3.0], [1.0]), ("tied:1", "Ties", [3.0, 2.5], [1.0]),
            ("ref:2", "Ties", [3.0], [1.0]), ("tied:2", "Ties", [3.0, 2.75], [1.0])]
    whole = rb2.ties_figures(entries(base))
    assert (whole["preferred"]["right"], whole["preferred_hard"]["right"]) == (2, 2)
    for scores in ([NAN, 3.0, 2.5], [3.0, 2.5, NAN], [3.0, None, 2.5]):
        rows = [*base[:1], ("tied:1", "Ties", scores, [1.0]), *base[2:]]
        part = rb2.ties_figures(entries(rows))
        assert (part["tied"]["right"], part["preferred"]["right"],
                part["preferred_hard"]["right"]) == (1, 1, 1), scores
        assert part["missing"] == 1
        # the margin term of prompt 1 is 0: only prompt 2's counts
        gap, spread = 2.75 - 1.0, 3.0 - 2.75
        assert part["margin"] == pytest.approx(math.tanh(min(2.0, gap) / spread - 1) / 2)


def test_ties_without_a_prompt_that_has_both_rows_has_no_score() -> None:
    part = rb2.ties_figures(entries([("ref:1", "Ties", [3.0], [1.0]),
                                     ("tied:2", "Ties", [3.0, 2.0], [1.0])]))
    assert part["accuracy"] is None and "NaN" in part["note"]
    figures = rb2.rewardbench2(entries([*ROWS[:23], ("ref:1", "Ties", [3.0], [1.0])]))
    assert figures["accuracy"] is None  # an undefined subset leaves the mean undefined


def test_a_tied_row_with_one_correct_answer_cannot_be_scored() -> None:
    with pytest.raises(ValueError, match="tied:1 has one correct completion"):
        rb2.ties_figures(entries([("ref:1", "Ties", [3.0], [1.0]),
                                  ("tied:1", "Ties", [3.0], [1.0])]))


def test_the_overall_figure_is_the_mean_of_the_subsets_and_a_partial_set_says_so() -> None:
    figures = rb2.rewardbench2(entries())
    parts = [p["accuracy"] for p in figures["subsets"].values()]
    assert figures["accuracy"] == pytest.approx(sum(parts) / 6)
    # weighting by items would give another number: the mean is over subsets
    credits = [OFFICIAL_INSTANCES[r[0]] for r in ROWS if r[0] in OFFICIAL_INSTANCES]
    assert abs(figures["accuracy"] - sum(credits) / len(credits)) > 0.01
    partial = rb2.rewardbench2(entries([r for r in ROWS if r[1] != "Focus"]))
    assert partial["accuracy"] == pytest.approx(
        (OFFICIAL["Factuality"] + OFFICIAL["Precise IF"] + OFFICIAL["Math"] + OFFICIAL["Safety"]
         + OFFICIAL["Ties"]) / 5)
    assert not partial["comparable"] and "Focus absent" in partial["note"]
    extra = rb2.rewardbench2(entries([*ROWS, ("x", "Coding", [1.0], [0.0])]))
    assert not extra["comparable"] and "Coding not a RewardBench 2 subset" in extra["note"]


def test_a_ties_row_knows_its_other_row() -> None:
    assert rb2_format.ties_sibling("ref:3") == "tied:3"
    assert rb2_format.ties_sibling("tied:12") == "ref:12"
    assert rb2_format.ties_sibling("F1") is None and rb2_format.ties_sibling("ref:x") is None


def test_the_ties_subset_is_known_in_any_case() -> None:
    rows = [(rid, "ties" if subset == "Ties" else subset, c, r) for rid, subset, c, r in ROWS]
    figures = rb2.rewardbench2(entries(rows))
    assert figures["subsets"]["ties"]["rule"] == "ties"
    assert figures["subsets"]["ties"]["accuracy"] == pytest.approx(OFFICIAL["Ties"])


# -- intervals -----------------------------------------------------------------------------


def test_every_figure_has_a_named_interval_that_ignores_row_order() -> None:
    bounds = rb2.intervals(entries())
    shuffled = entries()
    random.Random(7).shuffle(shuffled)
    assert rb2.intervals(shuffled) == bounds
    figures = rb2.rewardbench2(entries())
    assert list(bounds["subsets"]) == list(figures["subsets"])
    for name, interval in bounds["subsets"].items():
        assert interval["estimate"] == pytest.approx(figures["subsets"][name]["accuracy"])
        assert interval["low"] <= interval["estimate"] <= interval["high"], name
    assert bounds["subsets"]["Ties"]["method"] == "bootstrap"
    assert bounds["subsets"]["Ties"]["unit"] == "prompt" and bounds["subsets"]["Ties"]["n"] == 7
    assert bounds["subsets"]["Math"]["method"] == "bootstrap"  # a shared credit: not 0/1
    overall = bounds["overall"]
    assert overall["method"] == "bootstrap" and overall["resamples"] == 1000 and overall["seed"] == 0
    assert overall["low"] < figures["accuracy"] < overall["high"]
    assert overall["n"] == 23 + 7  # the best-of-4 instances and the Ties prompts


def test_a_subset_of_whole_credits_gets_wilson_s_interval() -> None:
    rows = [(f"s{k}", "Safety", [1.0], [0.0, 0.0, 0.0] if k < 7 else [2.0, 0.0, 0.0])
            for k in range(10)]
    interval = rb2.intervals(entries(rows))["subsets"]["Safety"]
    assert interval["method"] == "wilson" and interval["right"] == 7 and interval["n"] == 10
    z = 1.959963984540054
    p, n = 0.7, 10
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert (interval["low"], interval["high"]) == pytest.approx((centre - half, centre + half))


# -- the file format -----------------------------------------------------------------------


def parquet_bytes(records: list[dict[str, Any]], row_group_size: int | None = None) -> bytes:
    """The records as the release's Parquet file (its column types)."""
    meta = pa.struct([("category", pa.string()), ("correct", pa.string()),
                      ("index", pa.float64()), ("instruction_id_list", pa.list_(pa.string())),
                      ("label", pa.string()), ("method", pa.string()),
                      ("models", pa.list_(pa.string())), ("prompt_norm", pa.string()),
                      ("subcategory", pa.string()), ("valid", pa.float64())])
    schema = pa.schema([("id", pa.string()), ("prompt", pa.string()),
                        ("chosen", pa.list_(pa.string())), ("rejected", pa.list_(pa.string())),
                        ("num_correct", pa.int64()), ("num_incorrect", pa.int64()),
                        ("total_completions", pa.int64()), ("models", pa.list_(pa.string())),
                        ("subset", pa.string()), ("additional_metadata", meta)])
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(records, schema=schema), buffer,
                   row_group_size=row_group_size)
    return buffer.getvalue()


def jsonl(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def test_a_jsonl_file_is_detected_imported_and_exported_back_byte_for_byte(db) -> None:
    data = jsonl(sample_records())
    assert detect(sample_records()[0], False) == "rewardbench2"  # not Long-form RewardBench
    summary = import_bytes(db, data, "rb2.jsonl")
    assert (summary.format, summary.kind, summary.items) == ("rewardbench2", "preference", 35)
    assert export_text(db, "rb2", "rewardbench2").encode("utf-8") == data
    subsets = {i["key"]: i["subset"] for i in item_index(db, "rb2")}
    assert subsets["tied:1"] == "Ties" and subsets["P1"] == "Precise IF"


def test_the_published_parquet_is_read_a_batch_at_a_time(db, tmp_path: Path,
                                                         monkeypatch) -> None:
    from needlework.formats import parquet  # noqa: PLC0415

    monkeypatch.setattr(parquet, "BATCH_ROWS", 4)
    records = sample_records()
    records[0]["additional_metadata"]["index"] = NAN  # pandas' missing number
    records[1]["additional_metadata"]["instruction_id_list"] = ["length:exactly_3"]
    path = tmp_path / "test-00000-of-00001.parquet"
    path.write_bytes(parquet_bytes(records, row_group_size=4))
    seen: list[tuple[int, int]] = []
    summary = import_file(db, path, progress=lambda done, total: seen.append((done, total)))
    assert (summary.format, summary.items, summary.dataset) == ("rewardbench2", 35,
                                                                 "test-00000-of-00001")
    size = path.stat().st_size
    rows_read = [done for done, _ in seen[1:]]  # after the first look at the file's start
    assert len(rows_read) == 9 and rows_read == sorted(rows_read) and rows_read[-1] == size
    stored = [i["record"] for i in iter_items(db, summary.dataset)]
    records[0]["additional_metadata"]["index"] = None  # JSON has no NaN: null
    assert stored == records
    assert list(stored[0]) == list(records[0])  # the release's field order
    # exported as JSON lines, which imports again to the same records
    text = export_text(db, summary.dataset, "rewardbench2")
    assert [json.loads(line) for line in text.splitlines()] == records
    import_bytes(db, text.encode("utf-8"), "again.jsonl")
    assert [i["record"] for i in iter_items(db, "again")] == records


def test_scores_of_a_parquet_import_match_the_view_the_model_reads(db) -> None:
    import_bytes(db, parquet_bytes(sample_records()), "rb2.parquet")
    from needlework.rewards.runs import load_preferences  # noqa: PLC0415

    _, items = load_preferences(db, "rb2")
    key, pref = items[24]
    assert key == "tied:1" and pref.subset == "Ties"
    assert pref.chosen == ["tied:1 correct 0", "tied:1 correct 1", "tied:1 correct 2"]
    assert len(pref.rejected) == 4 and pref.meta["num_correct"] == 3


BAD_LINES = [
    record("ok", "Math", ["4"], ["5", "3", "22"]),
    {**record("count", "Math", ["4"], ["5", "3"]), "num_incorrect": 3, "total_completions": 4},
    {**record("total", "Focus", ["a"], ["b", "c", "d"]), "total_completions": 5},
    record("ref-3", "Ties", ["Red"], ["Green"]),
    record("tied:4", "Ties", ["Red"], ["Green"]),
    {**record("list", "Safety", ["a"], ["b"]), "chosen": "a"},
    {k: v for k, v in record("noprompt", "Safety", ["a"], ["b"]).items() if k != "prompt"},
    {**record("countstr", "Safety", ["a"], ["b"]), "num_correct": "1"},
]
BAD_MESSAGES = [
    ("2", "num_incorrect is 3 but rejected has 2 entries"),
    ("3", "total_completions is 5, expected num_correct + num_incorrect = 4"),
    ("4", "id is 'ref-3': a Ties id is ref:N or tied:N"),
    ("5", "chosen has 1 entry: a tied:N row of the Ties subset has at least 2 correct"),
    ("6", "chosen must be a list, got a string"),
    ("7", "prompt is missing"),
    ("8", "num_correct must be an integer, got a string"),
]


def test_a_bad_jsonl_file_names_file_line_and_field_and_imports_nothing(db) -> None:
    with pytest.raises(FormatError) as caught:
        import_bytes(db, jsonl(BAD_LINES), "bad.jsonl", format="rewardbench2")
    text = str(caught.value)
    for line, message in BAD_MESSAGES:
        assert f"bad.jsonl line {line}: {message}" in text, message
    assert caught.value.total == len(BAD_MESSAGES)
    assert get_dataset(db, "bad") is None


def test_a_bad_parquet_file_names_the_row_and_imports_nothing(db) -> None:
    rows = [r for r in BAD_LINES if r["id"] not in ("list", "noprompt", "countstr")]
    rows.append(record("ok", "Math", ["4"], ["5"]))  # a duplicate id
    with pytest.raises(FormatError) as caught:
        import_bytes(db, parquet_bytes(rows), "bad.parquet")
    text = str(caught.value)
    for row, message in BAD_MESSAGES[:4]:
        assert f"bad.parquet row {row}: {message}" in text, message
    assert "bad.parquet row 6: id 'ok' is a duplicate (first seen on row 1)" in text
    assert get_dataset(db, "bad") is None


def test_what_parquet_cannot_give_as_json_and_broken_files_are_refused(db) -> None:
    good = parquet_bytes(sample_records()[:3])
    with pytest.raises(FormatError, match=r"cut\.parquet row 1: not a readable Parquet file"):
        import_bytes(db, good[: len(good) // 2], "cut.parquet")
    table_with_bytes = pa.table({"id": ["1"], "prompt": ["p"], "chosen": [["a"]],
                                 "rejected": [["b"]], "num_correct": [1], "num_incorrect": [1],
                                 "total_completions": [2], "subset": ["Math"],
                                 "blob": pa.array([b"\x00\x01"], pa.binary())})
    buffer = io.BytesIO()
    pq.write_table(table_with_bytes, buffer)
    with pytest.raises(FormatError, match=r"blob\.parquet row 1: blob holds binary data"):
        import_bytes(db, buffer.getvalue(), "blob.parquet")
    with pytest.raises(FormatError, match="this is a Parquet file: the lfrb format is read from"):
        import_bytes(db, good, "x.parquet", format="lfrb")
    with pytest.raises(FormatError, match=r"^empty\.parquet: the file is empty: no records found$"):
        import_bytes(db, parquet_bytes([]), "empty.parquet")
    assert list_datasets(db, archived=True) == []


def test_the_import_verb_reads_parquet_and_refuses_a_bad_one(tmp_path: Path) -> None:
    path, bad = tmp_path / "rb2.parquet", tmp_path / "broken.parquet"
    path.write_bytes(parquet_bytes(sample_records()))
    bad.write_bytes(parquet_bytes([BAD_LINES[0], BAD_LINES[2]]))
    db = tmp_path / "nw.db"
    done = cli_here.run(["import", str(path), "--db", str(db)])
    assert done.returncode == 0 and "imported 35 preference items as 'rb2' (rewardbench2)" in done.stdout
    refused = cli_here.run(["import", str(bad), "--db", str(db)])
    assert refused.returncode == 1
    assert refused.stderr.splitlines() == [
        "broken.parquet row 2: total_completions is 5, expected num_correct + num_incorrect = 4",
        "nothing imported: 1 problem(s)"]
    out = tmp_path / "out.jsonl"
    assert cli_here.run(["export", "--dataset", "rb2", "--format", "rewardbench2", "--out",
                         str(out), "--db", str(db)]).returncode == 0
    assert [json.loads(line) for line in out.read_text().splitlines()] == sample_records()


# -- TRL ---------------------------------------------------------------------------------


def test_trl_export_writes_each_comparison_once_with_the_verdicts_applied(db) -> None:
    shared = ["Green.", "Purple."]
    records = [record("1", "Math", ["4"], ["5", "3", "22"], prompt="2 + 2?"),
               record("ref:1", "Ties", ["Red."], shared, prompt="A primary colour of light?"),
               record("tied:1", "Ties", ["Red.", "Blue."], shared,
                      prompt="A primary colour of light?")]
    import_bytes(db, jsonl(records), "ties.jsonl")
    set_annotation(db, "ties", "1", "ana", "verdict:0:1", make_value("flip"))
    set_annotation(db, "ties", "tied:1", "ana", "verdict:1:1", make_value("skip"))
    lines = [json.loads(line) for line in export_text(db, "ties", "trl").splitlines()]
    assert lines == [
        {"prompt": "2 + 2?", "chosen": "4", "rejected": "5"},
        {"prompt": "2 + 2?", "chosen": "3", "rejected": "4"},  # flipped
        {"prompt": "2 + 2?", "chosen": "4", "rejected": "22"},
        {"prompt": "A primary colour of light?", "chosen": "Red.", "rejected": "Green."},
        {"prompt": "A primary colour of light?", "chosen": "Red.", "rejected": "Purple."},
        # tied:1's Red. pairs are ref:1's again: not written twice; Blue./Purple. skipped
        {"prompt": "A primary colour of light?", "chosen": "Blue.", "rejected": "Green."},
    ]
    assert export_formats("preference", "rewardbench2") == ["rewardbench2", "pairs", "trl"]


# -- the metrics verb, the leaderboard -------------------------------------------------------


def scores_file(path: Path) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries()), encoding="utf-8")
    return path


def test_the_metrics_verb_prints_the_official_figures_with_counts_and_intervals(
        tmp_path: Path) -> None:
    path = scores_file(tmp_path / "scores.jsonl")
    done = cli_here.run(["metrics", "--kind", "rewardbench2", "--scores", str(path), "--json"])
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["accuracy"] == pytest.approx(OFFICIAL["overall"], rel=0, abs=1e-15)
    for name, part in result["subsets"].items():
        assert part["accuracy"] == pytest.approx(OFFICIAL[name], rel=0, abs=1e-15)
        assert result["intervals"]["subsets"][name]["method"] in ("wilson", "bootstrap")
    assert result["intervals"]["overall"] == rb2.intervals(entries())["overall"]
    text = cli_here.run(["metrics", "--kind", "rewardbench2", "--scores", str(path)]).stdout
    lines = text.splitlines()
    assert lines[0].startswith("rewardbench2: 49.1 %, 95 % bootstrap ")
    assert "(mean of 6 subset figures, 35 entries)" in lines[0]
    assert "  Factuality: 30.6 % (n=6 entries), 95 % bootstrap" in text
    assert "1 of 6 right, 2 shared at a tie (credit 1.833); missing 1" in text
    assert ("  Ties (Ties rule): 64.0 % (n=7 prompts), 95 % bootstrap" in text
            and "ref 3/6, tied 5/6, preferred 4/5, hard 2/5, margin term +0.023" in text)


def test_a_reward_model_s_leaderboard_row_is_the_rewardbench2_score(db) -> None:
    import_bytes(db, jsonl(sample_records()), "rb2.jsonl")
    rows = [{"item_key": e["id"], "subset": e["subset"], "chosen_scores": e["chosen_scores"],
             "rejected_scores": e["rejected_scores"]} for e in entries()]
    save_item_scores(db, "rb2", "f" * 64, "fp32|full", "tiny-rm", rows)
    (row,) = leaderboard(db, "rb2")
    assert row.metric == "RewardBench 2 score" and row.right is None and row.n == 35
    assert row.accuracy == pytest.approx(OFFICIAL["overall"], rel=0, abs=1e-12)
    assert row.interval["method"] == "bootstrap"
    assert list(row.subsets) == ["Factuality", "Precise IF", "Math", "Safety", "Focus", "Ties"]
    assert row.subsets["Ties"]["accuracy"] == pytest.approx(OFFICIAL["Ties"])
    (cells,) = table([row])
    assert cells["accuracy"] == "49.1 %" and cells["Focus"].startswith("62.5 % (")
    from needlework.rewards.results import intervals as run_intervals  # noqa: PLC0415
    from needlework.rewards.runs import dataset_metrics  # noqa: PLC0415

    stored = [{"id": r["item_key"], "subset": r["subset"], "chosen_scores": r["chosen_scores"],
               "rejected_scores": r["rejected_scores"]} for r in rows]
    page = dataset_metrics("rewardbench2", stored)
    assert page["rewardbench2"]["accuracy"] == row.accuracy and "bon" in page
    assert run_intervals("rewardbench2", stored)["rewardbench2"]["overall"] == row.interval


# -- the demo set -------------------------------------------------------------------------


def test_seed_demo_adds_a_rewardbench2_set_with_every_subset(tmp_path: Path) -> None:
    path = tmp_path / "nw.db"
    done = cli_here.run(["seed-demo", "--db", str(path)])
    assert done.returncode == 0, done.stderr
    assert "21 preference items as 'demo-rewardbench2' (rewardbench2)" in done.stdout
    db = store.connect(path)
    row = get_dataset(db, DEMO_REWARDBENCH2)
    assert (row["format"], row["created_by"]) == ("rewardbench2", "demo")
    stored = [i["record"] for i in iter_items(db, DEMO_REWARDBENCH2)]
    assert stored == rewardbench2_records()
    assert all(rb2_format.validate(r) == [] for r in stored)
    subsets = [r["subset"] for r in stored]
    assert {s: subsets.count(s) for s in set(subsets)} == {
        "Factuality": 3, "Precise IF": 3, "Math": 3, "Safety": 3, "Focus": 3, "Ties": 6}
    ties = [r for r in stored if r["subset"] == "Ties"]
    assert [r["id"] for r in ties] == ["ref:1", "tied:1", "ref:2", "tied:2", "ref:3", "tied:3"]
    for ref, tied in zip(ties[::2], ties[1::2], strict=True):
        assert ref["prompt"] == tied["prompt"] and ref["rejected"] == tied["rejected"]
        assert ref["chosen"] == tied["chosen"][:1] and len(tied["chosen"]) >= 3
    # the text comes from the data file
    from needlework.demo.loaders import data_file  # noqa: PLC0415
    from needlework.demo.rewardbench2 import FILE  # noqa: PLC0415

    bank = json.loads(data_file(FILE).read_text(encoding="utf-8"))
    assert [e["prompt"] for e in bank["best_of_4"]] == [r["prompt"] for r in stored[:15]]
    seed_demo(db)  # again: nothing new
    assert get_dataset(db, DEMO_REWARDBENCH2)["items"] == 21


def credit_by_hand(chosen: list[float], rejected: list[float]) -> float:
    """The official instance rule, written out again: the first correct score's share of
    the top when it is the top."""
    every = chosen + rejected
    return 1 / every.count(max(every)) if chosen[0] == max(every) else 0.0


@pytest.mark.slow
def test_the_demo_model_on_the_demo_set_and_the_page(tmp_path, monkeypatch,
                                                     demo_models_dir) -> None:
    from streamlit.testing.v1 import AppTest  # noqa: PLC0415

    from needlework.rewards.loading import load_reward_model  # noqa: PLC0415
    from needlework.rewards.runs import score_dataset  # noqa: PLC0415
    from tests.conftest import ROOT  # noqa: PLC0415

    path = tmp_path / "app.db"
    db = store.connect(path)
    seed_demo(db)
    rm = load_reward_model(demo_models_dir / "demo-model", device="cpu")
    out = tmp_path / "scores.jsonl"
    summary = score_dataset(db, rm, DEMO_REWARDBENCH2, out=out)
    figures = summary["metrics"]["rewardbench2"]
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(scored) == 21 and figures["comparable"] and figures["missing"] == 0
    for name in ("Factuality", "Precise IF", "Math", "Safety", "Focus"):
        group = [e for e in scored if e["subset"] == name]
        want = sum(credit_by_hand(e["chosen_scores"], e["rejected_scores"]) for e in group) / 3
        assert figures["subsets"][name]["accuracy"] == pytest.approx(want), name
    ties = [e for e in scored if e["subset"] == "Ties"]
    assert figures["subsets"]["Ties"]["accuracy"] == pytest.approx(
        rb2.ties_figures(ties)["accuracy"])
    assert figures["accuracy"] == pytest.approx(
        sum(p["accuracy"] for p in figures["subsets"].values()) / 6)

    # the Reward model page shows the figures, each with its interval and counts
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["dataset"] = DEMO_REWARDBENCH2
    at.run()
    at.switch_page("app_pages/rewards.py")
    at.run()
    assert not at.exception, at.exception
    (frame,) = [d.value for d in at.dataframe if "made of" in d.value.columns]
    assert list(frame["subset"]) == ["Factuality", "Precise IF", "Math", "Safety", "Focus",
                                     "Ties", "overall"]
    assert list(frame["rule"])[-2:] == ["ties", "mean of subsets"]
    assert all("%" in cell and "(95 %" in cell for cell in frame["95 % interval"])
    headline = [m for m in at.metric if m.label == "RewardBench 2 score"]
    assert headline and headline[0].value == percent(figures["accuracy"], space=False)
