"""Agreement figures, the disagreement list, adjudication and attribution metrics."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st
from sqlite_utils import Database

from components.text import label, render_marked_text, render_text
from needlework.grounding import agreement as ag
from needlework.grounding import labels as gl
from needlework.grounding.attribution import AnswersError, attribution, read_answers
from needlework.grounding.export import human_answers
from needlework.grounding.item import DIM_FIELDS, passages
from needlework.grounding.resolve import resolve, split_entries
from store.annotations import set_annotation
from store.grounding import grouped_annotations

DIM_TITLES = {
    "question_valid": "valid", "question_false_premise": "false premise",
    "question_seeking": "info-seeking", "question_sensitive": "time-sensitive",
    "question_type": "question type (slow/fast)", "question_complexity": "complexity",
    "question_popularity": "popularity", "question_category": "category",
}


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def render_figures(report: ag.Report) -> None:
    """Alpha for passage labels and per dimension, and kappa per pair of annotators."""
    cols = st.columns(3)
    cols[0].metric("Annotators", len(report.annotators))
    cols[1].metric("Krippendorff's α, passage labels", _num(report.labels.value),
                   help="Nominal alpha over passages labeled by at least two annotators.")
    cols[2].metric("Passages labeled by ≥ 2", report.labels.units)
    if report.labels.note:
        st.caption(f"α n/a: {report.labels.note}")
    left, right = st.columns(2)
    dims = pd.DataFrame([{"dimension": DIM_TITLES[name], "alpha": _num(report.dims[name].value),
                          "units": report.dims[name].units, "note": report.dims[name].note}
                         for name in DIM_FIELDS])
    left.markdown("**Per question dimension** (Krippendorff's α, nominal)")
    left.dataframe(dims, hide_index=True, width="stretch")
    right.markdown("**Passage labels per pair** (Cohen's κ)")
    kappas = pd.DataFrame([{"annotator A": k.a, "annotator B": k.b, "kappa": _num(k.value),
                            "raw agreement": k.agreement, "shared passages": k.units}
                           for k in report.kappas],
                          columns=["annotator A", "annotator B", "kappa", "raw agreement",
                                   "shared passages"])
    right.dataframe(kappas, hide_index=True, width="stretch",
                    column_config={"raw agreement": st.column_config.NumberColumn(format="%.2f")})


def _tally(votes: dict[str, Any], short: dict[str, str]) -> str:
    counts: dict[str, int] = {}
    for value in votes.values():
        name = short.get(value, str(value) or "∅")
        counts[name] = counts.get(name, 0) + 1
    return "/".join(f"{name}×{n}" for name, n in sorted(counts.items(), key=lambda c: -c[1]))


def _disputes(d: ag.Disagreement) -> str:
    parts = [f"#{n} {_tally(votes, gl.SHORT)}" for n, votes in sorted(d.passages.items())]
    parts += [f"{DIM_TITLES.get(name, name)} {_tally(votes, {})}" for name, votes in d.dims.items()]
    return " · ".join(parts)


def render_disagreements(report: ag.Report, dataset: str, titles: dict[str, tuple[int, str]],
                         limit: int = 40) -> None:
    """The items where annotators disagree, each linked to the annotate page."""
    if not report.disagreements:
        st.success("No disagreements: every passage and dimension that two annotators "
                   "judged got the same value.")
        return
    shown = report.disagreements[:limit]
    st.caption(f"{len(report.disagreements)} item(s) with disagreements"
               + (f"; the first {limit} are listed" if len(shown) < len(report.disagreements)
                  else ""))
    for d in shown:
        position, title = titles.get(d.item_key, (0, d.item_key))
        settled = f"adjudicated {len(d.adjudicated & set(d.passages))}/{len(d.passages)} · " \
            if d.passages else ""
        with st.container(border=True, gap="xxsmall", key=f"nw-dis-{position}"):
            st.page_link("pages/annotate.py", label=label(f"{position + 1}. {title}", 110),
                         query_params={"dataset": dataset, "item": d.item_key},
                         icon=":material/open_in_new:")
            render_marked_text([(settled, None, "background:none;color:#666"),
                                (_disputes(d), None, None)], key=f"nw-dis-text-{position}")


def _on_final(db: Database, dataset: str, key: str, reviewer: str, field: str, widget: str) -> None:
    set_annotation(db, dataset, key, reviewer, field, st.session_state.get(widget))


def render_adjudication(db: Database, dataset: str, item: dict[str, Any], reviewer: str) -> None:
    """Per passage: every annotator's label, what export writes now and why, and the
    reviewer's final label (``final:label:N``, saved when set)."""
    entries = grouped_annotations(db, dataset, item["key"]).get(item["key"], [])
    render_text(str(item["record"].get("question") or ""), key="nw-adj-question")
    disputed_only = st.toggle("Only passages the annotators disagree on", value=True,
                              key=f"nw-adj-disputed|{dataset}")
    for p in passages(item["record"]):
        votes, finals = split_entries(entries, gl.label_field(p.number), gl.final_field(p.number))
        if disputed_only and len(set(map(str, votes.values()))) < 2 and not finals:
            continue
        resolved = resolve(votes, finals, gl.imported_label(item["record"], p.number), gl.LABELS)
        final = resolved.value if resolved.source == "final" else None
        widget = f"nw-final|{dataset}|{item['key']}|{p.number}|{reviewer}|{final}"
        with st.container(border=True, key=f"nw-adj-{p.number}"):
            with st.container(horizontal=True, vertical_alignment="center", gap="small"):
                segments = [(f" {p.number} ", "nw-cite", None), ("  ", None, None)]
                for who, value in sorted(votes.items()):
                    segments += [(f"{who}: ", None, None),
                                 (gl.SHORT.get(value, str(value)), None,
                                  f"background:{gl.COLOURS.get(value, '#eee')}"), ("  ", None, None)]
                segments.append((f"→ export: {gl.SHORT.get(resolved.value, 'imported/none')} "
                                 f"({resolved.source})", None, None))
                render_marked_text(segments, key=f"nw-adj-head-{p.number}")
                st.segmented_control(
                    f"Final label of passage {p.number}", gl.LABELS, key=widget, default=final,
                    format_func=lambda v: gl.SHORT[v], label_visibility="collapsed",
                    on_change=_on_final,
                    args=(db, dataset, item["key"], reviewer, gl.final_field(p.number), widget),
                    disabled=not reviewer,
                )
            render_text(p.text, box=True, max_height=120, key=f"nw-adj-text-{p.number}")


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
    cols[0].metric("Precision", _num(report.precision))
    cols[1].metric("Recall", _num(report.recall))
    cols[2].metric("F1", _num(report.f1))
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


def render_final_dims(db: Database, dataset: str, item: dict[str, Any], reviewer: str) -> None:
    """For each dimension annotators disagree on: the votes and a final value
    (``final:dim:FIELD``)."""
    entries = grouped_annotations(db, dataset, item["key"]).get(item["key"], [])
    for name in DIM_FIELDS:
        votes, finals = split_entries(entries, f"dim:{name}", f"final:dim:{name}")
        if len(set(map(str, votes.values()))) < 2:
            continue
        options = sorted(set(votes.values()), key=str)
        resolved = resolve(votes, finals, item["record"].get(name), options)
        final = resolved.value if resolved.source == "final" else None
        widget = f"nw-final-dim|{dataset}|{item['key']}|{name}|{reviewer}|{final}"
        with st.container(horizontal=True, vertical_alignment="center", gap="small"):
            render_text(f"{DIM_TITLES[name]}: " + ", ".join(f"{w}={v or '∅'}" for w, v in
                                                            sorted(votes.items()))
                        + f" → export: {resolved.value or '∅'} ({resolved.source})",
                        key=f"nw-adj-dim-{name}")
            st.segmented_control(f"Final {DIM_TITLES[name]}", options, key=widget,
                                 default=final if final in options else None,
                                 format_func=lambda v: v or "∅", label_visibility="collapsed",
                                 on_change=_on_final,
                                 args=(db, dataset, item["key"], reviewer, f"final:dim:{name}",
                                       widget), disabled=not reviewer)


def render_final_answer(db: Database, dataset: str, item: dict[str, Any], reviewer: str) -> None:
    """When several annotators wrote answers: pick the one export writes (``final:answer``)."""
    entries = grouped_annotations(db, dataset, item["key"]).get(item["key"], [])
    answers = {e["annotator"]: e["value"] for e in entries
               if e["field"] == "answer" and isinstance(e["value"], str) and e["value"].strip()}
    if len(answers) < 2:
        return
    final = next((e["value"] for e in sorted(entries, key=lambda e: e["updated_at"], reverse=True)
                  if e["field"] == "final:answer"), None)
    st.markdown("**Answers** (export writes the chosen one, else the latest saved)")
    for who, text in sorted(answers.items()):
        with st.container(horizontal=True, vertical_alignment="center", gap="small"):
            render_text(f"{who}: {text}", box=True, max_height=140, key=f"nw-adj-ans-{who}")
            chosen = final == text
            if st.button("Chosen" if chosen else "Use this", key=f"nw-adj-use|{who}",
                         disabled=chosen or not reviewer, type="primary" if chosen else "secondary"):
                set_annotation(db, dataset, item["key"], reviewer, "final:answer", text)
                st.rerun()
