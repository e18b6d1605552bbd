"""A reviewer's decision told to the annotator: one plain sentence per final value, set
against the annotator's own (the annotate page's decision panel)."""

from __future__ import annotations

from typing import Any

from needlework.grounding import labels as gl
from needlework.grounding.item import DIM_TITLES


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
