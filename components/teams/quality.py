"""The Quality page's widgets (reviewers): gold items, and annotators and items ranked by
accuracy on gold, agreement with the others and active time.

Figures come from :func:`needlework.teams.quality.quality_report`; sorting again uses
its ``rank_annotators`` / ``rank_items``. Item titles are data: they reach the page
only inside tables (shown as text) or through :func:`components.text.label`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from components.callbacks import uninterrupted
from components.state import get_db, signed_in
from components.tables import figures_table
from components.text import label, option, render_text
from needlework.figures.stats_text import percent, round_half_up
from needlework.formats.errors import FormatError
from needlework.teams.gold import (
    GoldError,
    answer_fields,
    default_answers,
    mark_gold,
    queue_gold_shares,
    sample_gold,
    unmark_gold,
)
from needlework.teams.gold_import import import_gold
from needlework.teams.permissions import PermissionDenied
from needlework.teams.quality import (
    ANNOTATOR_SORTS,
    ITEM_SORTS,
    QualityReport,
    rank_annotators,
    rank_items,
)
from needlework.teams.throughput import Throughput
from needlework.words import plural

FLASH = "nw-quality-flash"
IMPORT_FILE, SAMPLE_PERCENT, SAMPLE_SEED = "nw-gold-file", "nw-gold-percent", "nw-gold-seed"
ANNOTATOR_WORDS = {"gold_accuracy": "accuracy on gold (lowest first)",
                   "kappa": "kappa with the others (lowest first)",
                   "agreement": "equal answers with the others (lowest first)",
                   "median_item_seconds": "median active time per item (slowest first)",
                   "done": "items done (fewest first)"}
ITEM_WORDS = {"disagreement": "disputed share (highest first)",
              "gold_errors": "wrong answers on gold (most first)",
              "median_seconds": "median active time (slowest first)"}


def _pct(value: float | None) -> float | None:
    return None if value is None else float(round_half_up(Fraction(value) * 100, 1))


def _secs(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _say(ok: bool, text: str, where: str = "mark") -> None:
    st.session_state[FLASH] = (ok, text, where)


def render_flash(where: str) -> None:
    """What the last gold action of ``where`` (``mark``: one item; ``bulk``: a file or a
    share) did or why it was refused, drawn just below its buttons, where the eye is."""
    flash = st.session_state.get(FLASH)
    if flash and flash[2] == where:
        del st.session_state[FLASH]
        (st.success if flash[0] else st.error)(label(flash[1], 600))


def _answer_widget(key: str, field: str) -> str:
    return f"nw-gold-answer|{key}|{field}"


def _defaults(dataset: str, key: str) -> dict[str, Any]:
    try:
        return default_answers(get_db(), dataset, key)
    except GoldError:
        return {}


@uninterrupted
def _mark(dataset: str, key: str | None, fields: Sequence[str]) -> None:
    if not key:
        return
    answers = {f: st.session_state.get(_answer_widget(key, f)) for f in fields}
    answers = {f: v for f, v in answers.items() if v}
    defaults = _defaults(dataset, key)
    answers |= {f: v for f, v in defaults.items() if f.startswith("dim:")}  # adjudicated
    if not answers and defaults:
        _say(False, "Pick at least one answer before marking the item as gold.")
        return
    try:  # no answer and no default one: the logic says why in one sentence
        saved = mark_gold(get_db(), dataset, key, answers or None, actor=signed_in())
    except (GoldError, PermissionDenied) as e:
        _say(False, str(e))
        return
    _say(True, f"Item {key} is gold ({len(saved)} answers); it joins every annotator's "
         "queue unannounced.")


@uninterrupted
def _unmark(dataset: str, key: str) -> None:
    try:
        unmark_gold(get_db(), dataset, key, actor=signed_in())
    except PermissionDenied as e:
        _say(False, str(e))
        return
    _say(True, f"Item {key} is no longer gold.")


def _problems(e: FormatError) -> str:
    more = e.total - 1
    return (str(e.problems[0]) + (f" (and {more} more problem{'s' if more > 1 else ''})"
                                  if more else "") + " · nothing was imported.")


@uninterrupted
def _import(dataset: str) -> None:
    upload = st.session_state.get(IMPORT_FILE)
    if upload is None:
        _say(False, "Choose a CSV or JSONL file of gold answers first.", "bulk")
        return
    try:
        done = import_gold(get_db(), dataset, upload.getvalue(), upload.name, actor=signed_in())
    except FormatError as e:
        _say(False, _problems(e), "bulk")
        return
    except (GoldError, PermissionDenied) as e:
        _say(False, str(e), "bulk")
        return
    again = f", {len(done.replaced)} of them gold already" if done.replaced else ""
    _say(True, f"Imported {plural(done.answers, 'gold answer')} of "
         f"{plural(len(done.items), 'item')} from {done.file}{again}; they join every "
         "annotator's queue unannounced.", "bulk")


@uninterrupted
def _sample(dataset: str) -> None:
    percent = st.session_state[SAMPLE_PERCENT]  # the number input beside the button
    seed = int(st.session_state.get(SAMPLE_SEED) or 0)
    try:
        done = sample_gold(get_db(), dataset, percent, seed=seed, actor=signed_in())
    except (GoldError, PermissionDenied) as e:
        _say(False, str(e), "bulk")
        return
    if not done.added:
        _say(True, f"Every queue is already at least {done.percent:g} % gold: nothing added.",
             "bulk")
        return
    where = ("of every annotator's queue" if done.basis == "queues" else
             "of the dataset's items (it has no assignment yet)")
    _say(True, f"{plural(len(done.added), 'item')} {'is' if len(done.added) == 1 else 'are'} "
         f"gold now (seed {seed}): at least "
         f"{done.percent:g} % {where}.", "bulk")


def _shares_line(shares: dict[str, tuple[int, int]]) -> str:
    """``ana 2 of 10 (20 %) · bob …`` (names escaped)."""
    return " · ".join(f"{label(who, 40)} {gold} of {items} ({percent(gold, items)})"
                      for who, (gold, items) in shares.items() if items)


def render_gold_bulk(dataset: str) -> None:
    """Gold answers from a file, and "k % of each queue" as gold (reviewers, admins)."""
    with st.container(border=True, key="nw-gold-bulk"):
        st.markdown("**From a file** · CSV with the columns `item,field,value`, or JSONL "
                    "objects with those keys, one answer a row")
        st.caption("Fields as stored: label:N (passage N from 1), dim:FIELD, verdict:I:J "
                   "(chosen I, rejected J, from 0). Values as the annotation page's choices "
                   "(OUTDATED or Outdated, agree or Chosen better). An item's rows are its "
                   "answers. Any bad row names its line and field, and nothing is imported.")
        cols = st.columns([3, 1], vertical_alignment="bottom")
        cols[0].file_uploader("Gold answers file", type=["csv", "jsonl"], key=IMPORT_FILE)
        cols[1].button("Import gold answers", key="nw-gold-import", on_click=_import,
                       args=(dataset,), icon=":material/upload:")
        st.markdown("**A share of every queue**")
        shares = queue_gold_shares(get_db(), dataset, actor=signed_in())
        st.caption("Items with default answers (adjudications, else the file's labels) are "
                   "picked with the seed and made gold until at least this share of every "
                   "annotator's queue is gold; without an assignment, of the dataset's items. "
                   + (f"Now: {_shares_line(shares)}." if shares else "Not assigned yet."))
        cols = st.columns([2, 1, 1], vertical_alignment="bottom")
        cols[0].number_input("Gold share of each queue (%)", min_value=1, max_value=100,
                             value=10, step=1, key=SAMPLE_PERCENT)
        cols[1].number_input("Seed", min_value=0, value=0, step=1, key=SAMPLE_SEED)
        cols[2].button("Add gold items", key="nw-gold-sample", on_click=_sample,
                       args=(dataset,), icon=":material/casino:")
        render_flash("bulk")


def render_gold(dataset: str, items: Sequence[dict[str, Any]],
                gold: Sequence[dict[str, Any]]) -> None:
    """The gold items with their answers, marking or unmarking one, and the bulk ways
    (:func:`render_gold_bulk`); what the last of these did shows below its buttons."""
    titles = {i["key"]: f"{i['position'] + 1}. {(i['title'] or i['key'])[:90]}" for i in items}
    if gold:
        st.dataframe(pd.DataFrame([{
            "item": titles.get(g["item_key"], g["item_key"]), "answers": len(g["answers"]),
            "marked by": g["marked_by"], "marked": g["marked_at"][:16].replace("T", " "),
        } for g in gold]), hide_index=True, width="stretch", key="nw-gold-table")
    else:
        st.caption("No gold items yet.")
    render_gold_bulk(dataset)
    golden = {g["item_key"] for g in gold}
    cols = st.columns([3, 1], vertical_alignment="bottom")
    key = cols[0].selectbox("Item", [i["key"] for i in items], index=None, key="nw-gold-item",
                            format_func=lambda k: option(titles.get(k, str(k)), 100),
                            placeholder="choose an item to mark as gold…")
    if key in golden:
        cols[1].button("Unmark gold", key="nw-gold-unmark", on_click=_unmark, args=(dataset, key),
                       icon=":material/remove_done:")
        render_flash("mark")
        answers = next(g["answers"] for g in gold if g["item_key"] == key)
        render_text(json.dumps(answers, ensure_ascii=False, indent=1), mono=True, box=True,
                    max_height=200, key="nw-gold-answers-view")
        return
    fields = answer_fields(get_db(), dataset, key) if key is not None else []
    cols[1].button("Mark as gold", key="nw-gold-mark", disabled=key is None, type="primary",
                   on_click=_mark, args=(dataset, key, [f.field for f in fields]),
                   icon=":material/star:")
    render_flash("mark")
    if key is None:
        return
    proposed = _defaults(dataset, key)
    st.caption("The right answers, picked like labels. Each starts at the reviewers' "
               "adjudication, else the file's own value (a preference pair: chosen better); "
               "an answer left empty is not checked."
               + ("" if proposed else " This item has no file labels and no adjudicated "
                  "values: pick its answers, or import them from a file."))
    for f in fields:
        value = proposed.get(f.field)
        st.segmented_control(f.title, f.options, format_func=f.words.__getitem__,
                             default=value if value in f.options else None,
                             key=_answer_widget(key, f.field))


def render_annotators(report: QualityReport) -> None:
    """Annotators sorted by the figure the reviewer picks, worst first."""
    if not report.annotators:
        st.caption("Nobody has annotated or been assigned this dataset yet.")
        return
    by = st.selectbox("Sort annotators by", ANNOTATOR_SORTS, key="nw-quality-annotator-sort",
                      format_func=ANNOTATOR_WORDS.__getitem__)
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
                      format_func=ITEM_WORDS.__getitem__)
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
    cols[2].metric("Annotators assigned", len(report.annotators),
                   help="Everyone assigned items of this dataset, whether they labeled yet "
                        "or not (Agreement counts those who labeled).")
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
    st.altair_chart(throughput_chart(tp.daily, tp.unit), width="stretch")


def throughput_chart(daily: Sequence[tuple[str, str, int]], unit: str) -> alt.Chart:
    """Stacked bars of ``(annotator, day, count)``: one band and one label per day (a
    time axis ticks every few hours, and a day's name stood under one bar twice)."""
    frame = pd.DataFrame(daily, columns=["annotator", "day", unit])
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("day:O", title="Day (UTC)", sort=sorted(set(frame["day"])),
                axis=alt.Axis(labelAngle=0)),
        y=alt.Y(f"{unit}:Q", title=f"{unit.capitalize()} finished", stack=True),
        color=alt.Color("annotator:N", title="Annotator",
                        legend=alt.Legend(orient="bottom", columns=4, labelLimit=200)),
        tooltip=["annotator:N", alt.Tooltip("day:O", title="day"), f"{unit}:Q"],
    ).properties(height=220)
