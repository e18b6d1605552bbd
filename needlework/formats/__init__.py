"""Import and export formats, with validation and auto-detection.

Formats: ``garage`` (GaRAGe JSONL), ``lfrb`` (Long-form RewardBench JSONL),
``rmbench`` (RM-Bench JSON array), ``pairs`` (plain/TRL preference pairs JSONL),
``needle`` (needle-in-a-haystack JSONL), ``rewardbench2`` (RewardBench 2, JSONL or the
release's Parquet). See ``docs/benchmarks.md``.

:func:`open_records` reads a binary stream lazily: it detects the format from the
first record and then yields each record checked (a :class:`ParsedRecord`) or each
problem found (a :class:`Problem` naming file, line and field), so a caller can write
records in batches with memory bounded by the largest record. :func:`parse` does the
same on bytes in memory and returns every record, or raises :class:`FormatError`
listing every problem.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import IO, Any

from needlework.formats import garage, lfrb, needle, pairs, rewardbench2, rmbench
from needlework.formats.errors import FormatError, Problem, ProblemList
from needlework.formats.json_array import iter_json_array
from needlework.formats.parquet import is_parquet, iter_parquet
from needlework.formats.preference import RMBENCH_STYLES, Preference
from needlework.formats.reader import (
    ByteSource,
    ProgressFn,
    RawRecord,
    iter_jsonl,
    open_input,
    other_encoding,
)
from needlework.formats.strict_json import StrictJson

FORMATS: dict[str, ModuleType] = {
    m.NAME: m for m in (garage, lfrb, rmbench, pairs, needle, rewardbench2)
}
# Detection order matters: the most specific shape first.
_DETECT_ORDER = (garage, needle, rewardbench2, lfrb, pairs)
#: the format a Parquet file is read as (the only one published as Parquet)
PARQUET_FORMATS = tuple(m.NAME for m in FORMATS.values() if getattr(m, "PARQUET", False))

__all__ = [
    "FORMATS",
    "FormatError",
    "ParsedFile",
    "ParsedRecord",
    "Preference",
    "Problem",
    "ProblemList",
    "RMBENCH_STYLES",
    "RecordStream",
    "detect",
    "open_records",
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
    index: int | None = None  # 0-based element index, for JSON arrays
    unit: str = "line"  # what ``line`` counts: ``row`` for a Parquet file


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
                               "(expected GaRAGe, Long-form RewardBench, RewardBench 2, pairs or "
                               "needle fields); pass --format")])


class RecordStream:
    """The records of one input, read lazily: iterate for :class:`ParsedRecord` s and
    :class:`Problem` s in file order. ``format`` and ``kind`` are known from the start.

    Each record is validated by its format; keys are not checked for duplicates here
    (a caller that keeps every key, like :func:`parse`, or a store, does that).
    """

    def __init__(self, file: str, format: str, first: list[RawRecord], rest: Iterator[RawRecord],
                 array: bool, unit: str = "line"):
        self.file = file
        self.format = format
        self.kind: str = FORMATS[format].KIND
        self.array = array
        self.unit = unit  # ``row`` for a Parquet file
        self._first = first
        self._rest = rest

    def __iter__(self) -> Iterator[ParsedRecord | Problem]:
        module = FORMATS[self.format]
        for raw in _chain(self._first, self._rest):
            if raw.error is not None:
                yield Problem(self.file, raw.line, raw.error, unit=self.unit)
                continue
            index = raw.index if self.array else None
            messages = module.validate(raw.value)
            for message in messages:
                yield Problem(self.file, raw.line, message, index, self.unit)
            if messages:
                continue
            yield ParsedRecord(module.key(raw.value, raw.index), raw.value,
                               module.subset(raw.value, self.file), module.title(raw.value),
                               raw.line, index, self.unit)


def _chain(first: list[RawRecord], rest: Iterator[RawRecord]) -> Iterator[RawRecord]:
    while first:
        yield first.pop(0)
    yield from rest


def open_records(
    stream: IO[bytes],
    file: str,
    format: str | None = None,
    *,
    size: int = 0,
    progress: ProgressFn | None = None,
) -> RecordStream:
    """Start reading ``stream`` (named ``file`` in messages) in ``format``, detected
    from the first record when ``None``. A Parquet file (known by its first bytes) is read
    row by row (:mod:`needlework.formats.parquet`) in the format published as Parquet
    (RewardBench 2); its problems name the row.

    Raises :class:`FormatError` at once when the file is empty, the container does
    not fit the format, or the format cannot be detected. ``progress(bytes read,
    size)`` is called as the stream is read.
    """
    source, array = _opened(stream, file, format, size, progress)
    if is_parquet(source.head):
        return _parquet_records(stream, source, file, format, size, progress)
    if format is not None:
        module = FORMATS[format]
        if (module.CONTAINER == "json") != array:
            want = "a JSON array" if module.CONTAINER == "json" else "JSON lines (one object per line)"
            raise FormatError([Problem(file, 1, f"the {format} format is {want}")])
    loader = StrictJson()
    raws = iter_json_array(source, loader) if array else iter_jsonl(source, loader)
    first: list[RawRecord] = []
    if format is None:
        format, first = _detected(raws, file, array)
    return RecordStream(file, format, first, raws, array)


def _opened(stream: IO[bytes], file: str, format: str | None, size: int,
            progress: ProgressFn | None) -> tuple[ByteSource, bool]:
    """``(source, array)``: the stream read up to its first bytes, and whether it holds a
    JSON array; a :class:`FormatError` for an unknown format, an encoding other than
    UTF-8 or an empty file."""
    if format is not None and format not in FORMATS:
        raise FormatError([Problem(file, None, f"unknown format {format!r}; expected one of "
                                   + ", ".join(FORMATS))])
    source = ByteSource(stream, size, progress)
    empty, array = source.sniff()
    encoding = other_encoding(source.head)
    if encoding:
        raise FormatError([Problem(file, 1, f"the file is {encoding} (it starts with a {encoding} "
                                   "byte-order mark): only UTF-8 is read; save it as UTF-8")])
    if empty:
        raise FormatError([Problem(file, 1, "the file is empty: no records found")])
    return source, array


def _parquet_records(stream: IO[bytes], source: ByteSource, file: str, format: str | None,
                     size: int, progress: ProgressFn | None) -> RecordStream:
    """A Parquet file's rows, in the first format published as Parquet when none is
    given; a :class:`FormatError` for a format read from JSON only."""
    if format is None:
        format = PARQUET_FORMATS[0]
    elif format not in PARQUET_FORMATS:
        raise FormatError([Problem(file, None, f"this is a Parquet file: the {format} format "
                                   "is read from JSON; Parquet is read as "
                                   + ", ".join(PARQUET_FORMATS))])
    return RecordStream(file, format, [], iter_parquet(stream, source, size, progress),
                        False, "row")


def _detected(raws: Iterator[RawRecord], file: str, array: bool) -> tuple[str, list[RawRecord]]:
    """``(format, first)``: the format detected from the first record that reads as JSON,
    and the records read so far (the bad ones before it kept, a bounded number, to be
    reported with the rest)."""
    first: list[RawRecord] = []
    skipped = ProblemList()
    dropped = 0
    for raw in raws:
        if raw.error is None:
            if dropped:
                first.append(RawRecord(raw.line, -1, None, f"and {dropped} more lines before "
                                       "this one that could not be read"))
            first.append(raw)
            break
        if len(first) < ProblemList.LIMIT:
            first.append(raw)
        else:
            dropped += 1
        skipped.add(Problem(file, raw.line, raw.error))
    good = [r for r in first if r.error is None]
    if not good:
        if not skipped:
            what = "the array has no records" if array else "no records found"
            raise FormatError([Problem(file, 1, f"the file is empty: {what}")])
        skipped.raise_if_any()
    format: str | None = None
    try:
        format = detect(good[0].value, array, file)
    except FormatError as e:
        for problem in e.problems:
            skipped.add(problem)
        skipped.raise_if_any()
    assert format is not None
    return format, first


def parse(data: bytes, file: str, format: str | None = None) -> ParsedFile:
    """Decode, read, detect (when ``format`` is None) and validate a whole file in memory.

    All-or-nothing: raises :class:`FormatError` with every problem (duplicate keys
    included), or returns every record.
    """
    stream = open_records(io.BytesIO(data), file, format)
    module = FORMATS[stream.format]
    problems = ProblemList()
    records: list[ParsedRecord] = []
    seen: dict[str, int] = {}
    for entry in stream:
        if isinstance(entry, Problem):
            problems.add(entry)
            continue
        if entry.key in seen:
            problems.add(Problem(file, entry.line, f"{module.key_field()} {entry.key!r} is a "
                                 f"duplicate (first seen on {entry.unit} {seen[entry.key]})",
                                 entry.index, entry.unit))
            continue
        seen[entry.key] = entry.line
        records.append(entry)
    if not records and not problems:
        raise FormatError([Problem(file, 1, "the file is empty: no records found")])
    problems.raise_if_any()
    return ParsedFile(stream.format, stream.kind, records)


def parse_file(path: str | Path, format: str | None = None) -> ParsedFile:
    """:func:`parse` on a file path (errors name the file by its name); refuses what
    is not a regular file."""
    path = Path(path)
    stream, _ = open_input(path)
    with stream:
        data = stream.read()
    return parse(data, path.name, format)


def preference_view(format_name: str, record: dict[str, Any]) -> Preference:
    """The :class:`Preference` view of a stored preference or needle record."""
    module = FORMATS[format_name]
    if not hasattr(module, "view"):
        raise ValueError(f"{format_name} records are not preference records")
    return module.view(record)
