"""Step 3 of the reward page: judging the dataset with an LLM judge, and a judge run's
results in step 4 (accuracy and invalid rate per subset, position bias, the failures with
the judge's own words).

The run is a ``judge`` job (:mod:`needlework.judges.job`): the page submits it with the
connection as the job's input (its key, if any, never stored) and draws the newest judge
job of the dataset with :func:`components.jobs.render_job`. Every answer is cached as it
arrives, so a cancelled or interrupted run resumes where it stopped.
"""

from __future__ import annotations

from typing import Any, Final

import pandas as pd
import streamlit as st

import store
from components.jobs import render_judge_job, watch
from components.models.judge import (
    is_demo,
    render_connection,
    render_judge_estimate,
    spent_words,
)
from components.models.template import render_judge_template, render_run_templates
from components.rewards.results import review_link
from components.state import get_db, signed_in
from components.text import label, render_text
from needlework.figures.lines import judge_interval_words
from needlework.figures.stats_text import how, method_label, percent, percent_range
from needlework.jobs.runner import ACTIVE, INTERRUPTED
from needlework.judges.connection import Connection
from needlework.judges.job import latest_judge_job, start_judge_job
from needlework.judges.local import mode_refusal
from needlework.judges.results import (
    JudgeFailure,
    bias_table,
    failed_requests,
    failure_line,
    failures,
    member_words,
    provider_defaults,
    scoring_failures,
    selection_words,
    subset_rows,
    with_intervals,
)
from needlework.words import short_name
from store import judges as store_judges
from store.datasets import item_index

BOOTSTRAP_SHOWN = {"method": "bootstrap"}  # how() names the bootstrap's resamples and seed
MODES = {
    "selection": "selection: the judge sees all responses and names the best (the paper's headline mode)",
    "scoring": "scoring: the judge rates each response alone, 0–10 (ties count wrong)",
}
ORDERS = {
    "shuffle": "one shuffled order per item (seeded, recorded)",
    "rotations": "every rotation: each response shown in every position (measures position bias)",
}
POLICIES = {
    "skip": "skip them (not sent; counted as skipped)",
    "keep-start": "keep the start of each response (cut the end, marked)",
    "keep-end": "keep the end of each response (cut the start, marked)",
}
#: The choices in a few words (the select is narrow at 1024 px); POLICIES in its help.
POLICY_WORDS = {"skip": "skip them", "keep-start": "keep the start", "keep-end": "keep the end"}
KEEP: Final = "session"  # the run's options are kept when the user leaves the page and comes back
SEEN = "rj_seen"  # the judge job this session started or saw running (components.jobs.watch)


def _pct(x: float | None) -> str:
    return percent(x, space=False)


def _options(row: dict[str, Any], subsets: list[str]) -> dict[str, Any]:
    """Mode, order, seed, context policy and which items; returns the job options."""
    needle = row["kind"] == "needle"
    cols = st.columns([3, 3])
    mode = "selection" if needle else cols[0].radio("Mode", list(MODES), key="rj_mode",
                                                    format_func=MODES.__getitem__, persist_state=KEEP)
    if needle:
        cols[0].caption("Needle pairs are judged in both orders (A/B and B/A), so position "
                        "bias cancels in the accuracy and is reported.")
        order = "rotations"
    elif mode == "selection":
        order = cols[1].radio("Order of the responses", list(ORDERS), key="rj_order",
                              format_func=ORDERS.__getitem__, persist_state=KEEP)
    else:
        order = "shuffle"
        cols[1].caption("Scoring shows one response at a time: there is no order to choose.")
    cols = st.columns([1, 3, 2, 2])
    seed = int(cols[0].number_input("Seed", 0, 10**6, 0, key="rj_seed", persist_state=KEEP,
                                    disabled=order != "shuffle" or mode != "selection",
                                    help="The shuffle's seed; recorded with the run."))
    policy = cols[1].selectbox("Prompts longer than the judge's window", list(POLICIES),
                               key="rj_policy", persist_state=KEEP,
                               format_func=POLICY_WORDS.__getitem__,
                               help="Never cut silently: every cut or skip is listed with the "
                                    "run, and the policy is recorded. "
                                    + " ".join(f"{POLICY_WORDS[p]}: {POLICIES[p]}."
                                               for p in POLICIES))
    picked = cols[2].multiselect("Subsets", subsets, key="rj_subsets", placeholder="all")
    per = int(cols[3].number_input("Items per subset (0 = all)", 0, 100_000, 0, key="rj_per",
                                   persist_state=KEEP,
                                   help="Try the judge on a few items of each subset first: "
                                        "a run on part of the set is kept apart from a full run."))
    return {"mode": mode, "order": order, "seed": seed, "context_policy": policy,
            "subsets": picked or None, "per_subset": per or None}


def _outcome(job: dict[str, Any]) -> None:
    """A finished judge job in one line (the figures are in Results below)."""
    status, result = job["display_status"], job.get("result") or {}
    model = label(job["model"], 80)
    if status == "done":
        acc, rate = result.get("accuracy"), result.get("invalid_rate")
        st.success(f"Judged {result.get('trials', 0):,} trials of {result.get('items', 0):,} items "
                   f"with {model}: accuracy {_pct(acc)} per "
                   f"{'trial' if result.get('mode', 'selection') == 'selection' else 'item'}, invalid answers {_pct(rate)}, "
                   f"{result.get('skipped', 0)} skipped as too long; {result.get('sent', 0):,} "
                   f"requests sent, {result.get('cached', 0):,} answers from the cache. The figures "
                   "are under Results.", icon="✅")
        if result.get("failed"):
            st.warning(f"{result['failed']:,} requests failed (refused, timed out or a server "
                       "error): no answer, left out of the figures and asked again by the next "
                       "run. Their reasons are under Results.", icon="⚠️")
        if spent := spent_words(get_db(), result.get("run_key")):
            st.caption(f"💰 {label(spent, 400)}")
    elif status == "cancelled":
        st.warning("Judging was cancelled. The answers received are cached: run it again to "
                   "finish (nothing already answered is asked again).", icon="⏹️")
    elif status == INTERRUPTED:
        st.warning(f"Judge job {job['id']} was interrupted: the server stopped while it ran. The "
                   "answers so far are cached; run again to resume.", icon="⚠️")
    elif status == "failed":
        st.error(f"Judging failed: {label(job.get('error') or 'unknown error', 600)}", icon="🚫")


def render_judging(db: Any, row: dict[str, Any]) -> str | None:
    """The connection, the run's options, Run and the job panel. Returns the run key of a
    judge job that has just finished (to show it in Results), else ``None``."""
    conn = render_connection(expanded=False)
    subsets = sorted({i["subset"] for i in item_index(db, row["name"]) if i["subset"]})
    options = _options(row, subsets)
    options["template"], problem = render_judge_template(options["mode"],
                                                         conn.model if conn is not None else "")
    job = latest_judge_job(db, row["name"])
    active = job is not None and job["display_status"] in ACTIVE
    refusal = mode_refusal(conn.model, options["mode"]) if conn is not None else None
    if refusal is not None:  # said before the run, not after 36 invalid answers
        st.warning(f"{refusal[0].upper()}{refusal[1:]}.", icon="🚫")
        problem = problem or refusal
    if conn is not None and not active and problem is None:
        render_judge_estimate(db, conn, row["name"], options)
    cols = st.columns([2, 3], vertical_alignment="center")
    go = cols[0].button(f"Judge {label(row['name'], 40)}", type="primary", icon="⚖️", key="rj_run",
                        disabled=conn is None or active or problem is not None,
                        width="stretch",
                        help="Runs on the server in the background; answers already in the "
                             "judge cache are not asked again.")
    if conn is None:
        cols[1].caption("To judge: complete the judge connection above (it says what is "
                        "missing).")
    elif is_demo(conn.model):
        cols[1].caption("With the demo judge: small sets first (items per subset: 1–2). It "
                        "answers safety needles well and most real preference prompts with "
                        "invalid answers, which count wrong.")
    if go and conn is not None:
        watch(start(db, conn, row["name"], options), SEEN)
        st.rerun()
    return render_judge_job(job, _outcome, SEEN)


def start(db: Any, conn: Connection, dataset: str, options: dict[str, Any]) -> int:
    """Submit and start the judge job (with the command line's settings for this judge where
    the form holds the generic default, so a run cached by one is found by the other)."""
    from needlework.judges.local import with_start_settings  # noqa: PLC0415

    return start_judge_job(db, store.default_path(), with_start_settings(conn), dataset,
                           by=signed_in(), **options)


# -- a judge run in Results -----------------------------------------------------------------


def _bias(summary: dict[str, Any]) -> None:
    rows = bias_table(summary)
    if not rows:
        st.caption("Position bias is measured by runs in every rotation (step 3, Order).")
        return
    st.markdown("**Position bias**")
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="rj_bias")
    spread = [b.get("spread") for b in (summary.get("position_bias") or {}).values()
              if b.get("spread") is not None]
    st.caption("Accuracy when the chosen response was shown as A, B, …: equal figures mean the "
               "position does not matter; spread = highest − lowest"
               + (f" (here {percent(max(spread), space=False)})" if spread else "")
               + f"; each cell holds its trial count and {how()} interval"
               + ". Answers naming each position: an unbiased judge spreads them evenly. "
                 "Consistency: share of items whose rotations all named the same response. "
                 "One row per group size; a group of 2 responses has no position C (its cells "
                 "say so).")


def _judge_words(raw: str | None, key: str, reasoning: str | None = None) -> None:
    st.caption("The judge's own words:")
    render_text(raw if raw is not None else "(no answer)", mono=True, box=True, max_height=220,
                key=key)
    if reasoning:
        with st.expander("Its reasoning before the answer (kept apart, not read for the verdict)"):
            render_text(reasoning, mono=True, box=True, max_height=320, key=f"{key}-reasoning")


def _selection_failures(dataset: str, fails: list[JudgeFailure]) -> str | None:
    frame = pd.DataFrame([{"item": f.item, "subset": f.subset, "trial": f.trial + 1,
                           "verdict": f.verdict, "order shown": f.order_words,
                           "opens": f.comparison} for f in fails])
    st.caption(f"{len(fails)} wrong trial(s): the judge named a rejected response, or its answer "
               "could not be read (invalid, counted wrong). Responses are numbered from 1, as on "
               "the Review page; the letters are the order the judge saw. Click a row for the "
               "judge's own words.")
    event = st.dataframe(frame, hide_index=True, width="stretch", on_select="rerun",
                         selection_mode="single-row", key="rj_failures",
                         height=min(36 * (len(fails) + 1) + 4, 320))
    picked = event.selection.rows[0] if event is not None and event.selection.rows else 0
    f = fails[picked]
    cols = st.columns([3, 2])
    with cols[0]:
        st.markdown(f"**{label(f.item, 60)}** · trial {f.trial + 1} · {label(f.verdict, 200)}")
        _judge_words(f.raw, "rj-words", f.reasoning)
    with cols[1]:
        st.caption(f"Shown as: {f.order_words}.")
        review_link(dataset, f.item, f"Open {f.comparison} in Review pairs", pair=f.pair)
    return f.item


def _scoring_failures(dataset: str, wrong: list[dict[str, Any]]) -> str | None:
    frame = pd.DataFrame([{"item": w["item"], "subset": w["subset"],
                           "failing comparison": f"chosen {w['pair'][0] + 1} vs rejected {w['pair'][1] + 1}",
                           "ratings": ", ".join(
                               f"{member_words(k)}: "
                               + ("skipped" if a["skipped"] else "invalid" if not a["valid"]
                                  else f"{a['score']:g}")
                               for k, a in sorted(w["answers"].items()))} for w in wrong])
    st.caption(f"{len(wrong)} item(s) wrong: a rejected response rated at or above a chosen one, "
               "or a rating could not be read (counted wrong). Responses are numbered from 1, as "
               "on the Review page; click a row for the judge's words.")
    event = st.dataframe(frame, hide_index=True, width="stretch", on_select="rerun",
                         selection_mode="single-row", key="rj_failures",
                         height=min(36 * (len(wrong) + 1) + 4, 320))
    picked = event.selection.rows[0] if event is not None and event.selection.rows else 0
    w = wrong[picked]
    i, j = w["pair"]
    cols = st.columns(2)
    for col, side, k in ((cols[0], "chosen", i), (cols[1], "rejected", j)):
        answer = w["answers"].get(f"{side}[{k}]") or {}
        with col:
            st.markdown(f"**{side} {k + 1}**: " + ("invalid" if answer.get("valid") is False
                                                  else f"rated {answer.get('score')}"))
            _judge_words(answer.get("raw"), f"rj-words-{side}", answer.get("reasoning"))
    review_link(dataset, w["item"], f"Open chosen {i + 1} vs rejected {j + 1} in Review pairs",
                pair=w["pair"])
    return w["item"]


def _key_words(described: dict[str, Any]) -> str:
    """Where the run's key came from, in words (never the key)."""
    if described.get("key_in_memory"):
        return "key from a Streamlit secret"
    if described.get("key_env"):
        return f"key from ${described['key_env']}"
    return "no key"


def _not_answered(summary: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """The failed requests (kept out of every figure) with the endpoint's sentence, the
    parameters left to the provider's default, and the answers cut off at the length
    limit: each in plain words beside the figures."""
    if (line := failure_line(summary)) is not None:
        st.warning(label(f"{line}. A failed request has no answer: it is kept out of the "
                         "accuracy (numerator and denominator) and of every figure below, "
                         "and the next run asks it again.", 900), icon="⚠️")
        lost = failed_requests(rows)
        with st.expander(f"Failed requests ({len(lost):,})"):
            st.dataframe(pd.DataFrame(lost), hide_index=True, width="stretch",
                         key="rj_failed")
    for words in provider_defaults(summary):
        st.info(label(f"{words}: the endpoint refused the value as unsupported, so every "
                      "request of this run went without it.", 400), icon="ℹ️")
    if summary.get("cut_off"):
        st.warning(label(f"{summary['cut_off']:,} answers were cut off at the length limit "
                         "(finish reason: length): raise Max tokens (a reasoning model's "
                         "thinking counts against it).", 400), icon="✂️")


def render_judge_results(db: Any, dataset: str, run: dict[str, Any]) -> str | None:
    """A judge run: headline, the table per subset, position bias, the failures (a row
    opens the judge's words and the comparison in Review). Returns the picked item."""
    rows = store_judges.run_results(db, run["run_key"])
    summary = with_intervals(run.get("summary") or {}, [r["entry"] for r in rows])
    _judge_headline(run, summary, rows)
    _subset_table(summary)
    if summary.get("mode") == "selection":
        _bias(summary)
    return _judge_failures(dataset, summary, rows)


def _judge_headline(run: dict[str, Any], summary: dict[str, Any],
                    rows: list[dict[str, Any]]) -> None:
    """The headline metrics, what was not answered, the captions that say how the accuracy
    is counted and which judge ran how, and the run's prompt templates."""
    options = run.get("options") or {}
    selection = summary.get("mode") == "selection"
    unit = "trial" if selection else "item"
    bon = (summary.get("metrics") or {}).get("bon") or {}
    overall = (summary.get("intervals") or {}).get("overall") or {}
    # the method named once, as `judge` prints it (figures_text.judge_interval_words)
    method = judge_interval_words(overall, (summary.get("intervals") or {}).get("trials_per_item"),
                                  selection)
    cols = st.columns(4)
    cols[0].metric(f"accuracy (per {unit})", _pct(summary.get("accuracy")),
                   help=f"{bon.get('correct', 0):,} of {bon.get('n', 0):,} {unit}s right, judged by "
                        "the classifier metrics' rules: an invalid answer counts wrong, a trial "
                        "skipped as too long counts wrong and stays in the denominator. 95 % "
                        f"interval {percent_range(overall)} ({method}).")
    cols[1].metric("invalid answers", _pct(summary.get("invalid_rate")),
                   help=f"{summary.get('invalid', 0)} of {summary.get('answered', 0)} answers could "
                        "not be read as a verdict.")
    cols[2].metric("skipped (too long)", f"{summary.get('skipped', 0):,}",
                   help=f"Context policy: {summary.get('context_policy')}; window "
                        f"{summary.get('context_window') or 'unknown'}.")
    cols[3].metric("requests / from cache", f"{summary.get('requests', 0):,} / {summary.get('cached', 0):,}")
    _not_answered(summary, rows)
    st.caption(f"Accuracy per {unit}: {bon.get('correct', 0):,} of {bon.get('n', 0):,} {unit}s "
               f"right; 95 % interval {percent_range(overall)} ({method})."
               + (" Items have different numbers of trials here, so this figure weighs an item by "
                  "its trials; Compare (below) gives every item the same weight."
                  if (summary.get("intervals") or {}).get("trials_per_item") == "unequal" else ""))
    st.caption(f"Judge {label(short_name(run['model']), 60)} at {label(run['endpoint'], 80)} · "
               f"{summary.get('mode')} · "
               + (f"order: {ORDERS.get(str(summary.get('order')), summary.get('order'))}"
                  + (f", seed {summary['seed']}" if summary.get("seed") is not None else "") + " · "
                  if selection else "")
               + f"context policy {summary.get('context_policy')} · prompts "
               f"{summary.get('prompt_version')} · " + _key_words(options.get("connection") or {})
               + (f" · {selection_words(summary['selection'])}" if summary.get("selection") else ""))
    stored = summary.get("template") or options.get("template")
    render_run_templates({summary.get("mode") or "prompt": stored} if stored else None,
                         key=f"rj_tpl_{run['run_key']}")


def _subset_table(summary: dict[str, Any]) -> None:
    """The figures per subset, each accuracy with its interval and method."""
    selection = summary.get("mode") == "selection"
    frame = pd.DataFrame(subset_rows(summary))
    frame.insert(frame.columns.get_loc("accuracy") + 1, "95 % interval",
                 [percent_range({"low": lo, "high": hi}) for lo, hi in zip(frame["low"], frame["high"],
                                                                           strict=True)])
    frame["method"] = [method_label({"method": m}) if isinstance(m, str) else "–"
                       for m in frame["method"]]
    frame.insert(frame.columns.get_loc("95 % interval") + 1, "method", frame.pop("method"))
    frame = frame.drop(columns=["low", "high"])
    frame["accuracy"] = [_pct(x) for x in frame["accuracy"]]
    frame["invalid rate"] = [_pct(x) if x is not None and x == x else "n/a: every trial skipped"
                             for x in frame["invalid rate"]]
    st.dataframe(frame, hide_index=True, width="stretch", key="rj_metrics")
    st.caption(f"Per subset: accuracy (selection: share of trials where the judge named the chosen "
               "response; scoring: best-of-n on its ratings, ties wrong) with its 95 % interval "
               "over items and its method (Wilson's where each item is right or wrong as a "
               f"whole, or all are alike, else the bootstrap: {how(BOOTSTRAP_SHOWN)}"
               + (", an item's trials resampled together" if selection else "")
               + "), over the trials that got an answer, the invalid "
               "rate (answers that could not be read, over answered trials) and the failed "
               "requests (no answer: counted apart).")


def _judge_failures(dataset: str, summary: dict[str, Any],
                    rows: list[dict[str, Any]]) -> str | None:
    """The run's failures (a row opens the comparison in Review); the picked item."""
    st.markdown("**Failures**")
    if summary.get("mode") == "selection":
        fails = failures(rows)
        if not fails:
            st.success("No failures: the judge named the chosen response every time.", icon="🎯")
            return None
        return _selection_failures(dataset, fails)
    wrong = scoring_failures(rows)
    if not wrong:
        st.success("No failures: every chosen response rated above every rejected one.", icon="🎯")
        return None
    return _scoring_failures(dataset, wrong)
