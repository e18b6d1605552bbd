"""Step 4's extras on the reward page: the shown result's downloads (JSONL and CSV of the
scores or answers, CSV of the figures), and a second result side by side (two reward
models, or a reward model and an LLM judge) on the items both judged.

The files are made when a button is clicked (deferred downloads), with the connection
of the run that makes them (:func:`components.state.get_db`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from components.rewards.results import review_link
from components.state import get_db
from components.text import label, render_text
from needlework.figures.paired import Paired
from needlework.figures.rewardbench2 import rows as rewardbench2_rows
from needlework.figures.stats_text import how, method_label, percent, percent_range, verdict
from needlework.judges.engine import output_entries
from needlework.judges.results import (
    jsonl,
    metrics_rows_csv,
    subset_rows,
    trials_csv,
    with_intervals,
)
from needlework.results.compare import RunRef, compare, headline_note, list_runs, outcomes
from needlework.rewards.results import (
    intervals,
    metrics_rows,
    results,
    rmbench_rows,
    scores_csv,
    scores_lines,
)
from needlework.rewards.runs import dataset_metrics
from needlework.view.picker_words import with_count
from store import judges as store_judges

NONE = "(none)"
COMPARE = "rw_compare"


def _pct(x: float | None) -> str:
    return percent(x, space=False)


def _p(paired: dict[str, Any]) -> str:
    """The paired test's p in three digits; ``–`` with no item where the two differ."""
    if not paired["first_better"] and not paired["second_better"]:
        return "– (no item differs)" if paired["n"] else "–"
    return f"{paired['p_value']:.3g}"


def _files(row: dict[str, Any], ref: RunRef) -> list[tuple[str, Callable[[], str], str, str]]:
    """(label, make, file name, mime) of the result's downloads."""
    stem = f"{row['name']}-{ref.short}".replace("/", "_").replace(" ", "_")
    if ref.kind == "judge":
        def answers() -> str:
            run = store_judges.get_run(get_db(), ref.row["run_key"]) or ref.row
            rows = store_judges.run_results(get_db(), ref.row["run_key"])
            return jsonl(output_entries(run["summary"], [r["entry"] for r in rows]))

        def trials() -> str:
            return trials_csv(store_judges.run_results(get_db(), ref.row["run_key"]))

        def figures() -> str:
            run = store_judges.get_run(get_db(), ref.row["run_key"]) or ref.row
            rows = store_judges.run_results(get_db(), ref.row["run_key"])
            return metrics_rows_csv(subset_rows(with_intervals(run["summary"],
                                                               [r["entry"] for r in rows])))

        return [("Answers JSONL", answers, f"{stem}-answers.jsonl", "application/jsonl"),
                ("Answers CSV", trials, f"{stem}-answers.csv", "text/csv"),
                ("Figures CSV", figures, f"{stem}-metrics.csv", "text/csv")]

    def entries() -> list[dict[str, Any]]:
        return results(get_db(), row, ref.row).entries

    def classifier_figures() -> str:
        scored = entries()
        found = dataset_metrics(row["format"], scored)
        bounds = intervals(row["format"], scored)
        if "rmbench" in found:
            return metrics_rows_csv(rmbench_rows(found, bounds))
        if "rewardbench2" in found:
            return metrics_rows_csv(rewardbench2_rows(found["rewardbench2"],
                                                      bounds.get("rewardbench2")))
        return metrics_rows_csv(metrics_rows(found, bounds))

    return [("Scores JSONL", lambda: jsonl(scores_lines(entries(), ref.row["model"])),
             f"{stem}-scores.jsonl", "application/jsonl"),
            ("Scores CSV", lambda: scores_csv(entries()), f"{stem}-scores.csv", "text/csv"),
            ("Figures CSV", classifier_figures, f"{stem}-metrics.csv", "text/csv")]


def render_downloads(row: dict[str, Any], ref: RunRef) -> None:
    """The result's files (made on click)."""
    cols = st.columns(3)
    for col, (text, make, name, mime) in zip(cols, _files(row, ref), strict=True):
        col.download_button(text, data=make, file_name=name, mime=mime, icon="⬇️",
                            key=f"rw_dl_{text}", on_click="ignore", width="stretch")


def render_compare(db: Any, row: dict[str, Any], ref: RunRef) -> None:
    """A second result side by side with ``ref`` (pick it; none by default)."""
    second = _picked_run(db, row, ref)
    if second is None:
        return
    both = compare(outcomes(db, row, ref), outcomes(db, row, second))
    a, b = ref.short, second.short  # dataframe headers are shown as text
    if a == b:
        a, b = f"{a} (1)", f"{b} (2)"
    _side_by_side(both, a, b)
    _method_and_differences(row, ref, second, both, a, b)


def _picked_run(db: Any, row: dict[str, Any], ref: RunRef) -> RunRef | None:
    """The run picked to compare with ``ref`` (``None``: none picked, or none there)."""
    refs = [r for r in list_runs(db, row["name"]) if r.key != ref.key]
    by_key = {r.key: r for r in refs}
    options = [NONE] + list(by_key)
    if st.session_state.get(COMPARE) not in options:
        st.session_state[COMPARE] = NONE
    other = st.selectbox("Compare with", options, key=COMPARE, disabled=not refs,
                         format_func=lambda k: k if k == NONE else with_count(by_key[k].title,
                                                                              by_key[k].items),
                         help="Another reward model's scores or an LLM judge's run on this "
                              "dataset, side by side on the items both judged.")
    if other == NONE:
        if not refs:
            st.caption("Score the dataset with a second model, or judge it with an LLM (step 3), "
                       "to compare two results side by side.")
        return None
    return by_key[other]


def _side_by_side(both: dict[str, Any], a: str, b: str) -> None:
    """The two results per subset in one table, then the verdict on the whole."""
    frame = pd.DataFrame([{"subset": r["subset"], "items": r["items"], a: _pct(r["first"]),
                           f"{a} 95 % interval": percent_range(r["first_interval"]),
                           f"{a} method": method_label(r["first_interval"]),
                           b: _pct(r["second"]),
                           f"{b} 95 % interval": percent_range(r["second_interval"]),
                           f"{b} method": method_label(r["second_interval"]),
                           f"{a} better": r["only_first"],
                           f"{b} better": r["only_second"],
                           "tied": r["tied"],
                           "test": r["paired"]["test"],
                           "p": _p(r["paired"]),
                           "significant at 5 %": "yes" if r["paired"]["significant"] else "no"}
                          for r in both["rows"]])
    st.dataframe(frame, hide_index=True, width="stretch", key="rw_compare_table")
    overall = both["rows"][-1]
    render_text(verdict(Paired(**overall["paired"]), a, b), key="rw-compare-verdict")


def _method_and_differences(row: dict[str, Any], ref: RunRef, second: RunRef,
                            both: dict[str, Any], a: str, b: str) -> None:
    """How the figures are made, each run's note, and the items where the two differ."""
    overall = both["rows"][-1]
    tests = sorted({r["paired"]["test"] for r in both["rows"]})
    st.caption("Mean per item, on the items both judged: the share of each item's comparisons "
               "each got right (one chosen response: best-of-n; several: pair by pair; a judge's "
               "invalid answer or a trial skipped as too long wrong; a needle pair judged in both "
               "orders counts half per order), with its 95 % interval "
               f"({how(*[r[k] for r in both['rows'] for k in ('first_interval', 'second_interval')])}"
               ", items resampled for a bootstrap); then on how many items each did better "
               "(a higher outcome) and on how many they are tied, and a paired test of the two: "
               "McNemar's exact test (a binomial test on the items where one is right and the "
               "other wrong) where every outcome is 0 or 1, the Wilcoxon signed-rank test on the "
               "items' differences where some are shares of trials; the difference's interval is "
               "Newcombe's paired interval with McNemar's test, a paired bootstrap with "
               f"Wilcoxon's. Test used here: {', '.join(tests)}."
               + (f" Left out: {both['only_in_first']} item(s) only {label(a, 40)} judged, "
                  f"{both['only_in_second']} only {label(b, 40)} judged." if both["only_in_first"]
                  or both["only_in_second"] else ""))
    for k, (ref_, mean) in enumerate(((ref, overall["first"]), (second, overall["second"]))):
        note = headline_note(ref_, mean, overall["items"])
        if note:
            render_text(note, key=f"rw-compare-note-{k}")
    if both["differ"]:
        with st.expander(f"Items where they differ ({len(both['differ'])})"):
            if len(both["differ"]) > 50:
                st.caption(f"The 50 most different of the {len(both['differ']):,} shown.")
            for d in both["differ"][:50]:
                review_link(row["name"], d["item"], f"{label(d['item'], 60)} · "
                            f"{label(d['subset'], 30)} · {label(a, 40)} {_pct(d['first'])}, "
                            f"{label(b, 40)} {_pct(d['second'])}")
