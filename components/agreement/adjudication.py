"""Adjudication on the agreement page: the reviewer's final passage labels, dimensions
and answer (``final:*`` fields), which the export writes before the majority."""

from __future__ import annotations

from typing import Any

import streamlit as st
from sqlite_utils import Database

from components.callbacks import uninterrupted
from components.state import get_db, signed_in
from components.text import label, render_marked_text, render_text
from needlework.actions.writes import adjudicate
from needlework.grounding import labels as gl
from needlework.grounding.item import DIM_FIELDS, DIM_TITLES, passages
from needlework.grounding.resolve import resolve, split_entries
from needlework.teams.permissions import PermissionDenied
from store.disputes import next_open, open_count
from store.grounding import grouped_annotations, item_position


def _save_final(db: Database, dataset: str, key: str, reviewer: str, field: str,
                value: Any) -> None:
    """Save a final value as the reviewer (team mode: the signed-in user, who may be
    refused: said in a toast)."""
    try:
        adjudicate(db, dataset, key, field, value, reviewer=reviewer, actor=signed_in())
    except PermissionDenied as e:
        st.toast(label(str(e), 300), icon=":material/block:")


@uninterrupted
def _on_final(dataset: str, key: str, reviewer: str, field: str, widget: str) -> None:
    """A final value's callback: saved with the connection of the run that calls it."""
    _save_final(get_db(), dataset, key, reviewer, field, st.session_state.get(widget))


def render_adjudication(db: Database, dataset: str, item: dict[str, Any], reviewer: str) -> None:
    """Per passage: every annotator's label, what export writes now and why, and the
    reviewer's final label (``final:label:N``, saved when set)."""
    entries = grouped_annotations(db, dataset, item["key"]).get(item["key"], [])
    render_text(str(item["record"].get("question") or ""), key="nw-adj-question")
    disputed_only = st.toggle("Only passages the annotators disagree on", value=True,
                              key=f"nw-adj-disputed|{dataset}")
    for p in passages(item["record"]):
        votes, finals = split_entries(entries, gl.label_field(p.number), gl.final_field(p.number))
        if disputed_only and len(set(map(str, votes.values()))) < 2 and not finals:
            continue
        resolved = resolve(votes, finals, gl.imported_label(item["record"], p.number), gl.LABELS)
        final = resolved.value if resolved.source == "final" else None
        widget = f"nw-final|{dataset}|{item['key']}|{p.number}|{reviewer}|{final}"
        with st.container(border=True, key=f"nw-adj-{p.number}"):
            with st.container(horizontal=True, vertical_alignment="center", gap="small"):
                segments: list[tuple[str, str | None, str | None]] = [
                    (f" {p.number} ", "nw-cite", None), ("  ", None, None)]
                for who, value in sorted(votes.items()):
                    segments += [(f"{who}: ", None, None),
                                 (gl.SHORT.get(value, str(value)), None,
                                  f"background:{gl.COLOURS.get(value, '#eee')}"), ("  ", None, None)]
                segments.append((f"→ export: {gl.SHORT.get(resolved.value, 'imported/none')} "
                                 f"({resolved.source})", None, None))
                render_marked_text(segments, key=f"nw-adj-head-{p.number}")
                st.segmented_control(
                    f"Final label of passage {p.number}", gl.LABELS, key=widget, default=final,
                    format_func=lambda v: gl.SHORT[v], label_visibility="collapsed",
                    on_change=_on_final,
                    args=(dataset, item["key"], reviewer, gl.final_field(p.number), widget),
                    disabled=not reviewer,
                )
            render_text(p.text, box=True, max_height=120, key=f"nw-adj-text-{p.number}")


def render_final_dims(db: Database, dataset: str, item: dict[str, Any], reviewer: str) -> None:
    """For each dimension annotators disagree on: the votes and a final value
    (``final:dim:FIELD``)."""
    entries = grouped_annotations(db, dataset, item["key"]).get(item["key"], [])
    for name in DIM_FIELDS:
        votes, finals = split_entries(entries, f"dim:{name}", f"final:dim:{name}")
        if len(set(map(str, votes.values()))) < 2:
            continue
        options = sorted(set(votes.values()), key=str)
        resolved = resolve(votes, finals, item["record"].get(name), options)
        final = resolved.value if resolved.source == "final" else None
        widget = f"nw-final-dim|{dataset}|{item['key']}|{name}|{reviewer}|{final}"
        with st.container(horizontal=True, vertical_alignment="center", gap="small"):
            render_text(f"{DIM_TITLES[name]}: " + ", ".join(f"{w}={v or '∅'}" for w, v in
                                                            sorted(votes.items()))
                        + f" → export: {resolved.value or '∅'} ({resolved.source})",
                        key=f"nw-adj-dim-{name}")
            st.segmented_control(f"Final {DIM_TITLES[name]}", options, key=widget,
                                 default=final if final in options else None,
                                 format_func=lambda v: v or "∅", label_visibility="collapsed",
                                 on_change=_on_final,
                                 args=(dataset, item["key"], reviewer, f"final:dim:{name}", widget),
                                 disabled=not reviewer)


def render_final_answer(db: Database, dataset: str, item: dict[str, Any], reviewer: str) -> None:
    """When several annotators wrote answers: pick the one export writes (``final:answer``)."""
    entries = grouped_annotations(db, dataset, item["key"]).get(item["key"], [])
    answers = {e["annotator"]: e["value"] for e in entries
               if e["field"] == "answer" and isinstance(e["value"], str) and e["value"].strip()}
    if len(answers) < 2:
        return
    final = next((e["value"] for e in sorted(entries, key=lambda e: e["updated_at"], reverse=True)
                  if e["field"] == "final:answer"), None)
    st.markdown("**Answers** (export writes the chosen one, else the latest saved)")
    for who, text in sorted(answers.items()):
        with st.container(horizontal=True, vertical_alignment="center", gap="small"):
            render_text(f"{who}: {text}", box=True, max_height=140, key=f"nw-adj-ans-{who}")
            chosen = final == text
            if st.button("Chosen" if chosen else "Use this", key=f"nw-adj-use|{who}",
                         disabled=chosen or not reviewer, type="primary" if chosen else "secondary"):
                _save_final(db, dataset, item["key"], reviewer, "final:answer", text)
                st.rerun()


NOTE = "final:note"

ALL = "nw-adj-all"  # the "Any question" toggle
NEXT_KEY = "D"  # the next open dispute (the page's only key; see its key help)
_SAID = "nw-adj-next-said"  # (dataset, sentence): what the last D did


def item_widget(dataset: str) -> str:
    """The key of the "Question in dispute" select box."""
    return f"nw-adj-item|{dataset}"


def number_widget(dataset: str) -> str:
    """The key of the "Question number" input ("Any question")."""
    return f"nw-adj-number|{dataset}"


@uninterrupted
def _go_next_open(dataset: str, listed: tuple[str, ...]) -> None:
    """D's callback: open the next question after the one shown with an open dispute
    (wrapping around), in the dispute list when it is there (``listed``), else by its
    number; or say that none is open."""
    db, state = get_db(), st.session_state
    if state.get(ALL):
        here = int(state.get(number_widget(dataset)) or 1) - 1
    else:
        key = state.get(item_widget(dataset))
        found = item_position(db, dataset, key) if key else None
        here = -1 if found is None else found
    found_open = next_open(db, dataset, here)
    if found_open is None:
        state[_SAID] = (dataset, "No open dispute: every disagreement has a final value.")
        return
    key, position = found_open
    if key in listed:
        state[ALL] = False
        state[item_widget(dataset)] = key
    else:
        state[ALL] = True
        state[number_widget(dataset)] = position + 1
    left = open_count(db, dataset)
    state[_SAID] = (dataset, (f"Question {position + 1}: the only question with an open dispute."
                              if position == here else
                              f"Question {position + 1}: an open dispute "
                              f"({left:,} question{'s' if left != 1 else ''} with one)."))


def render_next_dispute(dataset: str, listed: list[str]) -> None:
    """The key help and the button D presses: the next question with an open dispute
    (annotators disagree and no reviewer has set the final value yet); ``listed``: the
    keys the dispute list offers. Says what it did, or that no dispute is open."""
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.button("Next open dispute", key="nw-adj-next", shortcut=NEXT_KEY,
                  icon=":material/skip_next:", on_click=_go_next_open,
                  args=(dataset, tuple(listed)),
                  help="The next question where annotators disagree and no final value is set "
                  f"yet, after the one shown ({NEXT_KEY}).")
        st.caption(f"Keys: {NEXT_KEY} opens the next question with an open dispute "
                   "(a disagreement without a final value).")
    said = st.session_state.get(_SAID)
    if said and said[0] == dataset:
        st.caption(label(said[1], 200))


@uninterrupted
def _on_note(dataset: str, key: str, reviewer: str, widget: str) -> None:
    text = (st.session_state.get(widget) or "").strip()
    _save_final(get_db(), dataset, key, reviewer, NOTE, text or None)


def render_final_note(db: Database, dataset: str, item: dict[str, Any], reviewer: str) -> None:
    """The reviewer's note to the annotators (``final:note``): they see it beside the final
    values on their own page (Annotate), as text. Saved when committed (Enter)."""
    entries = grouped_annotations(db, dataset, item["key"]).get(item["key"], [])
    saved = next((e["value"] for e in sorted(entries, key=lambda e: e["updated_at"], reverse=True)
                  if e["field"] == NOTE and isinstance(e["value"], str)), "")
    widget = f"nw-final-note|{dataset}|{item['key']}|{reviewer}|{hash(saved) & 0xFFFF}"
    st.text_input("Note to the annotators (shown with your decision on their Annotate page)",
                  saved, key=widget, max_chars=1000, on_change=_on_note,
                  args=(dataset, item["key"], reviewer, widget), disabled=not reviewer,
                  placeholder="why the final values are what they are · Enter saves")
