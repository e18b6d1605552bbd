"""Small wording rules the pages, the CLI and the figures share."""

from __future__ import annotations

from pathlib import Path


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word``, in the plural unless ``n`` is 1, thousands separated:
    ``plural(1, "item")`` is ``"1 item"``, ``plural(2000, "item")`` ``"2,000 items"``;
    ``many`` for a plural that is not ``word + "s"``."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"


def short_name(model: str) -> str:
    """A model name as people read it: a local folder's last part (``demo-judge``)."""
    text = model.rstrip("/")
    if text.startswith("/") and Path(text).name:
        return Path(text).name
    return text or "judge"
