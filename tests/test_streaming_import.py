"""Streaming import and export (issue 20, point 1): records are read, checked and
written in batches, memory stays bounded whatever the file size, a bad record on the
last line leaves the database as it was (file, line and field named), progress is
reported; exports stream the same way and are written whole or not at all."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import sqlite3
import subprocess
import sys
import tracemalloc

import pytest

import store
from needlework.datasets import transfer as nd
from needlework.datasets.transfer import (
    export_chunks,
    export_file,
    export_text,
    import_bytes,
    import_file,
)
from needlework.formats import FormatError, rmbench
from store.annotations import set_annotation
from tests.conftest import GARAGE_RECORD, ROOT

WORDS = ("the museum opens at nine and closes at five on weekdays while the gallery "
         "keeps longer hours in summer ").split()


def garage_like(i: int, passages: int = 15, words: int = 120) -> dict:
    """A GaRAGe-shaped question with ``passages`` passages of ``words`` words."""
    record = copy.deepcopy(GARAGE_RECORD)
    record["sample_id"] = f"q-{i:07d}"
    record["question"] = f"Question {i}: what are the opening hours?"
    text = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(words))
    record["grounding"] = [{f"cite_{n}": f"{n}. {text}", "age": "2 days", "date": "2024-11-11",
                            "provider": "web"} for n in range(1, passages + 1)]
    for field in ("evidence_relevant", "evidence_correct", "evidence_cited"):
        record[field] = [""] * passages
    record["answer_generate"] = "Nine to five [cite_1]."
    return record


def lines(records) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def digest(db) -> str:
    return hashlib.sha256("\n".join(db.conn.iterdump()).encode()).hexdigest()


LFRB = {"id": "QA_1", "subset": "QA", "prompt": "Why?", "chosen": ["Because."],
        "rejected": ["No.", "Maybe.", "Never."]}
RMB = {"id": 1, "subset": "alpacaeval-easy", "prompt": "Say hi.", "chosen": ["Hi", "Hello", "**Hi**"],
       "rejected": ["Bye", "Go", "**Go**"]}
PAIR = {"prompt": "Hi", "chosen": "Hello!", "rejected": "Go away."}
NEEDLE = {"word_count": 800, "tagged_position": 0.5, "prompt": "Write.", "chosen": ["a"],
          "rejected": ["b"]}


def _many(base: dict, n: int, key: str | None) -> list[dict]:
    out = []
    for i in range(n):
        r = copy.deepcopy(base)
        if key:
            r[key] = f"{base.get(key, 'x')}-{i}" if key != "id" or isinstance(base.get(key), str) else i
        r["prompt" if "prompt" in r else "question"] = f"prompt {i}"
        out.append(r)
    return out


# (format, good records, the last record broken, file name, bad field, line of the bad record)
N = 1203  # more than two batches of nd.BATCH_RECORDS


def _cases():
    garage = [garage_like(i, passages=2, words=5) for i in range(N)]
    bad_garage = copy.deepcopy(garage[-1])
    bad_garage["evidence_correct"] = ["NOPE", ""]
    lfrb = _many(LFRB, N, "id")
    bad_lfrb = dict(lfrb[-1], subset="Poetry")
    pairs = _many(PAIR, N, None)
    bad_pairs = dict(pairs[-1], chosen=5)
    needle = _many(NEEDLE, N, None)
    bad_needle = dict(needle[-1], tagged_position=float("nan"))
    rmb = _many(RMB, N, "id")
    bad_rmb = dict(rmb[-1], chosen=["only one"])
    return {
        "garage": (lines(garage), lines(garage[:-1] + [bad_garage]), "g.jsonl",
                   f"g.jsonl line {N}: evidence_correct[0] is 'NOPE'"),
        "lfrb": (lines(lfrb), lines(lfrb[:-1] + [bad_lfrb]), "l.jsonl",
                 f"l.jsonl line {N}: subset is 'Poetry'"),
        "pairs": (lines(pairs), lines(pairs[:-1] + [bad_pairs]), "p.jsonl",
                  f"p.jsonl line {N}: chosen must be a string or a list of messages"),
        "needle": (lines(needle), lines(needle[:-1]) + json.dumps(bad_needle).encode() + b"\n", "n.jsonl",
                   f"n.jsonl line {N}: tagged_position is NaN"),
        "rmbench": (json.dumps(rmb, indent=2).encode(), json.dumps(rmb[:-1] + [bad_rmb], indent=2).encode(),
                    "chat.json", f"chat.json record {N - 1} (line "),
    }


CASES = _cases()


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_a_bad_last_record_leaves_the_database_as_it_was(fmt, db):
    good, bad, name, message = CASES[fmt]
    import_bytes(db, good, name, format=fmt, dataset="kept")
    set_annotation(db, "kept", db.execute("select key from items limit 1").fetchone()[0], "ana",
                   "note", "x")
    before = digest(db)
    for options in ({"dataset": "fresh"}, {"dataset": "kept", "replace": True, "drop_annotations": True}):
        with pytest.raises(FormatError) as info:
            import_bytes(db, bad, name, format=fmt, **options)
        assert info.value.total == 1
        assert str(info.value.problems[0]).startswith(message), str(info.value)
        assert digest(db) == before
    assert db.execute("select count(*) from items where dataset = 'kept'").fetchone()[0] == N


def test_writes_happen_in_batches_inside_one_transaction(db, monkeypatch):
    """Items are inserted a batch at a time (never all at once), yet none is visible to
    another connection until the import commits."""
    sizes = []
    original = nd.store_datasets.DatasetWriter.add

    def spy(self, rows):
        rows = list(rows)
        sizes.append(len(rows))
        return original(self, rows)

    monkeypatch.setattr(nd.store_datasets.DatasetWriter, "add", spy)
    good = CASES["lfrb"][0]
    import_bytes(db, good, "l.jsonl")
    assert max(sizes) <= nd.BATCH_RECORDS and sum(sizes) == N and len(sizes) >= 3


def test_nothing_is_visible_to_other_connections_before_the_commit(db_path):
    db = store.connect(db_path)
    other = sqlite3.connect(db_path)
    seen = []

    def progress(done, total):
        seen.append(other.execute("select count(*) from items").fetchone()[0])

    data = lines([garage_like(i, passages=3, words=400) for i in range(600)])
    nd.import_stream(db, _Chunked(data, 1 << 16), "g.jsonl", size=len(data), progress=progress)
    assert len(seen) > 10 and set(seen) == {0}
    assert other.execute("select count(*) from items").fetchone()[0] == 600


class _Chunked(io.RawIOBase):
    """A stream that hands out at most ``chunk`` bytes a read (as a socket or pipe may)."""

    def __init__(self, data: bytes, chunk: int):
        self.data, self.chunk, self.pos = data, chunk, 0

    def readable(self):
        return True

    def readinto(self, b):
        n = min(len(b), self.chunk, len(self.data) - self.pos)
        b[:n] = self.data[self.pos : self.pos + n]
        self.pos += n
        return n


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_records_cut_across_reads_parse_the_same(db, chunk):
    """Line ends, CRLF pairs, multibyte characters and array elements cut at any
    byte between two reads."""
    records = [dict(LFRB, id=f"Q{i}", prompt=f"é\u2028{i}\r") for i in range(5)]
    jsonl_crlf = "\r\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode() + b"\r\n"
    array = json.dumps(_many(RMB, 5, "id"), indent=1, ensure_ascii=False).replace("\n", "\r\n").encode()
    for name, data in (("c.jsonl", jsonl_crlf), ("a.json", array)):
        expected = nd.formats.parse(data, name)
        nd.import_stream(db, _Chunked(data, chunk), name, dataset=f"{name}-{chunk}")
        got = [json.loads(r[0]) for r in db.execute(
            "select record from items where dataset = ? order by position", [f"{name}-{chunk}"])]
        assert got == [r.record for r in expected.records]


def test_progress_reaches_the_total(db):
    data = lines([garage_like(i, passages=4, words=300) for i in range(400)])
    calls = []
    nd.import_stream(db, _Chunked(data, 1 << 15), "g.jsonl", size=len(data),
                     progress=lambda done, total: calls.append((done, total)))
    assert len(calls) >= len(data) // (1 << 15)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert calls[-1] == (len(data), len(data))


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


BOUND = 16 << 20  # a fixed bound, whatever the file size


@pytest.mark.slow
def test_memory_stays_bounded_whatever_the_file_size(tmp_path):
    """Python's peak allocation during the import of a ~30 MB GaRAGe file and of a
    ~30 MB RM-Bench array stays under a fixed 16 MB; the whole file in memory would be
    several times its size."""
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as f:
        for start in range(0, 2400, 200):
            f.write(lines(garage_like(i) for i in range(start, start + 200)))
    assert big.stat().st_size > 25 << 20
    arr = tmp_path / "chat.json"
    long = "a fairly long response sentence. " * 400
    arr.write_text(json.dumps([dict(RMB, id=i, chosen=[long, long, long], rejected=[long, long, long])
                               for i in range(2200)], indent=4), encoding="utf-8")
    assert arr.stat().st_size > 25 << 20
    db = store.connect(tmp_path / "db.sqlite")
    peak = _peak(lambda: import_file(db, big))
    assert peak < BOUND, f"peak {peak / 2**20:.1f} MB importing {big.stat().st_size / 2**20:.0f} MB"
    peak = _peak(lambda: import_file(db, arr))
    assert peak < BOUND, f"peak {peak / 2**20:.1f} MB importing {arr.stat().st_size / 2**20:.0f} MB"
    assert db.execute("select count(*) from items").fetchone()[0] == 2400 + 2200
    out = tmp_path / "out.jsonl"
    peak = _peak(lambda: export_file(db, "big", "garage", out))
    assert peak < BOUND, f"peak {peak / 2**20:.1f} MB exporting"
    assert out.read_bytes() == big.read_bytes()
    peak = _peak(lambda: export_file(db, "chat", "rmbench", tmp_path / "out.json"))
    assert peak < BOUND
    assert json.loads((tmp_path / "out.json").read_bytes()) == json.loads(arr.read_bytes())


def test_exports_stream_in_pieces_with_the_same_text(db):
    records = _many(RMB, 7, "id")
    import_bytes(db, json.dumps(records).encode(), "chat.json")
    chunks = list(export_chunks(db, "chat", "rmbench"))
    assert len(chunks) == 8
    assert "".join(chunks) == json.dumps(records, ensure_ascii=False, indent=4) + "\n"
    assert rmbench.dump([]) == json.dumps([], indent=4) + "\n"
    pieces = list(export_chunks(db, "chat", "pairs"))
    assert len(pieces) == 7 * 9 and all(p.endswith("\n") for p in pieces)
    trl = export_text(db, "chat", "trl")
    assert len(trl.split("\n")) == 7 * 9 + 1


def test_export_failure_keeps_the_previous_file(ground_db, tmp_path):
    """An export that fails part way (an answer citing a missing passage is found
    after the first records were written) leaves the old file and no temporary file."""
    out = tmp_path / "out.jsonl"
    out.write_text("previous export\n", encoding="utf-8")
    set_annotation(ground_db, "ground", "q-0000599", "ana", "answer", "See [cite_99].")
    with pytest.raises(nd.ExportError, match="q-0000599"):
        export_file(ground_db, "ground", "garage", out)
    assert out.read_text(encoding="utf-8") == "previous export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


@pytest.fixture
def ground_db(db):
    import_bytes(db, lines([garage_like(i, passages=2, words=5) for i in range(600)]), "ground.jsonl")
    return db


@pytest.mark.slow
def test_cli_shows_a_progress_bar_on_stderr(tmp_path):
    src = tmp_path / "g.jsonl"
    src.write_bytes(lines([garage_like(i) for i in range(300)]))
    r = subprocess.run([sys.executable, "-m", "needlework", "import", str(src), "--progress",
                        "--db", str(tmp_path / "db.sqlite")], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "imported 300 grounding items as 'g' (garage)"
    frames = r.stderr.split("\r")
    assert frames[-1].endswith("\n") and "[" + "#" * 30 + "] 100%" in frames[-1]
    assert all(f.startswith("importing g.jsonl [") for f in frames[1:])
    quiet = subprocess.run([sys.executable, "-m", "needlework", "import", str(src), "--dataset", "g2",
                            "--db", str(tmp_path / "db.sqlite")], cwd=ROOT, capture_output=True,
                           text=True, timeout=120)
    assert quiet.returncode == 0 and quiet.stderr == ""  # not a terminal: no bar
