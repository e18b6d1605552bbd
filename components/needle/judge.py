"""Step 2 of the needle lab, the other way: judge the needle set with an LLM judge (pairwise
selection, each pair in both orders so position bias cancels and is reported), as a
background ``judge`` job. Its heatmap then sits beside the reward model's on one scale:
Long-form RewardBench's classifier-vs-judge comparison (its figure 4), live.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

import store
from components.jobs import render_judge_job, watch
from components.models.judge import is_demo, render_connection
from components.needle.data import COMPARE, PRIMARY
from components.state import signed_in
from components.text import label
from needlework.figures.stats_text import percent
from needlework.jobs.runner import ACTIVE, INTERRUPTED
from needlework.judges.job import latest_judge_job, start_judge_job
from needlework.judges.local import read_report, with_start_settings
from needlework.needle.labels import demo_judge_words

SEEN = "nj_seen"  # the judge job this session started or saw running (components.jobs.watch)
POLICIES = {"skip": "counted wrong", "keep-start": "cut, start kept", "keep-end": "cut, end kept"}


def _outcome(job: dict[str, Any]) -> None:
    status, result = job["display_status"], job.get("result") or {}
    if status == "done":
        st.success(f"Judged {result.get('trials', 0):,} trials ({result.get('items', 0):,} pairs in "
                   f"both orders) with {label(job['model'], 60)}: accuracy "
                   f"{percent(result.get('accuracy') or 0, space=False)}, "
                   f"{result.get('invalid', 0)} invalid answers, "
                   f"{result.get('skipped', 0)} skipped as too long. Its heatmap is below, beside "
                   "the reward model's.", icon="✅")
    elif status == "cancelled":
        st.warning("Judging was cancelled; the answers so far are cached. Judge again to finish.",
                   icon="⏹️")
    elif status == INTERRUPTED:
        st.warning(f"Judge job {job['id']} was interrupted: the server stopped while it ran. Judge "
                   "again to resume from the cache.", icon="⚠️")
    elif status == "failed":
        st.error(f"Judging failed: {label(job.get('error') or 'unknown error', 600)}", icon="🚫")


def render_needle_judging(db: Any, row: dict[str, Any]) -> str | None:
    """The judge connection, how many pairs, Judge and the job panel. Returns the run key
    of a judge job that has just finished (the page shows it beside the model's heatmap)."""
    conn = render_connection(expanded=False)
    cols = st.columns(2, vertical_alignment="bottom")
    per = int(cols[0].number_input("Pairs per length (0 = all)", 0, 100_000, 0, key="nj_per",
                                   help="Try a judge on part of the set first (a local model "
                                        "takes seconds per long prompt): that many pairs of each "
                                        "length, a seeded sample spread evenly over the needle "
                                        "positions (not the first ones, which sit early in the "
                                        "responses). A run on part of the set is kept apart from "
                                        "a full run."))
    policy = cols[1].selectbox("Prompts longer than the window", list(POLICIES), key="nj_policy",
                               format_func=lambda p: f"{p}: {POLICIES[p]}",
                               help="skip: such a trial is not sent and counts as missing (wrong); "
                                    "keep-start / keep-end: every response is cut to its share of "
                                    "the window, keeping its start or its end. Recorded with the "
                                    "run and reported.")
    job = latest_judge_job(db, row["name"])
    active = job is not None and job["display_status"] in ACTIVE
    pairs = f"{row['items']:,}" if not per else f"up to {per} per length of {row['items']:,}"
    go = st.button(f"Judge {label(row['name'], 40)} ({pairs} pairs, both orders)",
                   type="primary", icon="⚖️", key="nj_run", disabled=conn is None or active,
                   width="stretch", help="Runs on the server in the background; every answer is "
                                         "cached, so a re-run asks nothing twice.")
    if conn is not None and is_demo(conn.model):
        st.warning(demo_judge_words(read_report(conn.model)), icon="🎲")
    if go and conn is not None:
        conn = with_start_settings(conn)  # the command line's settings for this judge
        watch(start_judge_job(db, store.default_path(), conn, row["name"], mode="selection",
                              order="rotations", context_policy=policy, per_subset=per or None,
                              by=signed_in()),
              SEEN)
        st.rerun()
    return render_judge_job(job, _outcome, SEEN)


def show_beside(sets: list[Any], run_key: str | None) -> None:
    """Put the judge run ``run_key`` beside the first reward model's set (before the pickers
    are drawn)."""
    if not run_key:
        return
    judged = next((s for s in sets if s.run_key == run_key), None)
    model = next((s for s in sets if s.kind == "model"), None)
    if judged is None:
        return
    if model is not None:
        st.session_state[PRIMARY] = model.name
        st.session_state[COMPARE] = judged.name
    else:
        st.session_state[PRIMARY] = judged.name
