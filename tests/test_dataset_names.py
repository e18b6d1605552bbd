"""Dataset names (issue 11, point 10): trimmed, 1-120 printable characters, no control
or bidi-override characters, unique up to case and spaces; enforced in the store for
the CLI and the UI alike; every link that carries a name percent-encodes it."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit.runtime.state.query_params import process_query_params

from components.home.tables import dataset_url
from needlework.datasets.transfer import dataset_name_for, import_bytes
from needlework.formats import FormatError
from store import datasets as ds
from store import names
from tests.conftest import ROOT, garage_records, jsonl

EVIL = "a&item=zz#x?dataset=evil"


@pytest.mark.parametrize("name", ["demo-grounding", "  padded  ", "Données 2025", "日本語のデータ", "x" * 120,
                                  "emoji 😀 set", EVIL, "a/b\\c <b>bold</b> $5 [x](y)"])
def test_valid_names_are_trimmed_and_kept(name):
    assert names.check_dataset_name(name) == name.strip()


@pytest.mark.parametrize(
    "name,why",
    [
        ("", "the dataset name is empty"),
        ("   \t ", "the dataset name is empty"),
        ("x" * 121, "121 characters long; at most 120"),
        ("x" * 10_000, "10000 characters long"),
        ("two\nlines", "a control character (U+000A) at position 4"),
        ("tab\there", "a control character (U+0009)"),
        ("bell\x07", "a control character (U+0007)"),
        ("del\x7f", "a control character (U+007F)"),
        ("abc\u202edcba", "an invisible formatting character (such as a bidirectional override) "
                          "(U+202E RIGHT-TO-LEFT OVERRIDE)"),
        ("iso\u2066late", "U+2066"),
        ("mark\u200fx", "U+200F RIGHT-TO-LEFT MARK"),
        ("zero\u200bwidth", "U+200B ZERO WIDTH SPACE"),
        ("line\u2028sep", "a line separator (U+2028"),
        ("para\u2029sep", "a paragraph separator"),
        ("no\u00a0break", "a space other than the plain space (U+00A0"),
        ("next\u0085line", "a control character (U+0085"),
    ],
)
def test_invalid_names_are_refused_saying_why(name, why):
    with pytest.raises(names.InvalidDatasetName) as info:
        names.check_dataset_name(name)
    assert why in str(info.value)


def test_the_store_enforces_the_rule_for_every_caller(db):
    with pytest.raises(names.InvalidDatasetName):
        ds.create_dataset(db, "bad\u202ename", "preference", "lfrb", [])
    with pytest.raises(names.InvalidDatasetName, match="surrounding spaces"):
        ds.create_dataset(db, " padded ", "preference", "lfrb", [])
    assert ds.list_datasets(db) == []


@pytest.mark.parametrize("other", ["demo-grounding", " demo-grounding ", "Demo-Grounding",
                                   "DEMO-GROUNDING", "demo- grounding", "de mo-groun ding"])
def test_names_are_unique_up_to_case_and_spaces(db, other):
    import_bytes(db, jsonl(garage_records(1)), "x.jsonl", dataset="demo-grounding")
    with pytest.raises(ds.DatasetExists) as info:
        import_bytes(db, jsonl(garage_records(1)), "x.jsonl", dataset=other)
    assert "demo-grounding" in str(info.value)
    if other.strip() != "demo-grounding":  # replacing works on the exact name only
        with pytest.raises(ds.DatasetExists, match="names that differ only in case or spaces"):
            import_bytes(db, jsonl(garage_records(1)), "x.jsonl", dataset=other, replace=True)
    assert [r["name"] for r in ds.list_datasets(db)] == ["demo-grounding"]


def test_the_import_function_of_the_page_names_the_file_and_writes_nothing(db):
    for name in ("", "\n", "a\u202eb", "x" * 10_000):
        with pytest.raises(FormatError) as info:
            import_bytes(db, jsonl(garage_records(1)), "good.jsonl", dataset=name)
        (problem,) = info.value.problems
        assert str(problem).startswith("good.jsonl: the dataset name ")
    assert ds.list_datasets(db) == []


def test_default_names_come_from_the_file_name_made_valid():
    assert dataset_name_for("sample.jsonl") == "sample"
    assert dataset_name_for("dir/chat_filtered.json") == "chat_filtered"
    assert dataset_name_for("a\u202eb\nc.jsonl") == "a b c"
    assert dataset_name_for(" spaced .jsonl") == "spaced"
    assert dataset_name_for("y" * 300 + ".jsonl") == "y" * 120


def _cli(*args, db):
    return subprocess.run([sys.executable, "-m", "needlework", *args, "--db", str(db)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_cli_refuses_bad_names_in_one_line(tmp_path):
    src = tmp_path / "good.jsonl"
    src.write_bytes(jsonl(garage_records(2)))
    db = tmp_path / "db.sqlite"
    assert _cli("import", str(src), "--dataset", "demo-grounding", db=db).returncode == 0
    for name, why in (("two\nlines", "a control character (U+000A)"),
                      ("rtl\u202eoverride", "U+202E RIGHT-TO-LEFT OVERRIDE"),
                      ("z" * 10_000, "10000 characters long"),
                      ("", "the dataset name is empty")):
        r = _cli("import", str(src), "--dataset", name, db=db)
        assert r.returncode == 1 and "Traceback" not in r.stderr
        first, last = r.stderr.splitlines()
        assert first.startswith("good.jsonl: the dataset name ") and why in first
        assert last == "nothing imported: 1 problem(s)"
    r = _cli("import", str(src), "--dataset", " Demo-Grounding ", db=db)
    assert r.returncode == 1 and r.stderr.count("\n") == 1
    assert "taken by dataset 'demo-grounding'" in r.stderr
    conn = sqlite3.connect(db)
    assert conn.execute("select name from datasets").fetchall() == [("demo-grounding",)]


@pytest.mark.parametrize("name", [EVIL, "with space+plus", "100% & more", "日本/語", "#hash", "a=b;c"])
def test_links_carry_the_name_as_one_value(name):
    for url in (dataset_url("app_pages/annotate.py", name), dataset_url("app_pages/home.py", name, "k&1#2")):
        parts = urlsplit(url)
        assert parts.fragment == ""
        query = parse_qs(parts.query, keep_blank_values=True, strict_parsing=True)
        assert query["dataset"] == [name]
        if "item" in query:
            assert parts.path == "/" and query["item"] == ["k&1#2"]
        else:
            assert parts.path == "/annotate"
    # st.page_link(query_params=...) encodes through Streamlit's own helper: one value too.
    assert parse_qs(process_query_params({"dataset": name, "item": "i"}))["dataset"] == [name]


def test_the_datasets_table_links_use_the_encoder(db, tmp_path, monkeypatch):
    """The home page's table of datasets and its recent-activity links, rendered by
    AppTest with a hostile dataset name."""
    from streamlit.testing.v1 import AppTest  # noqa: PLC0415

    import store  # noqa: PLC0415
    from store.annotations import set_annotation  # noqa: PLC0415

    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    app_db = store.connect(path)
    import_bytes(app_db, jsonl(garage_records(2)), "g.jsonl", dataset=EVIL)
    set_annotation(app_db, EVIL, "sample-1", "ana", "label:1", "OUTDATED")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.run()
    assert not at.exception
    opened, activity = [(link.proto.page, link.proto.query_string) for link in at.get("page_link")]
    assert opened[0] == "annotate" and parse_qs(opened[1]) == {"dataset": [EVIL]}
    assert activity[0] == "annotate"
    assert parse_qs(activity[1]) == {"dataset": [EVIL], "item": ["sample-1"]}
