"""Formats: detection, validation (every bad-input case), round trips."""

from __future__ import annotations

import json

import pytest

from needlework import formats
from needlework.formats import FormatError
from tests.conftest import RMBENCH_DIR, garage_records, jsonl


def problems(data: bytes, name: str = "sample.jsonl", fmt: str | None = None) -> list[str]:
    with pytest.raises(FormatError) as info:
        formats.parse(data, name, fmt)
    return [str(p) for p in info.value.problems]


def lfrb(i: int = 1, **over) -> dict:
    r = {"id": f"QA_{i}", "subset": "QA", "prompt": "Why is the sky blue?",
         "chosen": ["Rayleigh scattering."], "rejected": ["Paint.", "Mirrors.", "Oceans."]}
    r.update(over)
    return r


def test_garage_detected_and_round_trip_exact():
    records = garage_records(3)
    parsed = formats.parse(jsonl(records), "sample.jsonl")
    assert parsed.format == "garage" and parsed.kind == "grounding"
    assert [r.key for r in parsed.records] == ["sample-1", "sample-2", "sample-3"]
    out = formats.garage.dump([r.record for r in parsed.records])
    assert [json.loads(line) for line in out.splitlines()] == records


def test_misaligned_list_names_file_line_field():
    records = garage_records(2)
    records[1]["evidence_correct"] = ["ANSWER-THE-QUESTION", ""]
    assert problems(jsonl(records)) == [
        "sample.jsonl line 2: evidence_correct has 2 entries but grounding has 3"
    ]


def test_truncated_json():
    data = jsonl(garage_records(2))[:-40]
    (message,) = problems(data)
    assert message.startswith("sample.jsonl line 2: invalid JSON")


def test_invalid_json_in_array_reports_line():
    (message,) = problems(b'[\n {"id": 1,\n  "prompt": }\n]', "x.json")
    assert message.startswith("x.json line 3: invalid JSON")


@pytest.mark.parametrize(
    "field,value,expected",
    [
        ("question", 5, "question must be a string, got an integer"),
        ("grounding", "text", "grounding must be a list, got a string"),
        ("evidence_correct", ["ANSWER", "", ""], "evidence_correct[0] is 'ANSWER', expected one of"),
        ("evidence_relevant", ["YES", "MAYBE", "NO"], "evidence_relevant[1] is 'MAYBE'"),
        ("question_complexity", "Hard", "question_complexity is 'Hard', expected one of"),
        ("question_popularity", "head", "question_popularity is 'head'"),
        ("question_type", "STATIC", "question_type is 'STATIC'"),
        ("question_valid", "maybe", "question_valid is 'maybe'"),
        ("topic_tag", "news", "topic_tag is 'news'"),
        ("answer_generate", "See [cite_9].", "answer_generate cites [cite_9] but grounding has 3"),
    ],
)
def test_garage_bad_values(field, value, expected):
    records = garage_records(1)
    records[0][field] = value
    (message,) = problems(jsonl(records))
    assert message.startswith("sample.jsonl line 1: ") and expected in message


def test_garage_passage_key_must_match_position():
    records = garage_records(1)
    records[0]["grounding"][1] = {"cite_7": "x", "age": "", "date": "", "provider": "web"}
    (message,) = problems(jsonl(records))
    assert "grounding[1].cite_2 is missing" in message and "'cite_7'" in message


@pytest.mark.parametrize("field", ["sample_id", "question", "grounding"])
def test_missing_required_field(field):
    records = garage_records(1)
    del records[0][field]
    assert problems(jsonl(records)) == [f"sample.jsonl line 1: {field} is missing"]


def test_duplicate_ids():
    records = garage_records(2)
    records[1]["sample_id"] = records[0]["sample_id"]
    assert problems(jsonl(records)) == [
        "sample.jsonl line 2: sample_id 'sample-1' is a duplicate (first seen on line 1)"
    ]


@pytest.mark.parametrize("data", [b"", b"\n\n  \n", b"\xef\xbb\xbf"])
def test_empty_file(data):
    assert problems(data) == ["sample.jsonl line 1: the file is empty: no records found"]


def test_empty_json_array():
    assert problems(b"[]", "x.json") == ["x.json line 1: the file is empty: the array has no records"]


def test_not_utf8_gives_offset():
    data = jsonl(garage_records(1)) + b'{"sample_id": "caf\xe9"}\n'
    (message,) = problems(data)
    offset = len(jsonl(garage_records(1))) + len('{"sample_id": "caf')
    assert message == f"sample.jsonl line 2: bytes are not UTF-8 at byte offset {offset} (0xe9)"


def test_bom_crlf_blank_lines_accepted():
    records = garage_records(2)
    body = "\r\n\r\n".join(json.dumps(r) for r in records) + "\r\n\r\n"
    parsed = formats.parse(b"\xef\xbb\xbf" + body.encode(), "sample.jsonl")
    assert [r.record for r in parsed.records] == records
    assert [r.line for r in parsed.records] == [1, 3]


def test_every_problem_reported_once():
    records = garage_records(3)
    records[0]["question"] = 1
    records[2]["evidence_cited"] = ["YES"]
    assert problems(jsonl(records)) == [
        "sample.jsonl line 1: question must be a string, got an integer",
        "sample.jsonl line 3: evidence_cited has 1 entries but grounding has 3",
    ]


def test_lfrb_detect_and_validate():
    parsed = formats.parse(jsonl([lfrb(1), lfrb(2, subset="Reasoning", rejected=["x"])]), "l.jsonl")
    assert parsed.format == "lfrb" and len(parsed.records) == 2
    (message,) = problems(jsonl([lfrb(1, subset="Math")]), "l.jsonl")
    assert message.startswith("l.jsonl line 1: subset is 'Math', expected one of 'QA'")
    (message,) = problems(jsonl([lfrb(1, chosen="text")]), "l.jsonl", "lfrb")
    assert message == "l.jsonl line 1: chosen must be a list, got a string"
    (message,) = problems(jsonl([lfrb(1, subset="Reasoning")]), "l.jsonl")
    assert "rejected has 3 entries, the Reasoning subset has exactly 1" in message


def test_rmbench_needs_three_and_three(tmp_path):
    record = {"id": 1, "prompt": "p", "subset": "alpacaeval", "chosen": ["a", "b", "c"],
              "rejected": ["x", "y"]}
    data = json.dumps([record], indent=2).encode()
    assert problems(data, "chat.json") == [
        "chat.json record 0 (line 2): rejected has 2 entries, expected exactly 3"
    ]


@pytest.mark.parametrize("path", sorted(RMBENCH_DIR.glob("*.json")), ids=lambda p: p.name)
def test_real_rmbench_files_round_trip(path):
    data = path.read_bytes()
    parsed = formats.parse(data, path.name)
    original = json.loads(data)
    assert parsed.format == "rmbench" and len(parsed.records) == len(original)
    domain = path.name.replace("_filtered.json", "")
    assert {r.subset for r in parsed.records} == {domain}
    assert json.loads(formats.rmbench.dump([r.record for r in parsed.records])) == original


def test_rmbench_line_numbers_point_at_records():
    path = RMBENCH_DIR / "chat_filtered.json"
    lines = path.read_text().splitlines()
    parsed = formats.parse(path.read_bytes(), path.name)
    for record in parsed.records[:5]:
        assert lines[record.line - 1].strip() == "{"
        assert f'"id": {record.record["id"]}' in lines[record.line]


def test_pairs_strings_and_conversational():
    plain = {"prompt": "Hi", "chosen": "Hello!", "rejected": "Go away."}
    conv = {"prompt": [{"role": "user", "content": "Hi"}],
            "chosen": [{"role": "assistant", "content": "Hello!"}],
            "rejected": [{"role": "assistant", "content": "Go away."}]}
    implicit = {"chosen": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}],
                "rejected": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Go away."}]}
    parsed = formats.parse(jsonl([plain, conv, implicit]), "p.jsonl")
    assert parsed.format == "pairs"
    views = [formats.preference_view("pairs", r.record) for r in parsed.records]
    assert {(v.prompt, v.chosen[0], v.rejected[0]) for v in views} == {("Hi", "Hello!", "Go away.")}
    (message,) = problems(jsonl([{"prompt": "Hi", "chosen": "a", "rejected": [{"role": "bot", "content": "b"}]}]),
                          "p.jsonl", "pairs")
    assert message == ("p.jsonl line 1: rejected[0].role is 'bot', expected one of 'system', "
                       "'user', 'assistant', 'tool'")


def test_needle_records():
    good = {"word_count": 800, "tagged_position": 0.4, "prompt": "Write.", "chosen": ["a"],
            "rejected": ["b"], "length_tokens": 1000, "site_index": 0, "needle_id": "s1",
            "haystack_id": "h1", "id": "n1"}
    parsed = formats.parse(jsonl([good]), "n.jsonl")
    assert parsed.format == "needle" and parsed.records[0].key == "n1"
    (message,) = problems(jsonl([dict(good, tagged_position=1.5)]), "n.jsonl")
    assert message == "n.jsonl line 1: tagged_position is 1.5, expected a value in [0.0, 1.0]"


def test_format_container_mismatch():
    (message,) = problems(jsonl(garage_records(1)), "g.jsonl", "rmbench")
    assert message == "g.jsonl line 1: the rmbench format is a JSON array"


def test_undetectable():
    (message,) = problems(jsonl([{"foo": 1}]), "x.jsonl")
    assert message.startswith("x.jsonl line 1: cannot detect the format")


def test_records_split_on_line_ends_only():
    """U+2028, U+2029, U+0085 (and \\v, \\f) are not line ends: str.splitlines() would cut
    these records apart (issue 11 point 7)."""
    records = [lfrb(1, prompt="a\u2028b\u2029c\u0085d\x0be\x0cf"), lfrb(2)]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    parsed = formats.parse(text.encode(), "l.jsonl")
    assert [r.record for r in parsed.records] == records
    assert [r.line for r in parsed.records] == [1, 2]
    raws = formats.reader.read_jsonl(text, "l.jsonl")  # the needle builder's reader too
    assert [r.value for r in raws] == records


def test_cr_only_and_mixed_line_ends_count_lines():
    body = (json.dumps(lfrb(1)) + "\r" + json.dumps(lfrb(2)) + "\r\n\r\n" + json.dumps(lfrb(3))
            + "\n" + '{"id": "QA_4", "subset": "QA", "prompt": 1, "chosen": ["a"], "rejected": ["b"]}')
    assert problems(body.encode(), "l.jsonl") == ["l.jsonl line 5: prompt must be a string, got an integer"]


def test_json_error_reads_naturally():
    (message,) = problems(jsonl(garage_records(1)) + b'{"sample_id": "abc\n')
    assert message == "sample.jsonl line 2: invalid JSON: Unterminated string starting at column 15"
    assert "at at" not in message


@pytest.mark.parametrize("path", sorted(RMBENCH_DIR.glob("*.json"))[:2], ids=lambda p: p.name)
def test_rmbench_stream_dump_is_the_same_text(path):
    records = json.loads(path.read_bytes())
    streamed = "".join(formats.rmbench.dump_iter(iter(records)))
    assert streamed == json.dumps(records, ensure_ascii=False, indent=4) + "\n"
