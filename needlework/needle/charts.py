"""Altair charts of needle results, and their export as PNG, SVG and PDF (vl-convert, offline).

- :func:`heatmap`: accuracy by length (rows) × position bucket (10 columns), each cell's
  count on a second line under its accuracy, its 95 % bootstrap interval in the tooltip; a
  thin cell (fewer than :data:`THIN_CELL` pairs) is grey, outlined with
  a dashed border and labelled with its n only, so that a bright "100 %" of one pair
  never draws the eye; one panel per model, all on one fixed 0–100 % colour scale. Clicking a
  cell selects it through the point selection :data:`SELECTION` (``"cell"``) over
  the fields ``length_tokens`` and ``bucket``: with
  ``st.altair_chart(chart, on_select="rerun")`` the event carries the clicked cell
  (read it with :func:`needlework.needle.analysis.selected_cell`).
- :func:`accuracy_lines`: accuracy against position, one line per length.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import altair as alt
import pandas as pd

from needlework import files
from needlework.figures.stats_text import percent, percent_range
from needlework.needle.analysis import (
    BUCKETS,
    SELECTION,
    THIN_CELL,
    bucket_label,
    combine,
    counted,
    heatmap_frame,
)
from needlework.words import plural

COLOR_SCHEME: Final = "viridis"  # perceptually uniform, colour-blind safe
CELL_FIELDS = ["length_tokens", "bucket"]
POSITION_ORDER = [bucket_label(b) for b in range(BUCKETS)]
POSITION_TITLE = "needle position (share of the response)"  # the same on the page and in files
LENGTH_TITLE = "length (tokens)"  # short: it stands beside as few as two rows


def _accuracy_scale() -> alt.Scale:
    """The one colour scale of every heatmap: accuracy 0–1, fixed, so panels compare."""
    return alt.Scale(domain=[0, 1], scheme=COLOR_SCHEME)


def cell_selection() -> alt.Parameter:
    """The ``cell`` point selection (click a cell; double-click clears)."""
    return alt.selection_point(name=SELECTION, fields=CELL_FIELDS, on="click", clear="dblclick")


LEGEND_VALUES = [0, 0.25, 0.5, 0.75, 1]  # the colour legend's labels: 0 % to 100 %, all shown
THIN_FILL = "#d4d4d4"  # a thin cell's grey: outside the colour scale
TWO_LINES = "accuracy and n"  # the description of the text layer of the readable cells
COUNT_TITLE = "pairs (n)"  # a cell's n: its pairs, a judge's too (its trials in brackets)


_METHOD = {"wilson": "Wilson", "bootstrap": "bootstrap", "none": "no interval: all alike"}


def _cells(results: pd.DataFrame, thin: int) -> pd.DataFrame:
    """The heatmap frame with the cells' labels (``67 %`` over ``n=12`` on a second line; a
    thin cell: ``n=2`` only; ``short``, for a narrow panel: ``67``), the count as the
    tooltip says it (``2, too few to read (under 5 pairs)``; a judge's ``2 (4 trials)``) and
    the 95 % interval as it says it (``45–88 % (Wilson over 12 pairs)``, or ``bootstrap``
    for a judge's shares). A cell's n is its **pairs**, for a reward model and a judge
    alike (a judge's two trials of a pair are one pair): the one unit of every cell, on the
    page, the slide and the exported files."""
    cells = heatmap_frame(results, thin, intervals=True)
    judged = counted(results) == "trials"
    cells["interval"] = [
        f"{percent_range({'low': lo, 'high': hi}, 0)} ({_METHOD.get(m, m)} over {plural(p, 'pair')}"
        + (f", {plural(n, 'trial')}" if judged else "") + ")"
        for lo, hi, m, p, n in zip(cells["low"], cells["high"], cells["method"], cells["pairs"],
                                   cells["n"], strict=True)]
    cells["label"] = [f"n={p}" if t else f"{percent(a, digits=0)}\nn={p}" for a, p, t in
                      zip(cells["accuracy"], cells["pairs"], cells["thin"], strict=True)]
    cells["short"] = [f"n={p}" if t else percent(a, digits=0)[:-2]  # narrow panels: no " %"
                      for a, p, t in zip(cells["accuracy"], cells["pairs"], cells["thin"], strict=True)]
    cells["count"] = [str(p) + (f" ({plural(n, 'trial')})" if judged else "")
                      + (f", too few to read (under {thin} pairs)" if t else "")
                      for n, p, t in zip(cells["n"], cells["pairs"], cells["thin"], strict=True)]
    return cells


def _fill(legend: alt.Legend) -> alt.Color | dict:
    """Accuracy on the one fixed scale, a thin cell grey."""
    return alt.condition("datum.thin", alt.value(THIN_FILL),
                         alt.Color("accuracy:Q", scale=_accuracy_scale(), title="accuracy",
                                   legend=legend))


def _ink() -> Any:
    """Label colour: black on light cells and on a thin cell's grey, white on dark ones."""
    return alt.condition("datum.thin || datum.accuracy > 0.6", alt.value("black"), alt.value("white"))


def _heatmap_layers(title_x: str, select: bool) -> list[alt.Chart]:
    """Rect (with the selection), text labels and the thin-cell outline, sharing encodings."""
    base = alt.Chart().encode(
        x=alt.X("position:O", sort=POSITION_ORDER, scale=alt.Scale(domain=POSITION_ORDER), title=title_x),
        y=alt.Y("length_tokens:O", sort="ascending", title=LENGTH_TITLE),
    )
    tooltip = [
        alt.Tooltip("model:N", title="model"),
        alt.Tooltip("length_tokens:O", title="length (tokens)"),
        alt.Tooltip("position:N", title="needle position"),
        alt.Tooltip("accuracy:Q", title="accuracy", format=".0%"),
        alt.Tooltip("interval:N", title="95 % interval"),
        alt.Tooltip("n_correct:Q", title="correct"),
        alt.Tooltip("count:N", title=COUNT_TITLE),
        alt.Tooltip("n_missing:Q", title="missing score (counted wrong)"),
    ]
    rect = base.mark_rect(stroke="white", strokeWidth=1).encode(
        color=_fill(alt.Legend(format=".0%", values=LEGEND_VALUES, labelOverlap=False)),
        tooltip=tooltip)
    if select:
        cell = cell_selection()
        rect = rect.add_params(cell).encode(
            opacity=alt.condition(cell, alt.value(1.0), alt.value(0.35)))
    # readable cells: two lines (accuracy, n) centred on the cell; thin cells: their n
    text = base.mark_text(fontSize=10, lineBreak="\n", lineHeight=10, dy=-5,
                          description=TWO_LINES).encode(
        text="label:N", color=_ink(), tooltip=tooltip).transform_filter("!datum.thin")
    count = base.mark_text(fontSize=10, lineBreak="\n").encode(
        text="label:N", color=_ink(), tooltip=tooltip).transform_filter("datum.thin")
    thin = base.mark_rect(fill=None, stroke="black", strokeWidth=1.5, strokeDash=[4, 2]).encode(
        tooltip=tooltip).transform_filter("datum.thin")
    return [rect, text, count, thin]


def heatmap(results: pd.DataFrame, *, title: str | None = None, thin: int = THIN_CELL,
            select: bool = True, width: int = 360, height: int | None = None) -> alt.Chart:
    """Accuracy by length × position bucket; one panel per model (shared colour scale)."""
    cells = _cells(results, thin)
    lengths = max(1, cells["length_tokens"].nunique())
    height = height or max(120, 28 * lengths)
    layered = alt.layer(*_heatmap_layers(POSITION_TITLE, select), data=cells)
    layered = layered.properties(width=width, height=height)
    if cells["model"].nunique() > 1:
        chart = layered.facet(column=alt.Column("model:N", title=None)).resolve_scale(color="shared")
    else:
        chart = layered
    return chart.properties(title=title) if title else chart


LENGTH_LABEL = ("toNumber(datum.value) >= 1000 ? format(toNumber(datum.value) / 1000, '~g') + 'K'"
                " : datum.value")  # axis labels as the text says them: 1K, 1.5K, 800


def heatmap_panel(results: pd.DataFrame, *, title: str | None = None, thin: int = THIN_CELL,
                  select: bool = True, row_height: int = 40, font: int = 11,
                  selection_name: str = SELECTION, height: int | None = None,
                  slide: bool = False) -> alt.LayerChart:
    """One model's heatmap for a page: as wide as its container (``width="container"``),
    so it fits any column down to a 1024-px screen and fills the chart's fullscreen view;
    ``row_height`` pixels per length. Lengths read 1K, 2K, …; cell labels and axis
    labels shrink on a narrow panel (Vega expressions on the panel's width), and the
    legend sits below the cells, so nothing is cut at the right edge. Several panels drawn
    side by side share the one fixed colour scale (0–100 %), its legend labelled at
    0, 25, 50, 75 and 100 % (every label kept, none dropped for overlap). ``height``: the
    whole chart's height (axes and legend included), e.g. what a slide has left; else
    ``row_height`` per length plus room for the axes and the legend. ``slide``: the column
    labels without " %" (the axis title says it), so 10 columns of 24-px labels lie flat
    on a 1280-px screen, and the legend's title beside its colours (one line less)."""
    cells = _cells(results, thin)
    lengths = max(1, cells["length_tokens"].nunique())
    base = _panel_base(font, slide)
    rect = _panel_cells(base, font, slide, select, selection_name)
    text, count, outline = _panel_labels(base, font, lengths)
    # autosize "fit": width and height hold the axes, legend and title too, so the chart's
    # fullscreen view (which gives it the window's size) shows every column, the x axis and
    # the legend; the height leaves room for them below and above the rows.
    chart = alt.layer(rect, text, count, outline, data=cells).properties(
        width="container",
        height=height or (row_height * max(lengths, 2) + max(185, 80 + 5 * font)
                          + (3 * font if title else 0)),
        autosize=alt.AutoSizeParams(type="fit", contains="padding"))
    if title:
        chart = chart.properties(title=alt.TitleParams(title, anchor="start", fontSize=font + 2))
    assert isinstance(chart, alt.LayerChart)  # a layer's properties keep it a layer
    return chart


_NARROW = "width < 400"  # a panel whose cells are too small for "100 %": numbers only
_INK = "#262730"  # labels and titles as dark as the page's text (Vega's default is grey)


def _title_size(font: int) -> int:
    """A panel's titles: a slide's as large as its labels, a page's 20 px at most."""
    return font if font >= 24 else min(font, 20)


def _panel_base(font: int, slide: bool) -> alt.Chart:
    """A panel's axes, position across and length down, their labels following the
    panel's width (Vega expressions)."""
    bare = "true" if slide else _NARROW  # column labels without " %"
    # a column label ("90–100 %", about 4.6 font sizes wide) lies flat only where it fits its
    # column; else it turns, so the last one never runs past the panel's right edge. A
    # slide's half-width panel labels every other column, flat ("0–10", "20–30", …: two
    # columns hold one), which saves the height turned labels take; it turns them only
    # where even that is too wide
    every_other = f"{'true' if slide else 'false'} && width < {int(10 * 3.4 * font) + 40}"
    crowded = f"width < {int(10 * (1.8 if slide else 4.2) * font) + 40}"
    titles = _title_size(font)
    return alt.Chart().encode(
        x=alt.X("position:O", sort=POSITION_ORDER, scale=alt.Scale(domain=POSITION_ORDER),
                title="needle position (% of the response)" if slide else POSITION_TITLE,
                # the anchor follows the angle: a flat label centred under its column, a
                # turned one ending at it (Vega picks the anchor once, for the first angle)
                axis=alt.Axis(labelAngle={"expr": f"{crowded} ? -45 : 0"}, labelOverlap=False,
                              labelLimit=0,  # never "90–…": the crowded test turns them instead
                              labelAlign={"expr": f"{crowded} ? 'right' : 'center'"},
                              labelBaseline={"expr": f"{crowded} ? 'middle' : 'top'"},
                              labelExpr=(f"{every_other} && parseInt(datum.value) % 20 != 0 "
                                         f"? '' : {bare} ? replace(datum.label, ' %', '') "
                                         ": datum.label"),
                              labelFontSize=font, titleFontSize=titles, labelColor=_INK,
                              titleColor=_INK)),
        # a slide's: "tokens" beside "250, 500, 1K" (a vertical "length (tokens)" in
        # room-sized type is taller than two or three rows, and takes their height)
        y=alt.Y("length_tokens:O", sort="ascending", title="tokens" if slide else LENGTH_TITLE,
                axis=alt.Axis(labelExpr=LENGTH_LABEL, labelFontSize=font, titleFontSize=titles,
                              labelColor=_INK, titleColor=_INK)),
    )


def _tooltip() -> list[alt.Tooltip]:
    """What hovering a cell shows."""
    return [
        alt.Tooltip("model:N", title="model"),
        alt.Tooltip("length:N", title="length (tokens)"),
        alt.Tooltip("position:N", title="needle position"),
        alt.Tooltip("accuracy:Q", title="accuracy", format=".0%"),
        alt.Tooltip("interval:N", title="95 % interval"),
        alt.Tooltip("n_correct:Q", title="correct"),
        alt.Tooltip("count:N", title=COUNT_TITLE),
        alt.Tooltip("n_missing:Q", title="missing score (counted wrong)"),
    ]


def _panel_cells(base: alt.Chart, font: int, slide: bool, select: bool,
                 selection_name: str) -> alt.Chart:
    """The coloured cells with the legend below them, and the click that picks a cell."""
    titles = _title_size(font)
    # beside the gradient: the legend's title ("accuracy") on a slide, and "100%" half out
    legend_room = (round(5 * titles) if slide else 0) + 2 * font
    rect = base.mark_rect(stroke="white", strokeWidth=1).encode(
        color=_fill(alt.Legend(format=".0%", orient="bottom", direction="horizontal",
                               # as long as the panel leaves beside the legend's title
                               # and the last label's overhang (half panels on a slide)
                               gradientLength={"expr": f"max(100, min({max(200, 20 * font)}, "
                                                       f"width - {legend_room}))"},
                               labelFontSize=font,
                               titleFontSize=titles, labelColor=_INK, titleColor=_INK,
                               values=LEGEND_VALUES, labelOverlap=False,
                               titleOrient="left" if slide else "top",
                               gradientThickness=max(12, font // 2))),
        tooltip=_tooltip())
    if select:
        cell = alt.selection_point(name=selection_name, fields=CELL_FIELDS, on="click",
                                   clear="dblclick")
        rect = rect.add_params(cell).encode(
            opacity=alt.condition(cell, alt.value(1.0), alt.value(0.35)))
    return rect


def _panel_labels(base: alt.Chart, font: int, lengths: int,
                  ) -> tuple[alt.Chart, alt.Chart, alt.Chart]:
    """``(text, count, outline)``: the cells' two-line labels (one number where the cell is
    too small for two), a thin cell's count, and a thin cell's dashed outline."""
    tooltip = _tooltip()
    # a slide's labels keep their size (24 px at least); a page's shrink on a narrow panel
    size: Any = font if font >= 24 else {"expr": f"{_NARROW} ? {max(8, font - 2)} : {font}"}
    # two lines (accuracy, then n) a font size apart, centred on the cell (Vega puts the
    # first line on the centre: up half a line), where a cell holds them: "100 %" is about
    # 2.6 font sizes wide, the two lines 2 tall; else one number (a half-width panel on a
    # slide, a narrow one on a page)
    one_line = (f"{_NARROW} || width < {BUCKETS * round(2.9 * font)} || "
                f"height < {round(2.3 * font * lengths)}")
    text = base.mark_text(fontSize=size, lineBreak="\n", lineHeight=font,
                          dy={"expr": f"{one_line} ? 0 : {-round(font / 2)}"},
                          description=TWO_LINES).transform_calculate(
        shown=f"{one_line} ? datum.short : datum.label").encode(
        text="shown:N", color=_ink(), tooltip=tooltip).transform_filter("!datum.thin")
    count = base.mark_text(fontSize=size, lineBreak="\n").encode(
        text="label:N", color=_ink(), tooltip=tooltip).transform_filter("datum.thin")
    outline = base.mark_rect(fill=None, stroke="black", strokeWidth=1.5, strokeDash=[4, 2]).encode(
        tooltip=tooltip).transform_filter("datum.thin")
    return text, count, outline


def compare_heatmaps(first: pd.DataFrame, second: pd.DataFrame, *, title: str | None = None,
                     thin: int = THIN_CELL, select: bool = True, width: int = 360,
                     height: int | None = None) -> alt.Chart:
    """Two models' heatmaps side by side on one colour scale (their ``model`` values must
    differ); the options of :func:`heatmap`."""
    both = combine([first, second])
    if both["model"].nunique() < 2:
        raise ValueError("the two result sets have the same model name; set distinct 'model' values")
    return heatmap(both, title=title, thin=thin, select=select, width=width, height=height)


def accuracy_lines(results: pd.DataFrame, *, title: str | None = None, width: int | str = 420,
                   height: int = 260) -> alt.Chart:
    """Accuracy against needle position (bucket centres), one line per length
    (``width="container"``: as wide as the page's column, one model per chart)."""
    cells = heatmap_frame(results)
    cells["position_pct"] = (cells["bucket"] + 0.5) * (100 / BUCKETS)
    tooltip = [alt.Tooltip("model:N"), alt.Tooltip("length_tokens:O", title="length (tokens)"),
               alt.Tooltip("position:N", title="needle position"),
               alt.Tooltip("accuracy:Q", format=".0%"), alt.Tooltip("n:Q", title=f"{counted(results)} (n)")]
    base = alt.Chart(cells).encode(
        x=alt.X("position_pct:Q", scale=alt.Scale(domain=[0, 100]), title=POSITION_TITLE,
                axis=alt.Axis(labelFlush=True)),  # "100" inside the plot, not cut at its edge
        y=alt.Y("accuracy:Q", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format=".0%"), title="accuracy"),
        color=alt.Color("length_tokens:O", scale=alt.Scale(scheme="viridis"), title="length (tokens)"),
        tooltip=tooltip,
    )
    chart = (base.mark_line() + base.mark_point(filled=True)).properties(width=width, height=height)
    if cells["model"].nunique() > 1:
        chart = chart.facet(column=alt.Column("model:N", title=None))
    return chart.properties(title=title) if title else chart


# -- export ---------------------------------------------------------------------------------


def _vl_version() -> str:
    """The Vega-Lite version of this altair, as vl-convert names it (``"6.4"``)."""
    return ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])


def to_png(chart: alt.TopLevelMixin, scale: float = 2.0) -> bytes:
    """The chart as PNG bytes (rendered offline by vl-convert)."""
    import vl_convert as vlc  # noqa: PLC0415 (native module, only when exporting)

    return vlc.vegalite_to_png(chart.to_json(), vl_version=_vl_version(), scale=scale)


def to_svg(chart: alt.TopLevelMixin) -> str:
    """The chart as an SVG document (rendered offline by vl-convert)."""
    import vl_convert as vlc  # noqa: PLC0415

    return vlc.vegalite_to_svg(chart.to_json(), vl_version=_vl_version())


def to_pdf(chart: alt.TopLevelMixin) -> bytes:
    """The chart as a one-page PDF, its text as text (rendered offline by vl-convert)."""
    import vl_convert as vlc  # noqa: PLC0415

    return vlc.vegalite_to_pdf(chart.to_json(), vl_version=_vl_version())


def save_chart(chart: alt.TopLevelMixin, path: str | Path, scale: float = 2.0) -> Path:
    """Write the chart as ``.png``, ``.svg`` or ``.pdf`` (by the path's suffix)."""
    path = Path(path)
    if path.suffix.lower() == ".png":
        files.write_bytes(path, to_png(chart, scale))
    elif path.suffix.lower() == ".svg":
        files.write_text(path, to_svg(chart))
    elif path.suffix.lower() == ".pdf":
        files.write_bytes(path, to_pdf(chart))
    else:
        raise ValueError(f"{path.name}: export charts as .png, .svg or .pdf")
    return path


def export_all(results: pd.DataFrame, folder: str | Path, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Heatmap and lines in every format, plus ``results.csv``, into ``folder``."""
    from needlework.needle.analysis import results_csv  # noqa: PLC0415

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, chart in (("heatmap", heatmap(results, select=False)), ("lines", accuracy_lines(results))):
        written += [save_chart(chart, folder / f"{name}.{fmt}") for fmt in formats]
    csv = folder / "results.csv"
    files.write_text(csv, results_csv(results))
    return written + [csv]
