"""An item as a person reads its name: its number in the dataset and the start of its text,
``16. Write a short poem…``, as the question pickers and the gold table show it; never
its key alone (often a UUID), which a person cannot match with what the pages show."""

from __future__ import annotations

from collections.abc import Iterable

from sqlite_utils import Database

from store.datasets import item_places

WIDTH = 90  # characters of the text, as the question picker shows it


def item_name(position: int, title: str | None, key: str, width: int = WIDTH) -> str:
    """``N. text`` (``N`` counts from 1; the text's whitespace folded, cut at ``width``
    characters with …); the key when the item has no title."""
    text = " ".join(str(title or key).split())
    text = text if len(text) <= width else text[:width - 1] + "…"
    return f"{position + 1}. {text}"


def item_names(db: Database, dataset: str, keys: Iterable[str],
               width: int = WIDTH) -> dict[str, str]:
    """``{key: its name}`` for ``keys`` of ``dataset`` (a key the dataset does not hold is
    named by itself)."""
    keys = list(keys)
    places = item_places(db, dataset, keys)
    return {k: item_name(places[k]["position"], places[k]["title"], k, width)
            if k in places else k for k in keys}
