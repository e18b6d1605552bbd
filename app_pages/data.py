"""Import and export datasets, and the change history with undo."""

import pandas as pd
import streamlit as st

from components.state import annotator, current_dataset, get_db, require_annotator, signed_in
from components.text import label
from components.transfer.import_export import render_export, render_import
from needlework.actions.writes import undo_change
from needlework.teams.permissions import PermissionDenied
from needlework.view.changes import describe, value_text
from store.annotations import history
from store.datasets import list_datasets

db = get_db()
st.title("Import & export")

st.subheader("Import")
st.caption(
    "GaRAGe JSONL, Long-form RewardBench JSONL, RM-Bench JSON, preference pairs JSONL "
    "(strings or TRL messages) or needle JSONL. The format is detected when not given. "
    "An import is all-or-nothing: any problem and nothing is written."
)
if render_import(db, annotator()):
    st.rerun()

st.subheader("Export")
render_export(list_datasets(db), current_dataset())

st.subheader("History")
dataset = current_dataset()
if dataset:
    st.caption("The latest 100 changes of this dataset, newest first: who changed what on which "
               "item, and the value it had before. Undo restores that value.")
    entries = history(db, dataset=dataset, limit=100)
    if not entries:
        st.caption("No changes in this dataset yet.")
    else:
        frame = pd.DataFrame(
            [
                {
                    "id": e["id"],
                    "when (UTC)": e["at"][:19].replace("T", " "),
                    "who": e["by"] + ("" if e["annotator"] in ("", e["by"]) else f" (for {e['annotator']})"),
                    "item": " ".join(str(e.get("item_title") or e["item_key"]).split())[:90],
                    "change": describe(e),
                    "was": "" if e["old_value"] is None else value_text(e["old_value"]),
                    "undoes": f"#{e['undoes']}" if e["undoes"] else "",
                }
                for e in entries
            ]
        )
        st.dataframe(frame, hide_index=True, width="stretch")
        cols = st.columns([1, 3])
        target = cols[0].number_input("Change id to undo", min_value=1, step=1, value=entries[0]["id"],
                                      key="undo_id")
        if cols[1].button("Undo this change", key="undo_go") and require_annotator():
            try:
                undo_change(db, int(target), who=annotator(), actor=signed_in())
                st.toast(f"Change #{int(target)} undone")
                st.rerun()
            except (KeyError, PermissionDenied) as e:
                st.error(label(str(e), 300))
