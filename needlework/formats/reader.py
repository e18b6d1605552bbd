"""Reading input bytes into JSON records with their line numbers, a piece at a time.

Records are read from a binary stream in chunks, so memory stays bounded by the
largest record, not by the file:

- JSON lines: records are split on ``\\n``, ``\\r\\n`` or a lone ``\\r`` (CR-only line
  ends). Never on U+2028, U+2029 or U+0085, which are valid raw inside JSON strings
  (``str.splitlines()`` would split on them). A raw CR or LF cannot occur inside a valid
  JSON string, so splitting on them never cuts a record.
- JSON arrays (RM-Bench): a small scanner finds where each element ends (tracking
  strings, escapes and bracket depth), and the element alone is decoded.

A UTF-8 BOM and blank lines are accepted. Refused, each with one clear message naming
the line (and the field where there is one): bytes that are not UTF-8 (with their byte
offset), invalid or truncated JSON, a record larger than :data:`MAX_RECORD_BYTES`,
nesting deeper than :data:`~.strict_json.MAX_DEPTH`, non-finite numbers (``NaN``, ``Infinity``,
``1e400``), integers longer than Python converts, a key repeated in one object, and
lone surrogate escapes such as ``"\\ud800"`` (not characters: they cannot be stored or
written back as UTF-8). :func:`open_input` refuses what is not a regular file.

The strict decoding of one record is :mod:`needlework.formats.strict_json`; reading a
JSON array element by element is :mod:`needlework.formats.json_array`.
"""

from __future__ import annotations

import io
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from needlework.formats.errors import FormatError, Problem
from needlework.formats.strict_json import RecordError, StrictJson

CHUNK_BYTES = 1 << 20
MAX_RECORD_BYTES = 64 << 20  # one record (a line, or an array element); a 50 MB line fits
BOM = b"\xef\xbb\xbf"

ProgressFn = Callable[[int, int], None]
"""``progress(bytes_read, total_bytes)``; ``total_bytes`` is 0 when unknown."""


@dataclass(frozen=True)
class RawRecord:
    """A parsed JSON value with where it came from; ``error`` set when it could not be read."""

    line: int  # 1-based line where the record starts
    index: int  # 0-based record index (counting records that failed to read too)
    value: Any
    error: str | None = None


# --- input --------------------------------------------------------------------------


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_input(path: str | Path) -> tuple[IO[bytes], int]:
    """Open a regular file for reading: ``(binary stream, size in bytes)``.

    Refuses (with :class:`FormatError`) what is not a regular file: a FIFO would block
    the reader, ``/dev/zero`` never ends, a directory has no records. The file is
    opened without blocking and checked on the open descriptor, so nothing can be
    swapped in between the check and the read.
    """
    path = Path(path)
    name = path.name or str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise FormatError([Problem(name, None, f"cannot read the file: {e.strerror}")]) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FormatError([Problem(name, None, f"cannot import {_kind_of(info.st_mode)}: "
                                       "only regular files are read")])
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=0), info.st_size
    except BaseException:
        os.close(fd)
        raise


class ByteSource:
    """A binary stream read in chunks, counting bytes for a progress callback."""

    def __init__(self, stream: IO[bytes], total: int = 0, progress: ProgressFn | None = None):
        self.stream = stream
        self.total = total
        self.done = 0
        self.progress = progress
        self._pushed = b""
        self.head = b""  # the first bytes, once :meth:`sniff` has looked

    def read(self, size: int | None = None) -> bytes:
        if self._pushed:
            data, self._pushed = self._pushed, b""
            return data
        data = self.stream.read(size or CHUNK_BYTES)
        if data is None:  # a non-blocking stream with nothing ready: treat as the end
            data = b""
        self.done += len(data)
        if self.progress is not None and data:
            self.progress(self.done, self.total)
        return data

    def push_back(self, data: bytes) -> None:
        """Return ``data`` to the front of the stream (the next :meth:`read` gives it)."""
        self._pushed = data + self._pushed

    def sniff(self) -> tuple[bool, bool]:
        """``(is empty, is a JSON array)``: looks at the first byte that is not a BOM or
        whitespace, leaving the stream where it was."""
        seen = b""
        while True:
            chunk = self.read()
            seen += chunk
            if chunk and len(seen) < len(BOM) and BOM.startswith(seen):
                continue
            body = seen[len(BOM):] if seen.startswith(BOM) else seen
            stripped = body.lstrip(b" \t\r\n")
            if stripped or not chunk or len(seen) > MAX_RECORD_BYTES:
                self.head = seen[:4]
                self.push_back(seen)
                return not stripped and not chunk, stripped[:1] == b"["


def other_encoding(head: bytes) -> str | None:
    """The encoding a byte-order mark at the start of a file names, when not UTF-8."""
    for mark, name in ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
                       (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16")):
        if head.startswith(mark):
            return name
    return None


# --- JSON lines ------------------------------------------------------------------------

_LINE_END = re.compile(rb"\r\n|\r|\n")


def _line_ends(chunk: bytes, start: int) -> Iterator[tuple[int, int]]:
    """``(end of line, start of the next)`` for each line end in ``chunk[start:]``.
    Plain ``\n`` (and ``\r\n``) ends are found with ``bytes.find``; a chunk holding a
    lone ``\r`` falls back to a regular expression."""
    crs = chunk.count(b"\r", start)
    if crs and (crs != chunk.count(b"\r\n", start) or chunk.endswith(b"\r")):
        for m in _LINE_END.finditer(chunk, start):
            yield m.start(), m.end()
        return
    find = chunk.find
    while True:
        i = find(b"\n", start)
        if i < 0:
            return
        yield (i - 1 if crs and i > start and chunk[i - 1] == 13 else i), i + 1
        start = i + 1


def iter_lines(source: ByteSource) -> Iterator[tuple[int, int, bytes | None]]:
    """``(line number, byte offset, content)`` for each line of ``source``.

    Lines end at ``\n``, ``\r\n`` or a lone ``\r``; a leading BOM is skipped.
    ``content`` is ``None`` for a line longer than :data:`MAX_RECORD_BYTES`, and
    reading stops there (an endless line, such as a file of zeros, is never read to
    its end).
    """
    number, offset = 1, 0
    parts: list[bytes] = []
    size = 0
    skip_lf = False  # the previous chunk ended with \r: a \n starting this one ends nothing
    first = True
    while True:
        chunk = source.read()
        if not chunk:
            break
        base = 0
        if first:
            first = False
            if chunk.startswith(BOM):
                base = len(BOM)
                offset = len(BOM)
        if skip_lf and chunk[base : base + 1] == b"\n":
            base += 1
            offset += 1
        skip_lf = False
        start = base
        for end, after in _line_ends(chunk, base):
            piece = chunk[start:end]
            if size + len(piece) > MAX_RECORD_BYTES:
                yield number, offset, None
                return
            line = b"".join(parts) + piece if parts else piece
            yield number, offset, line
            offset += len(line) + (after - end)
            parts, size = [], 0
            number += 1
            start = after
            if after == len(chunk) and chunk[end] == 13 and after - end == 1:
                skip_lf = True
        rest = chunk[start:]
        if rest:
            if size + len(rest) > MAX_RECORD_BYTES:
                yield number, offset, None
                return
            parts.append(rest)
            size += len(rest)
    if parts:
        yield number, offset, b"".join(parts)


def not_utf8(data: bytes, start: int, offset: int) -> str:
    """The message for bytes that are not UTF-8 at ``data[start]`` (file offset ``offset``)."""
    return f"bytes are not UTF-8 at byte offset {offset} (0x{data[start : start + 1].hex()})"


def iter_jsonl(source: ByteSource, loader: StrictJson | None = None) -> Iterator[RawRecord]:
    """One :class:`RawRecord` per non-blank line; a line that cannot be read gives a
    record with ``error`` set (reading goes on, except after an over-long line)."""
    loader = loader or StrictJson()
    index = 0
    for number, offset, data in iter_lines(source):
        if data is None:
            yield RawRecord(number, index, None, f"the line is longer than {MAX_RECORD_BYTES >> 20} MiB, "
                            "the most one record may take: reading stopped here")
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            yield RawRecord(number, index, None, not_utf8(data, e.start, offset + e.start))
            index += 1
            continue
        if not text.strip(" \t"):
            continue
        try:
            value = loader.loads(text)
        except RecordError as e:
            yield RawRecord(number, index, None, str(e))
        else:
            yield RawRecord(number, index, value)
        index += 1


# --- whole texts (for callers that already hold the text) ---------------------------------


def decode(data: bytes, file: str) -> str:
    """UTF-8 text of ``data`` without a leading BOM; a clear error otherwise."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        before = data[: e.start]
        line = before.count(b"\n") + len(re.findall(rb"\r(?!\n)", before)) + 1
        raise FormatError([Problem(file, line, not_utf8(data, e.start, e.start))]) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def collect(records: Iterator[RawRecord], file: str, array: bool) -> list[RawRecord]:
    """The records of a whole text, renumbered; :class:`FormatError` with every problem."""
    out: list[RawRecord] = []
    problems: list[Problem] = []
    for raw in records:
        if raw.error is not None:
            problems.append(Problem(file, raw.line, raw.error))
        else:
            out.append(RawRecord(raw.line, len(out), raw.value))
    if problems:
        raise FormatError(problems)
    if not out:
        message = "the array has no records" if array else "no records found"
        raise FormatError([Problem(file, 1, f"the file is empty: {message}")])
    return out


def read_jsonl(text: str, file: str) -> list[RawRecord]:
    """One JSON value per non-blank line of ``text`` (split on ``\\n``, ``\\r\\n``, ``\\r``
    only); :class:`FormatError` with every problem."""
    return collect(iter_jsonl(ByteSource(io.BytesIO(text.encode("utf-8", "surrogatepass")))),
                    file, False)
