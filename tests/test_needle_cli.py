"""``python -m needlework needle build|run|report`` end to end on a tiny real model."""

from __future__ import annotations

import json

import pytest

import store
from needlework.cli import main
from needlework.needle import analysis, inputs
from needlework.needle.analysis import read_results_csv
from store import datasets as store_datasets
from tests.test_needle_model import one_thread, paragraphs, tiny_model_dir  # noqa: F401 (fixture)


def _haystack_file(tmp_path):
    hays = inputs.demo_haystacks(2, 700, paragraphs=paragraphs(80))
    path = tmp_path / "hay.jsonl"
    path.write_text("".join(json.dumps({"prompt": h.prompt, "response": h.text}) + "\n" for h in hays),
                    encoding="utf-8")
    return path


@pytest.mark.slow
def test_build_run_report(tmp_path, db_path, capsys):
    out = tmp_path / "needles.jsonl"
    code = main(["needle", "build", "--haystacks", str(_haystack_file(tmp_path)), "--lengths", "300,600",
                 "--positions", "3", "--out", str(out), "--dataset", "nd", "--db", str(db_path)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "12 safety needle records from 2 haystacks" in printed and "imported 12 needle items" in printed
    db = store.connect(db_path)
    assert store_datasets.get_dataset(db, "nd")["kind"] == "needle"
    assert len(out.read_text().splitlines()) == 12

    csv = tmp_path / "results.csv"
    code = main(["needle", "run", "--model", str(tiny_model_dir()), "--dataset", "nd", "--out", str(csv),
                 "--db", str(db_path), "--dtype", "fp32", "--device", "cpu", "--reuse", "on"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "prefix reuse on 12 records" in printed
    frame = read_results_csv(csv)
    assert len(frame) == 12 and list(frame.columns[:10]) == analysis.RESULT_COLUMNS

    code = main(["needle", "report", "--results", str(csv), "--out-dir", str(tmp_path / "report")])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert (tmp_path / "report" / "heatmap.png").is_file() and (tmp_path / "report" / "lines.svg").is_file()
    assert "Accuracy" in printed


def test_build_reports_bad_facts_with_file_and_line(tmp_path, capsys):
    facts = tmp_path / "facts.jsonl"
    facts.write_text('{"true": "A cat is a mammal."}\n', encoding="utf-8")
    code = main(["needle", "build", "--haystacks", str(_haystack_file(tmp_path)), "--kind", "factuality",
                 "--facts", str(facts), "--lengths", "300", "--out", str(tmp_path / "x.jsonl")])
    err = capsys.readouterr().err
    assert code == 1
    assert "facts.jsonl line 1: false is missing" in err
    assert not (tmp_path / "x.jsonl").exists()


def test_report_from_a_scores_file_with_errors(tmp_path, capsys):
    scores = tmp_path / "scores.jsonl"
    scores.write_text('{"id": "a", "chosen_scores": [1], "rejected_scores": [0], "length_tokens": 1000}\n',
                      encoding="utf-8")
    code = main(["needle", "report", "--scores", str(scores), "--out-dir", str(tmp_path / "r")])
    assert code == 1
    assert "scores.jsonl line 1: tagged_position is missing" in capsys.readouterr().err
