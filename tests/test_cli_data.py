"""The CLI contract: import, export, datasets, seed-demo (through the CLI's ``main`` in this
process; each verb's help and the big files through ``python -m needlework``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests import cli_here
from tests.conftest import RMBENCH_DIR, ROOT, garage_records, jsonl


def cli(*args, db):
    return cli_here.run([*args, "--db", str(db)])


def db_snapshot(db):
    import sqlite3  # noqa: PLC0415

    conn = sqlite3.connect(db)
    try:
        return {t: conn.execute(f"select * from {t} order by 1").fetchall()
                for t in ("datasets", "items", "annotations", "history")}
    finally:
        conn.close()


def test_garage_import_export_identical(tmp_path):
    src = tmp_path / "sample.jsonl"
    records = garage_records(4)
    src.write_bytes(jsonl(records))
    db = tmp_path / "db.sqlite"
    r = cli("import", str(src), db=db)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "imported 4 grounding items as 'sample' (garage)"
    r = cli("datasets", "--json", db=db)
    assert json.loads(r.stdout) == [{"name": "sample", "kind": "grounding", "format": "garage", "items": 4}]
    out = tmp_path / "out.jsonl"
    r = cli("export", "--dataset", "sample", "--format", "garage", "--out", str(out), db=db)
    assert r.returncode == 0, r.stderr
    exported = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in exported] == records


BAD_CASES = {
    "misaligned": lambda r: r[1].__setitem__("evidence_relevant", ["YES"]),
    "label": lambda r: r[0].__setitem__("evidence_correct", ["WRONG", "", ""]),
    "type": lambda r: r[1].__setitem__("question", ["x"]),
    "missing": lambda r: r[1].pop("sample_id"),
    "duplicate": lambda r: r[1].__setitem__("sample_id", r[0]["sample_id"]),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES) + ["truncated", "not_utf8", "empty"])
def test_bad_input_exits_nonzero_and_changes_nothing(tmp_path, case):
    db = tmp_path / "db.sqlite"
    good = tmp_path / "good.jsonl"
    good.write_bytes(jsonl(garage_records(2)))
    assert cli("import", str(good), db=db).returncode == 0
    before = db_snapshot(db)
    records = garage_records(2)
    if case in BAD_CASES:
        BAD_CASES[case](records)
        data = jsonl(records)
    elif case == "truncated":
        data = jsonl(records)[:-25]
    elif case == "not_utf8":
        data = jsonl(records) + b"\xff\n"
    else:
        data = b""
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(data)
    r = cli("import", str(bad), db=db)
    assert r.returncode != 0
    first = r.stderr.splitlines()[0]
    assert first.startswith("bad.jsonl line "), first
    assert "nothing imported" in r.stderr
    assert db_snapshot(db) == before


def test_rmbench_import_and_metadata(tmp_path):
    db = tmp_path / "db.sqlite"
    path = RMBENCH_DIR / "code_filtered.json"
    r = cli("import", str(path), "--dataset", "code", db=db)
    assert r.returncode == 0, r.stderr
    assert json.loads(cli("datasets", "--json", db=db).stdout) == [
        {"name": "code", "kind": "preference", "format": "rmbench", "items": 228}]
    r = cli("import", str(path), "--dataset", "code", db=db)
    assert r.returncode == 1 and "already exists" in r.stderr


@pytest.mark.slow
def test_every_verb_has_help(tmp_path):
    for verb in ("import", "export", "datasets", "seed-demo"):
        r = subprocess.run([sys.executable, "-m", "needlework", verb, "--help"], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and "usage:" in r.stdout


# -- import --replace (issue 11 point 6) -------------------------------------------------------


def _scores(db_path, dataset):
    import sqlite3  # noqa: PLC0415

    conn = sqlite3.connect(db_path)
    try:
        return conn.execute("select count(*) from item_scores where dataset = ?", [dataset]).fetchone()[0]
    finally:
        conn.close()


def test_replace_drops_model_scores_and_refuses_while_annotations_exist(tmp_path):
    import store  # noqa: PLC0415
    from store.annotations import set_annotation  # noqa: PLC0415
    from store.scores import save_item_scores  # noqa: PLC0415

    db = tmp_path / "db.sqlite"
    src = tmp_path / "prefs.jsonl"
    records = [{"id": f"QA_{i}", "subset": "QA", "prompt": f"p{i}", "chosen": ["good"],
                "rejected": ["bad", "worse", "worst"]} for i in range(4)]
    src.write_bytes(jsonl(records))
    assert cli("import", str(src), db=db).returncode == 0
    conn = store.connect(db)
    save_item_scores(conn, "prefs", "fp", "fp32|full", "m", [
        {"item_key": f"QA_{i}", "subset": "QA", "chosen_scores": [1.0],
         "rejected_scores": [0.0, 0.1, 0.2]} for i in range(4)])
    assert _scores(db, "prefs") == 4
    swapped = [dict(r, chosen=[r["rejected"][0]], rejected=[r["chosen"][0], "x", "y"]) for r in records]
    src.write_bytes(jsonl(swapped))
    r = cli("import", str(src), "--replace", db=db)
    assert r.returncode == 0, r.stderr
    assert _scores(db, "prefs") == 0  # the old items' scores went with them
    set_annotation(conn, "prefs", "QA_1", "ana", "verdict:0:0", {"verdict": "flip"})
    set_annotation(conn, "prefs", "QA_2", "bo", "verdict:0:1", {"verdict": "agree"})
    set_annotation(conn, "prefs", "QA_2", "bo", "verdict:0:1", {"verdict": "tie"})
    conn.conn.close()
    before = db_snapshot(db)
    r = cli("import", str(src), "--replace", db=db)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "prefs.jsonl: dataset 'prefs' has 2 annotation(s) by ana, bo and 3 change(s) in its history: "
        "replacing it would delete them (export it first, or add --drop-annotations to delete them); "
        "nothing imported"]
    assert db_snapshot(db) == before
    r = cli("import", str(src), "--replace", "--drop-annotations", db=db)
    assert r.returncode == 0, r.stderr
    after = db_snapshot(db)
    assert after["annotations"] == [] and after["history"] == []


def test_import_page_asks_before_dropping_annotations(tmp_path, monkeypatch):
    """With 'Replace' ticked and the name of an annotated dataset, the page shows a second
    tick saying how many annotations and history entries would go."""
    from streamlit.testing.v1 import AppTest  # noqa: PLC0415

    import store  # noqa: PLC0415
    from needlework.datasets.transfer import import_bytes  # noqa: PLC0415
    from store.annotations import set_annotation  # noqa: PLC0415

    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    import_bytes(db, jsonl(garage_records(2)), "ground.jsonl")
    set_annotation(db, "ground", "sample-1", "ana", "label:1", "OUTDATED")
    set_annotation(db, "ground", "sample-1", "ana", "label:1", "UNKNOWN")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.run()
    at.switch_page("app_pages/data.py")
    at.run()
    assert not at.exception
    assert not [c for c in at.checkbox if c.key == "import_drop"]
    at.text_input(key="import_name").set_value("ground")
    at.checkbox(key="import_replace").check()
    at.run()
    drop = at.checkbox(key="import_drop")
    assert "Also delete its 1 annotation(s) and 2 change(s) of history" in drop.label


# -- a full disk (issue 11 point 4, import half; point 5) ----------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MB tmpfs the test can fill (needs root and mount); skipped where none can be mounted
    (the rlimit tests below cover the same paths everywhere)."""
    import os  # noqa: PLC0415

    folder = tmp_path / "disk"
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def _fill(folder) -> object:
    """Fill the disk under ``folder``; returns the filler path (delete it to free space)."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as f:
        for size in (65536, 4096, 512, 1):
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError:
                pass
    return filler


def _big_garage(tmp_path, n=200):
    src = tmp_path / "big.jsonl"
    records = garage_records(n)
    for r in records:
        r["grounding"][0]["cite_1"] = "a long passage " * 600
    src.write_bytes(jsonl(records))
    return src


def test_import_on_a_full_disk_fails_in_one_line_and_recovers(small_disk, tmp_path):
    import store  # noqa: PLC0415

    db = small_disk / "db.sqlite"
    good = tmp_path / "good.jsonl"
    good.write_bytes(jsonl(garage_records(3)))
    assert cli("import", str(good), db=db).returncode == 0
    before = db_snapshot(db)
    app = store.connect(db)  # the app holds the database open (its WAL and shared memory exist)
    filler = _fill(small_disk)
    full = ("the disk is full (or the database reached its size limit): nothing was imported; "
            "free some space and try again")
    r = cli("import", str(_big_garage(tmp_path)), db=db)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [f"big.jsonl: {full}"]
    assert db_snapshot(db) == before
    app.conn.close()  # opening the database may now need space too (its shared-memory file)
    r = cli("import", str(_big_garage(tmp_path)), db=db)
    assert r.stderr.splitlines() in ([f"big.jsonl: {full}"],
                                     [f"big.jsonl: cannot open the database {db}: {full}"])
    filler.unlink()  # space returns: the same import works
    assert db_snapshot(db) == before
    r = cli("import", str(_big_garage(tmp_path, 40)), db=db)
    assert r.returncode == 0, r.stderr


def test_export_on_a_full_disk_keeps_the_previous_file(small_disk, tmp_path):
    db = tmp_path / "db.sqlite"
    assert cli("import", str(_big_garage(tmp_path)), db=db).returncode == 0
    out = small_disk / "out.jsonl"
    out.write_text("the previous export\n", encoding="utf-8")
    filler = _fill(small_disk)
    r = cli("export", "--dataset", "big", "--format", "garage", "--out", str(out), db=db)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [f"export: cannot write {out}: No space left on device; any "
                                     "previous file is unchanged"]
    assert out.read_text(encoding="utf-8") == "the previous export\n"
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "out.jsonl"]
    filler.unlink()
    assert cli("export", "--dataset", "big", "--format", "garage", "--out", str(out), db=db).returncode == 0
    assert len(out.read_bytes()) > 1_000_000


def _limited(limit: int):
    """preexec_fn: files may not grow past ``limit`` bytes, and writing past it fails with
    EFBIG instead of killing the process (what a full disk looks like to the writer)."""
    import resource  # noqa: PLC0415
    import signal  # noqa: PLC0415

    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.slow
def test_import_past_the_file_size_limit_fails_in_one_line(tmp_path):
    import os  # noqa: PLC0415

    db = tmp_path / "db.sqlite"
    good = tmp_path / "good.jsonl"
    good.write_bytes(jsonl(garage_records(3)))
    assert cli("import", str(good), db=db).returncode == 0
    before = db_snapshot(db)
    sizes = [os.path.getsize(p) for p in tmp_path.glob("db.sqlite*")]
    r = subprocess.run([sys.executable, "-m", "needlework", "import", str(_big_garage(tmp_path)),
                        "--db", str(db)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       preexec_fn=_limited(max(sizes) + 200_000))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    (line,) = r.stderr.splitlines()
    assert line.startswith("big.jsonl: the ") and "nothing was imported" in line, line
    assert db_snapshot(db) == before


def test_export_past_the_file_size_limit_keeps_the_previous_file(tmp_path):
    db = tmp_path / "db.sqlite"
    assert cli("import", str(_big_garage(tmp_path)), db=db).returncode == 0
    out = tmp_path / "out" / "garage.jsonl"
    out.parent.mkdir()
    out.write_text("the previous export\n", encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "needlework", "export", "--dataset", "big", "--format",
                        "garage", "--out", str(out), "--db", str(db)], cwd=ROOT, capture_output=True,
                       text=True, timeout=120, preexec_fn=_limited(300_000))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [f"export: cannot write {out}: File too large; any previous file "
                                     "is unchanged"]
    assert out.read_text(encoding="utf-8") == "the previous export\n"
    assert [p.name for p in out.parent.iterdir()] == ["garage.jsonl"]


def test_library_import_on_a_full_database_raises_import_failed(db_path, tmp_path):
    """SQLITE_FULL from the database itself (max_page_count), through import_stream."""
    import io  # noqa: PLC0415

    import store  # noqa: PLC0415
    from needlework.datasets.transfer import ImportFailed, import_bytes, import_stream  # noqa: PLC0415

    db = store.connect(db_path)
    import_bytes(db, jsonl(garage_records(2)), "small.jsonl")
    pages = db.execute("pragma page_count").fetchone()[0]
    db.execute(f"pragma max_page_count = {pages + 20}")
    before = db_snapshot(db_path)
    data = _big_garage(tmp_path).read_bytes()
    with pytest.raises(ImportFailed, match=r"^big.jsonl: the disk is full"):
        import_stream(db, io.BytesIO(data), "big.jsonl")
    assert db_snapshot(db_path) == before
    db.execute("pragma max_page_count = 1073741823")
    assert import_stream(db, io.BytesIO(data), "big.jsonl").items == 200


def test_export_writes_through_links_and_to_devices(tmp_path, db_path):
    """The atomic writer replaces a link's target (not the link), and writes straight
    into what cannot be replaced (a character device)."""
    import store  # noqa: PLC0415
    from needlework.datasets.transfer import export_file, import_bytes  # noqa: PLC0415

    db = store.connect(db_path)
    import_bytes(db, jsonl(garage_records(2)), "g.jsonl")
    target = tmp_path / "real.jsonl"
    target.write_text("old", encoding="utf-8")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    export_file(db, "g", "garage", link)
    assert link.is_symlink() and target.read_bytes() == jsonl(garage_records(2))
    assert export_file(db, "g", "garage", "/dev/null") == len(jsonl(garage_records(2)))
