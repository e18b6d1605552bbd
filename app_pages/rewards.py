"""Reward model: load a model (or connect an LLM judge), score a preference dataset in the
background, see the metrics and the failures, compare two results, and follow one item's
reward token by token. See docs/rewards.md and docs/judges.md."""

import streamlit as st

st.title("🧮 Reward model")
st.caption("Load a reward model or connect an LLM judge, score a preference set, then go "
           "straight to the pairs it gets wrong and to where in the response its reward moves.")

# PyTorch and transformers take seconds to import on a server's first visit: the title first
with st.spinner("Loading the reward engine (PyTorch, transformers) …"):
    from components.state import engine

    engine()  # imported once, by the server's warm-up thread
    from components.hints import import_words
    from components.models.picker import render_model_picker
    from components.rewards.compare import render_compare, render_downloads
    from components.rewards.judge import render_judge_results, render_judging
    from components.rewards.leaderboard import render_leaderboard
    from components.rewards.results import render_failures, render_metrics, render_run_picker
    from components.rewards.scoring import render_scoring, truncation_policy
    from components.rewards.token_view import render_per_token_section
    from components.state import current_dataset, get_db, signed_in
    from components.text import label
    from needlework.rewards.results import Results, results
    from store.datasets import get_dataset, item_index

db = get_db()

st.subheader("1 · Model")
current = render_model_picker()
rm = current[1] if current else None

dataset = current_dataset()
row = get_dataset(db, dataset) if dataset else None
if row is None or row["kind"] not in ("preference", "needle"):
    st.info("Pick a preference or needle dataset in the sidebar (Long-form RewardBench, RM-Bench, "
            f"pairs), or {import_words(signed_in())}.", icon="🧮")
    st.stop()

st.subheader(f"2 · Score {label(row['name'], 80)}")
scored_now = render_scoring(current, row)

st.subheader("3 · Or judge it with an LLM")
st.caption("A generative judge behind any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, or the "
           "local demo judge) picks the best response (selection) or rates each one (scoring). "
           "Its results sit next to the reward models' below.")
finished = render_judging(db, row)

st.subheader("4 · Results")
with st.expander("Leaderboard: every run on this dataset", expanded=True):
    render_leaderboard(db, row["name"])
ref = render_run_picker(db, row["name"], rm.facts.fingerprint if rm else None,
                        prefer=f"judge:{finished}" if finished
                        else f"score:{scored_now}" if scored_now else None)
scored = results(db, row, ref.row) if ref is not None and ref.kind == "classifier" else Results()
picked = None
if ref is not None and ref.kind == "classifier":
    render_metrics(row["format"], scored.entries)
    st.markdown("**Failures**")
    picked = render_failures(row["name"], scored.failures, scored.rows)
elif ref is not None:
    render_judge_results(db, row["name"], ref.row)  # a failure opens the judge's words there
if ref is not None:
    render_downloads(row, ref)
    render_compare(db, row, ref)

st.subheader("5 · Per-token view")
render_per_token_section(db, row, rm, [i["key"] for i in item_index(db, row["name"])],
                         scored.failures, scored.rows, picked, truncation_policy())
