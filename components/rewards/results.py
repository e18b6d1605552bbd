"""Results of a scored dataset: which run, the metrics per subset, the failures.

Metrics follow the benchmarks' own scorers through :mod:`needlework.figures.metrics` (rules and
sources in docs/rewards.md and docs/benchmarks.md): ties count as wrong everywhere; an
item with a missing score counts wrong in best-of-n and stays in the denominator,
pairwise leaves out only the pairs with a missing score; the missing count stands next
to every headline.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st
from streamlit.errors import StreamlitAPIException

from components.callbacks import uninterrupted
from components.models.picker import code
from components.text import label
from needlework.figures.rewardbench2 import WEIGHTS
from needlework.figures.rewardbench2 import rows as rewardbench2_rows
from needlework.figures.stats_text import how, method_label, percent, percent_range, signed
from needlework.formats import RMBENCH_STYLES
from needlework.results.compare import RunRef, list_runs
from needlework.rewards.results import RMBENCH_PARTS, Failure, intervals
from needlework.rewards.runs import dataset_metrics
from needlework.view.picker_words import with_count
from needlework.words import plural, short_name
from store.datasets import get_dataset

REVIEW_PAGE = "app_pages/review.py"
TIES = ("Ties count as wrong: a chosen response must score **strictly** higher than a "
        "rejected one.")
FAILURE_PICK = "rw_failure_pick"


RUN = "rw_run"  # the RunRef key shown in Results
PICKED = "rw_run_picked"  # the key the user chose in "Results of" (else the default follows)


@uninterrupted
def _picked() -> None:
    st.session_state[PICKED] = st.session_state.get(RUN)


def render_run_picker(db: Any, dataset: str, fingerprint: str | None,
                      prefer: str | None = None) -> RunRef | None:
    """The result to show, reward-model scores or an LLM-judge run. ``prefer`` (a run that
    has just finished here: ``judge:<run key>``, or ``score:<fingerprint>`` for the newest
    scores of that model) wins once and sticks; then the user's own choice in "Results of";
    else the default, which follows the loaded model: its scores, else the newest result.
    ``None`` if the dataset has no result yet."""
    refs = list_runs(db, dataset)
    if not refs:
        st.caption("No results for this dataset yet: score it with a reward model (step 2) or "
                   "judge it with an LLM (step 3).")
        return None
    keys = [r.key for r in refs]
    by_key = {r.key: r for r in refs}
    if prefer and prefer.startswith("score:") and prefer not in by_key:
        prefer = next((r.key for r in refs if r.kind == "classifier"
                       and r.row["fingerprint"] == prefer.removeprefix("score:")), None)
    if prefer in by_key:
        st.session_state[PICKED] = prefer
    chosen = st.session_state.get(PICKED)
    st.session_state[RUN] = chosen if chosen in by_key else next(
        (r.key for r in refs if r.kind == "classifier" and r.row["fingerprint"] == fingerprint),
        keys[0])
    if len(refs) > 1:
        st.selectbox("Results of", keys, key=RUN, on_change=_picked,
                     format_func=lambda k: f"{with_count(by_key[k].title, by_key[k].items)} · "
                                           f"{by_key[k].updated_at[:16].replace('T', ' ')}")
    ref = by_key[st.session_state[RUN]]
    if ref.kind == "classifier":
        run = ref.row
        st.caption(f"Scores of {code(short_name(run['model']))} ({run['variant']}: "
                   f"{variant_words(run['variant'])}; fingerprint {code(run['fingerprint'][:12])}), "
                   f"{plural(run['items'], 'item')}, {(run['updated_at'] or '')[:16].replace('T', ' ')}.")
        row = get_dataset(db, dataset)
        if row is not None and run["items"] < row["items"]:
            st.warning(f"Partial results: {run['items']:,} of {row['items']:,} items are scored (the "
                       "run was cancelled or stopped). The figures below cover only those; score "
                       "again to finish, the scored texts come from the cache.", icon="⏸️")
    return ref


def variant_words(variant: str) -> str:
    """``fp32|full`` → ``32-bit floats, whole texts``: the run's variant in words."""
    dtype, _, view = variant.partition("|")
    words = {"fp32": "32-bit floats", "bf16": "bfloat16", "fp16": "16-bit floats",
             "auto": "the model's own precision"}.get(dtype, dtype)
    if view in ("", "full"):
        return f"{words}, whole texts"
    policy, _, size = view.partition(":")
    how = {"skip": "texts over {n} tokens skipped", "keep-end": "texts cut to their last {n} tokens",
           "keep-start": "texts cut to their first {n} tokens"}
    if policy in how and size:
        return f"{words}, {how[policy].format(n=size)}"
    return f"{words}, {view}"


def _pct(x: float | None) -> str:
    return percent(x, space=False)


def _ci(interval: dict[str, Any] | None) -> str:
    """``41.7–67.6 % (95 % Wilson)``: an interval with its method beside it."""
    return f"{percent_range(interval)} ({method_label(interval)})"


def _pair_pct(x: float | None) -> str:
    return "n/a: no pair with both scores" if x is None else _pct(x)


def bon_table(metrics: dict[str, Any], bounds: dict[str, Any] | None = None) -> pd.DataFrame:
    """Best-of-n and pairwise accuracy per subset, and an overall row, each with its 95 %
    interval (``bounds``: :func:`needlework.rewards.results.intervals`); ``missing``: items
    with a missing score (counted wrong, in ``items``)."""
    bon, pair = metrics["bon"], metrics["pairwise"]
    bounds = bounds or {}

    def ci(kind: str, subset: str | None) -> str:
        part = bounds.get(kind) or {}
        return percent_range(part.get("overall") if subset is None
                             else (part.get("subsets") or {}).get(subset))

    rows = []
    for subset, m in bon["subsets"].items():
        p = pair["subsets"].get(subset, {})
        rows.append({"subset": subset, "items": m["n"], "missing": m["missing"],
                     "best-of-n correct": m["correct"], "best-of-n accuracy": _pct(m["accuracy"]),
                     "best-of-n 95 % interval": ci("bon", subset),
                     "pairs": p.get("pairs", 0), "pairwise accuracy": _pair_pct(p.get("accuracy")),
                     "pairwise 95 % interval": ci("pairwise", subset)})
    rows.append({"subset": "overall", "items": bon["n"], "missing": bon["missing"],
                 "best-of-n correct": bon["correct"], "best-of-n accuracy": _pct(bon["accuracy"]),
                 "best-of-n 95 % interval": ci("bon", None),
                 "pairs": pair["pairs"], "pairwise accuracy": _pair_pct(pair["accuracy"]),
                 "pairwise 95 % interval": ci("pairwise", None)})
    return pd.DataFrame(rows)


MISSING_RULE = ("An item with a missing score (skipped as longer than the window, or a NaN/inf "
                "from the model) counts as **wrong** in best-of-n and stays in the denominator; "
                "pairwise accuracy leaves out only the pairs with a missing score (Long-form "
                "RewardBench's scorer, `evaluation/cal_accuracy_from_file.py`).")


def render_headline(metrics: dict[str, Any], bounds: dict[str, Any] | None = None) -> None:
    """The headline figures with the missing count beside them (and, when scores are
    missing, the scored-items-only figure, labelled as such), then each figure's
    denominator and 95 % interval in one line."""
    pair = metrics["pairwise"]
    bounds = bounds or {}
    pair_ci = (bounds.get("pairwise") or {}).get("overall")
    pair_words = (f"pairwise {_pct(pair['accuracy'])}: {pair['correct']:,} of "
                  f"{plural(pair['pairs'], 'pair')}, 95 % interval {_ci(pair_ci)} (over "
                  f"{plural((pair_ci or {}).get('n', 0), 'item')}, each with its pairs)")
    cols = st.columns(4)
    if "rewardbench2" in metrics:
        _rewardbench2_headline(metrics, bounds, cols, pair_words)
        return
    if "rmbench" in metrics:
        rm = metrics["rmbench"]
        if "error" in rm:
            return
        rm_ci = (bounds.get("rmbench") or {}).get("overall")
        title = ("RM-Bench overall" if rm["comparable"]
                 else "RM-Bench mean over " + ", ".join(rm["domains_present"]))
        cols[0].metric(title, _pct(rm["accuracy"]),
                       help=("Mean of the domain scores (chat, code, math, safety)." if rm["comparable"]
                             else rm["note"]) + f" 95 % interval {_ci(rm_ci)}.")
        cols[1].metric("items with a missing score", f"{rm['missing']:,}",
                       help="Kept in every matrix's denominator; a comparison with a missing "
                            "score is not won (RM-Bench's compute_accuracy does that with NaN).")
        cols[2].metric("pairwise accuracy", _pct(pair["accuracy"]),
                       help=f"{pair['pairs']:,} pairs with both scores; {pair['missing_pairs']:,} left out.")
        st.caption(f"RM-Bench {_pct(rm['accuracy'])} over {plural(rm['n'], 'item')}, 95 % interval "
                   f"{_ci(rm_ci)} (items resampled within their domain, domains "
                   f"averaged equally); {pair_words}. Intervals: {how(rm_ci, pair_ci)}.")
        if not rm["comparable"]:
            st.warning(f"Not comparable to RM-Bench's total: {rm['note']}.", icon="⚠️")
        return
    bon = metrics["bon"]
    bon_ci = (bounds.get("bon") or {}).get("overall")
    cols[0].metric("best-of-n accuracy", _pct(bon["accuracy"]),
                   help=f"{bon['correct']:,} of {bon['n']:,} items; items with a missing score "
                        f"count wrong. 95 % interval {_ci(bon_ci)}.")
    cols[1].metric("items with a missing score", f"{bon['missing']:,}",
                   help=f"{bon['missing_scores']:,} missing scores: counted wrong, kept in the denominator.")
    cols[2].metric("pairwise accuracy", _pct(pair["accuracy"]),
                   help=f"{pair['pairs']:,} pairs with both scores; {pair['missing_pairs']:,} left out.")
    if bon["missing"]:
        only = bon["scored_only"]
        cols[3].metric("best-of-n, scored items only", _pct(only["accuracy"]),
                       help=f"{only['correct']:,} of {only['n']:,} items whose scores are all present. "
                            "Not the benchmark figure: the headline counts the others wrong.")
    st.caption(f"Best-of-n {_pct(bon['accuracy'])}: {bon['correct']:,} of {plural(bon['n'], 'item')}, "
               f"95 % interval {_ci(bon_ci)}; {pair_words}. Intervals: {how(bon_ci, pair_ci)}, the "
               "unit the item.")


RB2_RULES = (
    "RewardBench 2 (allenai/reward-bench, `scripts/run_v2.py`): an instance of Factuality, "
    "Precise IF, Math, Safety or Focus scores 1 when its correct completion scores above the "
    "three incorrect ones, **1/k when it ties k ways at the top** (the official tie penalty), "
    "else 0; a subset's figure is the mean. Ties (`process_single_model`): "
    + " + ".join(f"{w:.2f} × {name.replace('_', ' ')}" for name, w in WEIGHTS.items())
    + ", over its `ref:N` and `tied:N` rows. Overall = the mean of the subset figures. An "
      "instance with a missing score counts 0 and stays in its subset.")


def _rewardbench2_headline(metrics: dict[str, Any], bounds: dict[str, Any], cols: Any,
                           pair_words: str) -> None:
    rb = metrics["rewardbench2"]
    if "error" in rb:
        st.error(label(rb["error"], 600))
        return
    ci = (bounds.get("rewardbench2") or {}).get("overall")
    title = ("RewardBench 2 score" if rb["comparable"]
             else "RewardBench 2: mean over " + ", ".join(rb["subsets_present"]))
    cols[0].metric(title, _pct(rb["accuracy"]),
                   help=("Mean of the six subset figures." if rb["comparable"] else rb["note"])
                        + f" 95 % interval {_ci(ci)}.")
    cols[1].metric("items with a missing score", f"{rb['missing']:,}",
                   help="Counted 0 and kept in their subset, as the official code does with NaN.")
    bon = metrics.get("bon") or {}
    cols[2].metric("best-of-n, ties wrong", _pct(bon.get("accuracy")),
                   help="Needlework's strict best-of-n on the same scores (a tie at the top "
                        "counts 0, not 1/k; Ties rows pooled): not the RewardBench 2 figure.")
    st.caption(f"RewardBench 2 {_pct(rb['accuracy'])} over {plural(rb['n'], 'item')} in "
               f"{plural(len(rb['subsets']), 'subset')}, 95 % interval {_ci(ci)} (each subset's "
               f"units resampled within it, the figures averaged); {pair_words}.")
    if not rb["comparable"]:
        st.warning(f"Not comparable to RewardBench 2's score: {rb['note']}.", icon="⚠️")


def rewardbench2_table(metrics: dict[str, Any], bounds: dict[str, Any] | None = None) -> pd.DataFrame:
    """RewardBench 2's figure per subset (its rule, counts and 95 % interval, the method
    named) and the overall mean."""
    rows = rewardbench2_rows(metrics["rewardbench2"], (bounds or {}).get("rewardbench2"))
    ci = (bounds or {}).get("rewardbench2") or {}
    shown = []
    for row in rows:
        interval = (ci.get("subsets") or {}).get(row["subset"]) or ci.get("overall")
        shown.append({"subset": row["subset"], "rule": row["rule"], "items": row["items"],
                      "missing": row["missing"], "score": _pct(row["score"]),
                      "95 % interval": f"{percent_range(interval)} ({method_label(interval)})",
                      "made of": row["counts"]})
    return pd.DataFrame(shown)


def _rm_cell(share: float | None, counts: list[int] | None, interval: dict[str, Any] | None,
             exact: bool = True) -> str:
    """``52.8 % (19/36; 36.1–69.4 %)``: a share, the comparisons behind it (``in all``
    where the share is a mean over domains) and its 95 % interval."""
    inner = []
    if counts:
        inner.append(f"{counts[0]:,}/{counts[1]:,}" + ("" if exact else " in all"))
    if interval is not None and interval.get("low") is not None:
        inner.append(percent_range(interval))
    return _pct(share) + (f" ({'; '.join(inner)})" if inner else "")


def rmbench_table(metrics: dict[str, Any], bounds: dict[str, Any] | None = None) -> pd.DataFrame:
    """RM-Bench hard / normal / easy and score per domain, each with the comparisons behind
    it and its 95 % interval (``bounds``: :func:`needlework.rewards.results.intervals`), and
    an overall row (means over domains, the comparisons counted in all)."""
    rm = metrics["rmbench"]
    ci = (bounds or {}).get("rmbench") or {}
    parts = ci.get("parts") or {}
    rows = []
    for d, m in rm["domains"].items():
        counts = m.get("counts") or {}
        row: dict[str, Any] = {"domain": d, "items": m["n"], "missing": m["missing"]}
        for key in RMBENCH_PARTS:
            row[key] = _rm_cell(m[key], counts.get(key),
                                ((parts.get(key) or {}).get("domains") or {}).get(d))
        row["score"] = _rm_cell(m["score"], counts.get("score"), None)
        row["score 95 % interval"] = percent_range((ci.get("domains") or {}).get(d))
        rows.append(row)
    overall = ("overall" if rm["comparable"]
               else f"mean over {', '.join(rm['domains_present'])} (not comparable)")
    counts = rm.get("counts") or {}
    equal = len({m["n"] for m in rm["domains"].values()}) <= 1  # then a mean is the ratio
    row = {"domain": overall, "items": rm["n"], "missing": rm["missing"]}
    for key in RMBENCH_PARTS:
        row[key] = _rm_cell(rm[key], counts.get(key), (parts.get(key) or {}).get("overall"), equal)
    row["score"] = _rm_cell(rm["accuracy"], counts.get("score"), None, equal)
    row["score 95 % interval"] = percent_range(ci.get("overall"))
    rows.append(row)
    return pd.DataFrame(rows)


def matrix_frame(matrix: list[list[float]], wins: list[list[int]] | None = None,
                 n: int | None = None) -> pd.DataFrame:
    """The 3×3 RM-Bench matrix with style names: rows chosen, columns rejected; with
    ``wins`` and ``n``, each cell's comparisons won (``75.0% (9/12)``)."""
    return pd.DataFrame([[_pct(x) + (f" ({wins[i][j]}/{n})" if wins is not None and n else "")
                          for j, x in enumerate(row)] for i, row in enumerate(matrix)],
                        index=[f"chosen {s}" for s in RMBENCH_STYLES],
                        columns=[f"rejected {s}" for s in RMBENCH_STYLES])


def _rmbench(metrics: dict[str, Any], bounds: dict[str, Any]) -> None:
    rm = metrics["rmbench"]
    if "error" in rm:
        st.error(label(rm["error"], 600))
        return
    st.dataframe(rmbench_table(metrics, bounds), hide_index=True, width="stretch", key="rw_rmbench")
    st.caption("M[i][j] = share of prompts where chosen style i scores above rejected style j. "
               "hard = above the diagonal (concise/plain chosen vs more detailed rejected), "
               "normal = diagonal, easy = below; domain score = mean of the three. Each figure "
               "with the comparisons won of those made (an item gives 3 to each of hard, "
               "normal and easy, 9 to its score) and its 95 % interval (items resampled, "
               "within their domain overall). The overall row and matrix are means over "
               "domains, as RM-Bench's own figures are.")
    names = ["all domains", *rm["domains"]] if rm.get("matrix") else list(rm["domains"])
    tabs = st.tabs(names)
    if rm.get("matrix"):
        tabs[0].dataframe(matrix_frame(rm["matrix"], rm.get("wins"), rm["n"]), width="stretch",
                          key="rw_matrix_all")
        tabs = tabs[1:]
    for tab, (domain, m) in zip(tabs, rm["domains"].items(), strict=True):
        tab.dataframe(matrix_frame(m["matrix"], m.get("wins"), m["n"]), width="stretch",
                      key=f"rw_matrix_{domain}")
    pair = metrics["pairwise"]
    st.caption(f"Pairwise accuracy over all {pair['pairs']:,} chosen × rejected pairs: "
               f"{_pct(pair['accuracy'])}.")


@st.cache_data(max_entries=8, show_spinner=False)
def _intervals(format_name: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """:func:`needlework.rewards.results.intervals`, kept for the run shown (a rerun of the
    page does not resample again)."""
    return intervals(format_name, entries)


def _every(bounds: dict[str, Any]) -> list[dict[str, Any]]:
    """Every interval of :func:`needlework.rewards.results.intervals`' answer."""
    out: list[dict[str, Any]] = []
    for part in bounds.values():
        if isinstance(part, dict):
            out.extend(x for x in [part.get("overall"), *(part.get("subsets") or {}).values(),
                                   *(part.get("domains") or {}).values()] if x)
    return out


def render_metrics(format_name: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The metrics table(s) for the entries; returns the metrics dict."""
    metrics = dataset_metrics(format_name, entries)
    bounds = _intervals(format_name, entries)
    render_headline(metrics, bounds)
    st.caption(TIES + " " + MISSING_RULE)
    if "rewardbench2" in metrics:
        if "error" not in metrics["rewardbench2"]:
            st.dataframe(rewardbench2_table(metrics, bounds), hide_index=True, width="stretch",
                         key="rw_rewardbench2")
        st.caption(RB2_RULES)
        with st.expander("Best-of-n and pairwise on the same scores (Needlework's strict rules)"):
            st.dataframe(bon_table(metrics, bounds), hide_index=True, width="stretch",
                         key="rw_metrics")
    elif "rmbench" in metrics:
        _rmbench(metrics, bounds)
    else:
        st.dataframe(bon_table(metrics, bounds), hide_index=True, width="stretch", key="rw_metrics")
        st.caption("best-of-n: an item is correct when every chosen response scores above every "
                   "rejected one; overall = mean over items. pairwise: over every (chosen, "
                   f"rejected) pair. 95 % intervals: {how(*_every(bounds))}; a bootstrap "
                   "resamples items (an item's pairs together), in a fixed order by value, so "
                   "the same scores give the same interval here and in `metrics --json`.")
    return metrics


def review_query(dataset: str, item: str, pair: tuple[int, int] | None = None) -> dict[str, str]:
    """The Review page's query for ``item`` (and the comparison ``pair``, 0-based (chosen
    i, rejected j), sent as ``i=I+1&j=J+1``: the reader's numbering), each parameter once."""
    query = {"dataset": dataset, "item": item}
    if pair is not None:
        query |= {"i": str(pair[0] + 1), "j": str(pair[1] + 1)}
    return query


def review_link(dataset: str, item: str, text: str = "Review this pair",
                pair: tuple[int, int] | None = None) -> None:
    """A page link to the Review page opened on ``item`` (:func:`review_query`); plain
    text while that page is absent."""
    query = review_query(dataset, item, pair)
    try:
        st.page_link(REVIEW_PAGE, label=text, icon="⚖️", query_params=query)
    except StreamlitAPIException:  # the review page is not in the navigation
        st.caption(f"Review page not available: open item {label(item, 80)} there later.")


def worst_words(f: Failure, s: dict[str, Any]) -> str:
    """``chosen 1 (0.120) ≤ rejected 2 (0.480)``: the failing comparison, numbered as the
    Review page numbers it."""
    i, j = f.worst
    if f.margin is None:
        return f"{f.missing} missing score(s): counted wrong"
    return (f"chosen {i + 1} ({s['chosen_scores'][i]:.3f}) ≤ "
            f"rejected {j + 1} ({s['rejected_scores'][j]:.3f})")


def _failure_frame(fails: list[Failure], scores: dict[str, dict[str, Any]]) -> pd.DataFrame:
    rows = []
    for f in fails:
        rows.append({"item": f.item, "subset": f.subset,
                     "margin": None if f.margin is None else signed(f.margin, 4),
                     "failing comparison": worst_words(f, scores[f.item]),
                     "wrong pairs": f"{f.beaten}/{f.pairs}"})
    return pd.DataFrame(rows)


def render_failures(dataset: str, fails: list[Failure],
                    scores: dict[str, dict[str, Any]]) -> str | None:
    """The failures, worst margin first; a row click picks it (returned) for the per-token view."""
    if not fails:
        st.success("No failures: every chosen response scores above every rejected one.", icon="🎯")
        return None
    unscored = sum(f.margin is None for f in fails)
    st.caption(f"{len(fails)} item(s) counted wrong: a rejected response scored at least as high "
               "as a chosen one (margin = lowest chosen − highest rejected; 0 is a tie)"
               + (f", or a score is missing ({unscored}, listed last)" if unscored else "")
               + ". Responses are numbered from 1, as on the Review page. Click a row to see it "
                 "per token below.")
    event = st.dataframe(_failure_frame(fails, scores), hide_index=True, width="stretch",
                         on_select="rerun", selection_mode="single-row", key="rw_failures",
                         height=min(36 * (len(fails) + 1) + 4, 320))
    picked_rows = event.selection.rows if event is not None else []
    picked = fails[picked_rows[0]].item if picked_rows else None
    with st.expander(f"Open failures in Review pairs ({min(len(fails), 50)} links)"):
        st.caption("Each link opens the failing comparison on the Review page.")
        for f in fails[:50]:
            what = ("missing score" if f.margin is None
                    else f"chosen {f.worst[0] + 1} vs rejected {f.worst[1] + 1}, margin "
                    f"{signed(f.margin, 3)}")
            review_link(dataset, f.item, f"{label(f.item, 60)} · {label(f.subset, 30)} · {what}",
                        pair=f.worst)
    return picked
