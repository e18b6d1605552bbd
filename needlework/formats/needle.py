"""The needle-in-a-haystack record (benchmarks.md §3): the paper's fields plus
optional ``length_tokens``, ``site_index``, ``needle_id``, ``haystack_id``, ``id``."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from needlework.formats import checks
from needlework.formats.preference import Preference

NAME = "needle"
KIND = "needle"
CONTAINER = "jsonl"


def looks_like(obj: Any) -> bool:
    return isinstance(obj, dict) and "tagged_position" in obj


def validate(obj: Any) -> list[str]:
    problems: list[str] = []
    if not checks.require_object(obj, problems):
        return problems
    checks.number(obj, "word_count", problems, integer=True, low=0)
    checks.number(obj, "tagged_position", problems, low=0.0, high=1.0)
    checks.string(obj, "prompt", problems)
    checks.string_list(obj, "chosen", problems, count=1)
    checks.string_list(obj, "rejected", problems, count=1)
    checks.number(obj, "length_tokens", problems, required=False, integer=True, low=0)
    checks.number(obj, "site_index", problems, required=False, integer=True, low=0)
    for field in ("needle_id", "haystack_id", "id"):
        if field in obj and (isinstance(obj[field], bool) or not isinstance(obj[field], (str, int))):
            problems.append(f"{field} must be a string or integer, got {checks.type_name(obj[field])}")
    return problems


def key(obj: dict[str, Any], index: int) -> str:
    return str(obj["id"]) if "id" in obj else str(index + 1)


def key_field() -> str:
    return "id"


def title(obj: dict[str, Any]) -> str:
    return obj.get("prompt", "")


def subset(obj: dict[str, Any], filename: str = "") -> str:
    length = obj.get("length_tokens")
    return f"{length}" if isinstance(length, int) else ""


def view(obj: dict[str, Any]) -> Preference:
    meta = {k: v for k, v in obj.items() if k not in ("prompt", "chosen", "rejected")}
    return Preference(str(obj.get("id", "")), subset(obj), obj.get("prompt", ""),
                      list(obj["chosen"]), list(obj["rejected"]), meta)


def dump_iter(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    """JSONL, one record per line (fields in their original order), a line at a time."""
    for record in records:
        yield json.dumps(record, ensure_ascii=False) + "\n"


def dump(records: Iterable[dict[str, Any]]) -> str:
    """JSONL, one record per line, fields in their original order."""
    return "".join(dump_iter(records))
