"""Export of an annotated GaRAGe dataset: the export rule, round trips, the CLI."""

from __future__ import annotations

import json

import pytest

from needlework.cli import main
from needlework.datasets.transfer import ExportError, export_text, import_bytes
from needlework.formats.garage import DEFLECTION
from store.annotations import set_annotation
from tests.conftest import garage_records, jsonl


@pytest.fixture
def ground(db):
    import_bytes(db, jsonl(garage_records(3)), "ground.jsonl")
    return db


def _records(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_untouched_dataset_exports_verbatim(ground):
    assert export_text(ground, "ground", "garage").encode() == jsonl(garage_records(3))


def test_export_rule(ground):
    s = set_annotation
    # passage 1: final beats a unanimous vote
    s(ground, "ground", "sample-1", "ana", "label:1", "OUTDATED")
    s(ground, "ground", "sample-1", "bo", "label:1", "OUTDATED")
    s(ground, "ground", "sample-1", "rev", "final:label:1", "UNKNOWN")
    # passage 2: majority of three
    for who, value in (("ana", "RELATED-INFORMATION"), ("bo", "RELATED-INFORMATION"),
                       ("cy", "irrelevant")):
        s(ground, "ground", "sample-1", who, "label:2", value)
    # passage 3: a tie that does not include the imported RELATED-INFORMATION -> label order
    s(ground, "ground", "sample-1", "ana", "label:3", "UNKNOWN")
    s(ground, "ground", "sample-1", "bo", "label:3", "OUTDATED")
    # sample-2: one annotator, a dimension and an answer
    s(ground, "ground", "sample-2", "ana", "label:2", "ANSWER-THE-QUESTION")
    s(ground, "ground", "sample-2", "ana", "dim:question_complexity", "Multi-hop")
    s(ground, "ground", "sample-2", "ana", "dim:question_sensitive", "NO")
    s(ground, "ground", "sample-2", "ana", "answer", "Open 9-5 [cite_2], founded 1901 [cite_3].")
    # sample-3: deflection
    s(ground, "ground", "sample-3", "bo", "answer", DEFLECTION)
    s(ground, "ground", "sample-3", "bo", "deflected", True)
    one, two, three = _records(export_text(ground, "ground", "garage"))
    assert one["evidence_relevant"] == ["YES", "YES", "YES"]
    assert one["evidence_correct"] == ["UNKNOWN", "RELATED-INFORMATION", "OUTDATED"]
    assert one["answer_generate"] == garage_records(1)[0]["answer_generate"]
    assert two["evidence_relevant"] == ["YES", "YES", "YES"]
    assert two["evidence_correct"] == ["ANSWER-THE-QUESTION", "ANSWER-THE-QUESTION",
                                       "RELATED-INFORMATION"]
    assert two["evidence_cited"] == ["NO", "YES", "YES"]
    assert two["question_complexity"] == "Multi-hop"
    assert (two["question_sensitive"], two["question_type"]) == ("NO", "")
    assert three["answer_generate"] == DEFLECTION and three["evidence_cited"] == ["NO"] * 3
    assert list(two) == list(garage_records(1)[0])  # field order kept, extras kept
    assert two["extra_field_kept"] == {"nested": [1, 2, 3]}


def test_annotated_dataset_round_trips(ground):
    """Annotate via store functions, export, import the result, export again: equal."""
    s = set_annotation
    s(ground, "ground", "sample-1", "ana", "label:3", "OUTDATED")
    s(ground, "ground", "sample-1", "bo", "label:3", "UNKNOWN")
    s(ground, "ground", "sample-1", "ana", "answer", "It costs $5 [cite_1] <b>x</b> [cite_3].")
    s(ground, "ground", "sample-2", "ana", "dim:question_category", "Science")
    s(ground, "ground", "sample-3", "rev", "final:label:2", "UNKNOWN")
    first = export_text(ground, "ground", "garage")
    assert first != jsonl(garage_records(3)).decode()
    import_bytes(ground, first.encode(), "again.jsonl")
    second = export_text(ground, "again", "garage")
    assert second == first


def test_export_refuses_an_answer_citing_a_missing_passage(ground):
    set_annotation(ground, "ground", "sample-2", "ana", "answer", "See [cite_9].")
    with pytest.raises(ExportError, match=r"item sample-2: .*\[cite_9\]"):
        export_text(ground, "ground", "garage")


def test_cli_export_applies_annotations(tmp_path, db_path):
    import store  # noqa: PLC0415

    db = store.connect(db_path)
    import_bytes(db, jsonl(garage_records(2)), "ground.jsonl")
    set_annotation(db, "ground", "sample-2", "ana", "label:1", "irrelevant")
    db.conn.close()
    out = tmp_path / "out.jsonl"
    assert main(["export", "--dataset", "ground", "--format", "garage", "--out", str(out),
                 "--db", str(db_path)]) == 0
    records = _records(out.read_text())
    assert records[1]["evidence_relevant"][0] == "NO"
    assert records[1]["evidence_correct"][0] == ""
    assert records[0] == garage_records(2)[0]
