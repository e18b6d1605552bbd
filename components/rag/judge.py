"""Judge or no judge: BERGEN's answer metrics and attribution need none; the GaRAGe
figures (eligibility, factuality, uRAF, RAF, deflection) and LLMeval do.

The connection itself (base URL, model, where the key comes from, the local demo
judge) is the form shared with the Reward model page and the Needle lab,
``components.models.judge.render_connection`` (an engine component: the page imports it
after ``engine()``). This module only asks whether a judge is wanted and what a run
still lacks.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from needlework.judges.connection import Connection
from needlework.judges.templates import Template

MODES = {"none": "No judge (BERGEN, attribution)",
         "judge": "With a judge (GaRAGe, LLMeval too)"}
MODE_KEY = "rag_judge_mode"


@dataclass(frozen=True)
class JudgeChoice:
    """The judge picked (``connection``: ``None`` for none), its prompt templates other
    than the defaults, or why a run cannot start yet."""

    connection: Connection | None = None
    problem: str | None = None
    templates: tuple[Template, ...] = ()


def wants_judge() -> bool:
    """The judge-or-not switch; True when a judge is wanted."""
    mode = st.segmented_control("Judge", list(MODES), format_func=MODES.__getitem__, default="none",
                                required=True, key=MODE_KEY, persist_state="session",
                                help="Judge answers are cached: a run asks each question once.")
    return mode == "judge"


def choice(connection: Connection | None, wanted: bool, templates: tuple[Template, ...] = (),
           template_problem: str | None = None) -> JudgeChoice:
    """What the run uses: no judge, the connection and its templates, or the reason there
    is none yet."""
    if not wanted:
        return JudgeChoice()
    if connection is None:
        return JudgeChoice(problem="complete the judge connection (or start the rules judge)")
    if template_problem is not None:
        return JudgeChoice(problem=f"fix the prompt template: {template_problem}")
    return JudgeChoice(connection, templates=templates)
