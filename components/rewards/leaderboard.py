"""The Leaderboard section of the Reward model page: every reward model that scored the
dataset and every judge run on it, best accuracy first, the same rows and the same
rounded figures as ``python -m needlework metrics --leaderboard --dataset NAME``
(:mod:`needlework.results.leaderboard`). A row opens in Results below (the run picker's choice)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from components.callbacks import uninterrupted
from components.rewards.results import PICKED
from components.state import signed_in
from components.text import option
from needlework.figures.stats_text import how
from needlework.results import leaderboard as lb
from needlework.teams.permissions import PermissionDenied

OPEN = "rw_board_open"  # the selectbox of the row to open
TABLE = "rw_board"


@uninterrupted
def _open() -> None:
    """Open the chosen row in Results: the run picker reads ``PICKED`` first."""
    key = st.session_state.get(OPEN)
    if key:
        st.session_state[PICKED] = key


@st.cache_data(max_entries=8, show_spinner=False)
def _rows(_db: Any, dataset: str, signature: tuple[Any, ...]) -> list[lb.Row]:
    """The rows, computed once per ``signature`` (:func:`needlework.results.leaderboard.signature`:
    a run added, rescored or finished gives a new one)."""
    return lb.leaderboard(_db, dataset)


def render_leaderboard(db: Any, dataset: str) -> list[lb.Row]:
    """Draw the leaderboard of ``dataset`` and return its rows (``[]`` when nothing has
    been scored or judged, or when the signed-in user may not see the models' results)."""
    try:
        lb.may_see(signed_in(), dataset)
        rows = _rows(db, dataset, lb.signature(db, dataset))
    except PermissionDenied as exc:
        st.info(str(exc), icon=":material/block:")
        return []
    if not rows:
        st.caption("No run on this dataset yet: score it with a reward model or judge it with "
                   "an LLM, and every run appears here.")
        return []
    st.caption("Every reward model that scored this dataset and every judge run on it, best "
               "accuracy first: best-of-n for a reward model (RM-Bench score on an RM-Bench set), "
               "a judge's accuracy over its answered trials, failed requests counted apart. Each "
               f"interval names its method ({how(*[r.interval for r in rows])}). The command "
               f"`python -m needlework metrics --leaderboard --dataset NAME` prints the same rows.")
    st.dataframe(pd.DataFrame(lb.table(rows)), hide_index=True, key=TABLE,
                 column_config={"#": st.column_config.NumberColumn(width="small")})
    stem = dataset.replace("/", "_").replace(" ", "_")
    st.download_button("Leaderboard CSV", lb.table_csv(rows), file_name=f"{stem}-leaderboard.csv",
                       mime="text/csv", icon="⬇️", key="rw_board_csv", on_click="ignore")
    names = {r.key: f"{k}. {r.name} · {r.mode}" for k, r in enumerate(rows, start=1)}
    left, right = st.columns([4, 1], vertical_alignment="bottom")
    left.selectbox("Open a run's results", list(names), key=OPEN,
                   format_func=lambda k: option(names[k]))
    right.button("Open in Results", key="rw_board_go", on_click=_open)
    return rows
