"""Reading an Apache Parquet file (RewardBench 2 as published) a batch of rows at a time.

The rows become the same :class:`~needlework.formats.reader.RawRecord` s the JSON readers
give, numbered by row (1-based, ``line`` holds the row number and messages say ``row``), so
the format's own checks, the all-or-nothing import and the duplicate check work on them
unchanged. Memory stays bounded by one batch of :data:`BATCH_ROWS` rows (and the row group
it comes from), not by the file.

Values are turned into what JSON can hold, as the record is stored as JSON: a list or a
struct as a list or an object, a map as an object (its keys must be strings), a date or time
as its ISO text, a decimal as its text. A float that is not finite (NaN, ±inf, which pandas
writes for a missing number) becomes ``null`` **(our rule: JSON has no NaN; the scored fields
are strings and integers, so no score or count is ever changed)**. Binary values cannot be
stored as text: the row is refused, naming the field.

A file that Parquet cannot read (truncated, not Parquet after its first four bytes) is one
problem naming the file; nothing is imported.
"""

from __future__ import annotations

import datetime
import decimal
import math
import tempfile
from collections.abc import Iterator
from typing import IO, Any

from needlework.formats.reader import ByteSource, ProgressFn, RawRecord
from needlework.formats.strict_json import MAX_DEPTH

MAGIC = b"PAR1"
BATCH_ROWS = 256
SPOOL_BYTES = 64 << 20  # a stream that cannot seek is copied: in memory up to this, then on disk


def is_parquet(head: bytes) -> bool:
    """True when a file's first bytes are Parquet's magic number."""
    return head[:4] == MAGIC


class _Unsupported(ValueError):
    def __init__(self, path: str, what: str) -> None:
        super().__init__(f"{path} holds {what}, which a JSON record cannot hold")


def jsonable(value: Any, path: str, depth: int = 0) -> Any:
    """``value`` (as pyarrow gives it) as a JSON value; ``path`` names it in an error."""
    if depth > MAX_DEPTH:
        raise _Unsupported(path, f"values nested deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        out = {}
        for key, inner in value.items():
            if not isinstance(key, str):
                raise _Unsupported(path, f"a key that is not text ({type(key).__name__})")
            out[key] = jsonable(inner, f"{path}.{key}", depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(p, tuple) and len(p) == 2 for p in value) and \
                isinstance(value, list) and all(isinstance(p[0], str) for p in value):
            # a Parquet map: [(key, value), ...]
            return {k: jsonable(v, f"{path}.{k}", depth + 1) for k, v in value}
        return [jsonable(inner, f"{path}[{k}]", depth + 1) for k, inner in enumerate(value)]
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise _Unsupported(path, "binary data")
    raise _Unsupported(path, f"a {type(value).__name__}")


def _row(values: dict[str, Any]) -> dict[str, Any]:
    return {name: jsonable(value, name) for name, value in values.items()}


def _seekable(stream: IO[bytes], source: ByteSource) -> tuple[IO[bytes], IO[bytes] | None]:
    """A file Parquet can seek in, starting at the data's first byte: the stream itself when
    it seeks and starts at 0, else a spooled copy (returned second, to be closed)."""
    try:
        if stream.seekable() and stream.tell() - source.done == 0:
            stream.seek(0)
            return stream, None
    except (OSError, ValueError):
        pass
    copy = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 - closed by caller
    while True:
        chunk = source.read()
        if not chunk:
            break
        copy.write(chunk)
    copy.seek(0)
    return copy, copy


def iter_parquet(stream: IO[bytes], source: ByteSource, size: int = 0,
                 progress: ProgressFn | None = None) -> Iterator[RawRecord]:
    """One :class:`RawRecord` per row of the Parquet data in ``stream`` (``source`` is the
    :class:`ByteSource` that sniffed it); an unreadable file gives one record with ``error``
    set and ends the reading."""
    import pyarrow as pa  # noqa: PLC0415  (a second or so to import: only for Parquet)
    import pyarrow.parquet as pq  # noqa: PLC0415

    handle, spooled = _seekable(stream, source)
    try:
        try:
            parquet = pq.ParquetFile(handle)
        except (pa.ArrowException, OSError, ValueError) as exc:
            yield RawRecord(1, -1, None, f"not a readable Parquet file: {_one_line(exc)}")
            return
        total = parquet.metadata.num_rows or 0
        row = 0
        try:
            for batch in parquet.iter_batches(batch_size=BATCH_ROWS):
                for values in batch.to_pylist():
                    row += 1
                    try:
                        record = RawRecord(row, row - 1, _row(values))
                    except _Unsupported as exc:
                        record = RawRecord(row, row - 1, None, str(exc))
                    yield record
                if progress is not None and total:
                    progress(min(size, size * row // total) if size else row, size or total)
        except (pa.ArrowException, OSError, ValueError) as exc:
            yield RawRecord(row + 1, -1, None, f"the Parquet file cannot be read past row {row}: "
                            f"{_one_line(exc)}")
    finally:
        if spooled is not None:
            spooled.close()


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 240 else text[:239] + "…"
