"""figures_table: an undefined figure shows as "–", never as "None" or "nan", and a
table with gaps still converts to Arrow (what st.dataframe sends)."""

from __future__ import annotations

import pyarrow as pa

from components.tables import figures_table


def test_gaps_show_as_a_dash_and_whole_columns_keep_their_type():
    frame = figures_table([{"who": "ana", "kappa": 0.5, "n": 3, "accuracy": None},
                           {"who": "bob", "kappa": None, "n": 4, "accuracy": 0.25}])
    assert list(frame["kappa"]) == ["0.5", "–"] and list(frame["accuracy"]) == ["–", "0.25"]
    assert list(frame["n"]) == [3, 4]  # no gap: still numbers
    assert "None" not in frame.to_string() and "nan" not in frame.to_string()
    pa.Table.from_pandas(frame)  # raises on a column mixing numbers and text


def test_declared_columns_of_an_empty_table():
    assert list(figures_table([], columns=["a", "b"]).columns) == ["a", "b"]
