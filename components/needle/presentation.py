"""Presentation mode for stakeholders (``?present=1``): the presenter's title, the finding and
the heatmaps in large type on one clean screen that fits 1280×720 and 1920×1080, with a
button (and F) that puts the whole slide in the browser's full screen; a cell click opens
its pairs right there, in the audience's words; the downloads (PNG, SVG and PDF carry the
title, the model, the finding and the date; lines; CSV) and Exit sit below the slide."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import altair as alt
import streamlit as st

from components.needle.charts import (
    export_notes,
    heatmap_chart,
    notes_of,
    render_cell,
    render_heatmaps,
    results_of,
)
from components.needle.data import ResultSet
from components.state import annotator, get_db
from components.text import render_text
from needlework.needle import charts
from needlework.needle.analysis import results_csv
from needlework.needle.findings import (
    cell_key,
    findings,
    overview,
    slide_subtitle,
    slide_title_of,
    with_slide_title,
    wrap,
)
from store.datasets import get_dataset, set_dataset_meta

PARAM = "present"
TITLE = "nw_title"  # the slide's title field (per needle dataset), set by the presenter
# Type in viewport units, so a projector's 1920×1080 gets room-sized text and 1280×720 still
# fits the slide on one screen; the chart's own full-screen button is hidden (it showed the
# cells alone), the slide's own button puts all of it in full screen.
_STYLE = """<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
header[data-testid="stHeader"], [data-testid="stToolbar"] {display: none !important;}
[data-testid="stMainBlockContainer"] {padding-top: 1.2rem !important; max-width: 1800px;
  padding-left: 2.5vw; padding-right: 2.5vw;}
#nw-present-title {font-size: clamp(1.6rem, 2.4vw, 3rem); font-weight: 700; line-height: 1.15;
  margin: 0;}
#nw-present-sub {font-size: clamp(.95rem, 1.05vw, 1.35rem); color: #444;}
[id^="nw-finding-"] {font-size: clamp(1.05rem, 1.35vw, 1.75rem); font-weight: 600; line-height: 1.3;
  border-left: 6px solid #440154; padding: .2rem 0 .2rem .9rem; margin: .35rem 0 .35rem 0;}
#nw-present-key {font-size: clamp(.9rem, .95vw, 1.25rem); color: #444;}
[id^="nw-present-trend-"] {font-size: clamp(.95rem, 1.05vw, 1.4rem); font-weight: 600;
  color: #333; margin-left: calc(6px + .9rem);}
.st-key-nw-slide [data-testid="stElementToolbar"] {display: none !important;}
#nw-save-status[data-pending="0"]:not([data-refused="1"]) {display: none !important;}
#nw-slide-full {font: inherit; font-size: .95rem; padding: .35rem .8rem; border-radius: .5rem;
  border: 1px solid rgba(49,51,63,.3); background: transparent; cursor: pointer;}
</style>"""
_SLIDE = st.components.v2.component(
    "needlework.slide", isolate_styles=False,
    html='<button id="nw-slide-full" type="button" title="The whole slide in full screen (F)">'
         "Full screen</button>",
    js=(Path(__file__).parent.parent / "js" / "slide.js").read_text(encoding="utf-8"))
FULL, LEAVE = "Full screen (F)", "Leave full screen (Esc)"


def presenting() -> bool:
    """True when the page is in presentation mode (``?present=1``)."""
    return st.query_params.get(PARAM) in ("1", "true", "yes")


def _enter() -> None:
    """Button callback: switch to presentation mode."""
    st.query_params[PARAM] = "1"


def _leave() -> None:
    """Button callback: back to the full page."""
    st.query_params.pop(PARAM, None)


def render_present_button(disabled: bool = False) -> None:
    """The button that switches to presentation mode (the URL then shares it)."""
    st.button("Presentation mode", icon="📽️", key="nw_present", on_click=_enter, disabled=disabled,
              help="One clean screen for stakeholders: the heatmaps and the finding in large type. "
                   "Shareable: the URL gets ?present=1.")


def _today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


def _heatmap_file(chosen: list[ResultSet], title: str | None, fmt: str) -> Callable[[], bytes | str]:
    """The presentation heatmap as PNG, SVG or PDF, with the slide's title (wrapped), the
    models, the finding and the date, made when called."""
    def make() -> bytes | str:
        chart = heatmap_chart(chosen, select=False, large=True, title=title,
                              notes=export_notes(chosen, _today()))
        return {"png": charts.to_png, "svg": charts.to_svg, "pdf": charts.to_pdf}[fmt](chart)
    return make


def _lines(chosen: list[ResultSet], fmt: str, title: str | None) -> Callable[[], bytes | str]:
    """The accuracy lines as PNG or SVG, titled like the heatmap, made when called."""
    def make() -> bytes | str:
        heading = alt.TitleParams(wrap(f"{title or 'Needle results'}: accuracy by position", 70),
                                  anchor="start", fontSize=18,
                                  subtitle=wrap(slide_subtitle(results_of(chosen)), 110))
        chart = charts.accuracy_lines(results_of(chosen), width=520, height=300).properties(
            title=heading)
        return charts.to_png(chart) if fmt == "png" else charts.to_svg(chart)
    return make


def _title_key(row: dict[str, Any] | None) -> str:
    """The title field's key: for a needle dataset it names the saved title's version, so
    a saved title is always what the field shows (a value the browser sends back after a
    reconnect or from a fresh page is of another key, never taken for an edit)."""
    if not row:
        return TITLE
    saved = slide_title_of(row.get("meta"))
    return f"{TITLE}|{row['name']}|{hashlib.sha1(saved.encode()).hexdigest()[:10]}"


def slide_title(row: dict[str, Any] | None, default: str) -> str:
    """The title kept with the needle dataset ``row`` (without one: this session's field),
    or ``default``."""
    typed = slide_title_of(row.get("meta")) if row else st.session_state.get(TITLE)
    return (typed or "").strip() or default


def _save_title(key: str, name: str, shown: str) -> None:
    """Field callback: keep the typed title with the needle dataset ``name``, with who set
    it and when (``shown``: the saved title the field was drawn with; the same value
    back is no edit)."""
    title = (st.session_state.get(key) or "").strip()
    row = get_dataset(get_db(), name)
    if row is None or title == shown.strip():
        return
    now = datetime.now(UTC).isoformat(timespec="seconds")
    set_dataset_meta(get_db(), row["name"], with_slide_title(row["meta"], title, annotator(), now))


def render_title_input(row: dict[str, Any] | None, default: str) -> None:
    """The slide's title field; a title typed for a needle dataset is saved with it at once
    (it reopens with the dataset, on the slide and in the PNG and SVG)."""
    help_text = ("Shown on the slide and on the heatmap PNG and SVG; kept with the needle "
                 "dataset (empty: the default title).")
    if not row:
        st.text_input("Slide title", key=TITLE, placeholder=default, max_chars=200,
                      help=help_text)
        return
    saved, key = slide_title_of(row.get("meta")), _title_key(row)
    st.text_input("Slide title", saved, key=key, placeholder=default, max_chars=200,
                  on_change=_save_title, args=(key, row["name"], saved), help=help_text)


def render_downloads(chosen: list[ResultSet], stem: str, key: str, title: str | None = None) -> None:
    """Heatmap (with ``title``, models, finding and date) as PNG, SVG and PDF, the lines as
    PNG and SVG, the results as CSV (each made on click)."""
    cols = st.columns(6)
    items = [("Heatmap PNG", _heatmap_file(chosen, title, "png"), "heatmap.png", "image/png"),
             ("Heatmap SVG", _heatmap_file(chosen, title, "svg"), "heatmap.svg", "image/svg+xml"),
             ("Heatmap PDF", _heatmap_file(chosen, title, "pdf"), "heatmap.pdf", "application/pdf"),
             ("Lines PNG", _lines(chosen, "png", title), "lines.png", "image/png"),
             ("Lines SVG", _lines(chosen, "svg", title), "lines.svg", "image/svg+xml"),
             ("Results CSV", lambda: results_csv(results_of(chosen)), "results.csv", "text/csv")]
    for col, (text, data, name, mime) in zip(cols, items, strict=True):
        col.download_button(text, data=data, file_name=f"{stem}-{name}", mime=mime, icon="⬇️",
                            key=f"{key}_{name}", on_click="ignore", width="stretch")


def render_presentation(chosen: list[ResultSet], title: str,
                        records: list[dict[str, Any]] | None = None) -> None:
    """The slide: title, subtitle, finding(s), what the cells mean, the heatmaps (click a
    cell: its pairs open below, still in presentation mode), and the full-screen button.
    Below the slide: downloads and Exit."""
    st.html(_STYLE)
    if not chosen:
        render_text(title, key="nw-present-title")
        st.info("No results to present yet: score a needle dataset or upload scores first.", icon="ℹ️")
        st.button("Exit presentation", key="nw_leave", on_click=_leave)
        return
    frame = results_of(chosen)
    with st.container(key="nw-slide"):
        top = st.columns([6, 1], vertical_alignment="top")
        with top[0]:
            render_text(title, key="nw-present-title")
        with top[1]:
            _SLIDE(key="nw-slide-screen", data={"label": FULL, "leave": LEAVE})
        render_text(slide_subtitle(frame), key="nw-present-sub")
        for k, line in enumerate(findings(frame, why=notes_of(chosen))):
            render_text(line, key=f"nw-finding-{k}")
        models = list(dict.fromkeys(frame["model"]))  # the panels' order
        for k, model in enumerate(models):
            line = overview(frame, model)
            if line:
                render_text((f"{model}: " if len(models) > 1 else "") + line,
                            key=f"nw-present-trend-{k}")
        render_text(cell_key(frame), key="nw-present-key")
        clicked = render_heatmaps(chosen, large=True, prefix="nw_pheat")
    if clicked is not None:
        with st.container(border=True):
            render_cell(*clicked, records or [], audience=True)
    else:
        st.caption("Click a cell to show its pairs here.")
    for _ in range(6):  # the tools sit below the slide, out of its picture
        st.write("")
    st.divider()
    st.button("Exit presentation", key="nw_leave", on_click=_leave, icon="↩️")
    with st.expander("Downloads: the heatmap with this title, the lines, the results", icon="⬇️"):
        render_downloads(chosen, "needle", "nw_pdl", title)
