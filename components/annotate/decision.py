"""A reviewer's decision on the question being annotated: the final values a reviewer set
on the Agreement page (``final:*``), beside the annotator's own, and the reviewer's note.

An annotator in team mode sees none on a dataset with gold items, on any item: on a gold
item its final values would give the gold answers away, and a decision shown on the
other items only would tell the gold items apart. Elsewhere it is theirs to see.
"""

from __future__ import annotations

import streamlit as st

from components.annotate.item import ItemContext, local_time
from components.state import signed_in
from components.text import label, render_text
from needlework.grounding.decision import decision_lines
from needlework.teams.blind import file_labels_blocked
from needlework.teams.permissions import can
from store.grounding import grouped_annotations

NOTE = "final:note"


def render_decision(ctx: ItemContext) -> None:
    """The reviewer's final values and note on this question, when there are any (nothing
    otherwise)."""
    entries = grouped_annotations(ctx.db, ctx.dataset, ctx.key).get(ctx.key, [])
    finals = [e for e in entries if e["field"].startswith("final:")]
    if not finals:
        return
    user = signed_in()
    if user is not None and not can(user, "view_all") and file_labels_blocked(ctx.db, ctx.dataset):
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
