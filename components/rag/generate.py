"""Generate answers with a model: the RAG answers page's other task.

The page asks first what to do (:func:`render_task`): evaluate answers, or generate
them. Generating takes the model connection form the page draws (the judge form shared
with the Reward model page, ``components.models.judge.render_connection``: an engine
component, so the page draws it after ``engine()`` and hands the connection here), the
answer set's name and how many questions, then **Generate answers** runs the
``rag-generate`` job (:mod:`needlework.rag.generate`) in the background: its progress
with Cancel (:func:`components.jobs.render_job`), then what came back, and the answers
themselves. The set is then one of the stored answer sets that **Evaluate answers**
offers.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st
from sqlite_utils import Database

import store
from components.callbacks import uninterrupted
from components.jobs import render_job
from components.rag.inputs import STORED_KEY
from components.state import get_db, signed_in
from components.text import label, render_text
from needlework.jobs.runner import ACTIVE, INTERRUPTED
from needlework.judges.connection import Connection
from needlework.judges.local import demo_folder
from needlework.rag.generate import (
    GenerateError,
    GenerateSpec,
    generated_sets,
    latest_generate_job,
    problem,
    start_generate_job,
)
from needlework.rag.generate_prompt import GENERATION_PROMPT_VERSION, generation_messages
from needlework.rag.questions import RagQuestion, load_questions
from needlework.words import short_name
from store.rag import answer_sets

EVALUATE, GENERATE = "evaluate", "generate"
TASKS = {EVALUATE: "Evaluate answers", GENERATE: "Generate answers with a model"}
TASK_KEY = "rag_task"
NAME_KEY = "rag_gen_name"
LIMIT_KEY = "rag_gen_limit"
SETTING = ("GaRAGe's generation setting (appendix B.1, in our words): the model sees the "
           "question with the date it was asked and the question's passages with their dates "
           "under [cite_N] markers; it is told to answer from them only, cite them inline, and "
           "reply with the dataset's deflection sentence when they do not answer. Every answer "
           "is cached as it arrives: Cancel keeps them, and generating again resumes without "
           "asking twice.")
DEMO_WARNING = ("The local demo judge is a tiny model trained only on the judge's selection "
                "prompt: its answers will be poor (few citations, no real content). It shows the "
                "workflow offline; point the form at a real model for real answers.")
NOTE = ("Runs on the server: you can use other pages and come back. Every answer is cached as "
        "it arrives; Cancel stops sending requests.")
STARTING = "Starting: reading the questions and the cache …"


@uninterrupted
def _evaluate(dataset: str, model: str) -> None:
    """Evaluate these answers' callback: the evaluation, with ``model`` among the stored
    answer sets picked there."""
    st.session_state[TASK_KEY] = EVALUATE
    stored = [r["model"] for r in answer_sets(get_db(), dataset)]
    picked = [m for m in st.session_state.get(STORED_KEY) or stored if m in stored]
    st.session_state[STORED_KEY] = picked + ([model] if model in stored and model not in picked
                                             else [])


def render_task() -> bool:
    """What to do on the page: evaluate answers or generate them; True for generating."""
    # no default once the state holds one: "Evaluate these answers" sets it
    default = None if TASK_KEY in st.session_state else EVALUATE
    task = st.segmented_control("Task", list(TASKS), format_func=TASKS.__getitem__, default=default,
                                required=True, key=TASK_KEY, label_visibility="collapsed",
                                persist_state="session")
    return task == GENERATE


def _is_demo(connection: Connection) -> bool:
    return connection.model.rstrip("/") == str(demo_folder())


def _outcome(job: dict[str, Any]) -> None:
    status = job["display_status"]
    result = job.get("result") or {}
    if status == "done" and result:
        calls, form = result.get("calls") or {}, result.get("form") or {}
        asked = (result.get("questions") or {}).get("asked", 0)
        st.success(
            f"{result.get('answered', 0)} of {asked} questions answered by "
            f"{label(short_name(str((result.get('generator') or {}).get('model', ''))), 60)}, "
            f"stored as the answer set {label(str(result.get('model', '')), 60)}; calls: "
            f"{calls.get('sent', 0)} sent, {calls.get('cached', 0)} from the cache, "
            f"{calls.get('refused', 0)} refused, {calls.get('timed_out', 0)} timed out, "
            f"{calls.get('failed', 0)} failed, {calls.get('too_long', 0)} too long. "
            f"Deflections {len(form.get('deflections') or [])}, citing no passage "
            f"{len(form.get('uncited') or [])}, citing a passage the question does not have "
            f"{len(form.get('bad_citations') or [])}, blank {len(form.get('blank') or [])}.",
            icon="✅")
        flagged = (result.get("non_answers") or {}).get("line")
        if flagged:
            st.warning(label(flagged, 400), icon="⚠️")
        missing = result.get("not_answered") or []
        if missing:
            st.caption(f"{len(missing)} question(s) got no answer (a failed request is left out "
                       "of the model's figures when evaluated; one over the window counts as a "
                       "failure):")
            render_text("\n".join(f"{m['item_key']}: {m['reason']}" for m in missing), mono=True,
                        box=True, max_height=160, key="rag-gen-missing")
    elif status == "cancelled":
        st.warning(f"Cancelled after {job['done']} of {job['total']} answers. The answers received "
                   "are cached: generate again to resume. No answer set was stored.", icon="⏹️")
    elif status == INTERRUPTED:
        st.warning(f"Job {job['id']} was interrupted: the server stopped while it ran. The answers "
                   "received are cached; generate again to resume.", icon="⚠️")
    elif status == "failed":
        st.error("The generation failed (answers received so far are cached):", icon="🚫")
        render_text(job.get("error") or "unknown error", mono=True, key="rag-gen-error")


def _answers_table(db: Database, dataset: str, model: str, questions: list[RagQuestion]) -> None:
    """The stored answers of ``model`` beside their questions."""
    stored = next((r for r in answer_sets(db, dataset) if r["model"] == model), None)
    if stored is None:
        return
    texts = {q.key: q.question for q in questions}
    st.markdown(f"**The answers of {label(model, 60)}**")
    st.container(key="rag-gen-answers-box").dataframe(pd.DataFrame.from_records(
        [{"question": texts.get(key, key), "answer": text, "id": key}
         for key, text in stored["answers"].items()], columns=["question", "answer", "id"]),
        hide_index=True, key="rag-gen-answers", column_config={
            "question": st.column_config.TextColumn(width="medium"),
            "answer": st.column_config.TextColumn(width="large")})


def _prompt_preview(questions: list[RagQuestion]) -> None:
    if not questions:
        return
    with st.expander(f"The prompt ({GENERATION_PROMPT_VERSION}), for the first question"):
        render_text(generation_messages(questions[0])[0]["content"], mono=True, box=True,
                    max_height=360, key="rag-gen-prompt")


def render_generate(db: Database, dataset: str, connection: Connection | None
                    ) -> dict[str, Any] | None:
    """The generation's settings, Generate answers, the job (progress and Cancel, then
    its outcome) and the answers of its set; returns the latest generation job."""
    st.caption(SETTING)
    questions = load_questions(db, dataset)
    _prompt_preview(questions)
    if connection is not None and _is_demo(connection):
        st.warning(DEMO_WARNING, icon="🧪")
    total = len(questions)
    cols = st.columns([3, 2])
    default_name = short_name(connection.model) if connection is not None else ""
    name = cols[0].text_input("Answer set name", key=NAME_KEY, placeholder=default_name,
                              help="Empty: the model's name. A stored set of that name is "
                                   "replaced.")
    limit = cols[1].number_input("Questions (0: all)", 0, max(total, 1), 0, key=LIMIT_KEY,
                                 help="Only the first N questions, in dataset order.")
    job = latest_generate_job(get_db(), dataset)
    active = job is not None and job["display_status"] in ACTIVE
    spec = None
    blocked: str | None = "complete the model connection above (or start the local demo judge)"
    if connection is not None:
        spec = GenerateSpec(dataset, connection, str(name or ""), int(limit) or None)
        blocked = problem(spec)
    clicked = st.button("Generate answers", type="primary", key="rag_gen_button", icon="✍️",
                        disabled=bool(active or blocked),
                        help="Runs in the background; answers already cached are not asked "
                             "again.")
    if clicked and spec is not None:
        try:
            start_generate_job(db, store.default_path(), spec, by=signed_in())
        except GenerateError as exc:
            blocked = str(exc)
        else:
            st.rerun()
    if blocked and not active:
        st.caption(f"To generate: {label(blocked, 300)}.")
    render_job(job, _outcome, verb="Generating answers for", starting=STARTING, note=NOTE)
    if job is not None and job["display_status"] == "done":
        model = str((job.get("result") or {}).get("model") or job.get("model") or "")
        _answers_table(db, dataset, model, questions)
        st.button("Evaluate these answers", key="rag_gen_evaluate", icon="▶️",
                  on_click=_evaluate, args=(dataset, model), help="Switch to Evaluate answers: the set is among the "
                  "stored answer sets there.")
    generated = generated_sets(db, dataset)
    if generated:
        st.markdown("**Answer sets generated for this dataset**")
        st.dataframe(pd.DataFrame.from_records(
            [{"answer set": r["model"], "answers": len(r["answers"]), "how": r["source"],
              "when": r["created_at"]} for r in generated],
            columns=["answer set", "answers", "how", "when"]), hide_index=True,
            key="rag-gen-sets")
    return job
