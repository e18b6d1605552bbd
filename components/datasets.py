"""Dataset tables, import and export widgets."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode

import pandas as pd
import streamlit as st
from sqlite_utils import Database

from components.text import render_text
from needlework.datasets import ExportError, export_formats, export_text, import_bytes
from needlework.formats import FORMATS, FormatError
from store.datasets import DatasetExists

PAGE_FOR_KIND = {
    "grounding": "pages/annotate.py",
    "preference": "pages/review.py",
    "needle": "pages/needle.py",
}


def render_dataset_table(rows: list[dict], progress: dict[str, dict[str, int]]) -> None:
    """A table of datasets with items and, per annotator, items annotated."""
    if not rows:
        st.info("No datasets yet. Import one on the **Import & export** page.")
        return
    table = pd.DataFrame(
        [
            {
                "dataset": r["name"],
                "kind": r["kind"],
                "format": r["format"],
                "items": r["items"],
                "progress": ", ".join(
                    f"{who}: {n}/{r['items']}" for who, n in progress.get(r["name"], {}).items()
                )
                or "not started",
                "imported": (r["created_at"] or "")[:16].replace("T", " "),
                "open": "/" + PAGE_FOR_KIND[r["kind"]].removeprefix("pages/").removesuffix(".py")
                + "?" + urlencode({"dataset": r["name"]}),
            }
            for r in rows
        ]
    )
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        column_config={
            "open": st.column_config.LinkColumn("open", display_text="Open ›", width="small"),
            "items": st.column_config.NumberColumn("items", width="small"),
        },
    )


def render_activity(entries: list[dict]) -> None:
    """The latest changes (who, when, what), newest first."""
    if not entries:
        st.caption("Nothing yet: labels, answers and verdicts appear here as they are saved.")
        return
    frame = pd.DataFrame(
        [
            {
                "at": e["at"][:19].replace("T", " "),
                "who": e["by"],
                "dataset": e["dataset"],
                "item": (e.get("item_title") or e["item_key"])[:80],
                "field": e["field"],
                "value": "" if e["new_value"] is None else str(e["new_value"])[:60],
                "open": "/?" + urlencode({"dataset": e["dataset"], "item": e["item_key"]}),
            }
            for e in entries
        ]
    )
    st.dataframe(frame, hide_index=True, width="stretch", column_config={
        "open": st.column_config.LinkColumn("open", display_text="Open ›", width="small")})


def render_import(db: Database, annotator: str) -> str | None:
    """File upload with format and name; returns the summary line after an import
    (the caller reruns so every widget sees the new dataset; the summary is shown then).

    Validation problems are listed, each naming file, line and field; nothing is
    written when there is any.
    """
    flash = st.session_state.pop("import_flash", None)
    if flash:
        st.success(flash)
    upload = st.file_uploader("File to import", type=["jsonl", "json"], key="import_file")
    cols = st.columns(3)
    fmt = cols[0].selectbox("Format", ["detect"] + sorted(FORMATS), key="import_format")
    name = cols[1].text_input("Dataset name", placeholder="default: the file's name",
                              key="import_name")
    replace = cols[2].checkbox("Replace a dataset of that name", key="import_replace")
    if not st.button("Import", type="primary", disabled=upload is None, key="import_go"):
        return None
    try:
        summary = import_bytes(
            db,
            upload.getvalue(),
            upload.name,
            format=None if fmt == "detect" else fmt,
            dataset=name.strip() or None,
            replace=replace,
            created_by=annotator,
        )
    except FormatError as e:
        st.error(f"Nothing imported: {len(e.problems)} problem(s).")
        render_text("\n".join(str(p) for p in e.problems[:200]), mono=True, box=True,
                    max_height=320, key="import-errors")
        return None
    except DatasetExists as e:
        st.error(str(e))
        return None
    st.session_state["import_flash"] = str(summary)
    return str(summary)


def render_export(db_factory: Callable[[], Database], rows: list[dict], dataset: str | None) -> None:
    """Pick a dataset and a format; the file is written when the button is clicked."""
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

    def build() -> bytes:
        try:
            return export_text(db_factory(), name, fmt).encode("utf-8")
        except ExportError as e:  # shown as the file's content: nothing else can be shown here
            return f"export failed: {e}\n".encode()

    st.download_button(f"Download {name}{suffix}", data=build, file_name=f"{name}{suffix}",
                       mime="application/json", key="export_go", icon="⬇️")
