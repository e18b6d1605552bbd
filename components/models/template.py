"""The "Prompt template" expander: the judge prompt a run will send, where it comes from,
and an editor (Reset puts the picked template back).

Shared by the Reward model page (selection, scoring: :mod:`needlework.judges.prompts`), the
needle lab's writer (needle) and
the RAG answers page (eligibility, factuality, deflection, LLMeval: :mod:`needlework.rag.prompts`).
A template starts from one of its mode's templates (the paper's first, the default); its
text may be edited, and the edit is checked (:func:`needlework.judges.templates.make`):
a placeholder the mode does not know, or a required one missing, is shown in one sentence
and the run cannot start. An edited template is a run of its own (its digest is in the
run's key) and is stored with the run; :func:`render_run_templates` shows a finished
run's templates with its results.

In team mode only those who may configure judges (admins) edit the text; everyone may
pick among the mode's published templates. The widgets' values are kept for the session,
per mode and per starting template, so switching between them keeps an edit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from components.callbacks import uninterrupted
from components.state import signed_in
from components.text import label, option, render_text
from needlework.judges import prompts as judge_prompts
from needlework.judges.templates import Template, TemplateError
from needlework.rag import prompts as rag_prompts
from needlework.teams.permissions import can

TITLE = "Prompt template"


def may_edit() -> bool:
    """Whether this session may edit a template's text (local mode, and admins)."""
    return can(signed_in(), "configure_judges")


@uninterrupted
def _load(key: str, base: Template) -> None:
    """Put ``base``'s text into the editor (a callback: before the widgets are drawn)."""
    st.session_state[f"{key}_user"] = base.user
    st.session_state[f"{key}_system"] = base.system


def _editor(mode: str, choices: Sequence[Template], default: Template, key: str,
            editable: bool) -> tuple[Template, str | None]:
    """One mode's picker, source and editor; ``(template, problem)``."""
    names = [t.name for t in choices]
    pick_key = f"{key}_{mode}_from_{default.name}"
    if st.session_state.get(pick_key) not in names:
        st.session_state[pick_key] = default.name
    picked = st.selectbox(
        "Start from", names, key=pick_key, persist_state="session",
        format_func=lambda n: option(n + (" (default)" if n == default.name else "")),
        help="The paper's prompt is the default; the project's own wording is kept beside it.")
    base = next(t for t in choices if t.name == picked)
    state = f"{key}_{mode}_{base.name}"
    if f"{state}_user" not in st.session_state:
        _load(state, base)
    st.caption(f"Source: {label(base.source, 300)}. The answer it asks for: "
               f"{label(base.mode.answer, 300)}.")
    st.caption("Placeholders: " + label("; ".join(f"{{{n}}} {what}" for n, what
                                                    in base.mode.placeholders.items()), 900))
    system = st.text_area("System message (optional)", key=f"{state}_system", height=68,
                          disabled=not editable, persist_state="session")
    user = st.text_area("Prompt", key=f"{state}_user", height=260, disabled=not editable,
                        persist_state="session")
    st.button("Reset", key=f"{state}_reset", icon="↩️", on_click=_load, args=(state, base),
              disabled=not editable or (user == base.user and system == base.system),
              help=f"Put the {base.name} template's text back.")
    if not editable:
        st.caption("Only an admin may edit prompt templates.")
        return base, None
    try:
        chosen = base.edited(user, system)
    except TemplateError as exc:
        st.error(label(str(exc), 600), icon="🚫")
        return base, str(exc)
    if chosen is base:
        st.caption(f"Using {label(base.label, 80)} as published.")
    else:
        st.caption(f"Edited ({label(chosen.digest[:8], 20)}): a run with it is a run of its own, "
                   "stored with this text.")
    return chosen, None


def render_template(modes: Sequence[str], table: Mapping[str, Sequence[Template]],
                    defaults: Mapping[str, Template], *, key: str
                    ) -> tuple[dict[str, Template], str | None]:
    """The expander for ``modes`` (a tab each when several). Returns the template of each
    mode and the first problem (``None`` when every template can be used)."""
    editable = may_edit()
    chosen: dict[str, Template] = {}
    problem = None
    with st.expander(TITLE, expanded=False):
        places = st.tabs(list(modes)) if len(modes) > 1 else [st.container()]
        for mode, place in zip(modes, places, strict=True):
            with place:
                chosen[mode], trouble = _editor(mode, table[mode], defaults[mode], key, editable)
            problem = problem or trouble
    edited = [m for m in modes if chosen[m].digest != defaults[m].digest]
    if edited:
        st.caption("Prompt template: " + ", ".join(f"{m} {label(chosen[m].label, 60)}"
                                                   for m in edited) + " (not the default).")
    return chosen, problem


def render_run_templates(templates: Mapping[str, Mapping[str, Any]] | None, *, key: str) -> None:
    """A finished run's templates (``Template.as_dict`` by mode): name, digest, source,
    and the text in an expander."""
    if not templates:
        return
    words = ", ".join(f"{mode}: {t.get('name')} ({str(t.get('digest') or '')[:8]})"
                      for mode, t in templates.items())
    with st.expander(f"Prompt template · {label(words, 200)}"):
        for mode, t in templates.items():
            st.caption(f"{label(mode, 30)} · {label(str(t.get('name')), 60)} · "
                       f"{label(str(t.get('source') or ''), 300)}")
            if t.get("system"):
                render_text(str(t["system"]), mono=True, box=True, key=f"{key}_{mode}_system")
            render_text(str(t.get("user") or ""), mono=True, box=True, max_height=320,
                        key=f"{key}_{mode}_user")


def render_judge_template(mode: str, model: str) -> tuple[Template, str | None]:
    """The Reward model page's expander: the ``mode`` prompt (selection or scoring) a judge
    run of ``model`` sends (the demo judge starts from the wording it was trained on)."""
    chosen, problem = render_template([mode], judge_prompts.TEMPLATES,
                                      {mode: judge_prompts.default_template(mode, model)},
                                      key="rj_tpl")
    return chosen[mode], problem


def render_needle_template(aspect: str) -> tuple[Template, str | None]:
    """The needle writer's expander: the prompt that asks for a needle of ``aspect`` (the
    paper's for factuality; the project's rewrite for safety, which the paper did not
    write with a model)."""
    chosen, problem = render_template(["needle"], judge_prompts.TEMPLATES,
                                      {"needle": judge_prompts.default_template("needle",
                                                                                aspect=aspect)},
                                      key="nwr_tpl")
    return chosen["needle"], problem


def render_rag_templates() -> tuple[tuple[Template, ...], str | None]:
    """The RAG answers page's expander: the four judge prompts. Returns the templates that
    are not the defaults (for :class:`needlework.rag.run.RagEvalSpec`) and the first problem."""
    modes = list(rag_prompts.TEMPLATES)
    defaults = {m: rag_prompts.template(m) for m in modes}
    chosen, problem = render_template(modes, rag_prompts.TEMPLATES, defaults, key="rag_tpl")
    return tuple(t for m, t in chosen.items() if t.digest != defaults[m].digest), problem
