"""How Review names the two responses of a comparison for one person.

Everyone but a blind annotator reads them as the file has them: *chosen* and *rejected*,
with the verdicts "Chosen better" / "Rejected better". An annotator in team mode who
does not see the file's labels (:func:`needlework.teams.blind.visibility`) reads them as
**Response A** and **Response B** instead, in an order fixed per item and annotator
(:func:`sides_for`): otherwise the page itself would say which response the file chose,
and so every preference gold answer, whose default is "chosen is better". The verdicts
stored keep their meaning (``agree``: the chosen one is better): only the words, the
order on screen and the keys change, so "A better" saves ``agree`` where Response A is
the chosen one and ``flip`` where it is the rejected one.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from needlework.review.verdicts import VERDICTS, key_map

CHOSEN, REJECTED = "chosen", "rejected"


@dataclass(frozen=True)
class Sides:
    """The names of one item's two sides for one person: ``neutral`` (Response A / B)
    and, when neutral, ``swap`` (Response A is the rejected response)."""

    neutral: bool = False
    swap: bool = False

    def first(self) -> str:
        """The side drawn first (left): ``chosen`` or ``rejected``."""
        return REJECTED if self.neutral and self.swap else CHOSEN

    def title(self, side: str, name: str = "") -> str:
        """``Chosen``, ``Rejected 2``, ``Rejected · concise``; neutral: ``Response A``,
        ``Response B · concise`` (a number would tell the side of several responses)."""
        if self.neutral:
            letter = "A" if side == self.first() else "B"
            return f"Response {letter}" + (f" · {name}" if name and not name.isdigit() else "")
        word = side.capitalize()
        if not name:
            return word
        return f"{word} {name}" if name.isdigit() else f"{word} · {name}"

    def verdict_words(self, verdict: str) -> str:
        """The button words of ``verdict`` (``agree``: "Chosen better", neutral "A better"
        or "B better")."""
        if self.neutral and verdict in ("agree", "flip"):
            chosen_first = self.first() == CHOSEN
            return "A better" if (verdict == "agree") == chosen_first else "B better"
        return VERDICTS.get(verdict, (str(verdict),))[0]

    def order(self) -> list[str]:
        """The verdicts in the bar's order: the one for the left response first."""
        names = list(VERDICTS)
        if self.neutral and self.swap:
            names[0], names[1] = names[1], names[0]
        return names

    def shortcut(self, verdict: str) -> str:
        """The key of ``verdict``'s button: A for the left response's, F for the right's."""
        if self.neutral and self.swap and verdict in ("agree", "flip"):
            return VERDICTS["flip" if verdict == "agree" else "agree"][1]
        return VERDICTS[verdict][1]

    def keys(self) -> dict[str, dict[str, str]]:
        """:func:`needlework.review.verdicts.key_map` as this person's keys mean it."""
        keys = key_map()
        keys["verdicts"] = {key.lower(): verdict for verdict, key in
                            ((v, self.shortcut(v)) for v in VERDICTS)}
        return keys


PLAIN = Sides()


def sides_for(neutral: bool, annotator: str, item_key: str) -> Sides:
    """The sides of ``item_key`` for ``annotator``: plain unless ``neutral``; then
    Response A is the chosen or the rejected response as a hash of the two names says,
    the same on every visit and different from item to item."""
    if not neutral:
        return PLAIN
    return Sides(True, bool(zlib.crc32(f"{annotator}\x1f{item_key}".encode()) & 1))
