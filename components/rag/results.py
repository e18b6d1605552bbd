"""A finished evaluation: which run, what was evaluated (questions and answers by id),
the figures of every model side by side with each metric's definition, and the
breakdowns by question dimension (one table and one chart, the models side by side).

Figures come from the stored summary (``store.rag.get_run``), exactly as
``python -m needlework rag-eval ... --json`` prints them: judge figures are shares of
questions (shown as percentages, as the GaRAGe paper prints them), BERGEN's and
attribution's are means on 0 to 1.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st
from sqlite_utils import Database

from components.rag.answer_panel import short_name
from components.text import label
from needlework.rag.bergen import METRICS as BERGEN_METRICS
from needlework.rag.definitions import DEFINITIONS, TITLES
from needlework.rag.metrics import JUDGE_FIGURES, breakdown_table, side_by_side
from needlework.rag.questions import DIMENSIONS
from store.rag import list_runs

RUN_PICK = "rag_run_pick"
RUN_PARAM = "rag_run"
ATTRIBUTION = ("attribution_precision", "attribution_recall", "attribution_f1")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"
DOCS_SECTION = "## 5."


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else "…" + text[-(limit - 1):]


def _run_title(run: dict[str, Any]) -> str:
    judge = run.get("judge_model") or ""
    return (f"{(run.get('updated_at') or '')[:16].replace('T', ' ')} · "
            f"{', '.join(run.get('models') or [])} · "
            + (f"judge {_short(short_name(judge))}" if judge
               else "no judge"))


def pick_run(db: Database, dataset: str, job: dict[str, Any] | None) -> dict[str, Any] | None:
    """The finished run to show: a newly finished job's, else a ``?rag_run=`` link's, else
    the one picked before, else the newest; ``None`` when the dataset has none."""
    runs = [r for r in list_runs(db, dataset) if r["status"] == "done" and r.get("summary")]
    if not runs:
        st.caption("No finished evaluation of this dataset yet: evaluate some answers above.")
        return None
    by_key = {r["run_key"]: r for r in runs}
    state = st.session_state
    link = st.query_params.get(RUN_PARAM)
    if link in by_key and state.get("rag_link_seen") != link:
        state["rag_link_seen"] = link
        state[RUN_PICK] = link
    result = (job or {}).get("result") or {}
    if job is not None and job["display_status"] == "done" and state.get("rag_job_seen") != job["id"]:
        state["rag_job_seen"] = job["id"]
        if result.get("run_key") in by_key:
            state[RUN_PICK] = result["run_key"]
    if state.get(RUN_PICK) not in by_key:
        state[RUN_PICK] = runs[0]["run_key"]
    key = st.selectbox("Results of", list(by_key), key=RUN_PICK,
                       format_func=lambda k: _run_title(by_key[k]),
                       help="Every finished evaluation of this dataset, newest first.")
    return by_key[key]


def _judged(summary: dict[str, Any]) -> bool:
    return any(f.get("judged") for f in summary["overall"].values())


def figure_names(summary: dict[str, Any]) -> list[str]:
    """The figures the run has: the judge's (with a judge), BERGEN's, attribution's."""
    return [*(JUDGE_FIGURES if _judged(summary) else ()), *BERGEN_METRICS, *ATTRIBUTION]


def _column(name: str) -> Any:
    fmt = "percent" if name in JUDGE_FIGURES else "%.3f"
    return st.column_config.NumberColumn(TITLES[name], help=DEFINITIONS[name], format=fmt)


def _config(names: list[str]) -> dict[str, Any]:
    config: dict[str, Any] = {name: _column(name) for name in names}
    config["n"] = st.column_config.NumberColumn("n", help="Questions evaluated (the denominator).")
    config["no_answer"] = st.column_config.NumberColumn(
        "no answer", help="Questions the model did not answer (or answered blank): failures.")
    return config


def overall_frame(summary: dict[str, Any]) -> pd.DataFrame:
    """The overall figures, one row per model (the columns of :func:`figure_names`)."""
    names = figure_names(summary)
    rows = side_by_side(summary["overall"])
    return pd.DataFrame.from_records(rows, columns=["model", "n", "no_answer", *names])


def render_scope(summary: dict[str, Any]) -> None:
    """What was evaluated: questions, and per model the answers and questions by id."""
    q = summary["questions"]
    judge = summary.get("judge")
    st.markdown(f"**{q['evaluated']}** of {q['total']} questions evaluated · "
                + (f"judge {label(short_name(judge['model']), 80)} at "
                   f"{label(judge['endpoint'], 80)}"
                   if judge else "no judge (BERGEN metrics and attribution only)")
                + (" · `answer_related_info` is a second BERGEN reference"
                   if summary.get("with_related") else ""))
    listed = []
    for item in q["not_evaluated"]:
        listed.append({"model": "(all)", "what": item["reason"], "ids": item["item_key"]})
    names = {"unknown_ids": "answers for an unknown sample_id (ignored)",
             "missing_ids": "questions without an answer (failures)",
             "empty_ids": "blank answers (failures)",
             "not_evaluated_ids": "answers to questions not evaluated"}
    for model, cov in summary["coverage"].items():
        for name, what in names.items():
            if cov.get(name):
                listed.append({"model": model, "what": f"{what}: {len(cov[name])}",
                               "ids": ", ".join(cov[name])})
    if listed:
        st.markdown("**Not evaluated, not answered, not known**, by id")
        st.dataframe(pd.DataFrame.from_records(listed, columns=["model", "what", "ids"]),
                     hide_index=True, key="rag-scope",
                     column_config={"ids": st.column_config.TextColumn(width="large")})
    else:
        st.caption("Every evaluated question has an answer from every model, and every answer "
                   "names a question.")


def _long(frame: pd.DataFrame, names: list[str], keys: list[str]) -> pd.DataFrame:
    """One row per (keys, figure): ``metric`` (its title) and ``figure`` (its value)."""
    out = frame.melt(id_vars=keys, value_vars=names, var_name="key", value_name="figure")
    out["metric"] = out["key"].map(TITLES)
    return out.dropna(subset=["figure"])


def _default_metrics(summary: dict[str, Any]) -> list[str]:
    if _judged(summary):
        return ["eligibility", "unadjusted_factuality", "factuality", "uraf", "raf"]
    return ["F1", "Rouge-L", "M", "attribution_f1"]


def _metric_picker(summary: dict[str, Any], key: str) -> list[str]:
    names = figure_names(summary)
    picked = st.multiselect("Figures", names, default=_default_metrics(summary),
                            format_func=TITLES.get, key=f"{key}-{int(_judged(summary))}")
    return [n for n in names if n in picked]


def _definitions(names: list[str]) -> None:
    for name in names:
        st.markdown(f"**{TITLES[name]}**: {DEFINITIONS[name]}")


@cache
def docs_section() -> str:
    """docs/benchmarks.md §5 (the rules and sources of every RAG figure), as written."""
    try:
        text = DOCS.read_text(encoding="utf-8")
    except OSError:
        return ""
    start = text.find(DOCS_SECTION)
    if start < 0:
        return ""
    end = text.find("\n## ", start + 1)
    return text[start: end if end > 0 else None]


def render_overall(summary: dict[str, Any]) -> None:
    """Every model's figures side by side, the definitions, and one chart."""
    names = figure_names(summary)
    frame = overall_frame(summary)
    st.dataframe(frame, hide_index=True, key="rag-overall", column_config=_config(names))
    if not _judged(summary):
        st.caption("No judge in this run: the GaRAGe figures (eligibility, factuality, uRAF, RAF, "
                   "deflection, LLMeval) need one.")
    with st.expander("What each figure means (hover a column title for its own)"):
        _definitions(names)
        section = docs_section()
        if section:
            st.caption("The rules and sources, from docs/benchmarks.md §5:")
            st.markdown(section)
    picked = _metric_picker(summary, "rag_overall_metrics")
    if picked:
        data = _long(frame, picked, ["model"])
        chart = alt.Chart(data).mark_bar().encode(
            x=alt.X("metric:N", sort=[TITLES[n] for n in picked], title=None,
                    axis=alt.Axis(labelAngle=0, labelLimit=140)),
            xOffset=alt.XOffset("model:N"),
            y=alt.Y("figure:Q", title="share of questions / mean", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("model:N", title="model"),
            tooltip=["model:N", "metric:N", alt.Tooltip("figure:Q", format=".3f")],
        ).properties(height=280)
        st.altair_chart(chart, width="stretch", key="rag-overall-chart")
        for name in picked:
            st.caption(f"**{TITLES[name]}**: {DEFINITIONS[name]}")


def render_breakdowns(summary: dict[str, Any]) -> None:
    """Every figure by one question dimension (picked), the models side by side."""
    rows = breakdown_table(summary["breakdowns"])
    if not rows:
        return
    names = figure_names(summary)
    dimension = st.segmented_control("By", list(DIMENSIONS), format_func=DIMENSIONS.get,
                                     default="time", required=True, key="rag_dimension")
    frame = pd.DataFrame.from_records(
        [r for r in rows if r["dimension"] == dimension],
        columns=["value", "model", "n", "no_answer", *names])
    config = _config(names)
    config["value"] = st.column_config.TextColumn(DIMENSIONS[dimension])
    st.dataframe(frame, hide_index=True, key="rag-breakdown", column_config=config)
    every = pd.DataFrame.from_records(rows, columns=["dimension", "value", "model", "n",
                                                     "no_answer", *names])
    st.download_button("Download every breakdown (CSV)", every.to_csv(index=False),
                       file_name="rag-breakdowns.csv", mime="text/csv", key="rag-breakdown-csv",
                       icon="⬇️")
    picked = _metric_picker(summary, "rag_breakdown_metrics")
    if picked and not frame.empty:
        data = _long(frame.rename(columns={"value": "group"}), picked, ["group", "model", "n"])
        order = list(dict.fromkeys(frame["value"]))
        models = frame["model"].nunique()
        chart = alt.Chart(data).mark_bar().encode(
            y=alt.Y("group:N", sort=order, title=None, axis=alt.Axis(labelLimit=130)),
            yOffset=alt.YOffset("model:N"),
            x=alt.X("figure:Q", title=None, scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("model:N", title="model"),
            tooltip=["model:N", alt.Tooltip("group:N", title=DIMENSIONS[dimension]), "metric:N",
                     "n:Q", alt.Tooltip("figure:Q", format=".3f")],
        ).properties(width=200, height=max(60, 14 * models * len(order))).facet(
            facet=alt.Facet("metric:N", sort=[TITLES[n] for n in picked], title=None),
            columns=3).resolve_axis(x="independent", y="independent")
        st.altair_chart(chart, width="content", key="rag-breakdown-chart")


def render_bergen_files(reports: list[dict[str, Any]]) -> None:
    """BERGEN output files scored against their own gold labels (what
    ``python -m needlework answer-metrics FILE --json`` prints), one row per file."""
    names = list(BERGEN_METRICS)
    frame = pd.DataFrame.from_records(
        [{"file": r["file"], "questions": r["questions"], "scored": r["scored"], **r["mean"]}
         for r in reports], columns=["file", "questions", "scored", *names])
    config = _config(names)
    config["scored"] = st.column_config.NumberColumn(
        "scored", help="Questions with at least one gold answer (the others are listed below).")
    st.dataframe(frame, hide_index=True, key="rag-bergen-files", column_config=config)
    for k, report in enumerate(reports):
        if report["not_scored"]:
            st.caption(f"Not scored in {label(report['file'], 80)} (no gold answer), by q_id:")
            st.dataframe(pd.DataFrame.from_records(report["not_scored"], columns=["q_id", "reason"]),
                         hide_index=True, key=f"rag-bergen-unscored-{k}")
        with st.expander(f"Per question: {label(report['file'], 80)}"):
            st.dataframe(pd.DataFrame.from_records(
                report["per_question"], columns=["q_id", "question", "response", *names]),
                hide_index=True, key=f"rag-bergen-rows-{k}", column_config=config)
    with st.expander("What each figure means"):
        _definitions(names)
