"""The agreement page's figures: agreement (Krippendorff's α, Cohen's κ), the items
annotators disagree on, and the attribution metrics of model answers."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st
from sqlite_utils import Database

from components.callbacks import uninterrupted
from components.text import label, render_marked_text
from needlework.grounding import agreement as ag
from needlework.grounding import labels as gl
from needlework.grounding.agreement import disputes_of
from needlework.grounding.attribution import AnswersError, attribution, read_answers
from needlework.grounding.export import human_answers
from needlework.grounding.item import DIM_FIELDS, DIM_TITLES
from store.grounding import disputed_count, disputed_items


def number(value: float | None) -> str:
    """A figure with three decimals, ``n/a`` when there is none."""
    return "n/a" if value is None else f"{value:.3f}"


def render_figures(fig: ag.Figures) -> bool:
    """Alpha for passage labels and per dimension, and kappa per pair of annotators;
    when no passage or dimension has two annotators yet, says so instead (there is
    nothing to agree on, which is not the same as agreeing). Returns whether there is
    any overlap."""
    if not fig.overlap:
        who = ", ".join(fig.annotators[:5]) + (" and others" if len(fig.annotators) > 5 else "")
        st.info(label(
            ("Nothing overlaps yet: " + (f"only {who} has labeled this dataset. " if len(fig.annotators) == 1
                                          else f"{who} have labeled different passages. "
                                          if fig.annotators else "nobody has labeled it. ")
             + "Agreement needs two annotators on the same passage or dimension."), 400),
            icon=":material/group_add:")
        return False
    cols = st.columns(3)
    cols[0].metric("Annotators who labeled", len(fig.annotators),
                   help="Those who labeled at least one passage (Quality counts everyone "
                        "assigned).")
    cols[1].metric("Krippendorff's α, passage labels", number(fig.labels.value),
                   help="Nominal alpha over passages labeled by at least two annotators.")
    cols[2].metric("Passages labeled by ≥ 2", fig.labels.units)
    if fig.labels.note:
        st.caption(f"α n/a: {fig.labels.note}")
    left, right = st.columns(2)
    dims = pd.DataFrame([{"dimension": DIM_TITLES[name], "alpha": number(fig.dims[name].value),
                          "units": fig.dims[name].units, "note": fig.dims[name].note}
                         for name in DIM_FIELDS])
    left.markdown("**Per question dimension** (Krippendorff's α, nominal)")
    left.dataframe(dims, hide_index=True, width="stretch")
    right.markdown("**Passage labels per pair** (Cohen's κ)")
    kappas = pd.DataFrame([{"annotator A": k.a, "annotator B": k.b, "kappa": number(k.value),
                            "raw agreement": k.agreement, "shared passages": k.units}
                           for k in fig.kappas],
                          columns=["annotator A", "annotator B", "kappa", "raw agreement",
                                   "shared passages"])
    right.dataframe(kappas, hide_index=True, width="stretch",
                    column_config={"raw agreement": st.column_config.NumberColumn(format="%.2f")})
    return True


def _tally(votes: dict[str, Any], short: dict[str, str]) -> str:
    counts: dict[str, int] = {}
    for value in votes.values():
        name = short.get(value, str(value) or "∅")
        counts[name] = counts.get(name, 0) + 1
    return "/".join(f"{name}×{n}" for name, n in sorted(counts.items(), key=lambda c: -c[1]))


def _disputes(d: ag.Disagreement) -> str:
    parts = [f"passage {n}: {_tally(votes, gl.SHORT)}" for n, votes in sorted(d.passages.items())]
    parts += [f"{DIM_TITLES.get(name, name)}: {_tally(votes, {})}" for name, votes in d.dims.items()]
    return " · ".join(parts)


PAGE = 40


@uninterrupted
def _turn_to(state: str, after: int) -> None:
    """Show the disagreements after question ``after`` (-1: from the first)."""
    st.session_state[state] = after


def render_disagreements(db: Database, dataset: str, overlap: bool) -> None:
    """The items where annotators disagree, a page of :data:`PAGE` at a time in dataset
    order, each linked to the annotate page (read from what SQL keeps: the page costs
    the same whatever the dataset's size)."""
    if not overlap:
        st.caption("Nothing to compare yet.")
        return
    total = disputed_count(db, dataset)
    if not total:
        st.success("No disagreements: every passage and dimension that two annotators "
                   "judged got the same value.")
        return
    state = f"nw-dis-after|{dataset}"
    after = int(st.session_state.get(state, -1))
    rows = disputed_items(db, dataset, PAGE, after)
    if not rows and after >= 0:  # the page emptied (settled meanwhile): back to the start
        after, rows = -1, disputed_items(db, dataset, PAGE, -1)
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.caption(f"{total:,} item(s) with disagreements"
                   + (f" · questions {rows[0]['position'] + 1:,}–{rows[-1]['position'] + 1:,} "
                      f"shown" if total > len(rows) and rows else ""))
        if after >= 0:
            st.button("‹ First", key="nw-dis-first", on_click=_turn_to,
                      args=(state, -1))
        if len(rows) == PAGE:
            st.button(f"Next {PAGE} ›", key="nw-dis-next", on_click=_turn_to,
                      args=(state, rows[-1]["position"]))
    for d, r in zip(disputes_of(db, dataset, [r["key"] for r in rows]), rows, strict=False):
        position, title = r["position"], r["title"]
        settled = f"adjudicated {len(d.adjudicated & set(d.passages))}/{len(d.passages)} · " \
            if d.passages else ""
        with st.container(border=True, gap="xxsmall", key=f"nw-dis-{position}"):
            st.page_link("app_pages/annotate.py", label=label(f"{position + 1}. {title}", 110),
                         query_params={"dataset": dataset, "item": d.item_key},
                         icon=":material/open_in_new:")
            render_marked_text([(settled, None, "background:none;color:#666"),
                                (_disputes(d), None, None)], key=f"nw-dis-text-{position}")


def render_attribution(db: Database, dataset: str) -> None:
    """Upload model answers and show per-question and mean citation P/R/F1."""
    st.caption("Gold = the passages the human answer cites (the answer export writes); "
               "predicted = the passages the model answer cites. Questions with no gold "
               "citation are skipped; an empty or missing model answer scores 0; means are "
               "over the scored questions. Same as `python -m needlework attribution`.")
    upload = st.file_uploader("Model answers (JSONL: {\"sample_id\", \"answer\"} per line)",
                              type=["jsonl", "json"], key=f"nw-attr-file|{dataset}")
    if upload is None:
        return
    try:
        answers = read_answers(upload.getvalue(), upload.name)
    except AnswersError as e:
        st.error(str(e), icon=":material/error:")
        return
    report = attribution(human_answers(db, dataset), answers)
    cols = st.columns(4)
    cols[0].metric("Precision", number(report.precision))
    cols[1].metric("Recall", number(report.recall))
    cols[2].metric("F1", number(report.f1))
    cols[3].metric("Scored questions", report.scored,
                   help=f"{report.skipped_empty_gold} skipped (empty gold); "
                   f"{report.missing_answers} without a model answer")
    if report.unknown_ids:
        st.warning(f"{len(report.unknown_ids)} answer(s) name a sample_id that is not in "
                   "this dataset; they were ignored.")
    frame = pd.DataFrame([{**r, "gold": " ".join(map(str, r["gold"])),
                           "pred": " ".join(map(str, r["pred"]))} for r in report.rows])
    st.dataframe(frame, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.3f")
                                for c in ("precision", "recall", "f1")})
