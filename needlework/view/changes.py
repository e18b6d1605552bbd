"""A change of the history (``store.annotations.history``) in words, for people:
``ana labeled passage 3 as Answer on “What does a ticket cost?” in demo-grounding``.
Numbers are the reader's (passage 3, chosen 1 vs rejected 2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from needlework.grounding.labels import SHORT
from needlework.review.sides import sides_for
from needlework.verdicts import VERDICTS, parse_field, verdict_of

DIMENSIONS = {
    "question_valid": "valid", "question_false_premise": "false premise",
    "question_seeking": "info-seeking", "question_sensitive": "time-sensitive",
    "question_type": "question type", "question_complexity": "complexity",
    "question_popularity": "popularity", "question_category": "category",
}
ITEM_FIELDS = {"flag": ("flagged the item", "removed the flag"),
               "skipped": ("skipped the item", "took back the skip"),
               "comment": ("wrote a comment", "deleted the comment")}


def value_text(value: Any, limit: int = 40) -> str:
    """A stored value as a reader says it: a label's short name, a verdict's words, text
    cut to ``limit`` characters."""
    if isinstance(value, str) and value in SHORT:
        return SHORT[value]
    verdict = verdict_of(value)
    if verdict is not None:
        return VERDICTS[verdict][0]
    text = value if isinstance(value, str) else str(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(entry: Mapping[str, Any], neutral: bool = False) -> str:
    """What one history entry did, in words (without who and where): ``labeled passage
    3 Answer``, ``cleared the answer``, ``judged chosen 1 vs rejected 2: Rejected
    better``; an undo says so. ``neutral``: for a reader who may not see which response
    the file chose, a verdict names no side (``judged a pair: A better``, as that
    annotator's Review page showed it, :mod:`needlework.review.sides`)."""
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
            what = f"{verb} {SHORT.get(new, value_text(new))}"
    elif name.startswith("dim:"):
        title = DIMENSIONS.get(name[4:], name[4:])
        what = f"cleared {title}" if new in (None, "") else f"{set_word} {title} to {value_text(new)}"
    elif name == "answer":
        what = (("chose the final answer" if final else "wrote an answer") if isinstance(new, str)
                and new.strip() else "cleared the answer")
    elif name == "deflected":
        what = "marked the answer as the deflection" if new else "unmarked the deflection"
    elif (pair_ij := parse_field(name)) is not None:
        i, j = pair_ij
        verdict = verdict_of(new)
        if neutral:
            sides = sides_for(True, str(entry.get("annotator") or ""), str(entry["item_key"]))
            pair, words = "a pair", sides.verdict_words(verdict or "")
        else:
            pair, words = f"chosen {i + 1} vs rejected {j + 1}", VERDICTS.get(verdict or "", ("",))[0]
        what = f"judged {pair}: {words}" if verdict else f"cleared the verdict on {pair}"
    elif name in ITEM_FIELDS:
        what = ITEM_FIELDS[name][0 if new not in (None, "") else 1]
    else:
        what = f"set {name}" if new is not None else f"cleared {name}"
    if entry.get("action") == "undo":
        what = "undid a change: " + what
    return what


def sentence(entry: Mapping[str, Any], neutral: bool = False) -> str:
    """One line of activity: who did what on which item of which dataset, and when
    (``neutral``: as :func:`describe`)."""
    who = str(entry.get("by") or entry.get("annotator") or "someone")
    whose = "" if entry.get("annotator") in (None, "", who) else f" (for {entry['annotator']})"
    title = " ".join(str(entry.get("item_title") or entry["item_key"]).split())
    title = title if len(title) <= 70 else title[:69] + "…"
    at = str(entry.get("at") or "")[:16].replace("T", " ")
    return f"{at} UTC · {who}{whose} {describe(entry, neutral)} on “{title}” in {entry['dataset']}"
