"""RAG answers: generate a model's answers to a grounding dataset's questions, evaluate
answers with GaRAGe's judge metrics and BERGEN's answer metrics, see them by question
dimension, and open each failure beside the human answer. See docs/rag.md."""

import streamlit as st

from components.rag.failures import render_failures
from components.rag.generate import render_generate, render_task
from components.rag.inputs import grounding_dataset, render_answers
from components.rag.judge import choice, wants_judge
from components.rag.results import (
    pick_run,
    render_bergen_files,
    render_breakdowns,
    render_overall,
    render_scope,
)
from components.rag.run import render_run
from components.state import current_dataset, engine, get_db
from components.text import label
from needlework.judges.templates import Template
from needlework.rag.metrics import is_rules_judge
from store.rag import run_results

st.title("📑 RAG answers")
st.caption("How good are a RAG model's answers? Eligibility, factuality, uRAF, RAF and deflection "
           "(GaRAGe, through a judge) and BERGEN's answer metrics, against the human answers and "
           "passage labels of a grounding dataset (adjudicated values first).")

db = get_db()
dataset = grounding_dataset(db, current_dataset())
if dataset is None:
    st.stop()

if render_task():  # generate an answer set with a model, then evaluate it below
    st.subheader(f"Generate answers to {label(dataset, 80)}")
    # the model connection is the judge form (an engine component): imported after engine()
    with st.spinner("Loading the model form …"):
        engine()
        from components.models.judge import render_connection
    render_generate(db, dataset, render_connection(expanded=True))
    st.stop()

st.subheader(f"1 · Answers to {label(dataset, 80)}")
answers = render_answers(db, dataset)
with_related = st.checkbox("Also use answer_related_info as a BERGEN reference",
                           key="rag_with_related", persist_state="session",
                           help="BERGEN's metrics take the best over the references.")

st.subheader("2 · Judge")
connection = None
templates: tuple[Template, ...] = ()
template_problem: str | None = None
wanted = wants_judge()
if wanted:
    # the judge form is shared with the reward page (an engine component): seconds on a
    # server's first visit, while PyTorch and transformers are imported
    with st.spinner("Loading the judge form …"):
        engine()
        from components.models.judge import render_connection
        from components.models.template import render_rag_templates
    connection = render_connection(expanded=True, rules=True)
    templates, template_problem = render_rag_templates()
judge = choice(connection, wanted, templates, template_problem)

st.subheader("3 · Evaluate")
job = render_run(dataset, answers, judge, with_related)

if answers.bergen:
    st.subheader("BERGEN output files")
    st.caption("Scored against their own gold answers (`label`), as BERGEN scores them.")
    render_bergen_files(answers.bergen)

st.subheader("4 · Results")
run = pick_run(db, dataset, job)
if run is None:
    st.stop()
summary = run["summary"]
render_scope(summary)
if summary.get("templates"):  # the judge prompts the run sent
    engine()
    from components.models.template import render_run_templates
    render_run_templates(summary["templates"], key=f"rag_tpl_{run['run_key']}")
render_overall(summary)

st.subheader("5 · By question dimension")
render_breakdowns(summary)

st.subheader("6 · Failures")
render_failures(dataset, run["run_key"], run_results(db, run["run_key"]),
                rules=is_rules_judge((run.get("summary") or {}).get("judge")))
