"""The dataset view of the review page: lengths, subsets, verdicts per annotator,
and the TRL export."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import median
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st
from sqlite_utils import Database

import store
from components.state import get_db, signed_in
from needlework.datasets.transfer import ExportError, export_text
from needlework.review.queue import PairList, item_comparisons
from needlework.teams.permissions import can
from needlework.verdicts import VERDICTS, summarize
from store import pairs as pairs_store

TICKS = [math.log10(v) for v in (10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000)]
SIDE_COLORS = alt.Scale(domain=["chosen", "rejected"], range=["#2b8a3e", "#c92a2a"])
BINS = 40


def length_bins(facts: Sequence[tuple[str, str, Sequence[int], Sequence[int]]], by_subset: bool,
                bins: int = BINS) -> list[dict[str, Any]]:
    """Histogram rows of response lengths on a log scale (``side, subset, start, end,
    share``, log10 tokens), each side (and subset) normalised to its own total: 1 chosen
    vs 3 rejected per prompt would otherwise dwarf the chosen side (Long-form
    RewardBench's length figure). Binned here, so a chart of 100,000 items carries 80
    bars, not 400,000 points."""
    values = [t for _, _, c, r in facts for t in (*c, *r) if t > 0]
    if not values:
        return []
    low, high = math.log10(min(values)), math.log10(max(values))
    width = max((high - low) / bins, 1e-9)
    counts: dict[tuple[str, str, int], int] = {}
    totals: dict[tuple[str, str], int] = {}
    for subset, _, chosen, rejected in facts:
        group = subset if by_subset else ""
        for side, tokens in (("chosen", chosen), ("rejected", rejected)):
            for t in tokens:
                if t > 0:
                    b = min(int((math.log10(t) - low) / width), bins - 1)
                    counts[(side, group, b)] = counts.get((side, group, b), 0) + 1
                    totals[(side, group)] = totals.get((side, group), 0) + 1
    return [{"side": side, "subset": group, "start": low + b * width, "end": low + (b + 1) * width,
             "responses": n, "share": n / totals[(side, group)]}
            for (side, group, b), n in sorted(counts.items())]


def length_chart(rows: list[dict[str, Any]], by_subset: bool) -> alt.Chart:
    """Overlaid bars of :func:`length_bins` (log-scale x axis in tokens)."""
    frame = pd.DataFrame(rows)
    chart = alt.Chart(frame).mark_bar(opacity=0.55, binSpacing=0).encode(
        x=alt.X("start:Q", title="tokens per response (log scale)",
                axis=alt.Axis(values=TICKS, labelExpr="format(pow(10, datum.value), ',.0f')")),
        x2="end:Q",
        y=alt.Y("share:Q", stack=None, title="share of responses", axis=alt.Axis(format="%")),
        y2=alt.datum(0),  # bars from zero: with x and x2 alone Vega-Lite draws thin ticks at y
        color=alt.Color("side:N", scale=SIDE_COLORS, title=None),
        tooltip=["side:N", alt.Tooltip("responses:Q"), alt.Tooltip("share:Q", format=".1%")],
    ).properties(height=160 if by_subset else 260)
    return chart.facet(row=alt.Row("subset:N", title=None)) if by_subset else chart


def length_summary(facts: Sequence[tuple[str, str, Sequence[int], Sequence[int]]]) -> list[dict[str, Any]]:
    """Per side: responses, median, mean, max tokens."""
    by_side: dict[str, list[int]] = {"chosen": [], "rejected": []}
    for _, _, chosen, rejected in facts:
        by_side["chosen"].extend(chosen)
        by_side["rejected"].extend(rejected)
    return [{"side": side, "responses": len(v), "median": int(median(v)), "mean": round(sum(v) / len(v)),
             "max": max(v)} for side, v in by_side.items() if v]


def subset_table(keys: Sequence[str], subsets: dict[str, tuple[str, int, int]],
                 reviewed: dict[str, tuple[list[str], int]], scope: str) -> pd.DataFrame:
    """Per subset: items, comparisons in scope, reviewed (by anyone), flips."""
    rows: dict[str, dict[str, Any]] = {}
    for key in keys:
        subset, n_c, n_r = subsets.get(key, ("", 1, 1))
        name = subset or "(none)"
        row = rows.setdefault(name, {"subset": name, "items": 0, "comparisons": 0, "reviewed": 0,
                                     "rejected better": 0})
        pairs = item_comparisons(n_c, n_r, scope)
        row["items"] += 1
        row["comparisons"] += len(pairs)
        fields, flips = reviewed.get(key, ([], 0))
        row["reviewed"] += sum(1 for i, j in pairs if f"verdict:{i}:{j}" in fields)
        row["rejected better"] += flips
    return pd.DataFrame(sorted(rows.values(), key=lambda r: r["subset"]))


def annotator_table(counts: Sequence[tuple[str, str, str, int, str]], keys: set[str] | None) -> pd.DataFrame:
    """Per annotator: verdict counts, agreement with the dataset's labels, last verdict."""
    out = []
    rows = ({"annotator": who, "value": {"verdict": verdict}, "updated_at": last}
            for who, key, verdict, n, last in counts if keys is None or key in keys for _ in range(n))
    for s in summarize(rows):
        row: dict[str, Any] = {"annotator": s.annotator, "verdicts": s.total}
        row.update({VERDICTS[name][0]: s.counts[name] for name in VERDICTS})
        row["agreement"] = s.agreement
        row["last verdict (UTC)"] = s.last_at[:19].replace("T", " ")
        out.append(row)
    return pd.DataFrame(out)


@st.cache_resource(show_spinner="Reading the token counts…", max_entries=4)
def _lengths(path: str, dataset: str, created: str, how: str, counted: int, view: tuple, head: int,
             by_subset: bool, _keys: tuple | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """The length chart's bins, the length table and the number of subsets of the view's
    items (``_keys``, given by ``view`` and ``head``), made once per count, view and
    change, then shared by the reruns (never changed)."""
    db = get_db()
    subsets = pairs_store.item_subsets(db, dataset)
    found = pairs_store.lengths(db, dataset, how, None if _keys is None else list(_keys))
    facts = [(subsets.get(k, ("",))[0], k, c, r) for k, (c, r) in found.items()]
    return length_bins(facts, by_subset), length_summary(facts), len({f[0] for f in facts})


@st.cache_resource(show_spinner="Counting the verdicts…", max_entries=4)
def _tables(path: str, dataset: str, created: str, scope: str, view: tuple, head: int,
            _keys: tuple | None) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """The subset and annotator tables and the annotators, once per view and change
    (``head``: the dataset's latest history id), shared by the reruns (never changed)."""
    db = get_db()
    subsets = pairs_store.item_subsets(db, dataset)
    listed = list(_keys) if _keys is not None else list(subsets)
    counts = pairs_store.verdict_counts(db, dataset)
    return (subset_table(listed, subsets, pairs_store.reviewed_comparisons(db, dataset), scope),
            annotator_table(counts, None if _keys is None else set(_keys)),
            sorted({c[0] for c in counts}))


def render_overview(db: Database, row: dict[str, Any], items: PairList, view: Any) -> None:
    """Length distributions, counts per subset, verdicts per annotator, TRL export, over
    the items of the view (its filters and search apply)."""
    dataset, how = row["name"], view.how
    keys = None if not items.filtered else tuple(r[1] for r in items.rows or [])
    n_items = row["items"] if keys is None else len(keys)
    st.caption(f"{n_items:,} of {row['items']:,} items (the filters and the search apply here too).")
    st.markdown("#### Response lengths")
    counted = pairs_store.counted(db, dataset, how)
    counted_words = ("o200k_base" if how == "o200k_base" else
                     "**estimates** (o200k_base is not available here)" if how == "estimate" else
                     f"the loaded model's tokenizer, {how.split(':', 1)[1]} (o200k_base is not available)")
    if counted < row["items"]:
        st.caption(f"Tokens per response need counting first: {counted:,} of {row['items']:,} items "
                   f"counted with {counted_words}. Open “Filters and sort” to count them (once, in "
                   "the background).")
    else:
        st.caption(f"Tokens per response, chosen vs rejected; counted with {counted_words}.")
        by_subset = bool(st.session_state.get("rv_o_facet"))
        path, head = str(store.default_path()), items.as_of
        bins, summary, n_subsets = _lengths(path, dataset, row["created_at"], how, counted,
                                            view.signature(), head, by_subset, keys)
        if bins:
            st.toggle("One chart per subset", key="rv_o_facet", disabled=n_subsets < 2)
            st.altair_chart(length_chart(bins, by_subset), width="stretch")
            st.dataframe(pd.DataFrame(summary), hide_index=True)
    subset_df, people, annotators = _tables(str(store.default_path()), dataset, row["created_at"],
                                            view.query.scope, view.signature(), items.as_of, keys)
    st.markdown("#### Subsets")
    st.dataframe(subset_df, hide_index=True, width="stretch")
    st.markdown("#### Verdicts per annotator")
    st.caption("Agreement = share of “Chosen better” among the verdicts that pick a side "
               "(chosen better or rejected better).")
    if people.empty:
        st.caption("No verdicts yet.")
    else:
        st.dataframe(people, hide_index=True, width="stretch", column_config={
            "agreement": st.column_config.NumberColumn(format="percent")})
    if can(signed_in(), "export"):
        render_trl_export(dataset, annotators)


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
