"""Tables of figures for ``st.dataframe``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd


def figures_table(rows: Sequence[dict[str, Any]], columns: list[str] | None = None) -> pd.DataFrame:
    """The rows as a table where an undefined figure (``None``) shows as ``–`` (its reason
    is in the table's caption or notes), never as Streamlit's grey "None" or as ``nan``.
    A column with a gap becomes text (one type per column: Arrow refuses a mix)."""
    frame = pd.DataFrame(list(rows), columns=columns)
    for column in frame.columns:
        if frame[column].isna().any():
            frame[column] = ["–" if pd.isna(v) else f"{v:g}" if isinstance(v, float) else str(v)
                             for v in frame[column]]
    return frame
