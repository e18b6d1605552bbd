"""Needle lab: build a needle-in-a-haystack set, score it with a reward model, see where the
model misses the needle (length × position), and present it. See docs/needle.md."""

import streamlit as st

from components.state import engine, signed_in
from components.teams.session import team_config
from needlework.teams.permissions import needle_lab_refusal

# who may open the lab and present it is a setting ([pages] needle_lab; reviewers by default)
refusal = needle_lab_refusal(signed_in(), team_config().needle_lab) if signed_in() else None
if refusal:
    st.error(refusal, icon=":material/block:")
    st.stop()

with st.spinner("Loading the reward engine (PyTorch, transformers) …"):
    engine()  # imported once, by the server's warm-up thread
    from components.models.picker import code, current_model, render_model_picker
    from components.needle.builder import render_builder
    from components.needle.cell import render_cell
    from components.needle.charts import (
        heatmap_caption,
        notes_of,
        pick_sets,
        picked_sets,
        render_findings,
        render_heatmaps,
        render_lines,
        results_of,
    )
    from components.needle.data import (
        all_sets,
        needle_records,
        newest_model_path,
        render_needle_switch,
        render_upload,
    )
    from components.needle.demo import lab_row, render_demo_note
    from components.needle.judge import render_needle_judging, show_beside
    from components.needle.presentation import (
        presenting,
        render_downloads,
        render_finding_input,
        render_present_button,
        render_presentation,
        render_title_input,
        slide_finding,
        slide_title,
    )
    from components.needle.reports import (
        open_pending_report,
        render_opened_note,
        render_report_list,
        render_save_report,
    )
    from components.needle.scoring import render_needle_scoring
    from components.needle.writer import render_writer
    from components.state import current_dataset, get_db
    from needlework.needle.headline import headlines
    from needlework.needle.slide_meta import default_title as default_title_of

db = get_db()
row, demo_instead = lab_row(db, current_dataset())  # the seeded demo set when no needle set is picked
records = needle_records(db, row)
loaded = current_model()
fingerprint = loaded[1].facts.fingerprint if loaded else None
sets = all_sets(db, row, records)

default_title = default_title_of(records)
if presenting():
    render_presentation(picked_sets(sets, fingerprint), slide_title(row, default_title), records,
                        row)
    st.stop()

st.title("🔎 Needle lab")
st.caption("Does the reward model notice one bad sentence (the needle) hidden in a long answer "
           "(the haystack)? Build pairs that differ only by the needle, score them, and see "
           "accuracy by response length × needle position. New here: press the three blue "
           "buttons in order (Build, Load model, Score).")
render_report_list(db)  # saved reports: open, rename, delete

st.subheader("1 · Build a needle set")
st.caption("Cut long responses to a few lengths and insert a needle at evenly spaced positions: "
           "rejected gets the harmful (or false) phrase, chosen the harmless (or true) one.")
render_builder(db, current_dataset(), collapsed=row is not None)
render_writer(db, row)  # or: needles written by an LLM, verified (components/needle/writer.py)

st.subheader("2 · Score it with a reward model")
st.caption("The model scores both responses of every pair; it is right when chosen scores "
           "strictly higher. Runs in the background, cached, and resumable.")
current = render_model_picker(newest_model_path(sets))  # opens with the run's own model
if row is None:
    st.info("Build a needle set in step 1, or pick a needle dataset in the sidebar.", icon="🧵")
    render_needle_switch(db, None)
    running = False
else:
    st.markdown(f"**Needle dataset:** {code(row['name'])} · {row['items']:,} pairs")
    running = render_needle_scoring(db, current, row)
    render_needle_switch(db, row["name"])

finished = None
if row is not None:
    st.markdown("**… or judge it with an LLM**, to compare a generative judge with the reward "
                "model on the same needles (Long-form RewardBench's figure 4).")
    finished = render_needle_judging(db, row)

st.subheader("3 · Where does it miss the needle?")
st.caption("Accuracy per length and needle position; click a cell for its pairs, then a pair for "
           "its reward token by token (or a judge's own words) with the needle marked.")
render_demo_note(row, demo_instead, current_dataset(), records)
render_upload(records, expanded=not sets)
sets = open_pending_report(db, row, records, all_sets(db, row, records))
render_opened_note(row)
if not sets:
    st.caption("No results yet: score the needle dataset (step 2) or upload a scores file.")
    st.stop()
show_beside(sets, finished)
chosen = pick_sets(sets, fingerprint)
frame = results_of(chosen)
clicked = render_heatmaps(chosen)
heatmap_caption(chosen)
render_findings(frame, notes_of(chosen))
if clicked is not None:
    render_cell(*clicked, records)
st.markdown("**Accuracy against needle position**, one line per length")
render_lines(chosen)

st.subheader("4 · Present and share")
st.caption("Presentation mode shows one slide that fits the screen: the title, the finding in "
           "one line, the heatmap and how sparse it is, in large type. The slide's files (16:9 "
           "PNG and PDF, PPTX) are made when you click.")
render_title_input(row, default_title)
render_finding_input(row, "; ".join(headlines(frame)))
render_present_button()
render_downloads(chosen, row["name"] if row else "needle", "nw_dl", slide_title(row, default_title),
                 row, columns=4)
render_save_report(row, chosen, slide_title(row, ""), slide_finding(row))
