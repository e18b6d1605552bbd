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

For that person nothing the page sends may follow the file's sides: the buttons, their
keys and icons, the key script's data and the actions it sends name the *positions*
``a-better`` and ``b-better`` (:data:`POSITIONAL`), never ``agree`` or ``flip``; the server
turns a position into the stored verdict (:meth:`Sides.stored`), and everything drawn from a
stored verdict goes through :meth:`Sides.shown` first.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from needlework.verdicts import VERDICT_ICONS, VERDICTS, key_map

CHOSEN, REJECTED = "chosen", "rejected"
#: the verdicts of a blind annotator's page: the left (A) or the right (B) response better
#: -> (button words, key, icon); the same on every item, whichever side the file chose
POSITIONAL: dict[str, tuple[str, str, str]] = {
    "a-better": ("A better", "A", "🅰️"),
    "b-better": ("B better", "F", "🅱️"),
}


@dataclass(frozen=True)
class Sides:
    """The names of one item's two sides for one person: ``neutral`` (Response A / B)
    and, when neutral, ``swap`` (Response A is the rejected response)."""

    neutral: bool = False
    swap: bool = False
    #: what the file calls its two sides, for everyone but a blind annotator (RewardBench 2:
    #: ``correct`` and ``incorrect``, :func:`needlework.review.instances.named`)
    words: tuple[str, str] = (CHOSEN, REJECTED)

    def first(self) -> str:
        """The side drawn first (left): ``chosen`` or ``rejected``."""
        return REJECTED if self.neutral and self.swap else CHOSEN

    def title(self, side: str, name: str = "") -> str:
        """``Chosen``, ``Rejected 2``, ``Rejected · concise`` (RewardBench 2: ``Correct 1``,
        ``Incorrect 2``); neutral, whatever the file's words: ``Response A``,
        ``Response B · concise`` (a number would tell the side of several responses)."""
        if self.neutral:
            letter = "A" if side == self.first() else "B"
            return f"Response {letter}" + (f" · {name}" if name and not name.isdigit() else "")
        word = self.words[side == REJECTED].capitalize()
        if not name:
            return word
        return f"{word} {name}" if name.isdigit() else f"{word} · {name}"

    def shown(self, verdict: str | None) -> str | None:
        """A stored verdict as this person's page names it: neutral, ``agree`` and
        ``flip`` become the position of the better response (``a-better`` /
        ``b-better``); every other verdict (and a plain person's) is itself."""
        if not self.neutral or verdict not in ("agree", "flip"):
            return verdict
        chosen_first = self.first() == CHOSEN
        return "a-better" if (verdict == "agree") == chosen_first else "b-better"

    def stored(self, verdict: str) -> str:
        """The verdict stored for what this person's page names ``verdict``: a position
        (``a-better`` / ``b-better``) becomes ``agree`` or ``flip`` by where the chosen
        response is shown; anything else is itself."""
        if verdict not in POSITIONAL:
            return verdict
        left_better = verdict == "a-better"
        return "agree" if left_better == (self.first() == CHOSEN) else "flip"

    def verdict_words(self, verdict: str) -> str:
        """The button words of ``verdict`` (``agree``: "Chosen better", neutral "A better"
        or "B better"; a position: its words)."""
        shown = self.shown(verdict)
        if shown in POSITIONAL:
            return POSITIONAL[shown][0]
        if verdict in ("agree", "flip"):  # "Chosen better", or as the file names its sides
            return f"{self.words[verdict == 'flip'].capitalize()} better"
        return VERDICTS.get(verdict, (str(verdict),))[0]

    def icon(self, verdict: str | None) -> str:
        """The verdict's icon (neutral: the same two for every item, by position)."""
        shown = self.shown(verdict)
        if shown in POSITIONAL:
            return POSITIONAL[shown][2]
        return VERDICT_ICONS.get(str(verdict), "")

    def order(self) -> list[str]:
        """The verdicts in the bar's order, as this page names them: neutral, A better and
        B better first (the left response's first), the same on every item."""
        names = list(VERDICTS)
        if self.neutral:
            names[0:2] = list(POSITIONAL)
        return names

    def shortcut(self, verdict: str) -> str:
        """The key of ``verdict``'s button: A for the left response's, F for the right's."""
        shown = self.shown(verdict)
        if shown in POSITIONAL:
            return POSITIONAL[shown][1]
        return VERDICTS[verdict][1]

    def keys(self) -> dict[str, dict[str, str]]:
        """:func:`needlework.verdicts.key_map` as this person's keys mean it: for a
        neutral page, positions, the same on every item."""
        keys = key_map()
        keys["verdicts"] = {self.shortcut(v).lower(): v for v in self.order()}
        return keys


PLAIN = Sides()


def sides_for(neutral: bool, annotator: str, item_key: str) -> Sides:
    """The sides of ``item_key`` for ``annotator``: plain unless ``neutral``; then
    Response A is the chosen or the rejected response as a hash of the two names says,
    the same on every visit and different from item to item."""
    if not neutral:
        return PLAIN
    return Sides(True, bool(zlib.crc32(f"{annotator}\x1f{item_key}".encode()) & 1))
