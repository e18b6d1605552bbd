"""Presentation mode for stakeholders (``?present=1``): one slide that fits the screen with
no scrolling at 1280×720, 1920×1080 and in full screen: the presenter's title (up to 200
characters), what was measured, the finding in one line (the computed headline, the
presenter's words, or hidden), the heatmap in the height left (slide.js measures it) and one
line on the empty and thin cells; every text at least 24 px. Beside the title: a button (and
F) for the browser's full screen, and Tools: Exit, the finding, the downloads (the slide as
16:9 PNG and PDF at 1920×1080 and as PPTX; heatmap SVG; lines; CSV). A cell click opens its
pairs below the slide, in the audience's words."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from components.callbacks import uninterrupted
from components.needle.cell import render_cell
from components.needle.charts import (
    export_notes,
    heatmap_chart,
    render_heatmaps,
    results_of,
)
from components.needle.data import ResultSet
from components.scripts import bundle
from components.state import annotator, get_db, signed_in
from components.text import render_text
from needlework.needle import charts, slide
from needlework.needle.analysis import results_csv
from needlework.needle.findings import slide_subtitle, wrap
from needlework.needle.headline import foot_words, headlines, panel_notes
from needlework.needle.reports import MAX_FINDING
from needlework.needle.slide import SlideWords
from needlework.needle.slide_meta import (
    slide_finding_of,
    slide_title_of,
    with_slide_finding,
    with_slide_title,
)
from needlework.teams.events import record
from store.datasets import get_dataset, set_dataset_meta

PARAM = "present"
#: the heatmap's file formats, each made by one of needlework.needle.charts' renderers
EXPORTS: dict[str, Callable[[alt.TopLevelMixin], bytes | str]] = {
    "png": charts.to_png, "svg": charts.to_svg, "pdf": charts.to_pdf}
TITLE = "nw_title"  # the slide's title field (per needle dataset), set by the presenter
FINDING = "nw_finding"  # the slide's finding field and hide box (without a needle dataset)
SCREEN = "screen"  # the slide's measure of the browser's screen (slide.js)
LAST_SCREEN = "nw_slide_last_screen"  # the last such measure in this session
# Type in viewport units with a 24-px floor: 1280×720 gets 24-px text at least, a projector's
# 1920×1080 room-sized text; the chart takes the height slide.js measures as left for it. The
# chart's own full-screen button is hidden (it showed the cells alone); the slide's own button
# puts all of it in full screen. The page's padding below is gone, so the slide is the page.
_STYLE = """<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
header[data-testid="stHeader"], [data-testid="stToolbar"] {display: none !important;}
[data-testid="stMainBlockContainer"] {padding-top: .6rem !important; padding-bottom: .4rem !important;
  max-width: none; padding-left: 2.5vw; padding-right: 2.5vw;}
.st-key-nw-slide {gap: .45rem !important;}
#nw-present-title {font-size: clamp(26px, 2.2vw, 60px); font-weight: 700; line-height: 1.15;
  margin: 0;}
#nw-present-sub {font-size: clamp(24px, 1.6vw, 34px); color: #444; line-height: 1.2;}
[id^="nw-finding-"] {font-size: clamp(24px, 2vw, 44px); font-weight: 700; line-height: 1.25;
  border-left: 6px solid #440154; padding: 0 0 0 .6rem; white-space: nowrap;}
[id^="nw-finding-"].nw-wraps {white-space: normal;}
[id^="nw-present-note"] {font-size: clamp(24px, 1.6vw, 34px); color: #444; line-height: 1.2;}
.st-key-nw-slide [data-testid="stElementToolbar"] {display: none !important;}
.st-key-nw-slide-tools button, .st-key-nw-slide-tools button p,
.st-key-nw-slide-tools [data-testid="stIconMaterial"] {font-size: 24px !important;}
[data-testid="stPopoverBody"] {min-width: min(520px, 90vw);}
#nw-save-status[data-pending="0"]:not([data-refused="1"]) {display: none !important;}
#nw-slide-full {font: inherit; font-size: 24px; padding: .2rem .7rem; border-radius: .5rem;
  border: 1px solid rgba(49,51,63,.3); background: transparent; cursor: pointer;
  white-space: nowrap;}
</style>"""
_SLIDE = st.components.v2.component(
    "needlework.slide", isolate_styles=False,
    html='<button id="nw-slide-full" type="button" title="The whole slide in full screen (F)" '
         'aria-label="Full screen (F)">Full screen</button>',
    js=bundle("slide.js"))
FULL, LEAVE = "Full screen", "Leave (Esc)"


def presenting() -> bool:
    """True when the page is in presentation mode (``?present=1``)."""
    return st.query_params.get(PARAM) in ("1", "true", "yes")


@uninterrupted
def _enter() -> None:
    """Button callback: switch to presentation mode."""
    st.query_params[PARAM] = "1"


@uninterrupted
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
        return EXPORTS[fmt](chart)
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


@uninterrupted
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
    record(get_db(), signed_in(), "needle.slide_title", row["name"], dataset=row["name"],
           before=shown.strip(), after=title)


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


def _finding_key(row: dict[str, Any] | None) -> str:
    """The finding field's key, naming the saved finding's version (see :func:`_title_key`)."""
    if not row:
        return FINDING
    text, hidden = slide_finding_of(row.get("meta"))
    digest = hashlib.sha1(f"{hidden}|{text}".encode()).hexdigest()[:10]
    return f"{FINDING}|{row['name']}|{digest}"


def slide_finding(row: dict[str, Any] | None) -> tuple[str, bool]:
    """The presenter's finding for the slide (``""``: the computed headline) and whether it is
    hidden: kept with the needle dataset ``row``, without one this session's fields."""
    if row:
        return slide_finding_of(row.get("meta"))
    return (str(st.session_state.get(FINDING) or "").strip(),
            bool(st.session_state.get(f"{FINDING}_hide")))


def finding_lines(frame: pd.DataFrame, row: dict[str, Any] | None) -> list[str]:
    """What the slide and its files say as the finding: nothing when hidden, the presenter's
    words, else the computed headline (one line per model)."""
    text, hidden = slide_finding(row)
    if hidden:
        return []
    return [text] if text else headlines(frame)


@uninterrupted
def _save_finding(key: str, name: str, shown: tuple[str, bool]) -> None:
    """Field callback: keep the typed finding and the hide box with the needle dataset."""
    text = " ".join(str(st.session_state.get(f"{key}_text") or "").split())
    hidden = bool(st.session_state.get(f"{key}_hide"))
    row = get_dataset(get_db(), name)
    if row is None or (text, hidden) == (shown[0].strip(), shown[1]):
        return
    now = datetime.now(UTC).isoformat(timespec="seconds")
    set_dataset_meta(get_db(), row["name"],
                     with_slide_finding(row["meta"], text, hidden, annotator(), now))
    record(get_db(), signed_in(), "needle.slide_finding", row["name"], dataset=row["name"],
           before={"text": shown[0], "hidden": shown[1]}, after={"text": text, "hidden": hidden})


def render_finding_input(row: dict[str, Any] | None, computed: str) -> None:
    """The slide's finding: a field (empty: the computed headline ``computed``) and a box
    that hides it; for a needle dataset both are saved with it at once (and with a report)."""
    help_text = ("One line on the slide and in its files. Empty: the finding computed from "
                 "the results (shown greyed). Kept with the needle dataset and with a saved "
                 "report.")
    if not row:
        st.text_input("Slide finding", key=FINDING, placeholder=computed, max_chars=MAX_FINDING,
                      help=help_text)
        st.checkbox("Hide the finding on the slide and in its files", key=f"{FINDING}_hide")
        return
    shown, key = slide_finding_of(row.get("meta")), _finding_key(row)
    st.text_input("Slide finding", shown[0], key=f"{key}_text", placeholder=computed,
                  max_chars=MAX_FINDING, on_change=_save_finding, args=(key, row["name"], shown),
                  help=help_text)
    st.checkbox("Hide the finding on the slide and in its files", shown[1], key=f"{key}_hide",
                on_change=_save_finding, args=(key, row["name"], shown))


def slide_words(chosen: list[ResultSet], title: str, row: dict[str, Any] | None) -> SlideWords:
    """What the slide and its files say (:class:`needlework.needle.slide.SlideWords`)."""
    frame = results_of(chosen)
    return SlideWords(title=title, subtitle=slide_subtitle(frame, rule=False),
                      finding=tuple(finding_lines(frame, row)), note=foot_words(frame),
                      model=" vs ".join(dict.fromkeys(frame["model"])))


def render_foot(chosen: list[ResultSet], frame: pd.DataFrame) -> None:
    """The slide's foot: one model's note across the slide; with panels side by side, each
    panel's own note under it, in columns as the panels' (``nw-present-note-K``)."""
    with st.container(key="nw-slide-foot"):
        if len(chosen) == 1:
            render_text(foot_words(frame), key="nw-present-note")
            return
        notes = dict(zip(dict.fromkeys(frame["model"]), panel_notes(frame), strict=True))
        for k, (col, s) in enumerate(zip(st.columns(len(chosen), gap="medium"), chosen,
                                         strict=True)):
            with col:
                model = s.frame["model"].iloc[0] if len(s.frame) else s.name
                render_text(notes.get(model, ""), key=f"nw-present-note-{k}")


def _slide_file(chosen: list[ResultSet], title: str, row: dict[str, Any] | None,
                fmt: str) -> Callable[[], bytes]:
    """The slide as a 16:9 PNG or PDF (1920×1080) or a PPTX, made when called."""
    def make() -> bytes:
        words = slide_words(chosen, title, row)
        make_file = {"png": slide.slide_png, "pdf": slide.slide_pdf, "pptx": slide.slide_pptx}[fmt]
        return make_file(results_of(chosen), words)
    return make


PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"


def render_downloads(chosen: list[ResultSet], stem: str, key: str, title: str | None = None,
                     row: dict[str, Any] | None = None, columns: int = 3) -> None:
    """The slide as PNG and PDF (16:9, 1920×1080) and PPTX (title, model, finding, heatmap,
    note); the heatmap (with ``title``, models, finding and date) as SVG; the lines as PNG
    and SVG; the results as CSV (each made on click), in rows of ``columns``."""
    heading = title or "Needle results"
    items = [("Slide PNG (16:9)", _slide_file(chosen, heading, row, "png"), "slide.png", "image/png"),
             ("Slide PDF (16:9)", _slide_file(chosen, heading, row, "pdf"), "slide.pdf",
              "application/pdf"),
             ("Slide PPTX", _slide_file(chosen, heading, row, "pptx"), "slide.pptx", PPTX),
             ("Heatmap SVG", _heatmap_file(chosen, title, "svg"), "heatmap.svg", "image/svg+xml"),
             ("Lines PNG", _lines(chosen, "png", title), "lines.png", "image/png"),
             ("Lines SVG", _lines(chosen, "svg", title), "lines.svg", "image/svg+xml"),
             ("Results CSV", lambda: results_csv(results_of(chosen)), "results.csv", "text/csv")]
    for start in range(0, len(items), columns):
        cols = st.columns(columns)
        for col, (text, data, name, mime) in zip(cols, items[start:start + columns], strict=False):
            col.download_button(text, data=data, file_name=f"{stem}-{name}", mime=mime, icon="⬇️",
                                key=f"{key}_{name}", on_click="ignore", width="stretch")


def _chart_size(screen: Any) -> tuple[int, int]:
    """The slide chart's height and label size from slide.js's measure of the screen: the
    height left under the words (at least 240 px), labels 24 px at 1280×720 and larger on a
    larger screen (the smaller of the two ratios). Before the first measure: 380 px, 24 px."""
    if not isinstance(screen, dict):
        return 380, 24
    try:
        width, height, left = (float(screen.get(k) or 0) for k in ("w", "h", "avail"))
    except (TypeError, ValueError):
        return 380, 24
    font = max(24, min(40, int(24 * min(width / 1280, height / 720)))) if width and height else 24
    return max(240, min(2400, int(left))) if left else 380, font


def render_presentation(chosen: list[ResultSet], title: str,
                        records: list[dict[str, Any]] | None = None,
                        row: dict[str, Any] | None = None) -> None:
    """The slide, one screen with no scrolling: title (up to 200 characters), what was
    measured, the finding in one line (or none when hidden), the heatmap in the height
    left (thin cells grey and dashed) and one line on the empty and thin cells. Beside the
    title: full screen (F) and Tools (downloads, the finding, Exit). A cell click opens its
    pairs below the slide."""
    st.html(_STYLE)
    if not chosen:
        render_text(title, key="nw-present-title")
        st.info("No results to present yet: score a needle dataset or upload scores first.", icon="ℹ️")
        st.button("Exit presentation", key="nw_leave", on_click=_leave)
        return
    frame = results_of(chosen)
    with st.container(key="nw-slide"):
        # the title takes the width the tools leave (a row, not fixed columns: a 200-character
        # title at 1920×1080 wrapped at 5/7 of the width beside columns of 5 and 2)
        with st.container(key="nw-slide-top", horizontal=True, wrap=False, gap="medium"):
            render_text(title, key="nw-present-title")
            tools = st.container(key="nw-slide-tools", horizontal=True, width="content",
                                 horizontal_alignment="right")
        with tools:
            state = _SLIDE(key="nw-slide-screen", on_screen_change=_keep,
                           data={"label": FULL, "leave": LEAVE,
                                 "known": st.session_state.get(LAST_SCREEN)})
            with st.popover("Tools"):
                st.button("Exit presentation", key="nw_leave", on_click=_leave, icon="↩️")
                render_finding_input(row, "; ".join(headlines(frame)))
                st.caption("Download the slide and its parts:")
                render_downloads(chosen, "needle", "nw_pdl", title, row, columns=2)
        render_text(slide_subtitle(frame, rule=False), key="nw-present-sub")
        for k, line in enumerate(finding_lines(frame, row)):
            render_text(line, key=f"nw-finding-{k}")
        height, font = _chart_size(_screen(state.get(SCREEN) if state else None))
        with st.container(key="nw-slide-chart"):
            clicked = render_heatmaps(chosen, large=True, prefix="nw_pheat", height=height,
                                      font=font)
        render_foot(chosen, frame)
    if clicked is not None:
        with st.container(border=True):
            render_cell(*clicked, records or [], audience=True)


def _screen(measured: Any) -> Any:
    """The screen to draw the slide for: slide.js's measure on this slide, kept for the next
    time the slide is entered in this session; before it, the one last measured (so a slide
    entered again on the same screen is drawn at its size at once, and slide.js, told it
    through ``data.known``, sends nothing and the page does not redraw under a click)."""
    if isinstance(measured, dict):
        st.session_state[LAST_SCREEN] = measured
        return measured
    return st.session_state.get(LAST_SCREEN)


def _keep(_: Any = None) -> None:
    """The screen measure needs a change callback to be a state; nothing to do in it."""
