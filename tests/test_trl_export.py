"""TRL preference export of reviewed data: flips applied, ties/skips by rule, JSON lines."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import store
from needlework.datasets.transfer import export_formats, export_text, import_bytes, import_file
from needlework.formats.preference import Preference
from needlework.review.trl import decide, latest_verdicts, trl_records
from needlework.verdicts import make_value
from store.annotations import set_annotation
from tests.conftest import RMBENCH_DIR, ROOT, jsonl

LFRB = [
    {"id": "QA_1", "subset": "QA", "prompt": "Capital of France?", "chosen": ["Paris."],
     "rejected": ["Lyon.", "Paris, I think, or Lyon.", "Marseille."]},
    {"id": "RAG_2", "subset": "RAG", "prompt": "Boiling point of water at sea level?",
     "chosen": ["100 °C."], "rejected": ["90 °C.", "It boils.", "212 °C."]},
]


@pytest.fixture
def reviewed(db):
    import_bytes(db, jsonl(LFRB), "lf.jsonl", dataset="lf")
    verdicts = {("QA_1", 0, 0): "agree", ("QA_1", 0, 1): "flip", ("QA_1", 0, 2): "tie",
                ("RAG_2", 0, 0): "skip", ("RAG_2", 0, 1): "both-bad"}
    for (key, i, j), v in verdicts.items():
        set_annotation(db, "lf", key, "ana", f"verdict:{i}:{j}", make_value(v))
    return db


def lines(text):
    return [json.loads(line) for line in text.splitlines()]


def test_flips_swapped_skips_and_ties_dropped_unreviewed_kept(reviewed):
    assert "trl" in export_formats("preference", "lfrb")
    records = lines(export_text(reviewed, "lf", "trl"))
    assert all(list(r) == ["prompt", "chosen", "rejected"] for r in records)
    assert [(r["chosen"], r["rejected"]) for r in records] == [
        ("Paris.", "Lyon."),  # agree: as labelled
        ("Paris, I think, or Lyon.", "Paris."),  # flip: swapped
        ("100 °C.", "212 °C."),  # unreviewed: as labelled
    ]
    assert records[0]["prompt"] == "Capital of France?"


def test_keep_ties_keeps_tie_and_both_bad_as_labelled(reviewed):
    records = lines(export_text(reviewed, "lf", "trl", keep_ties=True))
    assert ("Marseille." in [r["rejected"] for r in records])  # the tie
    assert ("It boils." in [r["rejected"] for r in records])  # both-bad
    assert "90 °C." not in [r["rejected"] for r in records]  # skip stays dropped
    assert len(records) == 5


def test_conversational_records_are_message_lists(reviewed):
    records = lines(export_text(reviewed, "lf", "trl", conversational=True))
    flipped = records[1]
    assert flipped["prompt"] == [{"role": "user", "content": "Capital of France?"}]
    assert flipped["chosen"] == [{"role": "assistant", "content": "Paris, I think, or Lyon."}]
    assert flipped["rejected"] == [{"role": "assistant", "content": "Paris."}]


def test_conversational_import_keeps_the_whole_prompt_conversation(db):
    history = [{"role": "system", "content": "Answer briefly."},
               {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"},
               {"role": "user", "content": "Capital of France?"}]
    explicit = {"id": "a", "prompt": history, "chosen": [{"role": "assistant", "content": "Paris."}],
                "rejected": [{"role": "assistant", "content": "Lyon."}]}
    implicit = {"id": "b", "chosen": history + [{"role": "assistant", "content": "Paris."}],
                "rejected": history + [{"role": "assistant", "content": "Lyon."}]}
    import_bytes(db, jsonl([explicit, implicit]), "conv.jsonl", dataset="conv", format="pairs")
    set_annotation(db, "conv", "b", "ana", "verdict:0:0", make_value("flip"))
    first, second = lines(export_text(db, "conv", "trl", conversational=True))
    assert first == {"prompt": history, "chosen": explicit["chosen"], "rejected": explicit["rejected"]}
    assert second["prompt"] == history  # the implicit prompt: the turns before the last answer
    assert second["chosen"] == [{"role": "assistant", "content": "Lyon."}]  # flipped
    plain = lines(export_text(db, "conv", "trl"))
    assert plain[0]["prompt"] == "Capital of France?"  # standard form: the last user turn


def test_annotator_choice_and_latest_verdict_rule(reviewed):
    set_annotation(reviewed, "lf", "QA_1", "bo", "verdict:0:0", make_value("flip"))
    by_bo = lines(export_text(reviewed, "lf", "trl", annotator="bo"))
    assert (by_bo[0]["chosen"], by_bo[0]["rejected"]) == ("Lyon.", "Paris.")
    assert len(by_bo) == 6  # bo reviewed only one comparison: the rest kept as labelled
    latest = lines(export_text(reviewed, "lf", "trl"))  # bo's flip is the newest on QA_1 0:0
    assert (latest[0]["chosen"], latest[0]["rejected"]) == ("Lyon.", "Paris.")
    rows = [{"item_key": "k", "i": 0, "j": 0, "annotator": "a", "verdict": "agree", "updated_at": "2"},
            {"item_key": "k", "i": 0, "j": 0, "annotator": "b", "verdict": "flip", "updated_at": "1"}]
    assert latest_verdicts(rows) == {("k", 0, 0): "agree"}
    assert latest_verdicts(rows, "b") == {("k", 0, 0): "flip"}


def test_rule_table():
    assert [decide(v) for v in ("agree", "flip", "tie", "both-bad", "skip", None)] == [
        "keep", "swap", "drop", "drop", "drop", "keep"]
    assert decide("tie", keep_ties=True) == "keep" and decide("skip", keep_ties=True) == "drop"
    pref = Preference("x", "", "p", ["c0", "c1"], ["r0", "r1"])
    out = trl_records([("x", pref)], {("x", 1, 0): "flip"})
    assert [(r["chosen"], r["rejected"]) for r in out] == [
        ("c0", "r0"), ("c0", "r1"), ("r0", "c1"), ("c1", "r1")]


def test_rmbench_export_has_nine_pairs_per_prompt(db):
    import_file(db, RMBENCH_DIR / "safety-response_filtered.json", dataset="rs")
    text = export_text(db, "rs", "trl")
    assert len(text.splitlines()) == 9 * 157


@pytest.mark.slow
def test_cli_export_trl_options(tmp_path, reviewed):
    path = tmp_path / "cli.db"
    file_db = store.connect(path)
    import_bytes(file_db, jsonl(LFRB), "lf.jsonl", dataset="lf")
    set_annotation(file_db, "lf", "QA_1", "ana", "verdict:0:1", make_value("flip"))
    set_annotation(file_db, "lf", "QA_1", "ana", "verdict:0:2", make_value("tie"))
    file_db.conn.close()
    out = tmp_path / "out.jsonl"
    run = subprocess.run(
        [sys.executable, "-m", "needlework", "export", "--dataset", "lf", "--format", "trl",
         "--out", str(out), "--conversational", "--keep-ties", "--annotator", "ana", "--db", str(path)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "trl" in run.stdout
    records = lines(out.read_text(encoding="utf-8"))
    assert len(records) == 6
    assert records[1]["chosen"][0]["content"] == "Paris, I think, or Lyon."
    assert all(set(r) == {"prompt", "chosen", "rejected"} for r in records)
