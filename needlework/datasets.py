"""Importing files into the store and exporting datasets back to files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from needlework import formats
from needlework.formats import FORMATS, FormatError, Problem
from store import datasets as store_datasets


@dataclass(frozen=True)
class ImportSummary:
    dataset: str
    kind: str
    format: str
    items: int

    def __str__(self) -> str:
        return f"imported {self.items} {self.kind} items as {self.dataset!r} ({self.format})"


def dataset_name_for(filename: str) -> str:
    """The default dataset name: the file's stem (``sample.jsonl`` → ``sample``)."""
    return Path(filename).stem


def import_bytes(
    db: Database,
    data: bytes,
    filename: str,
    *,
    format: str | None = None,
    dataset: str | None = None,
    replace: bool = False,
    created_by: str = "",
) -> ImportSummary:
    """Validate and import a whole file; all-or-nothing.

    Raises :class:`FormatError` (every problem, nothing written) or
    :class:`store.datasets.DatasetExists`.
    """
    parsed = formats.parse(data, filename, format)
    name = dataset or dataset_name_for(filename)
    if not name.strip():
        raise FormatError([Problem(filename, None, "the dataset name is empty")])
    count = store_datasets.create_dataset(
        db,
        name,
        parsed.kind,
        parsed.format,
        (store_datasets.NewItem(r.key, r.record, r.subset, r.title) for r in parsed.records),
        source=filename,
        created_by=created_by,
        replace=replace,
    )
    return ImportSummary(name, parsed.kind, parsed.format, count)


def import_file(db: Database, path: str | Path, **kwargs: Any) -> ImportSummary:
    """:func:`import_bytes` on a path."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise FormatError([Problem(path.name, None, f"cannot read the file: {e.strerror}")]) from None
    return import_bytes(db, data, path.name, **kwargs)


def export_formats(kind: str, source_format: str) -> list[str]:
    """The formats a dataset of ``kind`` imported as ``source_format`` can be written to."""
    if kind == "grounding":
        return ["garage"]
    if kind == "needle":
        return ["needle", "pairs", "trl"]
    options = [source_format, "lfrb", "pairs", "trl"]
    return list(dict.fromkeys(options))


class ExportError(ValueError):
    """The dataset cannot be written in the requested format."""


def export_text(
    db: Database,
    name: str,
    format: str,
    *,
    conversational: bool = False,
    keep_ties: bool = False,
    annotator: str | None = None,
) -> str:
    """The dataset ``name`` written in ``format``, records in import order.

    ``trl`` is TRL's preference JSONL with the review verdicts applied (see
    :mod:`needlework.review.trl`); ``conversational``, ``keep_ties`` and
    ``annotator`` apply to it only.
    """
    row = store_datasets.get_dataset(db, name)
    if row is None:
        raise ExportError(f"no dataset named {name!r}")
    allowed = export_formats(row["kind"], row["format"])
    if format not in allowed:
        raise ExportError(
            f"a {row['kind']} dataset ({row['format']}) can be exported as "
            + ", ".join(allowed) + f", not {format}"
        )
    items = list(store_datasets.iter_items(db, name))
    if format == row["format"]:
        records = [item["record"] for item in items]
        if row["kind"] == "grounding":
            from needlework.grounding_export import apply_annotations  # noqa: PLC0415

            records = apply_annotations(db, name, items)
        return FORMATS[format].dump(records)
    views = [formats.preference_view(row["format"], item["record"]) for item in items]
    if format == "trl":
        from needlework.review import trl  # noqa: PLC0415
        from store.review import verdict_rows  # noqa: PLC0415

        verdicts = trl.latest_verdicts(verdict_rows(db, name), annotator)
        keys = [item["key"] for item in items]
        return trl.dump(trl.trl_records(zip(keys, views, strict=True), verdicts,
                                        conversational=conversational, keep_ties=keep_ties))
    if format == "lfrb":
        return formats.lfrb.dump([formats.lfrb.from_preference(v) for v in views])
    if format == "pairs":
        return formats.pairs.dump(
            [formats.pairs.from_preference(v, i, j) for v in views for i, j in v.comparisons()]
        )
    raise ExportError(f"cannot convert {row['format']} to {format}")


def export_file(db: Database, name: str, format: str, out: str | Path) -> int:
    """Write :func:`export_text` to ``out``; returns the number of bytes written."""
    text = export_text(db, name, format)
    Path(out).write_text(text, encoding="utf-8")
    return len(text.encode("utf-8"))
