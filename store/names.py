"""The rule every dataset name follows, for the CLI and the UI alike
(:func:`check_dataset_name`): surrounding spaces are trimmed; the name is 1 to
:data:`MAX_NAME_LENGTH` printable characters (no control characters, no line or
paragraph separators, no bidirectional overrides or other invisible format characters);
and it is unique up to case and spaces (``Demo Set`` and ``demoset`` are the same name:
:func:`name_key`; the lookup in the database is :func:`store.datasets.same_name`).
"""

from __future__ import annotations

import unicodedata

MAX_NAME_LENGTH = 120



class InvalidDatasetName(ValueError):
    """A dataset name that breaks the rule (see the module docstring)."""


def _describe(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" {name}" if name else "")


def check_dataset_name(name: str) -> str:
    """The name trimmed of surrounding whitespace, or :class:`InvalidDatasetName`
    saying what is wrong."""
    if not isinstance(name, str):
        raise InvalidDatasetName("the dataset name must be text")
    name = name.strip()
    if not name:
        raise InvalidDatasetName("the dataset name is empty")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidDatasetName(f"the dataset name is {len(name)} characters long; at most "
                                 f"{MAX_NAME_LENGTH} are allowed")
    for position, ch in enumerate(name, start=1):
        if ch.isprintable():
            continue
        category = unicodedata.category(ch)
        what = {"Cc": "a control character", "Cf": "an invisible formatting character "
                "(such as a bidirectional override)", "Zl": "a line separator",
                "Zp": "a paragraph separator", "Zs": "a space other than the plain space",
                "Cs": "a lone surrogate"}.get(category, "a character that cannot be printed")
        raise InvalidDatasetName(f"the dataset name contains {what} ({_describe(ch)}) at "
                                 f"position {position}")
    return name


def name_key(name: str) -> str:
    """What two names must not share: the name without spaces, case-folded."""
    return "".join(name.split()).casefold()
