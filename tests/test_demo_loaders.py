"""The demo's data files and their loaders (needlework.demo.loaders).

Bad data fails on load with the file and the field's path; every file in the
data folder is read by a builder and shipped by the package configuration.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal, TypedDict

import pytest

from needlework import demo
from needlework.demo import haystack, loaders
from needlework.demo._util import apply_edits
from needlework.demo.grounding import GroundingEntry
from needlework.demo.loaders import DemoDataError, check, parse_json, parse_sections
from needlework.demo.rag_answers import demo_answer_sets

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "needlework" / "demo" / "data"


class _Base(TypedDict):
    name: str
    share: float
    count: int
    flags: list[bool]
    kind: Literal["a", "b"]


class Shape(_Base, total=False):
    note: str | int


GOOD = {"name": "x", "share": 95.0, "count": 3, "flags": [True], "kind": "a"}


def test_check_accepts_a_good_value_and_optional_fields():
    check(GOOD, Shape, "f.json", "")
    check({**GOOD, "note": "n"}, Shape, "f.json", "")
    check([{**GOOD, "note": 4}], list[Shape], "f.json", "")


@pytest.mark.parametrize(("value", "message"), [
    ({k: v for k, v in GOOD.items() if k != "count"}, "f.json: [0]: missing field count"),
    ({**GOOD, "colour": "red"}, "f.json: [0]: unknown field colour"),
    ({**GOOD, "share": 95}, "f.json: [0].share: must be a decimal number"),
    ({**GOOD, "count": True}, "f.json: [0].count: must be a whole number"),
    ({**GOOD, "flags": [1]}, "f.json: [0].flags[0]: must be true or false"),
    ({**GOOD, "kind": "c"}, "f.json: [0].kind: must be one of ['a', 'b']"),
    ({**GOOD, "note": 1.5}, "f.json: [0].note: must be a string or a whole number"),
    ("text", "f.json: [0]: must be an object"),
])
def test_check_names_file_and_field(value, message):
    with pytest.raises(DemoDataError) as err:
        check([value], list[Shape], "f.json", "")
    assert str(err.value).startswith(message)


def test_bad_json_names_file_and_line():
    with pytest.raises(DemoDataError, match=r"^grounding/x\.json line 3: "):
        parse_json('[\n  {"key": "a"},\n  {"key": }\n]', list[GroundingEntry], "grounding/x.json")


def test_sections_keep_text_exactly_and_skip_the_note():
    text = "# Title\n\nA note.\n\n## intro\n\nOne.\n\n    code line\nTwo.\n\n\n## outro\nLast.\n"
    assert parse_sections(text, "t.md") == {"intro": "One.\n\n    code line\nTwo.",
                                            "outro": "Last."}
    with pytest.raises(DemoDataError, match=r"^t\.md line 3: section 'a' appears twice"):
        parse_sections("## a\nx\n## a\ny", "t.md")


def test_haystack_topics_lines():
    text = "note\n\n## bread\n\n- opener: O.\n- body: B1.\n- body: B2.\n- closer: C.\n"
    assert haystack.parse_topics(text, "h.md") == {
        "bread": {"opener": ["O."], "body": ["B1.", "B2."], "closer": ["C."]}}
    with pytest.raises(DemoDataError, match=r"^h\.md line 4: expected '- opener: '"):
        haystack.parse_topics("## bread\n- opener: O.\n\n- middle: M.\n", "h.md")


def test_edits_must_hit_exactly_once():
    assert apply_edits("a b c", [["b", "x"]], "r") == "a x c"
    with pytest.raises(ValueError, match="r: edit target not found exactly once: 'z'"):
        apply_edits("a b c", [["z", "x"]], "r")
    with pytest.raises(ValueError, match="exactly once"):
        apply_edits("a a", [["a", "x"]], "r")


def test_every_data_file_is_read_by_a_builder(monkeypatch):
    """No stale file in the data folder: building the whole demo reads each one."""
    read: set[str] = set()
    original = loaders.read_text

    def recording(name: str) -> str:
        read.add(name)
        return original(name)

    monkeypatch.setattr(loaders, "read_text", recording)
    monkeypatch.setattr(haystack, "read_text", recording)
    demo.grounding_records()
    demo.preference_records()
    demo.rmbench_records()
    demo.rewardbench2_records()
    demo.haystack_paragraphs()
    demo_answer_sets()
    on_disk = {p.relative_to(DATA).as_posix() for p in DATA.rglob("*") if p.is_file()}
    assert read == on_disk - {"README.md"}


def test_package_data_covers_every_data_file():
    """pyproject.toml's package data for needlework.demo matches every data file."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["needlework.demo"]
    package = DATA.parent
    shipped = {p for pattern in patterns for p in package.glob(pattern)}
    on_disk = {p for p in DATA.rglob("*") if p.is_file() and p.suffix in (".json", ".md")}
    assert on_disk and on_disk <= shipped
    assert "needlework*" in config["tool"]["setuptools"]["packages"]["find"]["include"]
