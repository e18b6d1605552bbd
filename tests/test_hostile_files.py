"""A sweep of hostile input files (issue 11, points 7-9): each gives one clean error
naming file, line and field, no traceback, and leaves the database exactly as it was;
through the CLI (its ``main``, and a real subprocess for a few) and through
``import_stream``, the function the
Import page calls with the uploaded file. Valid files that look odd (raw U+2028,
U+2029, U+0085 in strings, a BOM, CRLF or CR-only line ends, a 50 MB line) import
and round-trip.

The files are made here, from :data:`CASES`; nothing binary is committed.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import store
from needlework.datasets.transfer import (
    ImportFailed,
    export_text,
    import_bytes,
    import_file,
    import_stream,
)
from needlework.formats import FormatError
from store.datasets import DatasetExists
from tests import cli_here
from tests.conftest import ROOT, garage_records, jsonl


@dataclass(frozen=True)
class Case:
    name: str
    data: bytes | None  # None: a special path made by the test (FIFO, device, directory)
    line: int | None  # the line the error names (None: the whole file)
    expect: str  # a fragment of the one error (the field where there is one)
    filename: str = "bad.jsonl"
    format: str | None = None


def _garage(**over) -> dict:
    record = garage_records(1)[0]
    record.update(over)
    return record


def _line(record: dict) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode() + b"\n"


GOOD = _line(_garage(sample_id="good-1"))
GOOD_TEXT = GOOD.decode().rstrip("\n")


def _g(raw_tail: str) -> bytes:
    """A GaRAGe line on line 2 whose last field is ``raw_tail`` (raw JSON text)."""
    return GOOD + (GOOD_TEXT[:-1] + ", " + raw_tail + "}\n").replace('"good-1"', '"good-2"').encode()


def _g_bytes(raw: bytes) -> bytes:
    return GOOD + raw + b"\n"


LFRB = {"id": "QA_1", "subset": "QA", "prompt": "Why?", "chosen": ["Because."],
        "rejected": ["No.", "Maybe.", "Never."]}
RMB = {"id": 1, "subset": "alpacaeval-easy", "prompt": "Say hi.", "chosen": ["Hi", "Hello", "**Hi**"],
       "rejected": ["Bye", "Go", "**Go**"]}
NEEDLE = {"word_count": 800, "tagged_position": 0.5, "prompt": "Write.", "chosen": ["a"],
          "rejected": ["b"], "id": "n1"}
PAIR = {"prompt": "Hi", "chosen": "Hello!", "rejected": "Go away."}


def _rmb(*elements: str) -> bytes:
    return ("[\n" + ",\n".join(elements) + "\n]\n").encode()


RMB_TEXT = json.dumps(RMB)


def _rm(**over) -> str:
    record = copy.deepcopy(RMB)
    record.update(over)
    return json.dumps(record)


def _with(base: dict, **over) -> bytes:
    record = copy.deepcopy(base)
    record.update(over)
    return _line(record)


def _without(base: dict, field: str) -> bytes:
    record = copy.deepcopy(base)
    del record[field]
    return _line(record)


MANY = b"".join(_line(_garage(sample_id=f"m-{i}")) for i in range(1, 60))

CASES: list[Case] = [
    # -- containers, encodings, bytes --------------------------------------------------------
    Case("empty", b"", 1, "the file is empty"),
    Case("blank lines", b"\n\n  \n\t\n", 1, "the file is empty"),
    Case("bom only", b"\xef\xbb\xbf", 1, "the file is empty"),
    Case("bom and blanks", b"\xef\xbb\xbf\r\n\r\n", 1, "the file is empty"),
    Case("byte ff", GOOD + b'{"sample_id": "x\xff"}\n', 2, "not UTF-8 at byte offset"),
    Case("overlong utf8", GOOD + b'{"sample_id": "\xc0\xaf"}\n', 2, "not UTF-8"),
    Case("encoded surrogate", GOOD + b'{"sample_id": "\xed\xa0\x80"}\n', 2, "not UTF-8"),
    Case("cut multibyte at end", GOOD + b'{"sample_id": "\xe2\x82', 2, "not UTF-8"),
    Case("latin-1 text", GOOD + '{"question": "café"}\n'.encode("latin-1"), 2, "not UTF-8"),
    Case("utf-16 file", _line(_garage()).decode().encode("utf-16"), 1, "the file is UTF-16"),
    Case("nul bytes", GOOD + b"\x00\x00\x00\n", 2, "invalid JSON"),
    Case("truncated last line", GOOD + GOOD[:-40].replace(b"good-1", b"good-2"), 2,
         "invalid JSON: Unterminated string starting at column"),
    Case("unterminated string", _g_bytes(b'{"sample_id": "abc'), 2, "Unterminated string starting at column 15"),
    Case("trailing comma", _g_bytes(b'{"sample_id": "a", }'), 2, "invalid JSON"),
    Case("single quotes", _g_bytes(b"{'sample_id': 'a'}"), 2, "invalid JSON"),
    Case("comment", _g_bytes(b'// a comment'), 2, "invalid JSON"),
    Case("unquoted key", _g_bytes(b"{sample_id: 1}"), 2, "invalid JSON"),
    Case("two records on a line", _g_bytes(GOOD.strip().replace(b"good-1", b"good-2") * 2), 2,
         "invalid JSON: Extra data"),
    Case("form feed between records", _g_bytes(GOOD.strip().replace(b"good-1", b"g2") + b"\x0c"
                                               + GOOD.strip().replace(b"good-1", b"g3")), 2, "invalid JSON"),
    Case("u2028 between records", _g_bytes(GOOD.strip().replace(b"good-1", b"g2") + "\u2028".encode()
                                           + GOOD.strip().replace(b"good-1", b"g3")), 2, "invalid JSON"),
    Case("u0085 between records", _g_bytes(GOOD.strip().replace(b"good-1", b"g2") + "\u0085".encode()
                                           + GOOD.strip().replace(b"good-1", b"g3")), 2, "invalid JSON"),
    Case("raw control char in string", _g_bytes(b'{"sample_id": "a\x01b"}'), 2, "Invalid control character"),
    Case("raw tab in string", _g_bytes(b'{"sample_id": "a\tb"}'), 2, "Invalid control character"),
    Case("bad escape", _g_bytes(b'{"sample_id": "a\\xb"}'), 2, "Invalid \\escape"),
    Case("short unicode escape", _g_bytes(b'{"sample_id": "a\\u12"}'), 2, "Invalid \\uXXXX escape"),
    Case("top-level string", _g_bytes(b'"hello"'), 2, "record must be a JSON object, got a string"),
    Case("top-level number", _g_bytes(b"5"), 2, "record must be a JSON object, got an integer"),
    Case("top-level null", _g_bytes(b"null"), 2, "record must be a JSON object, got null"),
    Case("top-level list", _g_bytes(b'[{"sample_id": "x"}]'), 2, "record must be a JSON object, got a list"),
    # -- values JSON allows and no record may hold ---------------------------------------------
    Case("lone high surrogate", _g('"note": "x\\ud800y"'), 2, "note contains a lone surrogate"),
    Case("lone low surrogate", _g('"note": "\\udc00"'), 2, "note contains a lone surrogate"),
    Case("reversed pair", _g('"note": "\\ude00\\ud83d"'), 2, "note contains a lone surrogate"),
    Case("surrogate in a passage", _g('"extra": [{"t": "\\ud800"}]'), 2, "extra[0].t contains a lone surrogate"),
    Case("surrogate in a key", _g('"k\\udfff": 1'), 2, "the record has a key with a lone surrogate"),
    Case("nested 10000 deep", _g('"deep": ' + "[" * 10_000 + "]" * 10_000), 2, "nested too deeply"),
    Case("nested 10000 objects", _g('"deep": ' + '{"a":' * 10_000 + "1" + "}" * 10_000), 2,
         "nested too deeply"),
    Case("nested 300 deep", _g('"deep": ' + "[" * 300 + "]" * 300), 2, "deep is nested more than 256"),
    Case("5001-digit integer", _g('"big": ' + "7" * 5001), 2, "big is an integer of 5001 digits"),
    Case("negative 5001-digit integer", _g('"big": -' + "7" * 5001), 2, "big is an integer of 5001 digits"),
    Case("NaN", _g('"score": NaN'), 2, "score is NaN"),
    Case("Infinity", _g('"score": Infinity'), 2, "score is Infinity"),
    Case("-Infinity", _g('"score": -Infinity'), 2, "score is -Infinity"),
    Case("1e400", _g('"score": 1e400'), 2, "score is 1e400, which overflows to infinity"),
    Case("-1e400", _g('"score": -1e400'), 2, "score is -1e400"),
    Case("NaN in a passage", GOOD + json.dumps(_garage(sample_id="g2")).replace(
        '"provider": "ent"', '"provider": "ent", "w": NaN').encode() + b"\n", 2, "grounding[1].w is NaN"),
    Case("duplicate top-level key", _g('"question": "again"'), 2, "the record has the key 'question' twice"),
    Case("duplicate key in a passage", GOOD + json.dumps(_garage(sample_id="g2")).replace(
        '"cite_2": ', '"cite_2": "x", "cite_2": ').encode() + b"\n", 2, "grounding[1] has the key 'cite_2' twice"),
    Case("needle tagged_position NaN", _with(NEEDLE, id="a") + _line(NEEDLE).replace(b"0.5", b"NaN"), 2,
         "tagged_position is NaN", "n.jsonl"),
    Case("needle tagged_position Infinity", _line(NEEDLE).replace(b"0.5", b"Infinity"), 1,
         "tagged_position is Infinity", "n.jsonl"),
    Case("needle word_count 1e400", _line(NEEDLE).replace(b"800", b"1e400"), 1,
         "word_count is 1e400", "n.jsonl"),
    Case("needle tagged_position 1.5", _with(NEEDLE, tagged_position=1.5), 1,
         "tagged_position is 1.5, expected a value in [0.0, 1.0]", "n.jsonl"),
    Case("needle word_count negative", _with(NEEDLE, word_count=-3), 1, "word_count is -3", "n.jsonl"),
    Case("needle two chosen", _with(NEEDLE, chosen=["a", "b"]), 1, "chosen has 2 entries", "n.jsonl"),
    Case("needle word_count text", _with(NEEDLE, word_count="800"), 1,
         "word_count must be an integer, got a string", "n.jsonl"),
    # -- GaRAGe schema --------------------------------------------------------------------------
    Case("garage sample_id missing", GOOD + _without(_garage(), "sample_id"), 2, "sample_id is missing"),
    Case("garage question a number", GOOD + _line(_garage(sample_id="g2", question=5)), 2,
         "question must be a string, got an integer"),
    Case("garage question empty", GOOD + _line(_garage(sample_id="g2", question="  ")), 2, "question is empty"),
    Case("garage grounding text", GOOD + _line(_garage(sample_id="g2", grounding="x")), 2,
         "grounding must be a list, got a string"),
    Case("garage misaligned", GOOD + _line(_garage(sample_id="g2", evidence_relevant=["YES"])), 2,
         "evidence_relevant has 1 entries but grounding has 3"),
    Case("garage bad label", GOOD + _line(_garage(sample_id="g2", evidence_correct=["WRONG", "", ""])), 2,
         "evidence_correct[0] is 'WRONG'"),
    Case("garage passage key", GOOD + json.dumps(_garage(sample_id="g2")).replace('"cite_3"', '"cite_9"')
         .encode() + b"\n", 2, "grounding[2].cite_3 is missing"),
    Case("garage cites missing passage", GOOD + _line(_garage(sample_id="g2", answer_generate="[cite_7]")), 2,
         "answer_generate cites [cite_7] but grounding has 3"),
    Case("garage complexity", GOOD + _line(_garage(sample_id="g2", question_complexity="Hard")), 2,
         "question_complexity is 'Hard'"),
    Case("garage provider", GOOD + json.dumps(_garage(sample_id="g2")).replace('"provider": "ent"',
         '"provider": "cloud"').encode() + b"\n", 2, "grounding[1].provider is 'cloud'"),
    Case("garage duplicate sample_id", GOOD + GOOD, 2, "sample_id 'good-1' is a duplicate (first seen on line 1)"),
    Case("garage duplicate far apart", MANY + _line(_garage(sample_id="m-3")), 60,
         "sample_id 'm-3' is a duplicate (first seen on line 3)"),
    Case("garage bad last line of many", MANY + _line(_garage(sample_id="last", question=[])), 60,
         "question must be a string, got a list"),
    Case("garage bad line after CRLF lines", MANY.replace(b"\n", b"\r\n") + b"{", 60, "invalid JSON"),
    Case("garage bad line after CR-only lines", MANY.replace(b"\n", b"\r") + b"{", 60, "invalid JSON"),
    # -- Long-form RewardBench ----------------------------------------------------------------
    Case("lfrb subset", _with(LFRB, subset="Math"), 1, "subset is 'Math'", "l.jsonl"),
    Case("lfrb chosen text", _with(LFRB, chosen="x"), 1, "chosen must be a list, got a string", "l.jsonl", "lfrb"),
    Case("lfrb reasoning with three", _with(LFRB, subset="Reasoning"), 1,
         "rejected has 3 entries, the Reasoning subset has exactly 1", "l.jsonl"),
    Case("lfrb id boolean", _with(LFRB, id=True), 1, "id must be a string, got a boolean", "l.jsonl"),
    Case("lfrb prompt missing", _without(LFRB, "prompt"), 1, "prompt is missing", "l.jsonl"),
    Case("lfrb NaN in rejected", _line(LFRB).replace(b'"Never."', b"NaN"), 1, "rejected[2] is NaN", "l.jsonl"),
    # -- RM-Bench arrays ------------------------------------------------------------------------
    Case("rmbench two rejected", _rmb(RMB_TEXT, _rm(id=2, rejected=["a", "b"])), 3,
         "record 1 (line 3): rejected has 2 entries, expected exactly 3", "chat.json"),
    Case("rmbench extra data", _rmb(RMB_TEXT) + b"x", 4, "extra data after the array", "chat.json"),
    Case("rmbench not closed", b"[\n" + RMB_TEXT.encode() + b",\n", 3, "the file ends before the array is closed",
         "chat.json"),
    Case("rmbench ends inside a record", b"[\n" + RMB_TEXT.encode()[:-30], 2, "the file ends inside record 0",
         "chat.json"),
    Case("rmbench missing comma", b"[\n" + RMB_TEXT.encode() + b"\n" + _rm(id=2).encode() + b"\n]", 3,
         "expected ',' or ']' after record 0", "chat.json"),
    Case("rmbench trailing comma", b"[\n" + RMB_TEXT.encode() + b",\n]", 3, "expected a record after ','",
         "chat.json"),
    Case("rmbench empty array", b"[ ]", 1, "the array has no records", "chat.json"),
    Case("rmbench element not an object", _rmb(RMB_TEXT, "7"), 3, "record must be a JSON object", "chat.json"),
    Case("rmbench NaN", _rmb(RMB_TEXT, RMB_TEXT.replace('"id": 1', '"id": 2, "w": NaN')), 3, "w is NaN",
         "chat.json"),
    Case("rmbench duplicate key", _rmb(RMB_TEXT.replace('"id": 1', '"id": 1, "id": 2')), 2,
         "the record has the key 'id' twice", "chat.json"),
    Case("rmbench nested deep", _rmb(RMB_TEXT, RMB_TEXT.replace('"id": 1', '"id": 2, "d": '
                                                                + "[" * 10_000 + "]" * 10_000)), 3,
         "nested too deeply", "chat.json"),
    Case("rmbench syntax inside a record", b'[\n {"id": 1,\n  "prompt": }\n]', 3, "Expecting value", "chat.json"),
    Case("rmbench not utf-8", b"[\n" + RMB_TEXT.encode().replace(b"Say", b"S\xffy") + b"\n]", 2, "not UTF-8",
         "chat.json"),
    Case("rmbench duplicate id", _rmb(RMB_TEXT, RMB_TEXT), 3, "id '1' is a duplicate (first seen on line 2)",
         "chat.json"),
    # -- preference pairs -------------------------------------------------------------------------
    Case("pairs bad role", _with(PAIR, rejected=[{"role": "bot", "content": "b"}]), 1,
         "rejected[0].role is 'bot'", "p.jsonl", "pairs"),
    Case("pairs string and list", _with(PAIR, rejected=[{"role": "assistant", "content": "b"}]), 1,
         "chosen and rejected must both be strings or both be message lists", "p.jsonl"),
    Case("pairs prompt missing", _without(PAIR, "prompt"), 1, "prompt is missing", "p.jsonl", "pairs"),
    Case("pairs content a number", _with(PAIR, chosen=[{"role": "assistant", "content": 5}],
                                         rejected=[{"role": "assistant", "content": "x"}]), 1,
         "chosen[0].content must be a string", "p.jsonl"),
    # -- formats ----------------------------------------------------------------------------------
    Case("undetectable", b'{"foo": 1}\n', 1, "cannot detect the format"),
    Case("rmbench format on lines", GOOD, 1, "the rmbench format is a JSON array", "bad.jsonl", "rmbench"),
    Case("garage format on an array", _rmb(RMB_TEXT), 1, "the garage format is JSON lines", "x.json", "garage"),
    # -- things that are not regular files ------------------------------------------------------
    Case("fifo", None, None, "cannot import a FIFO (named pipe)", "pipe.jsonl"),
    Case("dev zero", None, None, "cannot import a character device", "zero"),
    Case("directory", None, None, "cannot import a directory", "folder.jsonl"),
    Case("link to dev zero", None, None, "cannot import a character device", "zero-link.jsonl"),
    Case("missing file", None, None, "cannot read the file: No such file or directory", "missing.jsonl"),
]

assert len(CASES) >= 80, len(CASES)


def make_input(case: Case, folder: Path) -> Path:
    """The case's file in ``folder`` (FIFOs, links and folders for the special ones)."""
    path = folder / case.filename
    if case.data is not None:
        path.write_bytes(case.data)
    elif case.name == "fifo":
        os.mkfifo(path)
    elif case.name == "dev zero":
        return Path("/dev/zero")
    elif case.name == "directory":
        path.mkdir()
        (path / "inside.jsonl").write_bytes(GOOD)
    elif case.name == "link to dev zero":
        path.symlink_to("/dev/zero")
    return path


def db_digest(path: Path) -> str:
    """sha256 of the whole database's SQL dump (every table, every row)."""
    conn = sqlite3.connect(path)
    try:
        return hashlib.sha256("\n".join(conn.iterdump()).encode()).hexdigest()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    """A database with one dataset in it, so 'unchanged' means something."""
    path = tmp_path_factory.mktemp("hostile") / "db.sqlite"
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(3)), "existing.jsonl")
    db.conn.close()
    return path


def _check_problem(case: Case, message: str) -> None:
    assert message.startswith(case.filename if case.name != "dev zero" else "zero"), message
    if case.line is not None:
        assert f"line {case.line}" in message.split(":")[0], message
    assert case.expect in message, message
    assert "Traceback" not in message


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_library_gives_one_clean_error_and_writes_nothing(case, seeded, tmp_path):
    """``import_stream`` (the Import page's call) or, for paths, ``import_file``."""
    before = db_digest(seeded)
    db = store.connect(seeded)
    try:
        with pytest.raises(FormatError) as info:
            if case.data is not None:
                import_stream(db, io.BytesIO(case.data), case.filename, size=len(case.data),
                              format=case.format)
            else:
                import_file(db, make_input(case, tmp_path), format=case.format)
    finally:
        db.conn.close()
    error = info.value
    assert (error.total, len(error.problems)) == (1, 1), str(error)
    _check_problem(case, str(error.problems[0]))
    assert db_digest(seeded) == before


def _cli(args: list[str]) -> subprocess.CompletedProcess:
    """``python -m needlework ARGS`` as a subprocess."""
    return subprocess.run([sys.executable, "-m", "needlework", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


#: Cases also run as a real subprocess (``python -m needlework``: exit code and streams).
SUBPROCESS_CASES = 4


@pytest.mark.slow
def test_cli_gives_one_clean_error_per_file_and_writes_nothing(seeded, tmp_path):
    """Every case through the CLI's ``main``; the first few also through ``python -m
    needlework import`` as a subprocess."""
    before = db_digest(seeded)
    results = []
    for i, case in enumerate(CASES):
        folder = tmp_path / str(i)
        folder.mkdir()
        path = make_input(case, folder)
        args = ["import", str(path), "--db", str(seeded)]
        if case.format:
            args += ["--format", case.format]
        results.append((case, cli_here.run(args)))
        if i < SUBPROCESS_CASES:
            results.append((case, _cli(args)))
    for case, r in results:
        lines = r.stderr.splitlines()
        assert r.returncode == 1, (case.name, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr, (case.name, r.stderr)
        assert lines[-1] == "nothing imported: 1 problem(s)", (case.name, r.stderr)
        assert len(lines) == 2, (case.name, r.stderr)
        _check_problem(case, lines[0])
        assert r.stdout == ""
    assert db_digest(seeded) == before


# -- valid files that look odd --------------------------------------------------------------------

SEPARATORS = "line\u2028separator, paragraph\u2029separator, next line\u0085end"


def _odd_records() -> list[dict]:
    records = garage_records(3)
    records[0]["question"] = "Why? " + SEPARATORS
    records[1]["grounding"][0]["cite_1"] = SEPARATORS + " \u00a0\u200b\u202e reversed \U0001f600"
    records[2]["comments"] = "\x7f is fine, and so is \\u2028 written as an escape: \u2028"
    return records


def _body(records: list[dict], end: str, bom: bool = False) -> bytes:
    text = end.join(json.dumps(r, ensure_ascii=False) for r in records) + end
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")


VALID = {
    "raw separators": _body(_odd_records(), "\n"),
    "escaped separators": "".join(json.dumps(r) + "\n" for r in _odd_records()).encode(),
    "bom": _body(_odd_records(), "\n", bom=True),
    "crlf": _body(_odd_records(), "\r\n"),
    "cr only": _body(_odd_records(), "\r"),
    "bom crlf blank lines": _body(_odd_records(), "\r\n\r\n", bom=True),
    "no final newline": _body(_odd_records(), "\n").rstrip(b"\n"),
}


def _export_records(text: str) -> list[dict]:
    """Records of exported JSONL, split on \\n only (never str.splitlines())."""
    return [json.loads(line) for line in text.split("\n") if line]


@pytest.mark.parametrize("name", sorted(VALID))
def test_odd_but_valid_files_import_and_round_trip(name, db):
    data = VALID[name]
    summary = import_stream(db, io.BytesIO(data), "odd.jsonl", size=len(data))
    assert (summary.items, summary.format) == (3, "garage")
    first = export_text(db, "odd", "garage")
    assert _export_records(first) == _odd_records()
    assert "\u2028" in first  # written raw, as JSON allows
    import_bytes(db, first.encode("utf-8"), "again.jsonl")  # the tool reads its own export
    assert export_text(db, "again", "garage") == first


@pytest.mark.slow
def test_odd_but_valid_files_through_the_cli(tmp_path):
    db = tmp_path / "db.sqlite"
    for i, (name, data) in enumerate(sorted(VALID.items())):
        src = tmp_path / f"odd{i}.jsonl"
        src.write_bytes(data)
        run = _cli if i == 0 else cli_here.run  # the first file as a subprocess too
        r = run(["import", str(src), "--db", str(db)])
        assert r.returncode == 0 and "Traceback" not in r.stderr, (name, r.stderr)
        assert r.stdout.strip() == f"imported 3 grounding items as 'odd{i}' (garage)"
        out = tmp_path / f"out{i}.jsonl"
        r = run(["export", "--dataset", f"odd{i}", "--format", "garage", "--out", str(out), "--db", str(db)])
        assert r.returncode == 0, r.stderr
        assert _export_records(out.read_text(encoding="utf-8")) == _odd_records()
        r = run(["import", str(out), "--dataset", f"back{i}", "--db", str(db)])
        assert r.returncode == 0, (name, r.stderr)


def _big_line_record(size: int) -> dict:
    record = garage_records(1)[0]
    chunk = "Fifty megabytes of passage text \u2028 with separators. "
    record["grounding"][2]["cite_3"] = chunk * (size // len(chunk.encode()))
    return record


@pytest.mark.slow
def test_a_50_mb_line_imports_and_round_trips(tmp_path):
    record = _big_line_record(50 << 20)
    other = garage_records(2)[1]
    data = jsonl([record, other])
    assert len(data) > 50 << 20
    src = tmp_path / "big.jsonl"
    src.write_bytes(data)
    db_path = tmp_path / "db.sqlite"
    r = _cli(["import", str(src), "--db", str(db_path)])
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out.jsonl"
    r = _cli(["export", "--dataset", "big", "--format", "garage", "--out", str(out), "--db", str(db_path)])
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == data
    db = store.connect(db_path)
    summary = import_stream(db, io.BytesIO(data), "big-again.jsonl", size=len(data))
    assert summary.items == 2
    assert export_text(db, "big-again", "garage").encode() == data


def test_a_record_over_the_limit_is_refused_without_reading_on(db, monkeypatch):
    """An endless line (a file of zeros) is refused once it passes the record limit;
    the rest is never read."""
    from needlework.formats import reader  # noqa: PLC0415

    monkeypatch.setattr(reader, "MAX_RECORD_BYTES", 1 << 20)
    monkeypatch.setattr(reader, "CHUNK_BYTES", 1 << 16)

    class Zeros(io.RawIOBase):
        read_bytes = 0

        def readable(self):
            return True

        def readinto(self, b):
            Zeros.read_bytes += len(b)
            b[:] = b"0" * len(b)
            return len(b)

    with pytest.raises(FormatError) as info:
        import_stream(db, Zeros(), "zeros.jsonl", format="garage")
    assert str(info.value) == ("zeros.jsonl line 1: the line is longer than 1 MiB, the most one "
                               "record may take: reading stopped here")
    assert Zeros.read_bytes < 3 << 20
    with pytest.raises(FormatError, match=r"record 0 is larger than 1 MiB"):
        import_stream(db, io.BytesIO(b"[" + b'"' + b"x" * (2 << 20) + b'"]'), "big.json")


def test_import_errors_and_existing_names_are_exceptions_the_page_handles(db):
    import_bytes(db, GOOD, "a.jsonl")
    with pytest.raises(DatasetExists):
        import_bytes(db, GOOD, "a.jsonl")
    assert issubclass(ImportFailed, RuntimeError)
