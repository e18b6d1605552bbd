"""A finished evaluation: which run, what was evaluated (questions and answers by id),
the figures of every model side by side with each metric's definition, and the
breakdowns by question dimension (one table and one chart, the models side by side).

Figures come from the stored summary (``store.rag.get_run``), exactly as
``python -m needlework rag-eval ... --json`` prints them: judge figures are shares of
questions (shown as percentages, as the GaRAGe paper prints them), BERGEN's and
attribution's are means on 0 to 1. Each table cell carries its denominator and its 95 %
bootstrap interval (:func:`needlework.rag.metrics.cell_text`), a figure with no value
says why, and figures from the rules judge say so at the tables and charts.
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
from needlework.figures.stats import bootstrap_mean
from needlework.figures.stats_text import how, number_range
from needlework.rag.bergen import METRICS as BERGEN_METRICS
from needlework.rag.definitions import DEFINITIONS, TITLES
from needlework.rag.metrics import (
    JUDGE_FIGURES,
    RULES_CAVEAT,
    breakdown_table,
    denominator,
    interval_columns,
    is_rules_judge,
    side_by_side,
    text_row,
)
from needlework.rag.questions import DIMENSIONS
from needlework.rag.run import answer_notes
from store.rag import list_runs

RUN_PICK = "rag_run_pick"
#: Chart labels and legends whole at 1024 px: "Unadjusted factuality · rules judge" on
#: two lines, the models' legend under the chart, in columns, names up to 300 px.
SPLIT_LABEL = "split(datum.label, ' · ')"
MODEL_LEGEND = alt.Legend(orient="bottom", direction="horizontal", columns=2, labelLimit=300,
                          titleOrient="left")
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


CELL_HELP = (" Cell: the figure, (hits/questions) or (n=questions), then its 95 % interval "
             f"(CI: {how()}, questions resampled); n/a says why there is none.")


def _column(name: str, rules: bool = False) -> Any:
    title = TITLES[name] + (" · rules judge" if rules and name in JUDGE_FIGURES else "")
    return st.column_config.TextColumn(title, help=DEFINITIONS[name] + CELL_HELP
                                       + (" Graded by the rules judge, not an LLM."
                                          if rules and name in JUDGE_FIGURES else ""))


def _config(names: list[str], rules: bool = False) -> dict[str, Any]:
    config: dict[str, Any] = {name: _column(name, rules) for name in names}
    config["n"] = st.column_config.NumberColumn("n", help="Questions evaluated (the denominator).")
    config["no_answer"] = st.column_config.NumberColumn(
        "no answer", help="Questions the model did not answer (or answered blank): failures.")
    return config


def _number_config(names: list[str]) -> dict[str, Any]:
    """Number columns (BERGEN files: means with no interval)."""
    config: dict[str, Any] = {name: st.column_config.NumberColumn(
        TITLES[name], help=DEFINITIONS[name], format="percent" if name in JUDGE_FIGURES else "%.3f")
        for name in names}
    return config


def rules_judged(summary: dict[str, Any]) -> bool:
    """Whether the run's judge figures come from the rules judge."""
    return _judged(summary) and is_rules_judge(summary.get("judge"))


def overall_frame(summary: dict[str, Any]) -> pd.DataFrame:
    """The overall figures as numbers, one row per model (the columns of
    :func:`figure_names`): the chart's data."""
    names = figure_names(summary)
    rows = side_by_side(summary["overall"])
    return pd.DataFrame.from_records(rows, columns=["model", "n", "no_answer", *names])


def overall_table(summary: dict[str, Any]) -> pd.DataFrame:
    """The overall figures as the page shows them, one row per model: each cell with its
    denominator and 95 % interval, or why it has no value."""
    names = figure_names(summary)
    rows = [{"model": model, **text_row(figures, names)}
            for model, figures in summary["overall"].items()]
    return pd.DataFrame.from_records(rows, columns=["model", "n", "no_answer", *names])


def render_rules_caveat(summary: dict[str, Any], where: str) -> None:
    """The rules judge's caveat, at the figures it graded."""
    if rules_judged(summary):
        st.warning(f"The judge figures {where} ({', '.join(TITLES[n] for n in JUDGE_FIGURES)}) "
                   f"are {RULES_CAVEAT}", icon="⚙️")


def render_scope(summary: dict[str, Any]) -> None:
    """What was evaluated: questions, and per model the answers and questions by id."""
    q = summary["questions"]
    judge = summary.get("judge")
    st.markdown(f"**{q['evaluated']}** of {q['total']} questions evaluated · "
                + (f"judge {label(short_name(judge['model']), 80)} at "
                   f"{label(judge['endpoint'], 80)}"
                   + (" (the rules judge: word-overlap rules, not an LLM)"
                      if is_rules_judge(judge) else "")
                   if judge else "no judge (BERGEN metrics and attribution only)")
                + (" · `answer_related_info` is a second BERGEN reference"
                   if summary.get("with_related") else ""))
    for line in answer_notes(summary):
        st.warning(label(line, 600), icon="⚠️")
    listed = []
    for item in q["not_evaluated"]:
        listed.append({"model": "(all)", "what": item["reason"], "ids": item["item_key"]})
    names = {"unknown_ids": "answers for an unknown sample_id (ignored)",
             "missing_ids": "questions without an answer (failures)",
             "empty_ids": "blank answers (failures)",
             "non_answer_ids": "non-answers: no claim (not factual, not eligible)",
             "failed_ids": "generation request failed (left out)",
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
                            format_func=TITLES.__getitem__, key=f"{key}-{int(_judged(summary))}")
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
    rules = rules_judged(summary)
    render_rules_caveat(summary, "in this table and chart")
    st.dataframe(overall_table(summary), hide_index=True, key="rag-overall",
                 column_config=_config(names, rules))
    st.caption("Each cell: the figure, its denominator (hits/questions for a share, n for a "
               f"mean) and its 95 % interval (CI: {how()}, the unit the question). Deflection "
               "TPR is over the questions that need a deflection, FPR over the others, "
               "attribution over the questions whose human answer cites a passage.")
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
        frame = overall_frame(summary)
        data = _long(frame, picked, ["model"])
        data = _with_bounds(data, summary["overall"], ["model"])
        if rules:
            data["metric"] = [f"{m} · rules judge" if k in JUDGE_FIGURES else m
                              for m, k in zip(data["metric"], data["key"], strict=True)]
        order = [TITLES[n] + (" · rules judge" if rules and n in JUDGE_FIGURES else "")
                 for n in picked]
        base = alt.Chart(data).encode(
            x=alt.X("metric:N", sort=order, title=None,  # "… · rules judge" on a line of its own
                    axis=alt.Axis(labelAngle=0, labelLimit=0, labelExpr=SPLIT_LABEL)),
            xOffset=alt.XOffset("model:N"),
            tooltip=["model:N", "metric:N", alt.Tooltip("figure:Q", format=".3f"),
                     alt.Tooltip("low:Q", title="95 % CI low", format=".3f"),
                     alt.Tooltip("high:Q", title="95 % CI high", format=".3f"),
                     alt.Tooltip("over:Q", title="questions (denominator)")],
        )
        bars = base.mark_bar().encode(
            y=alt.Y("figure:Q", title="share of questions / mean", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("model:N", title="model", legend=MODEL_LEGEND))
        whiskers = base.mark_rule(color="black").encode(y="low:Q", y2="high:Q")
        chart = (bars + whiskers).properties(  # the title in lines: whole at 1024 px
            height=280, title=alt.TitleParams(
                "Bars: the figure; lines: its 95 % interval", anchor="start", limit=0,
                subtitle="judge figures from the rules judge (not an LLM)" if rules else ""),
            padding={"left": 5, "top": 14, "bottom": 5, "right": 5})  # the title's top whole
        st.altair_chart(chart, width="stretch", key="rag-overall-chart")
        for name in picked:
            st.caption(f"**{TITLES[name]}**: {DEFINITIONS[name]}")


def _with_bounds(data: pd.DataFrame, figures_of: Any, keys: list[str]) -> pd.DataFrame:
    """``data`` (long rows of :func:`_long`) with each figure's 95 % bounds (``low``,
    ``high``) and denominator (``over``); ``figures_of`` maps the rows' model (overall) or
    (group, model) (a breakdown) to its figures."""
    lows, highs, overs = [], [], []
    for _, row in data.iterrows():
        key = tuple(row[k] for k in keys)
        figures = figures_of.get(key[0] if len(key) == 1 else key) or {}
        part = (figures.get("intervals") or {}).get(row["key"]) or {}
        lows.append(part.get("low"))
        highs.append(part.get("high"))
        overs.append(denominator(figures, row["key"]) if figures else None)
    return data.assign(low=lows, high=highs, over=overs)


def render_breakdowns(summary: dict[str, Any]) -> None:
    """Every figure by one question dimension (picked), the models side by side."""
    rows = breakdown_table(summary["breakdowns"])
    if not rows:
        return
    names = figure_names(summary)
    rules = rules_judged(summary)
    dimension = st.segmented_control("By", list(DIMENSIONS), format_func=DIMENSIONS.__getitem__,
                                     default="time", required=True, key="rag_dimension")
    render_rules_caveat(summary, "in this breakdown")
    _breakdown_table(summary, rows, dimension, names, rules)
    _breakdown_chart(summary, rows, dimension, names, rules)


def _breakdown_table(summary: dict[str, Any], rows: list[dict[str, Any]], dimension: str,
                     names: list[str], rules: bool) -> None:
    """The figures by ``dimension`` in a table, and every breakdown as a CSV download."""
    parts = summary["breakdowns"]
    shown = [{"value": r["value"], "model": r["model"],
              **text_row(parts[r["model"]][dimension][r["value"]], names)}
             for r in rows if r["dimension"] == dimension]
    table = pd.DataFrame.from_records(shown, columns=["value", "model", "n", "no_answer", *names])
    config = _config(names, rules)
    config["value"] = st.column_config.TextColumn(DIMENSIONS[dimension])
    st.dataframe(table, hide_index=True, key="rag-breakdown", column_config=config)
    st.caption("Each cell: the figure with its denominator and 95 % interval; few questions "
               "give wide intervals. n/a: the figure has no value for that group, and why.")
    every = pd.DataFrame.from_records(
        [{**r, **interval_columns(parts[r["model"]][r["dimension"]][r["value"]], names)}
         for r in rows])
    st.download_button("Download every breakdown (CSV)", every.to_csv(index=False),
                       file_name="rag-breakdowns.csv", mime="text/csv", key="rag-breakdown-csv",
                       icon="⬇️")


def _breakdown_chart(summary: dict[str, Any], rows: list[dict[str, Any]], dimension: str,
                     names: list[str], rules: bool) -> None:
    """The picked figures by ``dimension`` as bars with their intervals, one panel each."""
    parts = summary["breakdowns"]
    frame = pd.DataFrame.from_records(
        [r for r in rows if r["dimension"] == dimension],
        columns=["value", "model", "n", "no_answer", *names])
    picked = _metric_picker(summary, "rag_breakdown_metrics")
    if picked and not frame.empty:
        data = _long(frame.rename(columns={"value": "group"}), picked, ["group", "model", "n"])
        lookup = {(value, model): figures for model, dims in parts.items()
                  for value, figures in dims.get(dimension, {}).items()}
        data = _with_bounds(data, lookup, ["group", "model"])
        if rules:
            data["metric"] = [f"{m} · rules judge" if k in JUDGE_FIGURES else m
                              for m, k in zip(data["metric"], data["key"], strict=True)]
        order = list(dict.fromkeys(frame["value"]))
        models = frame["model"].nunique()
        base = alt.Chart().encode(
            y=alt.Y("group:N", sort=order, title=None, axis=alt.Axis(labelLimit=130)),
            yOffset=alt.YOffset("model:N"),
            tooltip=["model:N", alt.Tooltip("group:N", title=DIMENSIONS[dimension]), "metric:N",
                     alt.Tooltip("over:Q", title="questions (denominator)"),
                     alt.Tooltip("figure:Q", format=".3f"),
                     alt.Tooltip("low:Q", title="95 % CI low", format=".3f"),
                     alt.Tooltip("high:Q", title="95 % CI high", format=".3f")],
        )
        bars = base.mark_bar().encode(
            x=alt.X("figure:Q", title=None, scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("model:N", title="model", legend=MODEL_LEGEND))
        whiskers = base.mark_rule(color="black").encode(x="low:Q", x2="high:Q")
        metric_order = [TITLES[n] + (" · rules judge" if rules and n in JUDGE_FIGURES else "")
                        for n in picked]
        chart = alt.layer(bars, whiskers, data=data).properties(
            width=200, height=max(60, 14 * models * len(order))).facet(
            facet=alt.Facet("metric:N", sort=metric_order, title=None,
                            header=alt.Header(labelLimit=0, labelExpr=SPLIT_LABEL)),
            columns=2).resolve_axis(x="independent", y="independent").properties(
            padding={"left": 5, "top": 5, "bottom": 5, "right": 16})  # the last tick's "1.0" whole
        st.altair_chart(chart, width="content", key="rag-breakdown-chart")
        st.caption("Bars: the figure; black lines: its 95 % interval.")


def bergen_intervals(report: dict[str, Any]) -> dict[str, str]:
    """A BERGEN file's 95 % intervals, one text cell per metric (``M CI``: ``0.350–0.470``,
    over its scored questions, :func:`needlework.figures.stats.bootstrap_mean`); ``n/a: no
    question scored`` when none was."""
    out = {}
    rows = report.get("per_question") or []
    for name in BERGEN_METRICS:
        values = [float(r[name]) for r in rows if r.get(name) is not None]
        out[f"{name} CI"] = (number_range(bootstrap_mean(values, unit="question")) if values
                             else "n/a: no question scored")
    return out


def render_bergen_files(reports: list[dict[str, Any]]) -> None:
    """BERGEN output files scored against their own gold labels (what
    ``python -m needlework answer-metrics FILE --json`` prints), one row per file: each
    mean over the ``scored`` questions, then the means' 95 % intervals."""
    names = list(BERGEN_METRICS)
    cis = [f"{name} CI" for name in names]
    frame = pd.DataFrame.from_records(
        [{"file": r["file"], "questions": r["questions"], "scored": r["scored"], **r["mean"],
          **bergen_intervals(r)} for r in reports],
        columns=["file", "questions", "scored", *names, *cis])
    config = _number_config(names)
    for name in names:
        config[f"{name} CI"] = st.column_config.TextColumn(
            f"{TITLES[name]} 95 % CI", help=f"{how()}, over the scored questions.")
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
                hide_index=True, key=f"rag-bergen-rows-{k}", column_config=_number_config(names))
    with st.expander("What each figure means"):
        _definitions(names)
