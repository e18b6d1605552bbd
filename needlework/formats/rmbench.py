"""RM-Bench JSON arrays (benchmarks.md §4): 3 chosen and 3 rejected, one per style."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from needlework.formats import checks
from needlework.formats.preference import Preference

NAME = "rmbench"
KIND = "preference"
CONTAINER = "json"
DOMAINS = ("chat", "code", "math", "safety-refuse", "safety-response")


def domain_of(subset: str, filename: str = "") -> str:
    """The RM-Bench domain of a record: from the file name when it names one
    (``chat_filtered.json``), else from the subset (``refusals-dangerous`` → safety-refuse)."""
    stem = Path(filename).name.lower()
    for domain in sorted(DOMAINS, key=len, reverse=True):
        if stem.startswith(domain):
            return domain
    s = subset.lower()
    if s.startswith("refusals") or s in ("donotanswer",):
        return "safety-refuse"
    if s.startswith("xstest") or "should-respond" in s:
        return "safety-response"
    if "humaneval" in s or "code" in s:
        return "code"
    if "math" in s or "prm" in s:
        return "math"
    return "chat"


def looks_like(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("chosen"), list) and "subset" in obj


def validate(obj: Any) -> list[str]:
    problems: list[str] = []
    if not checks.require_object(obj, problems):
        return problems
    if "id" not in obj:
        problems.append("id is missing")
    elif isinstance(obj["id"], bool) or not isinstance(obj["id"], (str, int)):
        problems.append(f"id must be an integer or string, got {checks.type_name(obj['id'])}")
    checks.string(obj, "prompt", problems, non_empty=True)
    checks.string(obj, "subset", problems)
    checks.string_list(obj, "chosen", problems, count=3)
    checks.string_list(obj, "rejected", problems, count=3)
    return problems


def key(obj: dict[str, Any], index: int) -> str:
    return str(obj["id"])


def key_field() -> str:
    return "id"


def title(obj: dict[str, Any]) -> str:
    return obj.get("prompt", "")


def subset(obj: dict[str, Any], filename: str = "") -> str:
    """The domain (chat, code, math, safety-refuse, safety-response): what filters and
    the 3×3 metrics group by. The record's own ``subset`` stays in the record."""
    return domain_of(obj.get("subset", ""), filename)


def view(obj: dict[str, Any]) -> Preference:
    extra = {k: v for k, v in obj.items() if k not in ("id", "subset", "prompt", "chosen", "rejected")}
    return Preference(str(obj["id"]), obj["subset"], obj["prompt"], list(obj["chosen"]),
                      list(obj["rejected"]), extra)


def dump_iter(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    """The JSON array (4-space indent, as RM-Bench's files), a record at a time: the
    same text as ``json.dumps(records, ensure_ascii=False, indent=4)`` plus a newline."""
    first = True
    for record in records:
        body = json.dumps(record, ensure_ascii=False, indent=4).replace("\n", "\n    ")
        yield ("[\n    " if first else ",\n    ") + body
        first = False
    yield "[]\n" if first else "\n]\n"


def dump(records: Iterable[dict[str, Any]]) -> str:
    return "".join(dump_iter(records))
