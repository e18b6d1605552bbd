"""Step 2 of the needle lab: score the needle dataset with the loaded model, as a background
job (the reward page's progress and Cancel), and show what prefix reuse saved."""

from __future__ import annotations

from typing import Any

import streamlit as st

import store
from components.jobs import render_job
from components.state import signed_in
from components.text import label
from needlework.figures.stats_text import percent
from needlework.jobs.runner import ACTIVE, INTERRUPTED
from needlework.needle.job import latest_needle_job, start_needle_job
from needlework.rewards.loading import RewardModel
from needlework.rewards.registry import ModelKey

REUSE = {
    "auto": "auto: reuse when it gives the same scores and is faster (checked on one pair)",
    "on": "on: reuse whenever the scores agree",
    "off": "off: score every text in full",
}


def _status_line(job: dict[str, Any]) -> None:
    """One line for a finished job: done, cancelled, interrupted or failed."""
    status, result = job["display_status"], job.get("result") or {}
    model = label(job["model"], 100)
    stats = result.get("stats") or {}
    if status == "done":
        st.success(f"Scored {result['scored_records']:,} of {result['records']:,} needle pairs in "
                   f"{stats.get('seconds', 0):.1f} s with {model}: {stats.get('scored', 0):,} scored "
                   f"now, {stats.get('cached', 0):,} from the cache. The charts are below.", icon="✅")
    elif status == "cancelled":
        done = result.get("scored_records", 0)
        st.warning(f"Cancelled after {done:,} of {result.get('records', '?')} pairs. Their scores are "
                   "cached and charted below; score again to finish the rest.", icon="⏹️")
    elif status == INTERRUPTED:
        st.warning(f"Job {job['id']} was interrupted: the server stopped while it ran. The scores so "
                   "far are cached; score again to resume.", icon="⚠️")
    elif status == "failed":
        st.error(f"Scoring failed: {label(job.get('error') or 'unknown error', 1500)}", icon="🚫")


def render_reuse(stats: dict[str, Any]) -> None:
    """Tokens scored, forwarded and saved by shared-prefix reuse, and why reuse was on or off."""
    texts, saved = int(stats.get("tokens_texts", 0)), int(stats.get("tokens_saved", 0))
    if texts == 0:
        st.caption("Everything came from the score cache: nothing was recomputed.")
        return
    cols = st.columns(4)
    cols[0].metric("Text tokens scored", f"{texts:,}", help="Tokens of every text a plain run computes.")
    cols[1].metric("Tokens forwarded", f"{int(stats.get('tokens_forwarded', 0)):,}",
                   help="What the model actually ran (the reuse check runs one pair both ways).")
    cols[2].metric("Saved by prefix reuse", percent(saved / texts, digits=0, space=False), help=f"{saved:,} prefix tokens "
                   "computed once for both sides instead of twice.")
    cols[3].metric("Speed", f"{float(stats.get('tokens_per_second', 0)):,.0f} tok/s")
    if stats.get("prefix_reuse"):
        st.caption(f"Shared-prefix reuse was on for {stats.get('reuse_records', 0):,} pairs: the "
                   "text before the needle is identical in both responses, so it ran once. "
                   + (f"Check: {label(stats['reuse_check'], 200)}." if stats.get("reuse_check") else ""))
    else:
        note = stats.get("reuse_note") or "off"
        st.caption(f"Shared-prefix reuse: {label(note, 400)}. (On a CPU a small, attention-bound "
                   "model such as the demo model gains nothing from it; large models and GPUs do.)")


def render_outcome(job: dict[str, Any]) -> None:
    """A finished job: its status line and the prefix-reuse figures."""
    _status_line(job)
    result = job.get("result") or {}
    if result.get("stats"):
        render_reuse(result["stats"])
    if result.get("too_long_count"):
        st.warning(f"{result['too_long_count']} pair(s) are longer than the model's window and were "
                   "skipped (not cut): they have no score and count as wrong in the charts.", icon="📏")


def render_needle_scoring(db: Any, current: tuple[ModelKey, RewardModel] | None,
                          row: dict[str, Any]) -> bool:
    """Reuse mode, the Score button and the job panel; True while a job runs."""
    job = latest_needle_job(db, row["name"])
    active = job is not None and job["display_status"] in ACTIVE
    if current is None:
        st.caption("Press **Load model** above (the demo model is filled in), then score.")
    else:
        key, rm = current
        cols = st.columns([3, 2], vertical_alignment="bottom")
        reuse = cols[0].radio("Shared-prefix reuse", list(REUSE), format_func=REUSE.get, key="nw_reuse",
                              help="Chosen and rejected share every token before the needle; that "
                                   "prefix can run once for both. The scores are the same.")
        if cols[1].button(f"Score {label(row['name'], 50)} ({row['items']:,} pairs)", type="primary",
                          icon="▶️", key="nw_score", disabled=active, width="stretch",
                          help="Runs on the server in the background; pairs already in the score "
                               "cache are not scored again."):
            start_needle_job(db, store.default_path(), key, rm, row["name"], reuse,
                             by=signed_in())
            st.rerun()
    render_job(job, render_outcome)
    return active
