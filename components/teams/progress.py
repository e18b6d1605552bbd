"""Progress of assigned work: per dataset and per annotator (Home, Assignment).

Figures are :mod:`needlework.teams.assignment`'s SQL aggregates. "Done" is the pages'
rule: every passage labelled and an answer (or the deflection) written, for a
grounding item; a verdict on every comparison (skip included) for a preference item.
An annotator sees only their own row and the datasets assigned to them.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
from sqlite_utils import Database

from needlework.teams.assignment import annotator_progress, dataset_progress, visible_datasets
from needlework.teams.permissions import User


def _share(done: int, total: int) -> float:
    return 100.0 * done / total if total else 0.0


def render_team_progress(db: Database, actor: User | None, dataset: str | None = None,
                         *, title: str | None = "Assigned work") -> bool:
    """Two tables, per dataset and per annotator (of ``dataset``, or of every assigned
    dataset); nothing when nothing is assigned. Returns whether anything was drawn."""
    rows = dataset_progress(db, dataset)
    mine = visible_datasets(db, actor)
    if mine is not None:
        rows = [r for r in rows if r.dataset in set(mine)]
    if not rows:
        return False
    if title:
        st.subheader(title)
    bar = st.column_config.ProgressColumn("done", format="%.0f%%", min_value=0, max_value=100)
    if mine is None:  # the whole team's totals: not for an annotator, who sees their own
        st.dataframe(pd.DataFrame([{
            "dataset": r.dataset, "items": r.items, "assigned items": r.assigned_items,
            "annotators": r.annotators, "assignments done": f"{r.done}/{r.assignments}",
            "items finished by all": r.complete_items, "done": _share(r.done, r.assignments),
        } for r in rows]), hide_index=True, width="stretch", column_config={"done": bar},
            key=f"nw-progress-datasets|{dataset or ''}")
    people = [{
        "annotator": p.annotator, "dataset": r.dataset, "assigned": p.assigned, "done": p.done,
        "started": p.started, "remaining": p.remaining, "progress": _share(p.done, p.assigned),
    } for r in rows for p in annotator_progress(db, r.dataset, actor=actor)]
    if people:
        st.dataframe(pd.DataFrame(people), hide_index=True, width="stretch",
                     column_config={"progress": st.column_config.ProgressColumn(
                         "progress", format="%.0f%%", min_value=0, max_value=100)},
                     key=f"nw-progress-people|{dataset or ''}")
    return True
