"""Reading input bytes into JSON records with their line numbers.

Accepts a UTF-8 BOM, CRLF line ends and blank lines. Rejects bytes that are not
UTF-8 (reporting the byte offset), invalid or truncated JSON, and empty files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from needlework.formats.errors import FormatError, Problem


@dataclass(frozen=True)
class RawRecord:
    """A parsed JSON value with where it came from."""

    line: int  # 1-based line where the record starts
    index: int  # 0-based record index
    value: Any


def decode(data: bytes, file: str) -> str:
    """UTF-8 text of ``data`` without a leading BOM; a clear error otherwise."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        bad = data[e.start : e.start + 1].hex()
        raise FormatError(
            [Problem(file, line, f"bytes are not UTF-8 at byte offset {e.start} (0x{bad})")]
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def is_json_array(text: str) -> bool:
    """True when the text (after whitespace) starts with ``[``."""
    return text.lstrip().startswith("[")


def read_jsonl(text: str, file: str) -> list[RawRecord]:
    """One JSON value per non-blank line."""
    records, problems = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(Problem(file, number, f"invalid JSON: {e.msg} at column {e.colno}"))
            continue
        records.append(RawRecord(number, len(records), value))
    if problems:
        raise FormatError(problems)
    if not records:
        raise FormatError([Problem(file, 1, "the file is empty: no records found")])
    return records


def read_json_array(text: str, file: str) -> list[RawRecord]:
    """A JSON array of values; each element keeps the line it starts on."""
    decoder = json.JSONDecoder()
    text = text.replace("\r\n", "\n")
    try:
        whole = json.loads(text)
    except json.JSONDecodeError as e:
        raise FormatError([Problem(file, e.lineno, f"invalid JSON: {e.msg} at column {e.colno}")]) from None
    if not isinstance(whole, list):
        raise FormatError([Problem(file, 1, "expected a JSON array of records")])
    if not whole:
        raise FormatError([Problem(file, 1, "the file is empty: the array has no records")])
    # Second pass to find where each element starts (for line numbers).
    records: list[RawRecord] = []
    pos = text.index("[") + 1
    for index in range(len(whole)):
        while text[pos] in " \t\n\r,":
            pos += 1
        value, end = decoder.raw_decode(text, pos)
        records.append(RawRecord(text.count("\n", 0, pos) + 1, index, value))
        pos = end
    return records
