"""The annotate page's keyboard map.

Keys are plain letters and digits: they act only when no text field has focus, so
typing an answer never labels a passage. The browser turns each press into an action
aimed at a passage (``components/js/annotate_keys.js``, :mod:`needlework.actions`).
"""

from __future__ import annotations

from needlework.grounding.labels import LABEL_KEYS

NEXT_PASSAGE, PREVIOUS_PASSAGE, CLEAR = "j", "k", "0"
NEXT_ITEM, PREVIOUS_ITEM, NEXT_UNFINISHED = "n", "p", "u"
DEFLECT, ANSWER_FIELD = "d", "a"

#: key → label, for 1..5
LABEL_FOR_KEY: dict[str, str] = {key: label for label, key in LABEL_KEYS.items()}

#: (keys, what they do) for the help popover and the docs.
KEYMAP: tuple[tuple[str, str], ...] = (
    ("J / K", "next / previous passage (the outlined card)"),
    ("1 2 3 4 5", "label the current passage irrelevant / ANSWER-THE-QUESTION / "
                  "RELATED-INFORMATION / OUTDATED / UNKNOWN, then move to the next"),
    ("0", "clear your label of the current passage"),
    ("N / P", "next / previous question in the (filtered) list"),
    ("U", "next question you have not finished"),
    ("A", "put the cursor in the answer (type freely: keys do nothing there)"),
    ("Esc", "leave a text field; the answer is saved then (and after each pause in typing)"),
    ("D", "write the standard deflection (when the answer is empty)"),
)

