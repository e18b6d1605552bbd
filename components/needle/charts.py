"""Step 3 of the needle lab: which results, the heatmap (click a cell), the findings, the
accuracy lines, and a cell's pairs down to one pair's per-token view with the needle marked.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from components.needle.data import COMPARE, PRIMARY, ResultSet
from components.text import label, render_text
from needlework.figures.paired import paired_by_key
from needlework.figures.stats_text import how, verdict
from needlework.needle import charts
from needlework.needle.analysis import (
    THIN_CELL,
    combine,
    selected_cell,
)
from needlework.needle.findings import (
    cell_key,
    findings,
    overview,
    position_trend,
    slide_subtitle,
    wrap,
)

NONE = "(none)"


def size(s: ResultSet) -> str:
    """``58 pairs``, or for a judge ``58 pairs, 116 trials`` (each pair in both orders)."""
    pairs = s.frame["id"].nunique() if len(s.frame) else 0
    return f"{pairs:,} pairs" + (f", {len(s.frame):,} trials" if s.kind == "judge" else "")


def pick_sets(sets: list[ResultSet], fingerprint: str | None) -> list[ResultSet]:
    """'Results of' and 'Compare with' pickers; returns one or two result sets."""
    by_name = {s.name: s for s in sets}
    names = list(by_name)
    if st.session_state.get(PRIMARY) not in by_name:
        st.session_state[PRIMARY] = next((s.name for s in sets if fingerprint and s.fingerprint == fingerprint),
                                         names[0])
    others = [NONE] + [n for n in names if n != st.session_state[PRIMARY]]
    if st.session_state.get(COMPARE) not in others:  # a judge beside a model, if there is one
        kind = by_name[st.session_state[PRIMARY]].kind
        st.session_state[COMPARE] = next((s.name for s in sets if s.kind != kind
                                          and s.name in others), NONE)
    cols = st.columns(2)
    primary = cols[0].selectbox("Results of", names, key=PRIMARY, persist_state="session",
                                format_func=lambda n: f"{n} · {by_name[n].source} · {size(by_name[n])}")
    other = cols[1].selectbox("Compare with (side by side, one colour scale)", others, key=COMPARE,
                              persist_state="session", disabled=len(others) == 1,
                              format_func=lambda n: n if n == NONE else f"{n} · {size(by_name[n])}",
                              help="Another model's or an LLM judge's results on the same needles: "
                                   "score the dataset with a second model, judge it (step 2), or "
                                   "upload scores below.")
    chosen = [by_name[primary]] + ([by_name[other]] if other in by_name else [])
    return chosen


def picked_sets(sets: list[ResultSet], fingerprint: str | None = None) -> list[ResultSet]:
    """The sets picked on the page (kept for the session), without drawing the pickers."""
    by_name = {s.name: s for s in sets}
    if not sets:
        return []
    primary = st.session_state.get(PRIMARY)
    if primary not in by_name:
        primary = next((s.name for s in sets if fingerprint and s.fingerprint == fingerprint), sets[0].name)
    other = st.session_state.get(COMPARE)
    return [by_name[primary]] + ([by_name[other]] if other in by_name and other != primary else [])


def results_of(chosen: list[ResultSet]) -> pd.DataFrame:
    """The chosen sets' frames in one (their ``model`` columns differ)."""
    return combine([s.frame for s in chosen]) if len(chosen) > 1 else chosen[0].frame


def for_page(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """Ready for ``st.altair_chart``: SVG in the browser (crisp, each cell an element with an
    aria label) and autosize ``pad``, so width and height are the plot's own, as in the PNG and
    SVG exports. (Streamlit's theme fits axes and legend into them instead, which squeezes a
    heatmap of two or three lengths to a few pixels.)"""
    return chart.properties(autosize=alt.AutoSizeParams(type="pad"),
                            usermeta={"embedOptions": {"renderer": "svg"}})


def _text_size(chart: alt.TopLevelMixin, size: int) -> None:
    """Set the font size of the cell labels (the text layers of a heatmap; a readable
    cell's two lines stay centred on it)."""
    spec = getattr(chart, "spec", chart)
    for layer in getattr(spec, "layer", []) or []:
        mark = layer.mark
        if getattr(mark, "type", mark) != "text":
            continue
        if getattr(mark, "description", None) == charts.TWO_LINES:
            layer.mark = alt.MarkDef(type="text", fontSize=size, lineBreak="\n", lineHeight=size,
                                     dy=-round(size / 2), description=charts.TWO_LINES)
        else:
            layer.mark = alt.MarkDef(type="text", fontSize=size, lineBreak="\n")


def heatmap_chart(chosen: list[ResultSet], *, select: bool = True, large: bool = False,
                  title: str | None = None, notes: list[str] | None = None) -> alt.TopLevelMixin:
    """The heatmap of one set, or two side by side on one colour scale, at a fixed size: the
    PNG, SVG and PDF downloads (large: for presenting). ``title`` on top, wrapped to the
    chart's width (Vega never wraps a title); ``notes`` (model, finding, date) below it,
    each wrapped, so a file read alone says what it shows."""
    frame = results_of(chosen)
    lengths = max(1, frame["length_tokens"].nunique())
    if large:
        width, row, font = (900 if len(chosen) == 1 else 620), 76, 17
    else:
        width, row, font = (600 if len(chosen) == 1 else 430), 40, 11
    chart = charts.heatmap(frame, select=select, width=width, height=max(3 * row, row * lengths))
    _text_size(chart, font)
    chart = chart.configure_axis(labelFontSize=font, titleFontSize=font + 1).configure_axisX(
        labelAngle=0 if width / 10 >= 5 * font else -40, labelOverlap=False).configure_axisY(
        labelExpr=charts.LENGTH_LABEL).configure_legend(
        labelFontSize=font - 1, titleFontSize=font, gradientLength=max(3 * row, row * lengths) - 20)
    if large:
        chart = chart.configure_header(labelFontSize=19, labelFontWeight="bold")
    if title or notes:
        span = width * len(chosen) + 140  # the panels and the legend beside them
        size, small = font + 9, font
        lines = wrap(title or "", int(span / (0.56 * size))) if title else [""]
        below = [line for note in notes or [] for line in wrap(note, int(span / (0.5 * small)))]
        extra: dict[str, Any] = ({"subtitle": below, "subtitleFontSize": small,
                                  "subtitleColor": "#333", "subtitlePadding": 8} if below else {})
        chart = chart.properties(title=alt.TitleParams(lines, fontSize=size, anchor="start",
                                                       offset=14, **extra))
    return for_page(chart)


def notes_of(chosen: list[ResultSet]) -> dict[str, str]:
    """``{set name: what explains a judge at chance}`` for the sets that carry such a note."""
    return {s.name: s.note for s in chosen if s.note}


def export_notes(chosen: list[ResultSet], when: str) -> list[str]:
    """What a downloaded heatmap says under its title: the models and what was counted,
    the finding of each model (a judge's position bias, and whether it is at chance), and
    the date it was made."""
    frame = results_of(chosen)
    return [slide_subtitle(frame), *findings(frame, why=notes_of(chosen)), cell_key(frame),
            f"Made {when} with Needlework."]


LAST = "nw_heat_last"  # each panel's selection at the last run, to tell which was clicked
CELL = "nw_heat_cell"  # (set name, length, bucket) of the last cell clicked


def panel_key(prefix: str, s: ResultSet) -> str:
    return f"{prefix}|{s.name}"


def render_heatmaps(chosen: list[ResultSet], *, large: bool = False, prefix: str = "nw_heat",
                    height: int | None = None,
                    font: int | None = None) -> tuple[ResultSet, tuple[int, int]] | None:
    """One clickable heatmap per result set, side by side, each as wide as its column (they
    fit the page at any width down to 1024 px, and each fills its own fullscreen view), all on
    the one 0–100 % colour scale. ``large``: the slide's, ``height`` tall with its axes and
    legend and labels ``font`` px (24 at least). Returns the set and cell (length, bucket)
    clicked last."""
    cols = st.columns(len(chosen), gap="medium") if len(chosen) > 1 else [st.container()]
    # on the slide: 24-px labels at least (readable at 3 m); the model is in the subtitle, so
    # a single panel has no title of its own
    row, font = (52, max(24, font or 24)) if large else (40, 11)
    cells: dict[str, tuple[int, int] | None] = {}
    for col, s in zip(cols, chosen, strict=True):
        name = s.name + (" (both orders)" if s.kind == "judge" else "")
        chart = for_panel(charts.heatmap_panel(s.frame, title=name if len(chosen) > 1 else None,
                                               row_height=row, font=font,
                                               height=height if large else None, slide=large))
        event = col.altair_chart(chart, on_select="rerun", width="stretch",
                                 key=panel_key(prefix, s))
        cells[s.name] = selected_cell(event)
    last = st.session_state.get(f"{LAST}|{prefix}") or {}
    changed = [(n, c) for n, c in cells.items() if c is not None and c != last.get(n)]
    st.session_state[f"{LAST}|{prefix}"] = cells
    picked = st.session_state.get(f"{CELL}|{prefix}")
    if changed:
        picked = (changed[-1][0], *changed[-1][1])
    elif picked is not None and cells.get(picked[0]) is None:
        picked = None  # its panel was cleared (double-click) or is no longer shown
    st.session_state[f"{CELL}|{prefix}"] = picked
    if picked is None:
        return None
    by_name = {s.name: s for s in chosen}
    return by_name[picked[0]], (int(picked[1]), int(picked[2]))


def for_panel(chart: alt.LayerChart) -> alt.LayerChart:
    """A page panel: SVG in the browser (each cell an element with an aria label), no
    Streamlit theme sizing (the panel sets its own)."""
    return chart.properties(usermeta={"embedOptions": {"renderer": "svg"}})


def heatmap_caption(chosen: list[ResultSet]) -> None:
    """What the heatmap shows: rows, columns, colour, missing and thin cells, a judge's trials."""
    missing = sum(int(s.frame["missing"].sum()) for s in chosen if "missing" in s.frame)
    judged = [s for s in chosen if s.kind == "judge"]
    st.caption("Rows: response length; columns: where the needle sits (share of the response). "
               "Colour and label: accuracy (chosen scored strictly above rejected; ties are wrong), "
               "one colour scale for every panel. "
               + (f"**{missing} pair(s) have a missing score** (skipped as too long, or NaN/inf): "
                  "they count as wrong and stay in every cell's n, as in Long-form RewardBench's "
                  "scorer. " if missing else "")
               + ("A judge's cells count trials, each pair twice (chosen shown first, then "
                  "second): right = it named the chosen response; an invalid answer is wrong. "
                  if judged else "")
               + "Under each accuracy, its n in pairs (a judge's too: its two trials of a pair "
               "are one pair; on a narrow panel in the tooltip only). Grey with only its "
               f"count: too few to read, fewer than {THIN_CELL} pairs (one rule for a reward "
               "model and a judge: a judge's two trials of a pair count as one pair); "
               "blank: none there. Hover for counts and the cell's 95 % interval "
               f"({how()}, the pair the unit: a judge's two orders of a pair together); "
               "**click a cell to see its pairs** (double-click clears).")
    if len(chosen) == 2:
        render_text(paired_words(chosen[0], chosen[1]), key="nw-paired")


def paired_words(first: ResultSet, second: ResultSet) -> str:
    """The two sets compared on the pairs both scored: each pair's outcome (a judge's share
    of its two orders), who is ahead, the difference's interval and the test that fits the
    outcomes (McNemar's exact test for 0/1, Wilcoxon's signed-rank test for shares), in one
    sentence (:func:`needlework.figures.stats_text.verdict`)."""
    def per_pair(s: ResultSet) -> dict[str, float]:
        if s.frame.empty:
            return {}
        return {str(k): float(v) for k, v in s.frame.groupby("id")["correct"].mean().items()}

    return verdict(paired_by_key(per_pair(first), per_pair(second), unit="pair"),
                   first.name, second.name)


def render_findings(frame: pd.DataFrame, why: dict[str, str] | None = None) -> list[str]:
    """The one-line finding per model (computed from the data; for a judge, its position
    bias and whether it is at chance, with ``why`` per set name) and the position trend."""
    lines = findings(frame, why=why)
    for k, line in enumerate(lines):
        render_text(line, key=f"nw-finding-lab-{k}")
    for model in dict.fromkeys(frame["model"]):  # the panels' order
        st.caption(f"{label(model, 60)}: {label(overview(frame, model), 400)} "
                   f"{label(position_trend(frame, model), 300)}")
    return lines


def render_lines(chosen: list[ResultSet]) -> None:
    """Accuracy against position, one line per length: a chart per result set, side by
    side, each as wide as its column (they fit the page down to 1024 px)."""
    cols = st.columns(len(chosen), gap="medium") if len(chosen) > 1 else [st.container()]
    for col, s in zip(cols, chosen, strict=True):
        chart = charts.accuracy_lines(s.frame, title=s.name if len(chosen) > 1 else None,
                                      width="container", height=240)
        chart = chart.properties(autosize=alt.AutoSizeParams(type="fit", contains="padding"),
                                 height=300, usermeta={"embedOptions": {"renderer": "svg"}}
                                 ).configure_legend(orient="bottom", direction="horizontal")
        col.altair_chart(chart, width="stretch", key=panel_key("nw_lines", s))
