"""Model answers files: several models, file and line in every error, nothing dropped silently."""

from __future__ import annotations

import os

import pytest

from needlework.formats.errors import FormatError
from needlework.rag.answers import (
    AnswerSet,
    coverage,
    dump_answers,
    merge,
    parse_answers,
    read_answer_files,
    read_answers_file,
)


def test_one_file_per_model_takes_the_file_name() -> None:
    sets = parse_answers('{"sample_id": "q1", "answer": "A"}\n\n{"sample_id": "q2", "answer": ""}\n',
                         "qwen-32b.jsonl")
    assert sets == [AnswerSet("qwen-32b", {"q1": "A", "q2": ""}, "qwen-32b.jsonl")]


def test_a_model_field_splits_one_file_into_models() -> None:
    text = ('{"sample_id": "q1", "answer": "a", "model": "m1"}\n'
            '{"sample_id": "q1", "answer": "b", "model": "m2"}\n'
            '{"sample_id": "q2", "answer": "c"}\n')
    sets = parse_answers(text, "runs.jsonl")
    assert [(s.model, s.answers) for s in sets] == [("m1", {"q1": "a"}), ("m2", {"q1": "b"}),
                                                    ("runs", {"q2": "c"})]
    assert parse_answers(dump_answers(sets), "x.jsonl") == [
        AnswerSet(s.model, s.answers, "x.jsonl") for s in sets]


@pytest.mark.parametrize(("text", "message"), [
    ('{"sample_id": "q1"}', "a.jsonl line 1: field 'answer' is missing"),
    ('{"sample_id": "q1", "answer": 3}', "a.jsonl line 1: field 'answer' must be a string, got an integer"),
    ('\n["q1", "x"]', "a.jsonl line 2: expected an object"),
    ('{"sample_id": " ", "answer": "x"}', "field 'sample_id' is empty"),
    ('{"sample_id": "q1", "answer": "x", "model": ""}', "field 'model' must be a non-empty string"),
    ('{"sample_id": "q1", "answer": "x", "model": 7}', "field 'model' must be a non-empty string"),
    ('{"sample_id": "q1", "answer": "x"}\n{"sample_id": "q1", "answer": "y"}',
     "a.jsonl line 2: field 'sample_id' repeats 'q1' for model 'a' (first on line 1)"),
    ('{"sample_id": "q1", "answer": NaN}', "a.jsonl line 1"),
    ('{"sample_id": "q1", "sample_id": "q2", "answer": "x"}', "a.jsonl line 1"),
    ("", "a.jsonl"),
])
def test_bad_lines_name_file_line_and_field(text, message) -> None:
    with pytest.raises(FormatError) as err:
        parse_answers(text, "a.jsonl")
    assert message in str(err.value)


def test_not_utf8_and_not_a_regular_file(tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"sample_id": "q1", "answer": "\xff"}\n')
    with pytest.raises(FormatError, match="bad.jsonl line 1: .*UTF-8"):
        read_answers_file(bad)
    with pytest.raises(FormatError, match="only regular files"):
        read_answers_file(tmp_path)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(FormatError, match="only regular files"):
        read_answers_file(fifo)


def test_a_model_given_by_two_files_is_refused(tmp_path) -> None:
    (tmp_path / "m.jsonl").write_text('{"sample_id": "q1", "answer": "a"}\n')
    (tmp_path / "other.jsonl").write_text('{"sample_id": "q2", "answer": "b", "model": "m"}\n')
    with pytest.raises(FormatError, match="other.jsonl: model 'm' is already given by m.jsonl"):
        read_answer_files([tmp_path / "m.jsonl", tmp_path / "other.jsonl"])
    assert len(merge([AnswerSet("a", {}), AnswerSet("b", {})])) == 2


def test_coverage_reports_unknown_missing_and_blank_by_id() -> None:
    answers = AnswerSet("m", {"q1": "yes", "zz": "stray", "q3": "  "})
    cov = coverage(answers, ["q1", "q2", "q3"])
    assert cov.answered == 2
    assert cov.unknown_ids == ["zz"] and cov.missing_ids == ["q2"] and cov.empty_ids == ["q3"]
