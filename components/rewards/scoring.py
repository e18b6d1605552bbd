"""Step 2 of the reward page: the length check, the Score button and the scoring job.

The page submits a ``score`` job (:mod:`needlework.rewards.job`) and shows the newest
job of the dataset (:func:`components.jobs.render_job`: progress and Cancel while it
runs, then the outcome below). Every batch is written to the score cache as it
finishes, so a cancelled or interrupted run keeps its scores and a new run resumes
where it stopped.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

import store
from components.jobs import finished_here, render_job, watch
from components.state import get_db, signed_in
from components.text import label
from needlework.jobs.runner import ACTIVE, INTERRUPTED
from needlework.rewards.job import latest_scoring_job, start_scoring
from needlework.rewards.lengths import LengthReport, cached_length_report
from needlework.rewards.loading import RewardModel
from needlework.rewards.registry import ModelKey
from needlework.rewards.runs import load_preferences
from needlework.words import plural

TRUNCATION = "rw_truncation"
POLICIES = {
    "skip": "skip them (no score: the item counts as wrong in best-of-n, its pairs are left out of pairwise)",
    "keep-end": "keep the end (cut the start of the text: prompt and template go first)",
    "keep-start": "keep the start (cut the end of the response)",
}


def truncation_policy() -> str:
    """The policy chosen for inputs longer than the window (``skip`` by default)."""
    return st.session_state.get(TRUNCATION) or "skip"


def reader_words(label_text: str) -> str:
    """``chosen[0]`` → ``chosen 1``: the Review page's numbering."""
    side, _, rest = label_text.partition("[")
    return f"{side} {int(rest.rstrip(']')) + 1}" if rest.rstrip("]").isdigit() else label_text


def _length_table(report: LengthReport) -> None:
    rows = [{"item": t.item, "response": reader_words(t.response), "tokens": t.n_tokens,
             "over the window by": t.n_tokens - (report.window or 0)} for t in report.too_long]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 height=min(36 * (len(rows) + 1) + 4, 260), key="rw_long_table")


def render_length_check(rm: RewardModel, row: dict[str, Any]) -> str:
    """Report the inputs longer than the model's window and ask what to do; returns the policy."""
    db = get_db()
    with st.spinner("Counting tokens …"):
        report = cached_length_report(rm, row, lambda: load_preferences(db, row["name"])[1])
    window = f"{report.window:,}" if report.window else "unknown"
    if not report.too_long:
        st.caption(f"All {report.texts:,} responses fit in the model's window of {window} tokens "
                   f"(longest: {report.longest:,} tokens with prompt and template).")
        return truncation_policy()
    st.warning(
        f"{len(report.too_long)} of {report.texts:,} responses, in {plural(report.items, 'item')}, "
        "are longer "
        f"than the model's window of {window} tokens (longest: {report.longest:,}). Nothing is "
        "cut silently: choose what to do with them. Cutting a text can remove the part that "
        "decides its reward.", icon="📏")
    _length_table(report)
    st.radio("Inputs longer than the window", list(POLICIES), key=TRUNCATION, horizontal=True,
             format_func=lambda p: f"{p}: {POLICIES[p]}")
    return truncation_policy()


def _summary(result: dict[str, Any]) -> str:
    cut = result.get("too_long", 0)
    return (f"Scored {plural(result['items'], 'item')} in {result['seconds']} s: {result['unique_texts']} "
            f"texts, {result['scored']} scored now, {result['cache_hits']} from the cache"
            + (f", {cut} longer than the window ({result['truncation']})" if cut else "") + ".")


def _finished(job: dict[str, Any]) -> None:
    status = job["display_status"]
    model = label(job["model"], 100)
    if status == "done" and job.get("result"):
        st.success(f"{_summary(job['result'])} Model: {model}.", icon="✅")
    elif status == "cancelled":
        st.warning(f"Cancelled after {job['done']} of {job['total']} texts. The scores computed so "
                   "far are cached: scoring again skips them.", icon="⏹️")
    elif status == INTERRUPTED:
        st.warning(f"Job {job['id']} ({job['done']} of {job['total']} texts) was interrupted: "
                   "the server stopped while it ran. Its scores so far are cached; score again "
                   "to resume.", icon="⚠️")
    elif status == "failed":
        st.error(f"Scoring failed: {label(job.get('error') or 'unknown error', 1500)}", icon="🚫")


SEEN = "rw_score_seen"  # the scoring job this session started or saw running


def render_scoring(current: tuple[ModelKey, RewardModel] | None, row: dict[str, Any]) -> str | None:
    """Length check, Score button and the job panel. Returns the fingerprint of the model
    whose scoring job (started or seen running here) has just finished, once, so Results
    can put its scores in front; else ``None``."""
    db = get_db()
    job = latest_scoring_job(db, row["name"])
    active = job is not None and job["display_status"] in ACTIVE
    if current is None:
        st.caption("Load a model above to score this dataset.")
    else:
        key, rm = current
        policy = render_length_check(rm, row)
        if st.button(f"Score {row['name']} ({plural(row['items'], 'item')})", type="primary",
                     key="rw_score", disabled=active, icon="▶️",
                     help="Runs in the background; texts already in the score cache are not "
                          "scored again."):
            watch(start_scoring(db, store.default_path(), key, rm, row["name"], policy,
                                by=signed_in()), SEEN)
            st.rerun()
    render_job(job, _finished)
    if job is not None and finished_here(job, SEEN):
        return (job.get("result") or {}).get("fingerprint")
    return None
