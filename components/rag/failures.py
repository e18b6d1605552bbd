"""Where the models fail: the failing answers and the failing sentences of a run, each
opening the question on the annotate page with the model answer beside the human one
(:mod:`components.rag.answer_panel`), the page scrolled to that answer and its cursor on
the passage the failing sentence cites, and one failure looked at here.

What counts as a failure is :mod:`needlework.rag.failures` (the rules the figures use).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from components.position import PASSAGE_PARAM
from components.rag.answer_panel import link_params, render_answer
from needlework.rag.failures import (
    FAILURES,
    answer_failures,
    cited_passage,
    failing_sentences,
    failure_table,
    sentence_table,
)
from needlework.rag.metrics import RULES_CAVEAT

ANNOTATE_PAGE = "app_pages/annotate.py"
ANNOTATE_URL = "annotate"
PICK = "rag_failure_pick"


def annotate_params(dataset: str, run_key: str, row: Mapping[str, Any],
                    sentence: int | None = None) -> dict[str, str]:
    """The annotate page's query for one answer row: the model answer shown above the
    passages (sentence ``sentence``, 0-based, outlined) and the cursor on the passage the
    sentence cites (else the first the answer cites; else the page's own start)."""
    params = link_params(dataset, row["item_key"], run_key, row["model"], sentence)
    passage = cited_passage(row, sentence)
    return {**params, PASSAGE_PARAM: str(passage)} if passage is not None else params


def annotate_url(dataset: str, run_key: str, row: Mapping[str, Any],
                 sentence: int | None = None) -> str:
    """The annotate page's address for one answer row (relative to the app's root)."""
    return f"{ANNOTATE_URL}?{urlencode(annotate_params(dataset, run_key, row, sentence))}"


def _link_column() -> Any:
    return st.column_config.LinkColumn("open", display_text="annotate ↗", width="small",
                                       help="The question on the annotate page, with the model "
                                       "answer beside the human one (a new tab).")


def render_failures(dataset: str, run_key: str, rows: list[dict[str, Any]],
                    rules: bool = False) -> None:
    """The failures of one run: by check, the failing answers and sentences, one in detail;
    ``rules``: the run's judge is the rules judge (said above the failures it found)."""
    judged = any(r.get("judged") for r in rows)
    if judged and rules:
        st.caption(f"Judge verdicts here are {RULES_CAVEAT}")
    failing = failure_table(rows)
    shown_models, kinds = _counts_and_filters(run_key, rows, failing, judged)
    by_key = {(r["model"], r["item_key"]): r for r in rows}
    entries = _failing_answers(dataset, run_key, rows, failing, judged, shown_models, kinds,
                               by_key)
    _failing_sentences(dataset, run_key, rows, shown_models, kinds, by_key)
    if entries:
        _render_one(dataset, run_key, entries, by_key)


def _counts_and_filters(run_key: str, rows: list[dict[str, Any]],
                        failing: list[dict[str, Any]], judged: bool) -> tuple[list[str], list[str]]:
    """The failures counted by model and check, then the filters: ``(models shown, failed
    checks picked)``."""
    models = list(dict.fromkeys(r["model"] for r in rows))
    checks = list(FAILURES) if judged else [FAILURES[0]]
    counts = [{"model": m, **{f: sum(1 for x in failing if x["model"] == m and f in x["failures"])
                              for f in checks}} for m in models]
    st.dataframe(pd.DataFrame.from_records(counts, columns=["model", *checks]), hide_index=True,
                 key="rag-failure-counts")
    cols = st.columns(2)
    shown_models = cols[0].multiselect("Models", models, default=models,
                                       key=f"rag_fail_models-{run_key[:16]}")  # per run: its models
    kinds: list[str] = []
    if judged:
        kinds = cols[1].multiselect("Failed checks", checks, key="rag_fail_kinds",
                                    placeholder="any failed check")
    else:
        cols[1].caption("No judge in this run: the only failure is a missing answer. Every "
                        "answer is listed below by token F1, lowest first.")
    return shown_models, kinds


def _failing_answers(dataset: str, run_key: str, rows: list[dict[str, Any]],
                     failing: list[dict[str, Any]], judged: bool, shown_models: list[str],
                     kinds: list[str], by_key: Mapping[tuple[str, str], dict[str, Any]],
                     ) -> list[dict[str, Any]]:
    """The failing answers' table (without a judge: every answer, lowest token F1 first),
    each opening the question on Annotate; the answers listed."""
    if judged:
        entries = [e for e in failing if e["model"] in shown_models
                   and (not kinds or set(kinds) & set(e["failures"]))]
    else:
        entries = sorted(({"model": r["model"], "item_key": r["item_key"],
                           "question": r.get("question", ""), "failures": answer_failures(r),
                           "sentences": []} for r in rows if r["model"] in shown_models),
                         key=lambda e: by_key[(e["model"], e["item_key"])]["bergen"]["F1"])
    table = [{"model": e["model"], "question": e["question"], "failed": ", ".join(e["failures"]),
              "failing sentences": len(e["sentences"]),
              "F1": by_key[(e["model"], e["item_key"])]["bergen"]["F1"],
              "id": e["item_key"],
              "open": annotate_url(dataset, run_key, by_key[(e["model"], e["item_key"])],
                                   e["sentences"][0] if e["sentences"] else None)}
             for e in entries]
    st.markdown(f"**{len(entries)} answer(s)**" + (" failing" if judged else ""))
    st.dataframe(pd.DataFrame.from_records(table, columns=["model", "open", "failed", "question",
                                                           "failing sentences", "F1", "id"]),
                 hide_index=True, key="rag-failures", column_config={
                     "open": _link_column(), "F1": st.column_config.NumberColumn(format="%.3f"),
                     "failed": st.column_config.TextColumn(width="medium"),
                     "question": st.column_config.TextColumn(width="large")})
    return entries


def _failing_sentences(dataset: str, run_key: str, rows: list[dict[str, Any]],
                       shown_models: list[str], kinds: list[str],
                       by_key: Mapping[tuple[str, str], dict[str, Any]]) -> None:
    """The failing sentences' table, each opening its answer on Annotate."""
    sentences = [s for s in sentence_table(rows) if s["model"] in shown_models
                 and (not kinds or set(kinds) & set(answer_failures(by_key[(s["model"],
                                                                             s["item_key"])])))]
    if sentences:
        st.markdown(f"**{len(sentences)} failing sentence(s)**: not supported (or not labelled) "
                    "against all passages or the relevant ones")
        st.dataframe(pd.DataFrame.from_records(
            [{"model": s["model"],
              "open": annotate_url(dataset, run_key, by_key[(s["model"], s["item_key"])],
                                   s["index"]),
              "#": s["index"] + 1, "sentence": s["text"], "all passages": s["all"] or "no label",
              "relevant passages": s["relevant"] or "no label", "question": s["question"],
              "rationale": "" if s["rationale"] is None else str(s["rationale"])}
             for s in sentences]), hide_index=True, key="rag-failing-sentences",
            column_config={"open": _link_column(),
                           "sentence": st.column_config.TextColumn(width="large")})


def _render_one(dataset: str, run_key: str, entries: list[dict[str, Any]],
                by_key: Mapping[tuple[str, str], dict[str, Any]]) -> None:
    ids = {f"{e['model']}\x1f{e['item_key']}": e for e in entries}

    def title(ident: str) -> str:
        e = ids[ident]
        question = " ".join(e["question"].split())
        return (f"{e['model']} · {question[:90]}{'…' if len(question) > 90 else ''}"
                + (f" · {', '.join(e['failures'])}" if e["failures"] else ""))

    picked = st.selectbox("Look at one", list(ids), format_func=title,
                          key=f"{PICK}-{run_key[:16]}")
    if picked is None:
        return
    entry = ids[picked]
    row = by_key[(entry["model"], entry["item_key"])]
    first = failing_sentences(row)
    current = first[0] if first else None
    with st.container(border=True, key="rag-failure-detail"):
        render_answer(row, key="rag-detail", current=current)
        st.page_link(ANNOTATE_PAGE, label="Open this question on the annotate page",
                     icon="🏷️", query_params=annotate_params(dataset, run_key, row, current))
