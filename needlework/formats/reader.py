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
nesting deeper than :data:`MAX_DEPTH`, non-finite numbers (``NaN``, ``Infinity``,
``1e400``), integers longer than Python converts, a key repeated in one object, and
lone surrogate escapes such as ``"\\ud800"`` (not characters: they cannot be stored or
written back as UTF-8). :func:`open_input` refuses what is not a regular file.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from needlework.formats.errors import FormatError, Problem

CHUNK_BYTES = 1 << 20
MAX_RECORD_BYTES = 64 << 20  # one record (a line, or an array element); a 50 MB line fits
MAX_DEPTH = 256  # nesting of objects and arrays in one record
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


class RecordError(ValueError):
    """One record is not acceptable JSON; the message names the field where it can."""

    def __init__(self, message: str, line_offset: int = 0):
        super().__init__(message)
        self.line_offset = line_offset  # lines after the record's first where it was found


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


# --- strict JSON values ---------------------------------------------------------------


class _Bad:
    """A number the strict decoder refused, kept in place so its field can be named."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message


class _DupDict(dict):
    """An object in which a key occurred twice (the first value is kept)."""

    duplicate: str = ""


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _path(parent: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else key


class StrictJson:
    """``json.loads`` that refuses what JSON allows but no record may hold.

    Refused: ``NaN``/``Infinity`` and numbers that overflow to infinity (``1e400``),
    integers with more digits than Python converts, a key repeated in one object,
    lone surrogate escapes, and nesting deeper than :data:`MAX_DEPTH`. The hooks
    only mark what they find; a walk over the value names the field afterwards (it
    runs only for records that need it).
    """

    def __init__(self) -> None:
        self._marked = False
        limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
        self._max_digits = limit or 4300
        self._decoder = json.JSONDecoder(
            parse_float=self._float,
            parse_int=self._int,
            parse_constant=self._constant,
            object_pairs_hook=self._object,
        )

    def _float(self, text: str) -> Any:
        value = float(text)
        if math.isfinite(value):
            return value
        self._marked = True
        return _Bad(f"is {text}, which overflows to infinity: only finite numbers are allowed")

    def _int(self, text: str) -> Any:
        digits = len(text) - (text[0] == "-")
        if digits <= self._max_digits:
            return int(text)
        self._marked = True
        return _Bad(f"is an integer of {digits} digits: at most {self._max_digits} are allowed")

    def _constant(self, text: str) -> Any:
        self._marked = True
        return _Bad(f"is {text}: only finite numbers are allowed")

    def _object(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        self._marked = True
        seen: set[str] = set()
        dup = _DupDict()
        for key, value in pairs:
            if key in seen and not dup.duplicate:
                dup.duplicate = key
            if key not in dup:
                dup[key] = value
            seen.add(key)
        return dup

    def loads(self, text: str, column: int = 0) -> Any:
        """The value of ``text``, or :class:`RecordError` naming what is wrong and where
        (``column``: where ``text`` starts on its first line, for error columns)."""
        self._marked = False
        try:
            value = self._decoder.decode(text)
        except json.JSONDecodeError as e:
            raise RecordError(json_error(e, column if e.lineno == 1 else 0), e.lineno - 1) from None
        except RecursionError:
            raise RecordError(f"the record is nested too deeply: at most {MAX_DEPTH} levels of "
                              "objects and arrays are allowed") from None
        surrogates = "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None
        deep = text.count("{") + text.count("[") > MAX_DEPTH
        if self._marked or surrogates or deep:
            message = _first_problem(value)
            if message:
                raise RecordError(message)
        return value


def json_error(e: json.JSONDecodeError, column: int = 0) -> str:
    """``invalid JSON: <what> at column N`` (the decoder's ``... starting at`` messages
    read on naturally: ``Unterminated string starting at column 12``)."""
    colno = e.colno + column
    where = f"column {colno}" if e.msg.endswith(" at") else f"at column {colno}"
    return f"invalid JSON: {e.msg} {where}"


def _first_problem(value: Any) -> str | None:
    """What the strict decoder marked, with the field's path; ``None`` when all is well.
    Iterative, so a deep value cannot exhaust the stack."""
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        node, path, depth = stack.pop()
        where = path or "the record"
        if depth > MAX_DEPTH and isinstance(node, (dict, list)):
            top = re.split(r"[.\[]", path, maxsplit=1)[0] or "the record"
            return (f"{top} is nested more than {MAX_DEPTH} levels deep: at most {MAX_DEPTH} "
                    "levels of objects and arrays are allowed")
        if isinstance(node, _Bad):
            return f"{where} {node.message}"
        if isinstance(node, str):
            found = _SURROGATE.search(node)
            if found:
                code = f"\\u{ord(found.group()):04x}"
                return (f"{where} contains a lone surrogate escape ({code}): it is not a "
                        "character; a surrogate pair must be complete")
        elif isinstance(node, dict):
            if isinstance(node, _DupDict):
                return f"{where} has the key {node.duplicate!r} twice: a key may appear once per object"
            children = []
            for key, child in node.items():
                if _SURROGATE.search(key):
                    return (f"{where} has a key with a lone surrogate escape: it is not a "
                            "character; a surrogate pair must be complete")
                children.append((child, _path(path, key), depth + 1))
            stack.extend(reversed(children))
        elif isinstance(node, list):
            stack.extend(reversed([(child, _path(path, i), depth + 1) for i, child in enumerate(node)]))
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


# --- JSON arrays -------------------------------------------------------------------------


def iter_text(source: ByteSource) -> Iterator[str]:
    """Text chunks of ``source`` decoded as UTF-8, BOM removed and every line end
    (``\\r\\n``, lone ``\\r``) turned into ``\\n`` (safe: a raw CR is only ever whitespace
    in valid JSON). At the first byte that is not UTF-8 it raises :class:`RecordError`
    whose message gives the byte offset and whose ``line_offset`` is the (absolute) line."""
    pending = b""
    consumed = 0  # bytes of the file before ``pending``
    lines = 0
    held_cr = False
    first = True
    while True:
        chunk = source.read()
        data = pending + chunk
        if first and chunk:
            first = False
            if data.startswith(BOM):
                data = data[len(BOM):]
                consumed += len(BOM)
        try:
            text = data.decode("utf-8")
            pending = b""
        except UnicodeDecodeError as e:
            incomplete = e.reason == "unexpected end of data" and len(data) - e.start < 4 and chunk
            if not incomplete:
                before = data[: e.start]
                line = lines + before.count(b"\n") + len(re.findall(rb"\r(?!\n)", before)) + 1
                raise RecordError(not_utf8(data, e.start, consumed + e.start), line) from None
            text = data[: e.start].decode("utf-8")
            pending = data[e.start :]
        consumed += len(data) - len(pending)
        if held_cr:
            text = "\r" + text
        held_cr = chunk != b"" and text.endswith("\r")
        if held_cr:
            text = text[:-1]
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        if text:
            yield text
            lines += text.count("\n")
        if not chunk:
            return


_STRUCT = re.compile(r'["\[\]{}]')
_IN_STRING = re.compile(r'["\\]')
_NOT_SPACE = re.compile(r"[^ \t\n]")
_SCALAR_END = re.compile(r'[ \t\n,\]\[{}"]')


class _Text:
    """A window on the decoded text with its line count; grows from :func:`iter_text`."""

    def __init__(self, chunks: Iterator[str]):
        self.chunks = chunks
        self.buf = ""
        self.pos = 0  # read position in buf
        self.line = 1  # line number at pos
        self.ended = False

    def more(self, keep_from: int) -> int:
        """Append the next chunk, dropping the text before ``keep_from`` (already read);
        returns how far positions moved back, or -1 at the end of the input."""
        try:
            chunk = next(self.chunks)
        except StopIteration:
            self.ended = True
            return -1
        shift = keep_from
        self.buf = self.buf[keep_from:] + chunk
        self.pos -= shift
        return shift

    def advance(self, to: int) -> None:
        self.line += self.buf.count("\n", self.pos, to)
        self.pos = to

    def skip_space(self) -> str:
        """Move to the next character that is not whitespace; '' at the end."""
        while True:
            m = _NOT_SPACE.search(self.buf, self.pos)
            if m:
                self.advance(m.start())
                return m.group()
            self.advance(len(self.buf))
            if self.more(self.pos) < 0:
                return ""


def _element_end(text: _Text, start: int) -> int:
    """Index just past the JSON value starting at ``text.buf[start]`` (``start`` is
    ``text.pos``; positions move with the buffer); -1 when the input ends inside it,
    -2 when it outgrows :data:`MAX_RECORD_BYTES`."""
    first = text.buf[start]
    scalar = first not in '{["'
    depth, in_string, i = 0, first == '"', start + 1 if first not in "{[" else start
    while True:
        buf = text.buf
        if scalar:
            m = _SCALAR_END.search(buf, i)
            if m is not None:
                return m.start()
            i = len(buf)
        while not scalar:
            if in_string:
                m = _IN_STRING.search(buf, i)
                if m is None:
                    i = len(buf)
                    break
                if m.group() == "\\":
                    if m.end() >= len(buf):
                        i = m.start()
                        break
                    i = m.end() + 1
                    continue
                in_string, i = False, m.end()
                if depth == 0:
                    return i
            else:
                m = _STRUCT.search(buf, i)
                if m is None:
                    i = len(buf)
                    break
                ch, i = m.group(), m.end()
                if ch == '"':
                    in_string = True
                elif ch in "{[":
                    depth += 1
                else:
                    depth -= 1
                    if depth == 0:
                        return i
        if len(buf) - start > MAX_RECORD_BYTES:
            return -2
        shift = text.more(start)
        if shift < 0:
            return len(buf) if scalar else -1
        start -= shift
        i -= shift


def iter_json_array(source: ByteSource, loader: StrictJson | None = None) -> Iterator[RawRecord]:
    """The elements of a JSON array, each with the line it starts on. Syntax errors
    end the reading with one record whose ``error`` says what and where."""
    loader = loader or StrictJson()
    text = _Text(iter_text(source))
    try:
        yield from _array_elements(text, loader)
    except RecordError as e:  # bytes that are not UTF-8 (line_offset: the line)
        yield RawRecord(e.line_offset, -1, None, str(e))


def _array_elements(text: _Text, loader: StrictJson) -> Iterator[RawRecord]:
    if text.skip_space() != "[":
        yield RawRecord(text.line, -1, None, "invalid JSON: expected a JSON array starting with '['")
        return
    text.advance(text.pos + 1)
    index = 0
    while True:
        ch = text.skip_space()
        if ch == "":
            yield RawRecord(text.line, -1, None, "invalid JSON: the file ends before the array is "
                            "closed with ']'")
            return
        if ch == "]":
            if index == 0:
                yield RawRecord(text.line, -1, None, "the file is empty: the array has no records")
                return
            break
        if index > 0:
            if ch != ",":
                yield RawRecord(text.line, -1, None, f"invalid JSON: expected ',' or ']' after record "
                                f"{index - 1}, found {ch!r}")
                return
            text.advance(text.pos + 1)
            ch = text.skip_space()
            if ch == "":
                yield RawRecord(text.line, -1, None, "invalid JSON: the file ends before the array is "
                                "closed with ']'")
                return
            if ch == "]":
                yield RawRecord(text.line, -1, None, f"invalid JSON: expected a record after ',' "
                                f"(record {index - 1} is followed by a comma)")
                return
        line = text.line
        end = _element_end(text, text.pos)
        if end == -1:
            yield RawRecord(line, -1, None, f"invalid JSON: the file ends inside record {index}")
            return
        if end == -2:
            yield RawRecord(line, -1, None, f"record {index} is larger than {MAX_RECORD_BYTES >> 20} MiB, "
                            "the most one record may take: reading stopped here")
            return
        element = text.buf[text.pos : end]
        column = text.pos - (text.buf.rfind("\n", 0, text.pos) + 1)
        try:
            value = loader.loads(element, column)
        except RecordError as e:
            yield RawRecord(line + e.line_offset, -1, None, str(e))
            return
        text.advance(end)
        yield RawRecord(line, index, value)
        index += 1
    text.advance(text.pos + 1)
    if text.skip_space() != "":
        yield RawRecord(text.line, -1, None, "invalid JSON: extra data after the array's closing ']'")


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


def is_json_array(text: str) -> bool:
    """True when the text (after whitespace) starts with ``[``."""
    return text.lstrip().startswith("[")


def _collect(records: Iterator[RawRecord], file: str, array: bool) -> list[RawRecord]:
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
    return _collect(iter_jsonl(ByteSource(io.BytesIO(text.encode("utf-8", "surrogatepass")))),
                    file, False)


def read_json_array(text: str, file: str) -> list[RawRecord]:
    """A JSON array of values; each element keeps the line it starts on."""
    return _collect(iter_json_array(ByteSource(io.BytesIO(text.encode("utf-8", "surrogatepass")))),
                    file, True)
