"""A reviewer's decision on the question being annotated: the final values a reviewer set
on the Agreement page (``final:*``), beside the annotator's own, and the reviewer's note.

An annotator in team mode never sees one on a gold item (its final values would give the
gold answers away); everything else about the item is theirs to see.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from components.annotate.item import ItemContext, local_time
from components.state import signed_in
from components.text import label, render_text
from needlework.grounding import labels as gl
from needlework.grounding.item import DIM_TITLES
from needlework.teams.permissions import can
from store.gold import gold_items
from store.grounding import grouped_annotations

NOTE = "final:note"


def decision_lines(finals: dict[str, Any], mine: dict[str, Any]) -> list[str]:
    """One plain sentence per final value (``finals``: field without ``final:`` → value;
    ``mine``: the annotator's fields → value), in passage then dimension order."""
    lines = []
    passages = sorted((int(f.split(":")[1]), v) for f, v in finals.items()
                      if f.startswith(gl.LABEL_PREFIX) and f.split(":")[1].isdigit())
    for number, value in passages:
        yours = mine.get(gl.label_field(number))
        name = gl.SHORT.get(value, str(value))
        lines.append(f"passage {number}: {name}" + (
            " (as yours)" if yours == value else
            f" (yours: {gl.SHORT.get(yours, str(yours))})" if yours else " (you left it unlabeled)"))
    for field, value in sorted(finals.items()):
        if field.startswith("dim:"):
            yours = mine.get(field)
            title = DIM_TITLES.get(field[4:], field[4:])
            lines.append(f"{title}: {value}" + (
                " (as yours)" if yours == value else f" (yours: {yours})" if yours else ""))
    if isinstance(finals.get("answer"), str):
        same = finals["answer"] == mine.get("answer")
        lines.append("answer: " + ("yours was chosen" if same else "another annotator's was chosen"))
    return lines


def render_decision(ctx: ItemContext) -> None:
    """The reviewer's final values and note on this question, when there are any (nothing
    otherwise)."""
    entries = grouped_annotations(ctx.db, ctx.dataset, ctx.key).get(ctx.key, [])
    finals = [e for e in entries if e["field"].startswith("final:")]
    if not finals:
        return
    user = signed_in()
    if user is not None and not can(user, "view_all") and ctx.key in gold_items(ctx.db, ctx.dataset):
        return
    values = {e["field"][len("final:"):]: e["value"] for e in finals if e["field"] != NOTE}
    note = next((e["value"] for e in finals if e["field"] == NOTE and isinstance(e["value"], str)), "")
    latest = max(finals, key=lambda e: e["updated_at"])
    reviewers = sorted({e["annotator"] for e in finals})
    mine = {field: value for field, (value, _) in ctx.fields.items()}
    with st.container(border=True, key="nw-decision", gap="xsmall"):
        st.markdown(f"**Reviewer's decision** · {label(', '.join(reviewers), 60)} · "
                    f"{local_time(latest['updated_at'], ctx.zone)}")
        for line in decision_lines(values, mine):
            st.caption(label(line, 200))
        if note:
            render_text(note, key="nw-decision-note")
