"""The suggestion figures (issue 30, point 6), drawn on the Quality and Agreement pages:
each source's accuracy against adjudicated or gold values with its confusion table, each
annotator's acceptance and override rates, active time with and without suggestions, and
agreement with the suggestions against agreement with the others.

The figures come from :func:`needlework.suggest.figures.suggestion_report` (docs/teams.md,
"Figures"). Source and annotator names are data: they reach the page inside tables (shown
as text) or through :func:`components.text.label`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pandas as pd
import streamlit as st
from sqlite_utils import Database

from components.tables import figures_table
from components.text import label, option
from needlework.figures.stats_text import round_half_up
from needlework.suggest.figures import HIGH, LOW, suggestion_report
from needlework.teams.permissions import PermissionDenied, User

ANCHORING = (f"Anchoring? flags an annotator whose kappa with a source is at least {HIGH} while "
             f"their kappa with the other annotators on the same passages (or comparisons) is below "
             f"{LOW}, and who was shown suggestions on some of them: they may be following the "
             "model rather than the guidelines.")


def _pct(figure: dict[str, Any]) -> float | None:
    value = figure.get("value")
    return None if value is None else float(round_half_up(Fraction(value) * 100, 1))


def _num(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def _per_label(figure: dict[str, Any] | None) -> str:
    """``83.3 (6)``: a share in percent with its denominator; ``– (0)`` when undefined."""
    if figure is None:
        return "– (0)"
    value = _pct(figure)
    return f"{'–' if value is None else value} ({figure['n']})"


def render_suggestion_figures(db: Database, dataset: str, actor: User | None) -> None:
    """The section "Suggestions": every figure of ``dataset``'s suggestions, or one
    caption when it has none (or the actor may not see the figures)."""
    st.subheader("Suggestions")
    try:
        report = suggestion_report(db, dataset, actor=actor)
    except PermissionDenied as e:
        st.caption(label(str(e), 300))
        return
    if not report["suggestions"]:
        st.caption("No model suggestions for this dataset: nothing to measure.")
        return
    unit = report["unit"]
    st.caption(f"{report['suggestions']:,} suggestion(s) from {len(report['sources'])} "
               f"source(s). Suggestions never count as annotations; a {unit} counts as shown "
               "a suggestion when it was accepted, typed over one, or saved while one was "
               "there for an annotator allowed to see it (docs/teams.md, Figures).")
    _accuracy(report)
    _acceptance(report)
    _time(report)
    _anchoring(report)


def _accuracy(report: dict[str, Any]) -> None:
    st.markdown(f"**Accuracy per source** ({report['unit']}s with an adjudicated value, else a "
                "gold answer)")
    rows = report["accuracy"]
    if not rows:
        st.caption(f"No suggestion is for a {report['unit']}.")
        return
    labels = [x for row in rows for x in row["per_label"]]
    st.dataframe(figures_table([{
        "source": r["source"], "suggestions": r["suggestions"], "with a reference": r["referenced"],
        "adjudicated": r["reference"]["adjudicated"], "gold": r["reference"]["gold"],
        "right": r["accuracy"]["count"], "accuracy %": _pct(r["accuracy"]),
        **{f"{x} % (n)": _per_label(r["per_label"].get(x)) for x in dict.fromkeys(labels)},
    } for r in rows]), hide_index=True, width="stretch", key="nw-sg-fig-accuracy")
    by_source = {r["source"]: r for r in rows}
    source = st.selectbox("Confusion table of", list(by_source), key="nw-sg-fig-source",
                          format_func=lambda s: option(s, 80))
    chosen = by_source[source]
    if not chosen["referenced"]:
        st.caption(label(chosen["accuracy"]["note"], 200))
        return
    names = chosen["labels"]
    table = pd.DataFrame([[chosen["confusion"].get(ref, {}).get(got, 0) for got in names]
                          for ref in names], index=names, columns=names)
    table.index.name = "reference ↓ / suggested →"
    st.dataframe(table, width="stretch", key="nw-sg-fig-confusion")


def _acceptance(report: dict[str, Any]) -> None:
    counted = ("passage labels and dimensions" if report["unit"] == "passage label"
               else "verdicts")
    st.markdown("**Acceptance per annotator** (of the values saved with a suggestion shown: "
                f"{counted}, where the table below counts {report['unit']}s only)")
    st.dataframe(figures_table([{
        "annotator": r["annotator"], "saved": r["saved"], "shown a suggestion": r["shown"],
        "accepted": r["accepted"]["count"], "accepted %": _pct(r["accepted"]),
        "overridden": r["changed"]["count"], "overridden %": _pct(r["changed"]),
        "typed the suggestion": r["typed"]["count"], "typed %": _pct(r["typed"]),
    } for r in report["acceptance"]], columns=[
        "annotator", "saved", "shown a suggestion", "accepted", "accepted %", "overridden",
        "overridden %", "typed the suggestion", "typed %"]),
        hide_index=True, width="stretch", key="nw-sg-fig-acceptance")


def _time(report: dict[str, Any]) -> None:
    st.markdown("**Active time per item** (seconds, with and without suggestions shown)")
    st.dataframe(figures_table([{
        "annotator": r["annotator"],
        "items with": r["with"]["n"], "median with": _num(r["with"]["median"], 1),
        "mean with": _num(r["with"]["mean"], 1),
        "items without": r["without"]["n"], "median without": _num(r["without"]["median"], 1),
        "mean without": _num(r["without"]["mean"], 1),
    } for r in report["time"]], columns=[
        "annotator", "items with", "median with", "mean with", "items without",
        "median without", "mean without"]),
        hide_index=True, width="stretch", key="nw-sg-fig-time")
    st.caption(f"Active time counts the gaps of at most {report['idle_seconds']:.0f} seconds "
               "between one person's changes, as above.")


def _anchoring(report: dict[str, Any]) -> None:
    st.markdown("**Agreement with the suggestions against agreement with each other** "
                f"({report['unit']}s only)")
    st.dataframe(figures_table([{
        "annotator": r["annotator"], "source": r["source"], "units": r["units"],
        "shown": r["shown"], "kappa with source": _num(r["with_source"]["value"]),
        "equal to source %": _pct({"value": r["with_source"]["agreement"]}),
        "kappa with others": _num(r["with_others"]["value"]),
        "equal to others %": _pct({"value": r["with_others"]["agreement"]}),
        "anchoring?": "⚠ anchoring?" if r["anchoring"] else "",
    } for r in report["anchoring"]], columns=[
        "annotator", "source", "units", "shown", "kappa with source", "equal to source %",
        "kappa with others", "equal to others %", "anchoring?"]),
        hide_index=True, width="stretch", key="nw-sg-fig-anchoring")
    st.caption(ANCHORING)
