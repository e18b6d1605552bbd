"""Presentation mode for stakeholders (``?present=1``): the presenter's title, the one-line
finding and the heatmaps in large type on one clean screen; a cell click opens its pairs
right there; the downloads (PNG and SVG carry the title, CSV) and Exit sit below the slide."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import streamlit as st

from components.needle.charts import heatmap_chart, render_cell, render_heatmaps, results_of
from components.needle.data import ResultSet
from components.state import annotator, get_db
from components.text import render_text
from needlework.needle import charts
from needlework.needle.analysis import counted, length_label, results_csv
from needlework.needle.findings import findings, slide_title_of, with_slide_title
from store.datasets import get_dataset, set_dataset_meta

PARAM = "present"
TITLE = "nw_title"  # the slide's title field (per needle dataset), set by the presenter
_STYLE = """<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
header[data-testid="stHeader"], [data-testid="stToolbar"] {display: none !important;}
[data-testid="stMainBlockContainer"] {padding-top: 2.2rem !important; max-width: 1500px;}
#nw-present-title {font-size: 2.3rem; font-weight: 700; line-height: 1.2; margin: 0;}
#nw-present-sub {font-size: 1.15rem; opacity: .7;}
[id^="nw-finding-"] {font-size: 1.75rem; font-weight: 600; line-height: 1.35;
  border-left: 6px solid #440154; padding: .35rem 0 .35rem 1rem; margin: .6rem 0 1rem 0;}
</style>"""


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


def subtitle(frame: Any) -> str:
    """``demo-model · 90 pairs · 1K, 2K, 4K tokens · accuracy = …`` (pairs per model; a
    judge's rows are trials, each pair in both orders)."""
    lengths = ", ".join(length_label(int(n)) for n in sorted(frame["length_tokens"].unique()))
    models = list(dict.fromkeys(frame["model"]))  # the panels' order
    sizes = [f"{int((frame['model'] == m).sum()):,} {counted(frame[frame['model'] == m])}"
             for m in models]
    size = sizes[0] + (" each" if len(sizes) > 1 else "") if len(set(sizes)) == 1 else " / ".join(sizes)
    judged = counted(frame[frame["model"].isin(models)]) == "trials"
    return (f"{' vs '.join(models)} · {size} · {lengths} tokens · accuracy = chosen scored strictly "
            "above rejected (ties are wrong)"
            + ("; a judge's trial is right when it names the chosen (an invalid answer is wrong)"
               if judged else ""))


def _png(chosen: list[ResultSet], title: str | None) -> Callable[[], bytes]:
    """The presentation heatmap as PNG, with the slide's title, made when called."""
    return lambda: charts.to_png(heatmap_chart(chosen, select=False, large=True, title=title))


def _svg(chosen: list[ResultSet], title: str | None) -> Callable[[], str]:
    """The presentation heatmap as SVG, with the slide's title, made when called."""
    return lambda: charts.to_svg(heatmap_chart(chosen, select=False, large=True, title=title))


def _lines(chosen: list[ResultSet], fmt: str) -> Callable[[], bytes | str]:
    """The accuracy lines as PNG or SVG, made when called."""
    def make() -> bytes | str:
        chart = charts.accuracy_lines(results_of(chosen), width=520, height=300)
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
    """Heatmap (with ``title``) and lines as PNG and SVG, the results as CSV (made on click)."""
    cols = st.columns(5)
    items = [("Heatmap PNG", _png(chosen, title), "heatmap.png", "image/png"),
             ("Heatmap SVG", _svg(chosen, title), "heatmap.svg", "image/svg+xml"),
             ("Lines PNG", _lines(chosen, "png"), "lines.png", "image/png"),
             ("Lines SVG", _lines(chosen, "svg"), "lines.svg", "image/svg+xml"),
             ("Results CSV", lambda: results_csv(results_of(chosen)), "results.csv", "text/csv")]
    for col, (text, data, name, mime) in zip(cols, items, strict=True):
        col.download_button(text, data=data, file_name=f"{stem}-{name}", mime=mime, icon="⬇️",
                            key=f"{key}_{name}", on_click="ignore", width="stretch")


def render_presentation(chosen: list[ResultSet], title: str,
                        records: list[dict[str, Any]] | None = None) -> None:
    """The slide: title, subtitle, finding(s), the heatmaps (click a cell: its pairs open below,
    still in presentation mode). Below the slide: downloads and Exit."""
    st.html(_STYLE)
    if not chosen:
        render_text(title, key="nw-present-title")
        st.info("No results to present yet: score a needle dataset or upload scores first.", icon="ℹ️")
        st.button("Exit presentation", key="nw_leave", on_click=_leave)
        return
    frame = results_of(chosen)
    render_text(title, key="nw-present-title")
    render_text(subtitle(frame), key="nw-present-sub")
    for k, line in enumerate(findings(frame)):
        render_text(line, key=f"nw-finding-{k}")
    clicked = render_heatmaps(chosen, large=True, prefix="nw_pheat")
    if clicked is not None:
        with st.container(border=True):
            render_cell(*clicked, records or [])
    else:
        st.caption("Click a cell to show its pairs here.")
    for _ in range(6):  # the tools sit below the slide, out of its picture
        st.write("")
    st.divider()
    st.button("Exit presentation", key="nw_leave", on_click=_leave, icon="↩️")
    with st.expander("Downloads: the heatmap with this title, the lines, the results", icon="⬇️"):
        render_downloads(chosen, "needle", "nw_pdl", title)
