"""Import and export formats, with validation and auto-detection.

Formats: ``garage`` (GaRAGe JSONL), ``lfrb`` (Long-form RewardBench JSONL),
``rmbench`` (RM-Bench JSON array), ``pairs`` (plain/TRL preference pairs JSONL),
``needle`` (needle-in-a-haystack JSONL). See ``docs/benchmarks.md``.

:func:`parse` turns bytes into :class:`ParsedRecord` s or raises
:class:`FormatError` listing every problem (file, line, field).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from needlework.formats import garage, lfrb, needle, pairs, rmbench
from needlework.formats.errors import FormatError, Problem
from needlework.formats.preference import RMBENCH_STYLES, Preference
from needlework.formats.reader import decode, is_json_array, read_json_array, read_jsonl

FORMATS: dict[str, ModuleType] = {
    m.NAME: m for m in (garage, lfrb, rmbench, pairs, needle)
}
# Detection order matters: the most specific shape first.
_DETECT_ORDER = (garage, needle, lfrb, pairs)

__all__ = [
    "FORMATS",
    "FormatError",
    "ParsedFile",
    "ParsedRecord",
    "Preference",
    "Problem",
    "RMBENCH_STYLES",
    "detect",
    "parse",
    "parse_file",
    "preference_view",
]


@dataclass(frozen=True)
class ParsedRecord:
    """One valid record: its key (id), subset, title and the JSON object as read."""

    key: str
    record: dict[str, Any]
    subset: str
    title: str
    line: int


@dataclass(frozen=True)
class ParsedFile:
    format: str
    kind: str
    records: list[ParsedRecord]


def detect(first: Any, json_array: bool, file: str = "") -> str:
    """Name the format of a file from its container and first record."""
    if json_array:
        if isinstance(first, dict) and rmbench.looks_like(first):
            return "rmbench"
        raise FormatError([Problem(file, 1, "cannot detect the format: a JSON array of records "
                                   "with id/prompt/subset/chosen/rejected (RM-Bench) was expected; "
                                   "pass --format")])
    for module in _DETECT_ORDER:
        if module.looks_like(first):
            return module.NAME
    raise FormatError([Problem(file, 1, "cannot detect the format from the first record "
                               "(expected GaRAGe, Long-form RewardBench, pairs or needle fields); "
                               "pass --format")])


def parse(data: bytes, file: str, format: str | None = None) -> ParsedFile:
    """Decode, read, detect (when ``format`` is None) and validate a whole file.

    All-or-nothing: raises :class:`FormatError` with every problem, or returns
    every record.
    """
    if format is not None and format not in FORMATS:
        raise FormatError([Problem(file, None, f"unknown format {format!r}; expected one of "
                                   + ", ".join(FORMATS))])
    text = decode(data, file)
    if not text.strip():
        raise FormatError([Problem(file, 1, "the file is empty: no records found")])
    array = is_json_array(text)
    if format is not None:
        module = FORMATS[format]
        if (module.CONTAINER == "json") != array:
            want = "a JSON array" if module.CONTAINER == "json" else "JSON lines (one object per line)"
            raise FormatError([Problem(file, 1, f"the {format} format is {want}")])
    raws = read_json_array(text, file) if array else read_jsonl(text, file)
    name = format or detect(raws[0].value, array, file)
    module = FORMATS[name]
    problems: list[Problem] = []
    records: list[ParsedRecord] = []
    seen: dict[str, int] = {}
    index_of = (lambda r: r.index) if array else (lambda r: None)
    for raw in raws:
        messages = module.validate(raw.value)
        for message in messages:
            problems.append(Problem(file, raw.line, message, index_of(raw)))
        if messages:
            continue
        key = module.key(raw.value, raw.index)
        if key in seen:
            problems.append(Problem(file, raw.line, f"{module.key_field()} {key!r} is a duplicate "
                                    f"(first seen on line {seen[key]})", index_of(raw)))
            continue
        seen[key] = raw.line
        records.append(ParsedRecord(key, raw.value, module.subset(raw.value, file),
                                    module.title(raw.value), raw.line))
    if problems:
        raise FormatError(problems)
    return ParsedFile(name, module.KIND, records)


def parse_file(path: str | Path, format: str | None = None) -> ParsedFile:
    """:func:`parse` on a file path (errors name the file by its name)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise FormatError([Problem(path.name, None, f"cannot read the file: {e.strerror}")]) from None
    return parse(data, path.name, format)


def preference_view(format_name: str, record: dict[str, Any]) -> Preference:
    """The :class:`Preference` view of a stored preference or needle record."""
    module = FORMATS[format_name]
    if not hasattr(module, "view"):
        raise ValueError(f"{format_name} records are not preference records")
    return module.view(record)
