"""Attribution precision / recall / F1 (benchmarks.md §1) and the CLI verb."""

from __future__ import annotations

import json

import pytest

import store
from needlework.cli import main
from needlework.datasets.transfer import import_bytes
from needlework.grounding.attribution import AnswersError, attribution, read_answers, score
from store.annotations import set_annotation
from tests.conftest import garage_records, jsonl


def test_score_rule():
    assert score({1, 2}, {1, 3}) == (0.5, 0.5, 0.5)
    assert score({1}, {1, 2, 3}) == pytest.approx((1 / 3, 1.0, 0.5))
    assert score({1}, set()) == (0.0, 0.0, 0.0)
    assert score({1}, {2}) == (0.0, 0.0, 0.0)


def test_report_skips_empty_gold_and_scores_missing_as_zero():
    gold = {"q1": "a [cite_1] b [cite_2]", "q2": "nothing cited", "q3": "x [cite_3]",
            "q4": "y [cite_1]"}
    model = {"q1": "a [cite_1] [cite_3]", "q2": "[cite_1]", "q3": "no markers",
             "zz": "[cite_1]"}
    rep = attribution(gold, model)
    assert rep.scored == 3 and rep.skipped_empty_gold == 1 and rep.missing_answers == 1
    assert rep.unknown_ids == ["zz"]
    rows = {r["sample_id"]: r for r in rep.rows}
    assert rows["q1"]["precision"] == 0.5 and rows["q1"]["recall"] == 0.5
    assert rows["q2"]["status"] == "skipped: empty gold" and rows["q2"]["f1"] is None
    assert rows["q3"]["f1"] == 0.0 and rows["q4"]["status"] == "scored: no model answer"
    assert rep.precision == pytest.approx(0.5 / 3)
    assert rep.recall == pytest.approx(0.5 / 3)
    assert rep.f1 == pytest.approx(0.5 / 3)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"sample_id": "a", "answer": "x"}\nnot json\n', "answers.jsonl line 2: not valid JSON"),
        ('{"sample_id": "a"}\n', "answers.jsonl line 1: field 'answer' is missing"),
        ('{"sample_id": "a", "answer": 3}\n',
         "answers.jsonl line 1: field 'answer' must be a string, got a number"),
        ('{"answer": "x"}\n', "answers.jsonl line 1: field 'sample_id' is missing"),
        ('["a"]\n', "answers.jsonl line 1: expected an object"),
        ('{"sample_id": "a", "answer": ""}\n\n{"sample_id": "a", "answer": ""}\n',
         "answers.jsonl line 3: field 'sample_id' repeats 'a' (first on line 1)"),
        ("", "answers.jsonl: no answers"),
    ],
)
def test_bad_answer_files_name_file_line_and_field(text, message):
    with pytest.raises(AnswersError) as info:
        read_answers(text.encode(), "answers.jsonl")
    assert str(info.value).startswith(message)


def test_gold_is_the_annotated_human_answer(db):
    from needlework.grounding.export import human_answers  # noqa: PLC0415

    import_bytes(db, jsonl(garage_records(2)), "ground.jsonl")
    set_annotation(db, "ground", "sample-2", "ana", "answer", "Founded 1901 [cite_3].")
    assert human_answers(db, "ground") == {"sample-1": "Adults pay $5 or $10 [cite_1].",
                                           "sample-2": "Founded 1901 [cite_3]."}


@pytest.fixture
def cli_db(db_path):
    db = store.connect(db_path)
    import_bytes(db, jsonl(garage_records(3)), "ground.jsonl")
    set_annotation(db, "ground", "sample-3", "ana", "answer", "No cite here.")
    db.conn.close()
    return db_path


def test_cli_attribution_json(cli_db, tmp_path, capsys):
    answers = tmp_path / "model.jsonl"
    answers.write_text(json.dumps({"sample_id": "sample-1", "answer": "$5 [cite_1] [cite_2]"})
                       + "\n" + json.dumps({"sample_id": "sample-2", "answer": ""}) + "\n")
    code = main(["attribution", "--dataset", "ground", "--answers", str(answers),
                 "--db", str(cli_db), "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dataset"] == "ground" and out["scored"] == 2 and out["skipped_empty_gold"] == 1
    assert out["mean"]["precision"] == pytest.approx(0.25)
    assert out["mean"]["recall"] == pytest.approx(0.5)
    assert out["mean"]["f1"] == pytest.approx(1 / 3)
    assert [q["sample_id"] for q in out["questions"]] == ["sample-1", "sample-2", "sample-3"]


def test_cli_attribution_bad_file_and_dataset(cli_db, tmp_path, capsys):
    answers = tmp_path / "model.jsonl"
    answers.write_text('{"sample_id": "sample-1", "answer": null}\n')
    assert main(["attribution", "--dataset", "ground", "--answers", str(answers),
                 "--db", str(cli_db)]) == 1
    assert "model.jsonl line 1: field 'answer' must be a string, got null" in \
        capsys.readouterr().err
    assert main(["attribution", "--dataset", "nope", "--answers", str(answers),
                 "--db", str(cli_db)]) == 1
    assert "no dataset 'nope'" in capsys.readouterr().err
    missing = tmp_path / "missing.jsonl"
    assert main(["attribution", "--dataset", "ground", "--answers", str(missing),
                 "--db", str(cli_db)]) == 1
    assert "missing.jsonl: cannot read the file" in capsys.readouterr().err


def test_cli_attribution_text(cli_db, tmp_path, capsys):
    answers = tmp_path / "model.jsonl"
    answers.write_text(json.dumps({"sample_id": "sample-1", "answer": "[cite_1]"}) + "\n")
    assert main(["attribution", "--dataset", "ground", "--answers", str(answers),
                 "--db", str(cli_db)]) == 0
    out = capsys.readouterr().out
    assert "sample-1\tP=1.000\tR=1.000\tF1=1.000\tscored" in out
    assert "mean over 2 question(s): P=0.500 R=0.500 F1=0.500" in out
