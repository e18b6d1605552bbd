"""Importing files into the store and exporting datasets back to files, streamed.

An import reads the file a chunk at a time (:func:`needlework.formats.open_records`),
checks each record, and writes records in batches of at most :data:`BATCH_RECORDS`
records or :data:`BATCH_BYTES` of JSON, so memory stays bounded by the largest record
whatever the file's size. It is still all-or-nothing: every batch is written inside
one transaction, and any problem (a bad record on the last line included), a full
disk or an interrupt rolls it all back. An export writes record by record to a
temporary file that replaces the target only when complete.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sqlite3
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from sqlite_utils import Database

from needlework import formats
from needlework.files import atomic_writer
from needlework.formats import FORMATS, FormatError, ParsedRecord, Problem, ProblemList
from needlework.formats.reader import ProgressFn, open_input
from needlework.grounding.export import CitationError, stream_annotated
from needlework.teams.events import record as record_event
from needlework.teams.permissions import User, check
from store import assignments as store_assignments
from store import datasets as store_datasets
from store import guidelines as store_guidelines
from store import names as store_names

BATCH_RECORDS = 500
BATCH_BYTES = 2 << 20


@dataclass(frozen=True)
class ImportSummary:
    dataset: str
    kind: str
    format: str
    items: int

    def __str__(self) -> str:
        return f"imported {self.items} {self.kind} items as {self.dataset!r} ({self.format})"


class ImportFailed(RuntimeError):
    """The database could not take the import (disk full, busy, read-only); nothing
    was written. The message says what happened and what to do, in one line."""


def dataset_name_for(filename: str) -> str:
    """The default dataset name: the file's stem (``sample.jsonl`` → ``sample``), with
    characters a name may not hold (control, invisible formatting) turned into spaces,
    trimmed and cut to :data:`store.names.MAX_NAME_LENGTH` characters."""
    stem = Path(filename).stem
    cleaned = "".join(ch if ch.isprintable() else " " for ch in stem).strip()
    return cleaned[: store_names.MAX_NAME_LENGTH].strip()


def _dataset_name(filename: str, dataset: str | None) -> str:
    """The checked name to import under, or :class:`FormatError` saying why not."""
    if dataset is None:
        name = dataset_name_for(filename)
        if not name:
            raise FormatError([Problem(filename, None, "cannot name the dataset after this file "
                                       "name: give a dataset name")])
    else:
        name = dataset
    try:
        return store_names.check_dataset_name(name)
    except store_names.InvalidDatasetName as e:
        raise FormatError([Problem(filename, None, str(e))]) from None


def _disk_full(path: str | Path | None) -> bool:
    """True when the file system holding ``path`` has (almost) no space left."""
    if path is None or str(path) == ":memory:":
        return False
    try:
        info = os.statvfs(Path(path).resolve().parent)
    except OSError:
        return False
    return info.f_bavail * info.f_frsize < (1 << 20)


def storage_message(error: sqlite3.Error, path: str | Path | None = None) -> str:
    """One line saying what a database error during a write means for the user
    (``path``: the database file, to tell a full disk behind an I/O error)."""
    text = str(error).lower()
    if "full" in text or ("i/o" in text and _disk_full(path)):
        return ("the disk is full (or the database reached its size limit): nothing was "
                "imported; free some space and try again")
    if "locked" in text or "busy" in text:
        return ("the database is busy (another process is writing to it): nothing was "
                "imported; try again")
    if "readonly" in text or "read-only" in text:
        return "the database is read-only: nothing was imported"
    if "i/o" in text:
        return ("the database could not be written (disk I/O error): nothing was imported; "
                "check the disk and try again")
    return f"the database refused the import ({error}): nothing was imported"


def database_path(db: Database) -> str | None:
    """The file behind a connection (``None`` in memory)."""
    try:
        row = db.execute("pragma database_list").fetchone()
    except sqlite3.Error:
        return None
    return row[2] if row and row[2] else None


def import_stream(
    db: Database,
    stream: IO[bytes],
    filename: str,
    *,
    size: int = 0,
    format: str | None = None,
    dataset: str | None = None,
    replace: bool = False,
    drop_annotations: bool = False,
    created_by: str = "",
    progress: ProgressFn | None = None,
    actor: User | None = None,
) -> ImportSummary:
    """Validate and import the records of a binary ``stream``; all-or-nothing.

    ``filename`` names the file in messages and gives the default dataset name;
    ``size`` (bytes, 0 if unknown) is passed to ``progress(bytes read, size)``, called
    as the stream is read. ``replace`` replaces a dataset of that name, with its model
    scores; its annotations and history too when ``drop_annotations`` is set, else
    :class:`store.datasets.AnnotationsExist` is raised when it has any.

    ``actor`` is the signed-in user in team mode (admins only: importing, and replacing
    with ``replace``); ``None`` (local mode) may. It becomes ``created_by`` when that is
    not given.

    Raises :class:`FormatError` (the problems, each naming file, line and field; nothing
    written), :class:`store.datasets.DatasetExists`, :class:`ImportFailed` or
    :class:`needlework.teams.permissions.PermissionDenied` (before reading anything).
    """
    actor = check(db, actor, "replace" if replace else "import", dataset)
    created_by = created_by or (actor.name if actor else "")
    name = _dataset_name(filename, dataset)
    records = formats.open_records(stream, filename, format, size=size, progress=progress)
    key_field = FORMATS[records.format].key_field()
    problems = ProblemList()
    lines = array("L")  # line of each written record, by position (for duplicate messages)
    try:
        with store_datasets.writing_dataset(
            db, name, records.kind, records.format, source=filename, created_by=created_by,
            replace=replace, drop_annotations=drop_annotations,
        ) as writer:
            batch: list[tuple[ParsedRecord, str]] = []
            batch_bytes = 0

            def flush() -> None:
                written = writer.existing([r.key for r, _ in batch])
                rows: list[store_datasets.ItemRow] = []
                here: dict[str, int] = {}
                for record, text in batch:
                    first = lines[written[record.key]] if record.key in written else here.get(record.key)
                    if first is not None:
                        problems.add(Problem(filename, record.line, f"{key_field} {record.key!r} is "
                                             f"a duplicate (first seen on {record.unit} {first})",
                                             record.index, record.unit))
                        continue
                    here[record.key] = record.line
                    rows.append((record.key, record.subset, record.title, text))
                    lines.append(record.line)
                writer.add(rows)

            for entry in records:
                if isinstance(entry, Problem):
                    problems.add(entry)
                    continue
                text = json.dumps(entry.record, ensure_ascii=False)
                batch.append((entry, text))
                batch_bytes += len(text)
                if len(batch) >= BATCH_RECORDS or batch_bytes >= BATCH_BYTES:
                    flush()
                    batch, batch_bytes = [], 0
            flush()
            if not writer.count and not problems:
                problems.add(Problem(filename, 1 if records.unit == "line" else None,
                                     "the file is empty: no records found"))
            problems.raise_if_any()  # inside the transaction: rolls every batch back
            count = writer.count
    except sqlite3.Error as e:
        raise ImportFailed(f"{filename}: {storage_message(e, database_path(db))}") from None
    except store_names.InvalidDatasetName as e:
        raise FormatError([Problem(filename, None, str(e))]) from None
    record_event(db, actor, "dataset.replaced" if replace else "dataset.imported", name,
                 dataset=name, after={"file": filename, "format": records.format,
                                      "items": count, "annotations_dropped": drop_annotations})
    return ImportSummary(name, records.kind, records.format, count)


def import_bytes(db: Database, data: bytes, filename: str, **kwargs: Any) -> ImportSummary:
    """:func:`import_stream` on bytes in memory (same keyword arguments)."""
    return import_stream(db, io.BytesIO(data), filename, size=len(data), **kwargs)


def import_file(db: Database, path: str | Path, **kwargs: Any) -> ImportSummary:
    """:func:`import_stream` on a path; refuses what is not a regular file (a FIFO,
    ``/dev/zero``, a directory) with :class:`FormatError`."""
    path = Path(path)
    stream, size = open_input(path)
    with stream:
        return import_stream(db, stream, path.name, size=size, **kwargs)


def export_formats(kind: str, source_format: str) -> list[str]:
    """The formats a dataset of ``kind`` imported as ``source_format`` can be written to."""
    if kind == "grounding":
        return ["garage"]
    if kind == "needle":
        return ["needle", "pairs", "trl"]
    if source_format == "rewardbench2":  # its subsets are not Long-form RewardBench's
        return ["rewardbench2", "pairs", "trl"]
    options = [source_format, "lfrb", "pairs", "trl"]
    return list(dict.fromkeys(options))


class ExportError(ValueError):
    """The dataset cannot be written in the requested format."""


def _batches(items: Iterable[dict[str, Any]], size: int = BATCH_RECORDS) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _annotated(db: Database, name: str, items: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """GaRAGe records with their annotations applied; a citation problem is an ExportError."""
    try:
        yield from stream_annotated(db, name, items)
    except CitationError as exc:
        raise ExportError(str(exc)) from exc


def export_chunks(
    db: Database,
    name: str,
    format: str,
    *,
    conversational: bool = False,
    keep_ties: bool = False,
    annotator: str | None = None,
    actor: User | None = None,
) -> Iterator[str]:
    """The dataset ``name`` written in ``format`` as a stream of text pieces, records in
    import order; reads items a batch at a time.

    ``trl`` is TRL's preference JSONL with the review verdicts applied (see
    :mod:`needlework.review.trl`); ``conversational``, ``keep_ties`` and ``annotator``
    apply to it only. The dataset and format are checked at once (:class:`ExportError`);
    a GaRAGe export whose annotated answers cite missing passages raises it after the
    last record (write the stream somewhere that can be discarded, as
    :func:`export_file` does). ``actor``: the signed-in user in team mode (admins only).
    """
    check(db, actor, "export", name)
    row = store_datasets.get_dataset(db, name)
    if row is None:
        raise ExportError(f"no dataset named {name!r}")
    allowed = export_formats(row["kind"], row["format"])
    if format not in allowed:
        raise ExportError(
            f"a {row['kind']} dataset ({row['format']}) can be exported as "
            + ", ".join(allowed) + f", not {format}"
        )
    items = store_datasets.iter_items(db, name)
    if format == row["format"]:
        module = FORMATS[format]
        if row["kind"] == "grounding":
            return module.dump_iter(_annotated(db, name, items))
        return module.dump_iter(item["record"] for item in items)
    source = row["format"]
    if format == "trl":
        from needlework.review import trl  # noqa: PLC0415
        from store.review import verdict_rows  # noqa: PLC0415

        verdicts = trl.latest_verdicts(verdict_rows(db, name), annotator)
        seen: set[str] | None = set() if source == "rewardbench2" else None

        def trl_chunks() -> Iterator[str]:
            for batch in _batches(items):
                pairs = [(item["key"], formats.preference_view(source, item["record"])) for item in batch]
                records = trl.trl_records(pairs, verdicts, conversational=conversational,
                                          keep_ties=keep_ties)
                if seen is not None:  # RewardBench 2: a comparison written once (§8)
                    records = _first_seen(records, seen)
                yield trl.dump(records)

        return trl_chunks()
    views = (formats.preference_view(source, item["record"]) for item in items)
    if format == "lfrb":
        return formats.lfrb.dump_iter(formats.lfrb.from_preference(v) for v in views)
    if format == "pairs":
        return formats.pairs.dump_iter(
            formats.pairs.from_preference(v, i, j) for v in views for i, j in v.comparisons()
        )
    raise ExportError(f"cannot convert {source} to {format}")


def _first_seen(records: list[dict[str, Any]], seen: set[str]) -> list[dict[str, Any]]:
    """The records not written before (RewardBench 2's Ties rows ``ref:N`` and ``tied:N``
    share a prompt and its incorrect answers, so the same comparison can come twice)."""
    out = []
    for record in records:
        key = hashlib.sha256(formats.rewardbench2.trl_key(record).encode("utf-8")).hexdigest()
        if key not in seen:
            seen.add(key)
            out.append(record)
    return out


def export_text(db: Database, name: str, format: str, **options: Any) -> str:
    """The whole :func:`export_chunks` text (options as there)."""
    return "".join(export_chunks(db, name, format, **options))


def export_file(db: Database, name: str, format: str, out: str | Path, **options: Any) -> int:
    """Stream :func:`export_chunks` into ``out`` atomically: written to a temporary file
    renamed over ``out`` when complete, so a failure (a full disk, a bad answer) leaves
    any previous file untouched. Returns the number of bytes written."""
    chunks = export_chunks(db, name, format, **options)
    size = 0
    with atomic_writer(out, "wb") as f:
        for chunk in chunks:
            data = chunk.encode("utf-8")
            f.write(data)
            size += len(data)
    return size


def delete_dataset(db: Database, name: str, *, actor: User | None = None) -> bool:
    """Delete a dataset with its items, annotations, history, scores, assignments, gold
    marks, plan and guidelines, in one transaction; False when there was none.
    ``actor``: the signed-in user in team mode (admins only)."""
    actor = check(db, actor, "delete", name)
    with db.atomic():
        row = store_datasets.get_dataset(db, name)
        if row is None:
            return False
        store_datasets.delete_dataset(db, name)
        store_assignments.forget_plan(db, name)
        store_guidelines.forget(db, name)
    record_event(db, actor, "dataset.deleted", name, dataset=name,
                 before={"kind": row["kind"], "format": row["format"], "items": row["items"]})
    return True
