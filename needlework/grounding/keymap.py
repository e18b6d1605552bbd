"""The annotate page's keyboard map.

Keys are plain letters and digits: they act only when no text field has focus, so
typing an answer never labels a passage. The browser turns each press into an action
aimed at a passage (``components/js/annotate_keys.js``, :mod:`needlework.actions.service`).
"""

from __future__ import annotations

from typing import Any

from needlework.formats.garage import COMPLEXITIES, POPULARITY, YES_NO
from needlework.grounding.item import TIME_HELP, TIME_SENSITIVITY, YES_NO_DIMS
from needlework.grounding.labels import LABEL_KEYS, SHORT

NEXT_PASSAGE, PREVIOUS_PASSAGE, CLEAR = "j", "k", "0"
NEXT_ITEM, PREVIOUS_ITEM, NEXT_UNFINISHED = "n", "p", "u"
NEXT_LATER = "l"  # the next question left for later: flagged, or skipped and not finished
DEFLECT, ANSWER_FIELD = "d", "a"
DIMENSION, WALK, FILE_VALUES = "q", "w", "v"

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
    ("L", "next question you left for later: flagged (F), or skipped (S) and not finished "
          "since (wrapping around)"),
    ("A", "put the cursor in the answer (type freely: keys do nothing there)"),
    ("Esc", "leave a text field; the answer is saved then (and after each pause in typing)"),
    ("D", "write the standard deflection (when the answer is empty)"),
    ("W, then a digit per dimension", "walk through the six dimensions: each digit sets the "
                                      "one asked and moves on (Enter: the file's value, Space: "
                                      "leave it, 0: clear, Esc: stop)"),
    ("V", "take the file's value of every dimension you have not set (when the file's values "
          "are shown)"),
    ("Q then 1-6, then a digit", "set a question dimension: Q, the dimension's number, the value's "
                                 "number (0 clears); the numbers are in the dimension titles; "
                                 "Q 7 opens the category list"),
    ("R", "mark every passage still unlabeled irrelevant"),
    ("Y", "accept the suggestions shown for every passage still unlabeled and every "
          "dimension still unset (a label key afterwards overrides one; one Z undoes the "
          "whole accept)"),
    ("S", "skip this question (marked skipped) and open the next"),
    ("F", "flag this question for later (again: unflag)"),
    ("M", "put the cursor in the comment"),
    ("Z / Shift+Z", "undo / redo your own last change on this page, an accept (Y) whole (also "
                     "Ctrl+Z, Ctrl+Shift+Z, "
                    "Ctrl+Y outside a text field)"),
    ("H", "hide / show the labels and dimensions the file came with and the model "
          "suggestions, the dimensions' \"model\" tags included (avoid anchoring; kept for "
          "you)"),
    ("?", "open this key map"),
)


def keymap(blind: bool = False) -> tuple[tuple[str, str], ...]:
    """:data:`KEYMAP` as one person reads it: ``blind`` (the lead keeps the file's labels
    and dimensions from them) leaves out V and W's Enter, which take the file's values, and
    says H hides the suggestions only."""
    if not blind:
        return KEYMAP
    words = {
        "W, then a digit per dimension": "walk through the six dimensions: each digit sets the "
                                         "one asked and moves on (Space: leave it, 0: clear, "
                                         "Esc: stop)",
        "H": "hide / show the model suggestions, the dimensions' \"model\" tags included "
             "(avoid anchoring; kept for you)",
    }
    return tuple((keys, words.get(keys, what)) for keys, what in KEYMAP if keys != "V")


def label_keys() -> dict[str, dict[str, str]]:
    """What the key script needs of the labels (one definition, here and in
    :mod:`needlework.grounding.labels`): ``labels`` key → label, ``short`` label → the
    short name shown on the card."""
    return {"labels": dict(LABEL_FOR_KEY), "short": dict(SHORT)}


def dimension_keys() -> list[dict[str, Any]]:
    """The dimensions the ``Q`` key path and the option buttons set, in key order: title,
    help, the ``dim:`` fields one choice writes, the options shown and the field values
    of each option (``""`` in a value: that field may hold anything, see
    :func:`choice_of`)."""
    out = [{"title": title, "help": help_text, "fields": [name], "options": list(YES_NO),
            "values": [[v] for v in YES_NO]} for name, title, help_text in YES_NO_DIMS]
    out.append({"title": "Time sensitivity", "help": TIME_HELP,
                "fields": ["question_sensitive", "question_type"],
                "options": list(TIME_SENSITIVITY),
                "values": [list(v) for v in TIME_SENSITIVITY.values()]})
    for name, title, options in (("question_complexity", "Complexity", COMPLEXITIES),
                                 ("question_popularity", "Popularity", POPULARITY)):
        out.append({"title": title, "help": "", "fields": [name], "options": list(options),
                    "values": [[v] for v in options]})
    return out


def choice_of(dimension: dict[str, Any], values: list[Any]) -> int | None:
    """The option of ``dimension`` (from :func:`dimension_keys`) that the fields' values
    (in the order of its ``fields``) amount to, or ``None``. An option's ``""`` matches
    any value of that field (static time sensitivity is ``NO`` whatever the type says);
    the key script applies the same rule."""
    for index, option in enumerate(dimension["values"]):
        if all(want == "" or want == got for want, got in zip(option, values, strict=True)):
            return index
    return None

