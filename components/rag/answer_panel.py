"""One model answer of a RAG run, read-only, beside the human answer: the verdicts, each
sentence shaded by its label, the citations marked.

:func:`render_answer` draws one stored answer row (``store.rag.run_results``); the RAG
answers page uses it for the failure picked there. :func:`render_linked_answer` is the
annotate page's panel: a link ``/annotate?dataset=X&item=Y&rag_run=KEY&model=M``
(optionally ``&sentence=K``, 1-based) shows model M's answer to item Y in run KEY
above the passages, the sentence K outlined. Without ``rag_run`` it draws nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st
from sqlite_utils import Database

from components.text import label, render_marked_text, render_text
from needlework.grounding.answer import cited_numbers
from needlework.grounding.labels import SHORT
from needlework.rag.definitions import SENTENCE_LABELS
from needlework.rag.failures import (
    SIDES,
    answer_failures,
    cited_passage,
    sentence_fails,
    sentence_label,
)
from needlework.rag.marks import LABEL_STYLES, answer_segments, citation_segments
from needlework.rag.metrics import RULES_CAVEAT, RULES_MODEL
from store.rag import get_run, run_results

RUN_PARAM = "rag_run"
MODEL_PARAM = "model"
SENTENCE_PARAM = "sentence"
RAG_PAGE = "app_pages/rag.py"


def link_params(dataset: str, item_key: str, run_key: str, model: str,
                sentence: int | None = None) -> dict[str, str]:
    """The query parameters that open ``model``'s answer to ``item_key`` on the annotate
    page (``sentence``: 0-based index, written 1-based)."""
    params = {"dataset": dataset, "item": item_key, RUN_PARAM: run_key, MODEL_PARAM: model}
    if sentence is not None:
        params[SENTENCE_PARAM] = str(sentence + 1)
    return params


def _linked() -> tuple[str, str, int | None] | None:
    params = st.query_params
    run_key, model = params.get(RUN_PARAM), params.get(MODEL_PARAM)
    if not run_key or model is None:
        return None
    raw = params.get(SENTENCE_PARAM) or ""
    sentence = int(raw) - 1 if raw.isdigit() and int(raw) > 0 else None
    return run_key, model, sentence


def short_name(model: str) -> str:
    """A judge's model name as people read it: a local folder's last part."""
    text = model.rstrip("/")
    return Path(text).name if text.startswith("/") and Path(text).name else text


def _mark(ok: bool | None) -> str:
    return "–" if ok is None else ("✅" if ok else "❌")


def _verdicts(row: Mapping[str, Any]) -> str:
    """The answer's verdicts in one Markdown line (values from fixed sets, escaped anyway)."""
    if not row["answered"]:
        return "❌ **No answer**: the model gave none (or a blank one); it fails every check."
    if not row.get("judged"):
        bergen = row["bergen"]
        return (f"No judge in this run · F1 {bergen['F1']:.2f} · ROUGE-L {bergen['Rouge-L']:.2f} · "
                f"EM {bergen['EM']:.0f}")
    grade = row.get("deflection")
    deflection_ok = row["deflected"] is True if row["needs_deflection"] else row["deflected"] is False
    parts = [
        f"{_mark(row['eligible'])} Eligibility: {label(row.get('eligibility') or 'unreadable', 40)}",
        f"{_mark(row['factual'])} Factual (all passages)",
        f"{_mark(row['relevant_factual'])} Factual (relevant passages)",
        f"{_mark(deflection_ok)} Deflection: {label(grade or 'unreadable', 20)} "
        f"({'needs a deflection' if row['needs_deflection'] else 'answerable'})",
        f"{_mark(bool(row['llmeval']))} LLMeval {int(row['llmeval'])}"
        + (" (neither yes nor no)" if row.get("llmeval_weird") else ""),
        f"F1 {row['bergen']['F1']:.2f}",
    ]
    return " · ".join(parts)


def _legend() -> None:
    segments = []
    for name, meaning in [*SENTENCE_LABELS.items(), ("no label", "the judge's answer was "
                                                     "unreadable: counted as a failure")]:
        segments += [(name, None, LABEL_STYLES.get(name if name != "no label" else None)),
                     (f" {meaning}   ", None, None)]
    render_marked_text(segments)


def _sentence_frame(row: Mapping[str, Any]) -> pd.DataFrame:
    records = []
    for k, s in enumerate(row.get("sentences") or []):
        why = [str(s[side].get("rationale")) for side in SIDES
               if isinstance(s.get(side), Mapping) and s[side].get("rationale")]
        quote = [str(s[side].get("excerpt")) for side in SIDES
                 if isinstance(s.get(side), Mapping) and s[side].get("excerpt")]
        records.append({"#": k + 1, "fails": "❌" if any(sentence_fails(s, side) for side in SIDES)
                        else "", "sentence": s["text"],
                        "all passages": sentence_label(s, "all") or "no label",
                        "relevant passages": sentence_label(s, "relevant") or "no label",
                        "rationale": " | ".join(dict.fromkeys(why)),
                        "excerpt": " | ".join(dict.fromkeys(quote))})
    return pd.DataFrame.from_records(records, columns=["#", "fails", "sentence", "all passages",
                                                       "relevant passages", "rationale", "excerpt"])


def _citations(row: Mapping[str, Any], n_passages: int | None) -> None:
    labels = row.get("labels") or {}
    numbers = cited_numbers(row.get("answer") or "")
    if not numbers:
        st.caption("The answer cites no passage.")
        return
    segments = []
    for number in numbers:
        if n_passages is not None and not 1 <= number <= n_passages:
            segments += [(f"[cite_{number}]", "nw-bad", None), (" points to no passage   ", None, None)]
        else:
            name = labels.get(str(number))
            segments += [(f"[cite_{number}]", "nw-cite", None),
                         (f" {SHORT.get(name, 'not labelled') if name else 'not labelled'}   ",
                          None, None)]
    render_marked_text(segments)


def render_answer(row: Mapping[str, Any], *, key: str, current: int | None = None) -> None:
    """One answer row: verdicts, the model answer (sentences shaded by label) beside the
    human answer, the sentence verdicts, the citations and the judge's raw replies.
    ``key`` keeps this drawing's widgets apart; ``current`` outlines a sentence."""
    st.markdown(_verdicts(row))
    failed = answer_failures(row)
    if failed:
        st.caption("Failed: " + ", ".join(failed) + ".")
    sentences = row.get("sentences") or []
    judged = bool(row.get("judged")) and row["answered"]
    side = "all"
    if judged:
        side = st.segmented_control(
            "Sentences judged against", list(SIDES), format_func=SIDES.__getitem__, default="all",
            key=f"{key}-side", help="All passages: unadjusted factuality. Relevant passages "
            "(labelled relevant and current): uRAF.") or "all"
    labels = row.get("labels")
    n_passages = len(labels) if isinstance(labels, Mapping) else None
    _two_answers(row, key=key, sentences=sentences, side=side, n_passages=n_passages,
                 current=current, judged=judged)
    if judged:
        _judged_sentences(row, key=key, sentences=sentences, current=current)
    if row["answered"]:
        st.markdown("**Citations** of the model answer, with the passage labels used")
        _citations(row, n_passages)
    _raw_replies(row, key=key)


def _two_answers(row: Mapping[str, Any], *, key: str, sentences: list[dict[str, Any]],
                 side: str, n_passages: int | None, current: int | None, judged: bool) -> None:
    """The model answer (sentences shaded by their label against ``side``) beside the
    human answer."""
    model_col, human_col = st.columns(2, gap="medium")
    with model_col:
        st.markdown(f"**Model answer** · {label(row['model'], 60)}")
        if row["answered"]:
            render_marked_text(answer_segments(row["answer"] or "", sentences, side,
                                               n_passages=n_passages, current=current,
                                               judged=judged),
                               box=True, key=f"{key}-answer")
        else:
            st.caption("No answer.")
    with human_col:
        st.markdown("**Human answer** (the reference: adjudicated first)")
        reference = row.get("reference")
        if reference is None:
            st.caption("Not stored with this run (an older run): evaluate again to see it here.")
        elif not reference.strip():
            st.caption("No human answer.")
        else:
            render_marked_text(citation_segments(reference, n_passages), box=True,
                               key=f"{key}-reference")


def _judged_sentences(row: Mapping[str, Any], *, key: str, sentences: list[dict[str, Any]],
                      current: int | None) -> None:
    """The judged sentences: the legend, the current one, the table, and the judge's
    answers that failed or could not be read."""
    _legend()
    if current is not None and 0 <= current < len(sentences):
        s = sentences[current]
        st.markdown(f"**Sentence {current + 1}**: all passages → "
                    f"{label(sentence_label(s, 'all') or 'no label', 30)}, relevant passages → "
                    f"{label(sentence_label(s, 'relevant') or 'no label', 30)}")
        render_text(s["text"], box=True, key=f"{key}-current")
    st.dataframe(_sentence_frame(row), hide_index=True, key=f"{key}-sentences",
                 column_config={"#": st.column_config.NumberColumn(width="small"),
                                "fails": st.column_config.TextColumn(width="small")})
    if row.get("non_answer"):
        st.caption("A non-answer: no claim (empty, a lone letter, only citations). Not sent "
                   "to the judge; counted not factual and not eligible.")
    judge_failed = row.get("judge_failed") or {}
    if judge_failed:
        st.caption("Judge requests that failed (no answer; this answer is left out of the "
                   "judge figures):")
        render_text("\n".join(f"{check}: {v.get('message') or v.get('kind')}"
                               for check, v in judge_failed.items()),
                    mono=True, key=f"{key}-failed")
    invalid = row.get("invalid") or {}
    if invalid:
        st.caption("Unreadable judge answers (counted as failures):")
        render_text("\n".join(f"{check}: {reason}" for check, reason in invalid.items()),
                    mono=True, key=f"{key}-invalid")


def _raw_replies(row: Mapping[str, Any], *, key: str) -> None:
    """The judge's raw replies (and any reasoning before them), folded."""
    calls = row.get("calls") or {}
    if calls:
        with st.expander("The judge's raw replies"):
            for check, call in calls.items():
                st.caption(f"{check}{' · from the cache' if call.get('cached') else ''}")
                render_text(call.get("raw") if call.get("raw") is not None
                            else f"(no reply: {call.get('error')})", mono=True, box=True,
                            max_height=160, key=f"{key}-raw-{check}")
                if call.get("reasoning"):
                    st.caption("its reasoning before the reply (kept apart, not read):")
                    render_text(call["reasoning"], mono=True, box=True, max_height=160,
                                key=f"{key}-reasoning-{check}")


def render_linked_answer(db: Database, dataset: str, item_key: str) -> None:
    """The annotate page's read-only panel for ``?rag_run=KEY&model=M[&sentence=K]``
    (nothing without those parameters)."""
    link = _linked()
    if link is None:
        return
    run_key, model, sentence = link
    run = get_run(db, run_key)
    if run is None or run["dataset"] != dataset:
        st.warning("The linked RAG run is not a run of this dataset (it may have been deleted): "
                   "no model answer to show.", icon="🤖")
        return
    judge = run.get("judge_model") or ""
    title = (f"🤖 RAG run answer · model {label(model, 60)} · "
             + (f"judge {label(short_name(judge), 60)}" if judge else "no judge")
             + f" · run {run_key[:10]}")
    with st.expander(title, expanded=True, key="nw-rag-panel"):
        if judge == RULES_MODEL:
            st.caption(f"The verdicts here are {RULES_CAVEAT}")
        rows = run_results(db, run_key, model=model, item_key=item_key)
        if not rows:
            st.info("This model has no answer to this question in the run (the question "
                    "may not be evaluated).", icon="🤖")
        else:
            render_answer(rows[0], key="nw-rag-panel", current=sentence)
        st.page_link(RAG_PAGE, label="Back to the RAG answers", icon="↩️",
                     query_params={"dataset": dataset, RUN_PARAM: run_key})
    passage = cited_passage(rows[0], sentence) if rows else None
    if passage is not None:
        show_passage(item_key, passage)


#: Once per question and passage: after the key script's first scroll (to this panel,
#: its outlined sentence in view), the passage the link cites comes on screen too, its
#: top just under the panel's end or, for a tall panel, at 40 % of the window.
_SHOW_PASSAGE = """<script>
(() => {
  const item = ITEM, card = CARD, key = JSON.stringify([item, card]);
  if (window.__nwRagPassage === key) return;
  window.__nwRagPassage = key;
  let tries = 0;
  const go = () => {
    const S = window.__nwAnnotate, el = document.querySelector(".st-key-nw-card-" + card);
    if (!el || !S || S.scrolledTo !== item) { if (++tries < 60) setTimeout(go, 150); return; }
    const bar = document.querySelector(".st-key-nw-top");
    const below = bar ? bar.getBoundingClientRect().bottom + 8 : 170;
    const r = el.getBoundingClientRect(), room = window.innerHeight - below;
    if (r.top >= below && r.top + Math.min(r.height, room * 0.5) <= window.innerHeight) return;
    el.style.scrollMarginTop = Math.max(below, window.innerHeight - Math.min(r.height, room * 0.6) - 16) + "px";
    el.scrollIntoView({block: "start", behavior: "instant"});
  };
  setTimeout(go, 200);
})();
</script>"""


def show_passage(item_key: str, passage: int) -> None:
    """Bring passage ``passage`` (1-based) of the question ``item_key`` on screen once, when
    a RAG link opened it (the landing of a failure's link: the cited passage in view)."""
    item = json.dumps(item_key).replace("<", "\\u003c").replace(">", "\\u003e")
    st.html(_SHOW_PASSAGE.replace("ITEM", item).replace("CARD", str(int(passage))),
            unsafe_allow_javascript=True)
