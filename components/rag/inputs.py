"""What to evaluate: the grounding dataset and the model answers (answer sets stored
with the dataset, such as the demo's, and uploaded files: model answers JSONL with one
or several models, or BERGEN's own output).

A file with a problem is refused whole, with its name, line and field, and nothing of
it is used; the run waits until it is removed or fixed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import streamlit as st
from sqlite_utils import Database

from components.callbacks import uninterrupted
from components.hints import import_words
from components.state import DATASET_KEY, signed_in
from components.text import label, render_text
from needlework.formats.errors import FormatError
from needlework.rag.answers import AnswerSet, merge, stored_set
from needlework.rag.uploads import Upload, read_upload
from store.datasets import list_datasets
from store.rag import answer_sets

UPLOAD_KEY = "rag_upload"
STORED_KEY = "rag_stored"
PARSED = "rag_parsed_uploads"


@dataclass
class Answers:
    """The answers picked: answer sets to evaluate, BERGEN reports of BERGEN files, and
    the problems that stop a run (each naming file, line and field)."""

    sets: list[AnswerSet] = field(default_factory=list)
    bergen: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@uninterrupted
def _use(name: str) -> None:
    st.session_state[DATASET_KEY] = name


def grounding_dataset(db: Database, current: str | None) -> str | None:
    """The sidebar's dataset when it is a grounding one; else offers the grounding
    datasets (a click selects one in the sidebar) and returns ``None``."""
    rows = list_datasets(db)
    grounding = [r["name"] for r in rows if r["kind"] == "grounding"]
    if current in grounding:
        return current
    if not grounding:
        st.info("No grounding dataset yet: "
                + import_words(signed_in(), "a grounding dataset (GaRAGe)")
                + ". Model answers are evaluated against its human answers and passage labels.",
                icon="📑")
        return None
    st.info("Pick a grounding dataset (GaRAGe) in the sidebar: model answers are evaluated "
            "against its human answers and passage labels.", icon="📑")
    with st.container(horizontal=True):
        for k, name in enumerate(grounding[:12]):
            st.button(label(name, 60), key=f"rag_use_{k}", on_click=_use, args=(name,))
    return None


def _parse(files: list[Any]) -> list[tuple[Upload | None, str | None]]:
    """Each uploaded file read once per upload (kept by its file id)."""
    cache: dict[str, tuple[Upload | None, str | None]] = st.session_state.setdefault(PARSED, {})
    out = []
    for f in files:
        ident = f"{f.file_id}|{f.name}|{f.size}"
        if ident not in cache:
            try:
                cache[ident] = (read_upload(f.getvalue(), f.name), None)
            except FormatError as exc:
                cache[ident] = (None, str(exc))
        out.append(cache[ident])
    live = {f"{f.file_id}|{f.name}|{f.size}" for f in files}
    for ident in list(cache):
        if ident not in live:
            del cache[ident]
    return out


def render_answers(db: Database, dataset: str) -> Answers:
    """Stored answer sets (all picked by default) and uploads; returns what to evaluate."""
    stored = {r["model"]: r for r in answer_sets(db, dataset)}
    picked: list[str] = []
    if stored:
        picked = st.multiselect(
            "Stored answer sets", list(stored), default=list(stored), key=STORED_KEY,
            format_func=lambda m: f"{m} ({len(stored[m]['answers'])} answers)",
            help="Answer sets kept with this dataset (the demo's two models for the demo set).")
    files = st.file_uploader(
        "Answers files", type=["jsonl", "json"], accept_multiple_files=True, key=UPLOAD_KEY,
        help='Model answers: JSON lines {"sample_id", "answer"} (add "model" to put several '
             "models in one file; without it the model is named after the file). BERGEN's own "
             'output (eval_dev_out.json: a JSON array of {"q_id", "response", "label"}) is scored '
             "against its own gold answers.") or []
    out = Answers()
    uploaded: list[AnswerSet] = []
    for upload, problem in _parse(list(files)):
        if problem is not None:
            out.problems.append(problem)
        elif upload is not None and upload.kind == "bergen":
            out.bergen.append(upload.bergen or {})
        elif upload is not None:
            uploaded.extend(upload.sets)
    sets = [stored_set(stored[m], "stored") for m in picked]
    try:
        out.sets = merge([*sets, *uploaded])
    except FormatError as exc:
        out.problems.append(str(exc))
    if out.problems:
        st.error("Not used: fix or remove the file(s) below (each problem names file, line and "
                 "field).", icon="🚫")
        render_text("\n".join(out.problems), mono=True, box=True, max_height=220,
                    key="rag-upload-problems")
    if out.sets:
        st.caption("To evaluate: " + ", ".join(
            f"{label(s.model, 60)} ({len(s.answers)} answers)" for s in out.sets) + ".")
    elif not out.bergen:
        st.caption("No answers picked: keep a stored answer set or upload a file.")
    return out
