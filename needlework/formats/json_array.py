"""Reading a JSON array (RM-Bench files) an element at a time, each with the line it
starts on: a small scanner finds where each element ends (tracking strings, escapes and
bracket depth) and the element alone is decoded (:mod:`needlework.formats.strict_json`),
so memory stays bounded by the largest element, not by the file.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

from needlework.formats import reader
from needlework.formats.reader import BOM, ByteSource, RawRecord, collect, not_utf8
from needlework.formats.strict_json import RecordError, StrictJson


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
    -2 when it outgrows :data:`reader.MAX_RECORD_BYTES`."""
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
        if len(buf) - start > reader.MAX_RECORD_BYTES:
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
            yield RawRecord(line, -1, None, f"record {index} is larger than {reader.MAX_RECORD_BYTES >> 20} MiB, "
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


def is_json_array(text: str) -> bool:
    """True when the text (after whitespace) starts with ``[``."""
    return text.lstrip().startswith("[")


def read_json_array(text: str, file: str) -> list[RawRecord]:
    """A JSON array of values; each element keeps the line it starts on."""
    return collect(iter_json_array(ByteSource(io.BytesIO(text.encode("utf-8", "surrogatepass")))),
                   file, True)
