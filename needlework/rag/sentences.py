"""Splitting an answer into the sentences the factuality judge labels.

GaRAGe's judge splits the answer itself (appendix B.3). Here the split is ours and
the judge is given the answer one sentence per line (**our rule**) and labels those
sentences, by their text or their number: every verdict then belongs to a
known piece of the answer, a verdict missing for a sentence is seen, and the page can
mark each sentence where it stands in the answer.

The rules, in order:

1. Line breaks end sentences: a list item or a heading is a sentence of its own.
2. Within a line a sentence ends at ``.``, ``!``, ``?`` or ``…`` (with any closing
   quotes or brackets after it) when white space follows and the next word does not
   start with a lower-case letter.
3. Citation markers right after the end (``… in 1949. [cite_2] Its …``) belong to the
   sentence they follow.
4. Not an end: a known abbreviation (``e.g.``, ``Dr.``, ``U.S.``, ``approx.`` ...) or a
   single capital initial (``J. R. R. Tolkien``); a decimal point never is one, as no
   space follows it. ``No.``, ``Vol.`` and ``Fig.`` abbreviate only before a number
   (``No. 5``): "No. US citizens do not need a visa." is two sentences.

Each :class:`Sentence` keeps its character span in the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ABBREVIATIONS = frozenset({
    "e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "prof", "st", "no", "inc", "ltd",
    "co", "jr", "sr", "u.s", "u.k", "a.m", "p.m", "approx", "fig", "cf", "jan", "feb", "mar",
    "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "est", "dept", "vol",
    "ca", "al", "mt", "ft", "gen", "gov", "sen", "rep", "corp",
})
#: Abbreviations of a word followed by a number (elsewhere the word itself: "No.").
BEFORE_NUMBER = frozenset({"no", "vol", "fig"})
_END = re.compile(r"[.!?…]+[\"'”’)\]]*((?:\s*\[(?:cite_)?\d+\])*)(?=\s+|$)")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)\.$")


@dataclass(frozen=True)
class Sentence:
    """One sentence: its text (stripped) and ``[start, end)`` span in the answer."""

    text: str
    start: int
    end: int


def _is_abbreviation(line: str, dot: int, rest: str = "") -> bool:
    """Does the full stop at ``line[dot]`` end an abbreviation or an initial? ``rest``:
    what follows it (a word of :data:`BEFORE_NUMBER` abbreviates only before a number)."""
    match = _WORD_BEFORE.search(line[: dot + 1])
    if match is None:
        return False
    word = match.group(1)
    if len(word) == 1 and word.isupper():
        return True  # an initial: "J. R. R. Tolkien"
    word = word.lower().rstrip(".")
    if word in BEFORE_NUMBER:
        return rest[:1].isdigit()
    return word in ABBREVIATIONS


def _split_line(line: str, offset: int) -> list[Sentence]:
    out: list[Sentence] = []
    start = 0
    for match in _END.finditer(line):
        end = match.end()
        rest = line[end:].lstrip()
        if rest and rest[0].islower():
            continue
        if line[match.start()] == "." and match.group(0).startswith(".") and \
                _is_abbreviation(line, match.start(), rest):
            continue
        if not rest:
            break
        piece = line[start:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            out.append(Sentence(piece.strip(), offset + start + lead, offset + end))
        start = end
    piece = line[start:]
    if piece.strip():
        lead = len(piece) - len(piece.lstrip())
        out.append(Sentence(piece.strip(), offset + start + lead,
                            offset + start + lead + len(piece.strip())))
    return out


def split_sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` (see the module docstring); ``[]`` for blank text."""
    out: list[Sentence] = []
    position = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        out.extend(_split_line(body, position))
        position += len(line)
    return out
