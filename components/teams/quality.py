"""The Quality page's widgets (reviewers): gold items, and annotators and items ranked by
accuracy on gold, agreement with the others and active time.

Figures come from :func:`needlework.teams.quality.quality_report`; sorting again uses
its ``rank_annotators`` / ``rank_items``. Item titles are data: they reach the page
only inside tables (shown as text) or through :func:`components.text.label`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from components.state import get_db, signed_in
from components.tables import figures_table
from components.text import label, option, render_text
from needlework.teams.permissions import PermissionDenied
from needlework.teams.quality import (
    ANNOTATOR_SORTS,
    ITEM_SORTS,
    GoldError,
    QualityReport,
    answer_fields,
    default_answers,
    mark_gold,
    rank_annotators,
    rank_items,
    unmark_gold,
)
from needlework.teams.throughput import Throughput

FLASH = "nw-quality-flash"
ANNOTATOR_WORDS = {"gold_accuracy": "accuracy on gold (lowest first)",
                   "kappa": "kappa with the others (lowest first)",
                   "agreement": "equal answers with the others (lowest first)",
                   "median_item_seconds": "median active time per item (slowest first)",
                   "done": "items done (fewest first)"}
ITEM_WORDS = {"disagreement": "disputed share (highest first)",
              "gold_errors": "wrong answers on gold (most first)",
              "median_seconds": "median active time (slowest first)"}


def _pct(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 1)


def _secs(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def render_flash() -> None:
    flash = st.session_state.pop(FLASH, None)
    if flash:
        (st.success if flash[0] else st.error)(label(flash[1], 600))


def _answer_widget(key: str, field: str) -> str:
    return f"nw-gold-answer|{key}|{field}"


def _mark(dataset: str, key: str | None, fields: Sequence[str]) -> None:
    if not key:
        return
    answers = {f: st.session_state.get(_answer_widget(key, f)) for f in fields}
    answers = {f: v for f, v in answers.items() if v}
    try:  # adjudicated dimensions come along, as before
        answers |= {f: v for f, v in default_answers(get_db(), dataset, key).items()
                    if f.startswith("dim:")}
    except GoldError:
        pass
    if not answers:
        st.session_state[FLASH] = (False, "Pick at least one answer before marking the item "
                                   "as gold.")
        return
    try:
        saved = mark_gold(get_db(), dataset, key, answers, actor=signed_in())
    except (GoldError, PermissionDenied) as e:
        st.session_state[FLASH] = (False, str(e))
        return
    st.session_state[FLASH] = (True, f"Item {key} is gold ({len(saved)} answers); it joins "
                               "every annotator's queue unannounced.")


def _unmark(dataset: str, key: str) -> None:
    try:
        unmark_gold(get_db(), dataset, key, actor=signed_in())
    except PermissionDenied as e:
        st.session_state[FLASH] = (False, str(e))
        return
    st.session_state[FLASH] = (True, f"Item {key} is no longer gold.")


def render_gold(dataset: str, items: Sequence[dict[str, Any]],
                gold: Sequence[dict[str, Any]]) -> None:
    """The gold items with their answers, and marking or unmarking one."""
    titles = {i["key"]: f"{i['position'] + 1}. {(i['title'] or i['key'])[:90]}" for i in items}
    if gold:
        st.dataframe(pd.DataFrame([{
            "item": titles.get(g["item_key"], g["item_key"]), "answers": len(g["answers"]),
            "marked by": g["marked_by"], "marked": g["marked_at"][:16].replace("T", " "),
        } for g in gold]), hide_index=True, width="stretch", key="nw-gold-table")
    else:
        st.caption("No gold items yet.")
    golden = {g["item_key"] for g in gold}
    cols = st.columns([3, 1], vertical_alignment="bottom")
    key = cols[0].selectbox("Item", [i["key"] for i in items], index=None, key="nw-gold-item",
                            format_func=lambda k: option(titles.get(k, k), 100),
                            placeholder="choose an item to mark as gold…")
    if key in golden:
        cols[1].button("Unmark gold", key="nw-gold-unmark", on_click=_unmark, args=(dataset, key),
                       icon=":material/remove_done:")
        answers = next(g["answers"] for g in gold if g["item_key"] == key)
        render_text(json.dumps(answers, ensure_ascii=False, indent=1), mono=True, box=True,
                    max_height=200, key="nw-gold-answers-view")
        return
    fields = answer_fields(get_db(), dataset, key) if key is not None else []
    cols[1].button("Mark as gold", key="nw-gold-mark", disabled=key is None, type="primary",
                   on_click=_mark, args=(dataset, key, [f.field for f in fields]),
                   icon=":material/star:")
    if key is None:
        return
    try:
        proposed = default_answers(get_db(), dataset, key)
    except GoldError:
        proposed = {}
    st.caption("The right answers, picked like labels. Each starts at the reviewers' "
               "adjudication, else the file's own value (a preference pair: chosen better); "
               "an answer left empty is not checked.")
    for f in fields:
        value = proposed.get(f.field)
        st.segmented_control(f.title, f.options, format_func=f.words.get,
                             default=value if value in f.options else None,
                             key=_answer_widget(key, f.field))


def render_annotators(report: QualityReport) -> None:
    """Annotators sorted by the figure the reviewer picks, worst first."""
    if not report.annotators:
        st.caption("Nobody has annotated or been assigned this dataset yet.")
        return
    by = st.selectbox("Sort annotators by", ANNOTATOR_SORTS, key="nw-quality-annotator-sort",
                      format_func=ANNOTATOR_WORDS.get)
    rows = rank_annotators(report.annotators, by)
    st.dataframe(figures_table([{
        "annotator": a.annotator, "done": a.done, "assigned": a.assigned,
        "accuracy on gold %": _pct(a.gold_accuracy), "gold fields": a.gold_fields,
        "kappa": None if a.kappa is None else round(a.kappa, 3),
        "equal answers %": _pct(a.agreement), "shared units": a.shared_units,
        "active min": round(a.active_seconds / 60, 1),
        "median s / item": _secs(a.median_item_seconds), "timed items": a.timed_items,
    } for a in rows]), hide_index=True, width="stretch", key="nw-quality-annotators")
    st.caption("–: not defined for that annotator (no gold fields answered, no passage shared "
               "with another annotator, or no timed item).")


def render_items(report: QualityReport, limit: int = 200) -> None:
    """Items sorted by the figure the reviewer picks, worst first (the first ``limit``)."""
    by = st.selectbox("Sort items by", ITEM_SORTS, key="nw-quality-item-sort",
                      format_func=ITEM_WORDS.get)
    rows = rank_items(report.items, by)
    st.dataframe(figures_table([{
        "item": i.item_key, "title": i.title[:120], "annotators": i.annotators,
        "shared units": i.units, "disputed": i.disputed_units,
        "disputed %": _pct(i.disagreement), "gold": "★" if i.gold else "",
        "wrong on gold": i.gold_errors, "median s": _secs(i.median_seconds),
    } for i in rows[:limit]]), hide_index=True, width="stretch", key="nw-quality-items")
    if len(rows) > limit:
        st.caption(f"The {limit} worst of {len(rows)} items.")


def render_alpha(report: QualityReport) -> None:
    """Krippendorff's alpha over the dataset, with its units."""
    alpha = report.alpha
    cols = st.columns(3)
    cols[0].metric("Krippendorff's α", "–" if alpha.value is None else f"{alpha.value:.3f}",
                   help="Over every unit two or more annotators coded (passages or comparisons).")
    cols[1].metric("Units coded by two or more", alpha.units)
    cols[2].metric("Annotators", len(report.annotators))
    if alpha.note:
        st.caption(label(alpha.note, 300))


def render_throughput(tp: Throughput) -> None:
    """Work finished per annotator per day (a bar chart), the recent rate, what is left
    and the estimated end."""
    end = ("finished" if tp.left == 0 else
           f"at this rate finished around {tp.end.isoformat()}" if tp.end else
           "no estimate: nothing finished in that time")
    st.caption(f"{tp.rate:.1f} {tp.unit} a day over the last {tp.window} days · "
               f"{tp.left:,} {tp.unit} left · {end}")
    if not tp.daily:
        st.caption(f"No {tp.unit} finished yet.")
        return
    frame = pd.DataFrame(tp.daily, columns=["annotator", "day", tp.unit])
    chart = alt.Chart(frame).mark_bar().encode(
        x=alt.X("day:T", title="Day (UTC)", timeUnit="yearmonthdate"),
        y=alt.Y(f"{tp.unit}:Q", title=f"{tp.unit.capitalize()} finished", stack=True),
        color=alt.Color("annotator:N", title="Annotator"),
        tooltip=["annotator:N", alt.Tooltip("day:T", timeUnit="yearmonthdate"), f"{tp.unit}:Q"],
    ).properties(height=220)
    st.altair_chart(chart, width="stretch")
