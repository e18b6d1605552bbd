"""The dataset view of the review page: lengths, subsets, verdicts per annotator,
and the TRL export."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from components.state import get_db
from needlework.datasets import ExportError, export_text
from needlework.review.lengths import ItemFacts, length_rows, length_summary
from needlework.review.queue import item_comparisons
from needlework.review.verdicts import VERDICTS, summarize

TICKS = [math.log10(v) for v in (10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000)]
SIDE_COLORS = alt.Scale(domain=["chosen", "rejected"], range=["#2b8a3e", "#c92a2a"])


def length_chart(rows: list[dict[str, Any]], by_subset: bool) -> alt.Chart:
    """Histogram of response lengths (log-spaced bins), chosen vs rejected overlaid and
    each normalised to its own total (1 chosen vs 3 rejected per prompt would otherwise
    dwarf the chosen side), as in Long-form RewardBench's length figure; one row per
    subset if asked."""
    frame = pd.DataFrame(rows)
    groups = ["side", "subset"] if by_subset else ["side"]
    base = (
        alt.Chart(frame)
        .transform_filter("datum.tokens > 0")
        .transform_joinaggregate(total="count()", groupby=groups)
        .transform_calculate(log_tokens="log(datum.tokens) / LN10", share="1 / datum.total")
    )
    chart = base.mark_bar(opacity=0.55, binSpacing=0).encode(
        x=alt.X("log_tokens:Q", bin=alt.Bin(maxbins=40), title="tokens per response (log scale)",
                axis=alt.Axis(values=TICKS, labelExpr="format(pow(10, datum.value), ',.0f')")),
        y=alt.Y("sum(share):Q", stack=None, title="share of responses", axis=alt.Axis(format="%")),
        color=alt.Color("side:N", scale=SIDE_COLORS, title=None),
        tooltip=["side:N", alt.Tooltip("count():Q", title="responses"),
                 alt.Tooltip("sum(share):Q", title="share", format=".1%")],
    ).properties(height=160 if by_subset else 260)
    return chart.facet(row=alt.Row("subset:N", title=None)) if by_subset else chart


def subset_table(facts: Sequence[ItemFacts], verdicts: Sequence[dict[str, Any]], scope: str) -> pd.DataFrame:
    """Per subset: items, comparisons in scope, reviewed (by anyone), flips."""
    subset_of = {f.key: f.subset or "(none)" for f in facts}
    rows: dict[str, dict[str, Any]] = {}
    for f in facts:
        row = rows.setdefault(f.subset or "(none)", {"subset": f.subset or "(none)", "items": 0,
                                                    "comparisons": 0, "reviewed": 0, "flips": 0})
        row["items"] += 1
        row["comparisons"] += len(item_comparisons(f.n_chosen, f.n_rejected, scope))
    seen: set[tuple[str, int, int]] = set()
    for v in verdicts:
        subset = subset_of.get(v["item_key"])
        if subset is None:
            continue
        ident = (v["item_key"], v["i"], v["j"])
        if ident not in seen:
            seen.add(ident)
            rows[subset]["reviewed"] += 1
        rows[subset]["flips"] += v["verdict"] == "flip"
    return pd.DataFrame(sorted(rows.values(), key=lambda r: r["subset"]))


def annotator_table(verdicts: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Per annotator: verdict counts, agreement with the dataset's labels, last verdict."""
    out = []
    for s in summarize({"annotator": v["annotator"], "value": {"verdict": v["verdict"]},
                        "updated_at": v["updated_at"]} for v in verdicts):
        row: dict[str, Any] = {"annotator": s.annotator, "verdicts": s.total}
        row.update({name: s.counts[name] for name in VERDICTS})
        row["agreement"] = s.agreement
        row["last verdict (UTC)"] = s.last_at[:19].replace("T", " ")
        out.append(row)
    return pd.DataFrame(out)


def render_overview(
    facts: Sequence[ItemFacts], verdicts: Sequence[dict[str, Any]], scope: str, how: str,
    dataset: str,
) -> None:
    """Length distributions, counts per subset, verdicts per annotator, TRL export."""
    rows = length_rows(facts)
    st.markdown("#### Response lengths")
    counted = ("o200k_base" if how == "o200k_base" else
               "**estimates** (o200k_base is not available here)" if how == "estimate" else
               f"the loaded model's tokenizer, {how.split(':', 1)[1]} (o200k_base is not available)")
    st.caption(f"Tokens per response, chosen vs rejected; counted with {counted}.")
    if rows:
        by_subset = st.toggle("One chart per subset", key="rv_o_facet",
                              disabled=len({f.subset for f in facts}) < 2)
        st.altair_chart(length_chart(rows, by_subset), width="stretch")
        st.dataframe(pd.DataFrame(length_summary(rows)), hide_index=True)
    st.markdown("#### Subsets")
    st.dataframe(subset_table(facts, verdicts, scope), hide_index=True, width="stretch")
    st.markdown("#### Verdicts per annotator")
    st.caption("Agreement = share of “chosen better” among the verdicts that pick a side "
               "(chosen better or rejected better).")
    table = annotator_table(verdicts)
    if table.empty:
        st.caption("No verdicts yet.")
    else:
        st.dataframe(table, hide_index=True, width="stretch", column_config={
            "agreement": st.column_config.NumberColumn(format="percent")})
    render_trl_export(dataset, sorted({v["annotator"] for v in verdicts}))


def render_trl_export(dataset: str, annotators: list[str]) -> None:
    """Download the reviewed dataset as TRL preference JSONL (written when clicked, in the
    server thread that serves the download: with that thread's connection)."""
    st.markdown("#### Export for TRL")
    st.caption("One line per comparison. Rejected better: chosen and rejected swapped. Skip: "
               "dropped. Tie / both bad: dropped unless kept below. Not reviewed: kept as the "
               "dataset labels it. Without an annotator, the latest verdict by anyone counts.")
    cols = st.columns(3)
    who = cols[0].selectbox("Verdicts of", [""] + annotators, key="rv_x_who",
                            format_func=lambda n: n or "latest, anyone")
    conversational = cols[1].toggle("Conversational (messages)", key="rv_x_conv")
    keep_ties = cols[2].toggle("Keep ties and both-bad", key="rv_x_ties")

    def build() -> bytes:
        try:
            return export_text(get_db(), dataset, "trl", conversational=conversational,
                               keep_ties=keep_ties, annotator=who or None).encode("utf-8")
        except ExportError as e:
            return f"export failed: {e}\n".encode()

    suffix = "-conversational" if conversational else ""
    st.download_button("Download TRL JSONL", data=build, file_name=f"{dataset}-trl{suffix}.jsonl",
                       mime="application/jsonl", icon="⬇️", key="rv_x_go")
