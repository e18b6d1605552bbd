"""Words of a run picker's option, each said once: a run's title may already give its
size (``judge m · selection · 28 items``), and a picker that adds ``· 28 items`` after
it would say it twice."""

from __future__ import annotations

import re


def with_count(title: str, n: int, unit: str = "items") -> str:
    """``title · N unit``, unless ``title`` already says ``N unit`` (written ``28`` or
    ``1,028``): then ``title`` alone. A title that gives another count of ``unit`` keeps
    both, as two different facts."""
    said = re.compile(rf"(?<![\d,]){re.escape(f'{n:,}')}\s+{re.escape(unit)}\b|"
                      rf"(?<![\d,]){n}\s+{re.escape(unit)}\b")
    return title if said.search(title) else f"{title} · {n:,} {unit}"
