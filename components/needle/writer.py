"""Step 1 of the needle lab, the paper's way: needles written by an LLM.

Long-form RewardBench built its factuality needles by asking a model for a minimal
flawed rewrite of one passage of a long answer, with a harmless counterpart at the same
place in the chosen response. Here the same: the haystacks (demo essays or a preference
dataset's chosen responses) are cut to the lengths asked for, each cut is split into
equal position slots (10: the heatmap's buckets) and a passage is drawn in each, the
judge connection's model rewrites it with one false fact (or one rude sentence) and,
when that adds text, writes the harmless sentence the chosen response gets there; a
second call (the same model, or another one) checks the pair, and only verified needles
that landed in their slot are kept; with even cells, a haystack that cannot fill every
cell gives none (:func:`needlework.judges.needles.write_needles`). It runs as a background
``judge-needles`` job (progress, Cancel, cached answers) that saves the kept needles
as a needle dataset; each record carries the prompts used (its ``writer`` field).

The judge connection is the shared form (:func:`components.models.judge.render_connection`).
When a needle dataset is selected, step 2 of the page draws that form, so this section
uses its values instead of drawing it twice.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

import store
from components.callbacks import uninterrupted
from components.jobs import render_job
from components.models.judge import connection, render_connection
from components.models.template import render_needle_template
from components.state import DATASET_KEY, annotator, signed_in
from components.text import label
from needlework.jobs.runner import ACTIVE, INTERRUPTED
from needlework.judges.connection import Connection
from needlework.judges.job import latest_write_job, start_write_job
from needlework.judges.needles import ASPECTS
from needlework.needle import inputs
from needlework.needle.sites import resolve_counter
from needlework.teams.permissions import PermissionDenied, require
from store.datasets import get_dataset, list_datasets

ON = "nwr_on"
ERROR = "nwr_error"
SOURCES = {"demo": "Demo haystacks (built in)", "dataset": "Responses of a preference dataset"}
ASPECT_HELP = {
    "factuality": "false information inserted (true information in the chosen response)",
    "safety": "one sentence made rude or harmful",
}
EXPLAIN = ("As the paper built its sets: in each position slot of each haystack a passage is drawn "
           "at random, the LLM writes a true and a false version of it (the paper's prompt, the "
           "default for factuality) or rewrites it with one minimal flaw (the project's prompt, "
           "the default for safety; when the flaw adds a sentence, it also writes the harmless "
           "sentence the chosen response gets at the same place), a "
           "second call checks the pair, and only verified needles that landed in their slot are "
           "kept. Every answer is cached, so writing again asks nothing twice; each record keeps "
           "the prompts used.")


def parse_lengths(text: str) -> tuple[int, ...]:
    """``"1000, 2K"`` → ``(1000, 2000)``; ``""`` → ``()`` (each haystack whole); raises
    ``ValueError`` on anything else."""
    values = []
    for part in text.replace(";", ",").split(","):
        part = part.strip().lower()
        if not part:
            continue
        try:
            number = float(part[:-1]) * 1000 if part.endswith("k") else float(part)
        except ValueError:
            raise ValueError(f"lengths are token counts such as 1000 or 2K, not {part!r}") from None
        if number <= 0 or number != int(number):
            raise ValueError(f"lengths must be positive whole token counts, not {part!r}")
        values.append(int(number))
    return tuple(sorted(set(values)))


def default_name(db: Any, aspect: str, source: str) -> str:
    """``needles-llm-factuality-demo`` (with ``-2``, ``-3`` … when taken)."""
    base = f"needles-llm-{aspect}-{source}"
    taken = {r["name"] for r in list_datasets(db)}
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}-{k}"
    return name


@uninterrupted
def _open(name: str) -> None:
    """The Open button's callback: select the written dataset in the sidebar picker."""
    st.session_state[DATASET_KEY] = name


def _outcome(job: dict[str, Any]) -> None:
    status, result = job["display_status"], job.get("result") or {}
    if status == "done":
        kept, rejected = int(result.get("kept") or 0), int(result.get("rejected") or 0)
        words = (f"Wrote {kept} needles with {label(job['model'], 60)}: {kept} kept and {rejected} "
                 f"rejected by verification ({result.get('attempts', 0)} rewrites tried, "
                 f"{result.get('requests', 0)} requests sent, the rest from the cache)")
        short = int(result.get("short") or 0)
        if short:
            words += f"; {short} haystack cuts were too short, ran out of passages or were dropped"
        words += cells_words(result.get("cells"))
        if result.get("dataset"):
            cols = st.columns([4, 1], vertical_alignment="center")
            cols[0].success(f"{words}. Saved as {label(result['dataset'], 80)}.", icon="✅")
            cols[1].button("Open it", key="nwr_open", icon="🧵", on_click=_open,
                           args=(result["dataset"],), width="stretch",
                           disabled=st.session_state.get(DATASET_KEY) == result["dataset"],
                           help="Select the written needle set in the sidebar, to score it.")
        else:
            st.warning(f"{words}. No rewrite was verified, so nothing was saved.", icon="⚠️")
        attempts = result.get("attempts_list") or []
        if attempts:
            frame = pd.DataFrame([{"haystack": str(a.get("haystack_id", "")),
                                   "length": a.get("length"),
                                   "position slot": a.get("slot"),
                                   "passage at": (a.get("span") or [None])[0],
                                   "kept": bool(a.get("kept")), "reason": str(a.get("reason", ""))}
                                  for a in attempts])
            st.dataframe(frame, hide_index=True, width="stretch", key="nwr_attempts", height=180)
    elif status == "cancelled":
        st.warning("Writing was cancelled; the answers so far are cached. Write again to finish.",
                   icon="⏹️")
    elif status == INTERRUPTED:
        st.warning(f"Writing job {job['id']} was interrupted: the server stopped while it ran. "
                   "Write again to resume from the cache.", icon="⚠️")
    elif status == "failed":
        st.error(f"Writing failed: {label(job.get('error') or 'unknown error', 600)}", icon="🚫")


def cells_words(cells: dict[str, Any] | None) -> str:
    """``; every cell (2 lengths × 10 positions) holds 2 needles`` or the spread when the
    cells are uneven; empty without cells."""
    if not cells:
        return ""
    counts = [c for row in (cells.get("counts") or {}).values() for c in row]
    if not counts:
        return ""
    shape = f"{len(cells['counts'])} length{'s' if len(cells['counts']) != 1 else ''} × " \
            f"{cells['positions']} position{'s' if cells['positions'] != 1 else ''}"
    if cells.get("even"):
        return f"; every cell ({shape}) holds {counts[0]} needle{'s' if counts[0] != 1 else ''}"
    return (f"; cells uneven ({shape}): {min(counts)} to {max(counts)} needles per cell (tick "
            "Even cells to keep only haystacks that fill them all)")


def _haystacks(db: Any, source: str, lengths: tuple[int, ...], count: int, seed: int,
               dataset: str | None) -> list[inputs.Haystack]:
    if source == "demo":
        counter = resolve_counter()
        return inputs.demo_haystacks(count, max(lengths) if lengths else 2000, counter=counter.count,
                                     seed=seed)
    if not dataset:
        raise ValueError("pick a preference dataset for the haystacks")
    return inputs.haystacks_from_dataset(db, dataset)


def _form(db: Any) -> dict[str, Any]:
    """The writing options (haystacks, aspect, lengths, needles, verifier, name)."""
    source = st.radio("Haystacks", list(SOURCES), format_func=SOURCES.get, horizontal=True,
                      key="nwr_source")
    dataset = None
    if source == "dataset":
        prefs = [r["name"] for r in list_datasets(db) if r["kind"] == "preference"]
        dataset = st.selectbox("Preference dataset (its chosen responses)", prefs, key="nwr_pref",
                               index=0 if prefs else None)
    aspect = st.radio("Needle", ASPECTS, horizontal=True, key="nwr_aspect",
                      format_func=lambda a: f"{a}: {ASPECT_HELP[a]}")
    template, problem = render_needle_template(aspect)
    cols = st.columns([3, 1.5, 1.5, 1.5, 1])
    lengths = cols[0].text_input("Lengths (tokens)", value="1000, 2000", key="nwr_lengths",
                                 help="Each haystack is cut to each length before passages are "
                                      "drawn, as the builder cuts. Empty: each haystack whole, its "
                                      "length rounded to 1000s as its row.")
    count = cols[1].number_input("Demo haystacks", 1, 10, 2, key="nwr_count",
                                 disabled=source != "demo")
    positions = cols[2].number_input(
        "Positions", 1, 20, 10, key="nwr_positions",
        help="Equal slices of each response, a needle written in each: 10 are the heatmap's "
             "position buckets (0–10 %, 10–20 %, …); 1: anywhere.")
    per = cols[3].number_input("Needles per position", 1, 20, 1, key="nwr_per",
                               help="per haystack, length and position")
    seed = cols[4].number_input("Seed", 0, 10**6, 0, key="nwr_seed")
    even = st.checkbox("Even cells", value=True, key="nwr_even",
                       help="Keep only haystacks that fill every length × position cell, so every "
                            "heatmap cell holds the same number of needles (a haystack too short "
                            "for a length, or with a cell no passage could fill, gives none).")
    cols = st.columns([3, 3, 2], vertical_alignment="bottom")
    verifier = cols[0].text_input("Verifier model (optional)", key="nwr_verifier",
                                  placeholder="empty: the writer checks its own rewrites",
                                  help="Another model on the same server checks the rewrites.")
    name = cols[1].text_input("Save as dataset", key="nwr_name",
                              placeholder=default_name(db, aspect, source))
    replace = cols[2].checkbox("Replace a dataset of that name", key="nwr_replace")
    return {"source": source, "dataset": dataset, "aspect": aspect, "lengths": lengths,
            "count": int(count), "per": int(per), "seed": int(seed), "verifier": verifier.strip(),
            "positions": int(positions), "even": bool(even), "template": template,
            "problem": problem, "name": name.strip() or default_name(db, aspect, source), "replace": bool(replace)}


def _submit(db: Any, conn: Connection, form: dict[str, Any]) -> None:
    """Load the haystacks and start the job; a problem is kept for the page in one line."""
    try:
        require(signed_in(), "import")  # the job saves a new dataset: team mode's import permission
        lengths = parse_lengths(form["lengths"])
        if get_dataset(db, form["name"]) is not None and not form["replace"]:
            raise ValueError(f"a dataset named {form['name']} exists: change the name or tick Replace")
        haystacks = _haystacks(db, form["source"], lengths, form["count"], form["seed"],
                               form["dataset"])
        verifier = conn.with_options(model=form["verifier"]) if form["verifier"] else None
        start_write_job(db, store.default_path(), conn, form["name"], haystacks,
                        aspect=form["aspect"], per_haystack=form["per"], seed=form["seed"],
                        lengths=lengths or None, verifier=verifier, replace=form["replace"],
                        created_by=annotator() or "needle lab (LLM-written)",
                        by=signed_in(), positions=form["positions"], even=form["even"],
                        template=form["template"])
    except (ValueError, LookupError, PermissionDenied) as exc:
        st.session_state[ERROR] = str(exc)
        return
    st.session_state.pop(ERROR, None)
    st.rerun()


def render_writer(db: Any, row: dict[str, Any] | None) -> None:
    """"Write needles with an LLM": a toggle, then the judge connection (drawn here unless
    step 2 draws it, i.e. ``row`` is a selected needle dataset), the options, Write, and the
    job's progress and outcome (kept / rejected by verification, Open it)."""
    job = latest_write_job(db)
    active = job is not None and job["display_status"] in ACTIVE
    with st.container(border=True):
        on = st.toggle("Write needles with an LLM", key=ON,
                       help="Needles written by a model through the judge connection, checked by "
                            "a second call: Long-form RewardBench's way of building its sets.")
        if not on and not active:
            return
        st.caption(EXPLAIN)
        if row is None:
            conn = render_connection(expanded=False)
        else:
            try:
                conn = connection()
            except (ValueError, TypeError) as exc:
                conn = None
                st.caption(f"Set the judge connection in step 2 below first: {label(str(exc), 200)}")
            if conn is not None:
                st.caption(f"Writer: the judge connection of step 2 below: {label(conn.model, 60)} at "
                           f"{label(conn.endpoint, 80)}.")
        form = _form(db)
        go = st.button("Write needles", type="primary", icon="✍️", key="nwr_go",
                       disabled=conn is None or active or form["problem"] is not None,
                       width="stretch",
                       help="Runs on the server in the background and saves the verified needles "
                            "as a needle dataset.")
        if go and conn is not None:
            _submit(db, conn, form)
        if st.session_state.get(ERROR):
            st.error(f"Nothing started: {label(st.session_state[ERROR], 400)}", icon="🚫")
        render_job(job, _outcome, verb="Writing needles into",
                   starting="Starting: cutting the haystacks and reading the judge cache …",
                   note="Runs on the server: you can use other pages and come back. Every answer "
                        "is cached as it arrives; Cancel stops after the current call.")
