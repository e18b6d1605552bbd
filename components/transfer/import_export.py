"""The Import & export page's widgets: a streamed, all-or-nothing import and a download
written when it is clicked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st
from sqlite_utils import Database

from components.state import get_db, signed_in
from components.text import label, render_text
from needlework.datasets.transfer import (
    ExportError,
    ImportFailed,
    dataset_name_for,
    export_file,
    export_formats,
    export_text,
    import_stream,
)
from needlework.formats import FORMATS, FormatError
from needlework.teams.permissions import PermissionDenied
from store import datasets as store_datasets
from store.names import MAX_NAME_LENGTH


def _import_target(db: Database, name: str, upload) -> tuple[str, store_datasets.DatasetWork | None]:
    """The dataset name an import would use, and the work on the dataset it would replace."""
    target = name.strip() or (dataset_name_for(upload.name) if upload is not None else "")
    if not target or store_datasets.get_dataset(db, target) is None:
        return target, None
    return target, store_datasets.dataset_work(db, target)


def render_import(db: Database, annotator: str) -> str | None:
    """File upload with format and name; returns the summary line after an import
    (the caller reruns so every widget sees the new dataset; the summary is shown then).

    The file is read in batches with a progress bar. Validation problems are listed,
    each naming file, line and field; nothing is written when there is any. Replacing
    a dataset that has annotations needs a second tick that says how many go.
    """
    upload, fmt, name, replace, drop = _import_form(db)
    if not st.button("Import", type="primary", disabled=upload is None,
                     key="import_go") or upload is None:  # disabled without a file
        return None
    return _run_import(db, upload, fmt, name, replace, drop, annotator)


def _import_form(db: Database) -> tuple[Any, str, str, bool, bool]:
    """The last import's summary, then the form: ``(file, format, name, replace, drop the
    annotations)``; the second tick only when the dataset replaced has annotations."""
    flash = st.session_state.pop("import_flash", None)
    if flash:
        st.success(label(flash, 400))
    upload = st.file_uploader("File to import", type=["jsonl", "json", "parquet"], key="import_file",
                              help="JSON Lines, a JSON array (RM-Bench), or Parquet (RewardBench 2 "
                                   "as published)")
    cols = st.columns(3)
    fmt = cols[0].selectbox("Format", ["detect"] + sorted(FORMATS), key="import_format")
    name = cols[1].text_input("Dataset name", placeholder="default: the file's name",
                              key="import_name", max_chars=MAX_NAME_LENGTH,
                              help="1-120 printable characters; unique regardless of case and spaces")
    replace = cols[2].checkbox("Replace existing", key="import_replace",
                               help="Replace the dataset of that name: its items and model "
                                    "scores are replaced by the file's.")
    drop = False
    if replace:
        target, work = _import_target(db, name, upload)
        if work is not None and work.annotated:
            drop = st.checkbox(
                f"Also delete its {work.annotations} annotation(s) and {work.history} change(s) "
                f"of history ({label(target, 60)})", key="import_drop",
                help="Replacing a dataset deletes its annotations. Export it first to keep them.")
    return upload, fmt, name, replace, drop


def _run_import(db: Database, upload: Any, fmt: str, name: str, replace: bool, drop: bool,
                annotator: str) -> str | None:
    """Import ``upload`` under a progress bar; its summary line, or ``None`` with the
    problems (each naming file, line and field) or the refusal shown."""
    bar = st.progress(0.0, text="Reading the file…")
    shown = {"step": -1}

    def progress(done: int, total: int) -> None:
        step = int(100 * done / total) if total else 0
        if step == shown["step"]:
            return
        shown["step"] = step
        bar.progress(min(step, 100) / 100,
                     text=f"Importing: {done / 1e6:.1f} of {total / 1e6:.1f} MB read")

    try:
        upload.seek(0)
        summary = import_stream(
            db,
            upload,
            upload.name,
            size=upload.size,
            format=None if fmt == "detect" else fmt,
            dataset=name.strip() or None,
            replace=replace,
            drop_annotations=drop,
            created_by=annotator,
            progress=progress,
            actor=signed_in(),
        )
    except FormatError as e:
        st.error(f"Nothing imported: {e.total} problem(s).")
        lines = [str(p) for p in e.problems[:200]]
        if e.total > len(lines):
            lines.append(f"... and {e.total - len(lines)} more problem(s)")
        render_text("\n".join(lines), mono=True, box=True, max_height=320, key="import-errors")
        return None
    except store_datasets.AnnotationsExist as e:
        st.error(label(f"{e}. Tick 'Also delete' to replace it anyway, or export it first.", 600))
        return None
    except (store_datasets.DatasetExists, ImportFailed, PermissionDenied) as e:
        st.error(label(str(e), 600))
        return None
    finally:
        bar.empty()
    st.session_state["import_flash"] = str(summary)
    return str(summary)


#: Datasets with more items than this are exported to a file on the server, streamed,
#: rather than built in memory for a download.
IN_BROWSER_ITEMS = 20_000


def render_export(rows: list[dict], dataset: str | None) -> None:
    """Pick a dataset and a format; the file is written when the button is clicked (in the
    server thread that serves the download: with that thread's connection). A dataset of
    more than :data:`IN_BROWSER_ITEMS` items is streamed into a file on the server
    instead (a download would hold it all in memory)."""
    if not rows:
        return
    names = [r["name"] for r in rows]
    by_name = {r["name"]: r for r in rows}
    cols = st.columns(2)
    name = cols[0].selectbox("Dataset", names, index=names.index(dataset) if dataset in names else 0,
                             key="export_dataset")
    row = by_name[name]
    options = export_formats(row["kind"], row["format"])
    fmt = cols[1].selectbox("Format", options, key="export_format")
    suffix = ".json" if fmt == "rmbench" else ".jsonl"
    if row["items"] > IN_BROWSER_ITEMS:
        _export_to_file(name, fmt, suffix, row["items"])
        return

    def build() -> bytes:
        try:
            return export_text(get_db(), name, fmt).encode("utf-8")
        except ExportError as e:  # shown as the file's content: nothing else can be shown here
            return f"export failed: {e}\n".encode()

    st.download_button(f"Download {label(name, 80)}{suffix}", data=build, file_name=f"{name}{suffix}",
                       mime="application/json", key="export_go", icon="⬇️")


def _export_to_file(name: str, fmt: str, suffix: str, items: int) -> None:
    """Stream a large export into a file on the server (written whole or not at all)."""
    st.caption(f"{items:,} items: too many for a download through the browser, so the export is "
               "streamed into a file on the server (the same as `python -m needlework export`).")
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)[:80] or "export"
    path = st.text_input("File on the server", value=str(Path("exports") / f"{safe}-{fmt}{suffix}"),
                         key=f"export_path|{name}|{fmt}")
    if not st.button("Write the file", key="export_file_go", icon=":material/save:"):
        return
    target = Path(path).expanduser()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with st.spinner(f"Writing {items:,} items…"):
            size = export_file(get_db(), name, fmt, target)
    except (ExportError, OSError) as e:
        st.error(label(f"Nothing written: {e}", 600))
        return
    st.success(label(f"Wrote {size / 1e6:,.1f} MB to {target.resolve()}", 600))
