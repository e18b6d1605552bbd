"""Words of a run picker's option, each said once: a run's title may already give its
size (``judge m · selection · 28 items``), and a picker that adds ``· 28 items`` after
it would say it twice."""

from __future__ import annotations

import re

from needlework.words import plural


def with_count(title: str, n: int, unit: str = "item") -> str:
    """``title · N units`` (:func:`~needlework.words.plural`: ``1 item``, ``28 items``),
    unless ``title`` already says that count of ``unit`` (written ``28`` or ``1,028``):
    then ``title`` alone. A title that gives another count of ``unit`` keeps both, as two
    different facts."""
    word = unit if n == 1 else unit + "s"
    said = re.compile(rf"(?<![\d,])(?:{re.escape(f'{n:,}')}|{n})\s+{re.escape(word)}\b")
    return title if said.search(title) else f"{title} · {plural(n, unit)}"
