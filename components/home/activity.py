"""The home page's recent activity, in words: ``ana labeled passage 3 Answer`` on which
question, when, and a visible link that opens it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from components.text import render_text
from needlework.grounding.labels import SHORT
from needlework.review.verdicts import VERDICTS, parse_field, verdict_of

PAGE_FOR_KIND = {"grounding": "pages/annotate.py", "preference": "pages/review.py",
                 "needle": "pages/review.py"}
DIMENSIONS = {
    "question_valid": "valid", "question_false_premise": "false premise",
    "question_seeking": "info-seeking", "question_sensitive": "time-sensitive",
    "question_type": "question type", "question_complexity": "complexity",
    "question_popularity": "popularity", "question_category": "category",
}
ITEM_FIELDS = {"flag": ("flagged the item", "removed the flag"),
               "skipped": ("skipped the item", "took back the skip"),
               "comment": ("wrote a comment", "deleted the comment")}


def _value(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else str(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(entry: Mapping[str, Any]) -> str:
    """What one history entry did, in words (without who and where): ``labeled passage
    3 Answer``, ``cleared the answer``, ``judged chosen 1 vs rejected 2: Rejected
    better``; an undo says so."""
    field, new = str(entry["field"]), entry["new_value"]
    final = field.startswith("final:")
    name = field.removeprefix("final:")
    set_word = "set the final" if final else "set"
    if name.startswith("label:"):
        number = name[6:]
        if new is None:
            what = f"cleared the {'final ' if final else ''}label of passage {number}"
        else:
            verb = f"gave passage {number} the final label" if final else f"labeled passage {number} as"
            what = f"{verb} {SHORT.get(new, _value(new))}"
    elif name.startswith("dim:"):
        title = DIMENSIONS.get(name[4:], name[4:])
        what = f"cleared {title}" if new in (None, "") else f"{set_word} {title} to {_value(new)}"
    elif name == "answer":
        what = (("chose the final answer" if final else "wrote an answer") if isinstance(new, str)
                and new.strip() else "cleared the answer")
    elif name == "deflected":
        what = "marked the answer as the deflection" if new else "unmarked the deflection"
    elif parse_field(name) is not None:
        i, j = parse_field(name)
        verdict = verdict_of(new)
        pair = f"chosen {i + 1} vs rejected {j + 1}"
        what = (f"judged {pair}: {VERDICTS[verdict][0]}" if verdict else f"cleared the verdict on {pair}")
    elif name in ITEM_FIELDS:
        what = ITEM_FIELDS[name][0 if new not in (None, "") else 1]
    else:
        what = f"set {name}" if new is not None else f"cleared {name}"
    if entry.get("action") == "undo":
        what = "undid a change: " + what
    return what


def sentence(entry: Mapping[str, Any]) -> str:
    """One line of activity: who did what on which item of which dataset, and when."""
    who = str(entry.get("by") or entry.get("annotator") or "someone")
    whose = "" if entry.get("annotator") in (None, "", who) else f" (for {entry['annotator']})"
    title = " ".join(str(entry.get("item_title") or entry["item_key"]).split())
    title = title if len(title) <= 70 else title[:69] + "…"
    at = str(entry.get("at") or "")[:16].replace("T", " ")
    return f"{at} UTC · {who}{whose} {describe(entry)} on “{title}” in {entry['dataset']}"


def render_activity(entries: Sequence[Mapping[str, Any]], kinds: Mapping[str, str]) -> None:
    """The latest changes, newest first, one line each with an **Open ›** link to the item
    on its page (``kinds``: dataset → kind; a dataset gone since has no link)."""
    if not entries:
        st.caption("Nothing yet: labels, answers and verdicts appear here as they are saved.")
        return
    for n, entry in enumerate(entries):
        text, link = st.columns([6, 1], vertical_alignment="center", gap="small")
        with text:
            render_text(sentence(entry), key=f"nw-activity-text-{n}")
        kind = kinds.get(entry["dataset"])
        if kind in PAGE_FOR_KIND:
            link.page_link(PAGE_FOR_KIND[kind], label="Open ›",
                           query_params={"dataset": entry["dataset"], "item": entry["item_key"]})
